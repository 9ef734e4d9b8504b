"""``torchcore.serialization``'s allowlist knobs (``add_safe_globals``,
``safe_globals``, ``clear_safe_globals``, ``get_unsafe_globals_in_checkpoint``),
saving objects only Python can pickle, and ``skip_data``; against real torch
where it is importable (those tests skip without it)."""

import collections
import dataclasses
import io
import os
import pickle

import pytest

import torchcore
from torchcore import serialization as ser

try:
    import torch
except ImportError:  # CI has no torch: the differential tests skip, the rest run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable: differential test skipped")

Pair = collections.namedtuple("Pair", ["a", "b"])


class WithState:
    def __init__(self, n):
        self.n = n

    def __reduce_ex__(self, proto):
        # A third item makes pickle write BUILD with this state.
        return WithState, (self.n,), {"extra": "yes"}


@dataclasses.dataclass
class Slotted:
    __slots__ = ["x", "y"]
    x: int
    y: int


class Plain:
    pass


def _saved(obj, saver=None):
    buf = io.BytesIO()
    (saver or torchcore.save)(obj, buf)
    buf.seek(0)
    return buf


@pytest.fixture(autouse=True)
def _restore_allowlist():
    before = ser.get_safe_globals()
    yield
    ser.clear_safe_globals()
    ser.add_safe_globals(before)


def _name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def test_objects_python_pickles_are_refused_by_name_until_allowlisted():
    for obj, cls in ((Pair(1, 2), Pair), (WithState(3), WithState), (Slotted(1, 2), Slotted)):
        buf = _saved({"o": obj, "t": torchcore.arange(3)})
        with pytest.raises(pickle.UnpicklingError,
                           match=f"Unsupported global: GLOBAL {_name(cls)} was not an allowed global by default"):
            torchcore.load(buf)
        buf.seek(0)
        with ser.safe_globals([cls]):
            back = torchcore.load(buf)
        assert back["t"].tolist() == [0, 1, 2]
        if cls is WithState:
            assert back["o"].n == 3 and back["o"].extra == "yes"
        else:
            assert back["o"] == obj
        # The context manager restores the allowlist.
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError):
            torchcore.load(buf)


def test_add_get_clear_safe_globals():
    assert Plain not in ser.get_safe_globals()
    ser.add_safe_globals([Plain, (Pair, _name(Pair))])
    assert ser.get_safe_globals()[-2:] == [Plain, (Pair, _name(Pair))]
    back = torchcore.load(_saved([Plain(), Pair(5, 6)]))
    assert isinstance(back[0], Plain) and back[1] == Pair(5, 6)
    ser.clear_safe_globals()
    assert ser.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        torchcore.load(_saved(Plain()))


def test_blocked_modules_stay_refused_when_allowlisted():
    module = os.execv.__module__
    msg = f"unsupported GLOBAL {module}.execv whose module {module} is blocked"
    buf = _saved(os.execv)
    with pytest.raises(pickle.UnpicklingError, match=msg):
        torchcore.load(buf)
    buf.seek(0)
    with ser.safe_globals([os.execv]):
        with pytest.raises(pickle.UnpicklingError, match=msg):
            torchcore.load(buf)


def test_reduce_calls_only_allowlisted_callables():
    # getattr(Plain, '__init_subclass__') is allowed, calling what it returns is not.
    p = (b"\x80\x02c" + Plain.__module__.encode() + b"\nPlain\nq\x00"
         b"cbuiltins\ngetattr\nh\x00X\x11\x00\x00\x00__init_subclass__\x86R)R.")
    buf = io.BytesIO()
    with ser._open_zipfile_writer(buf) as zw:
        zw.write_record("data.pkl", p, len(p))
    buf.seek(0)
    with ser.safe_globals([Plain, getattr]):
        with pytest.raises(pickle.UnpicklingError, match="Trying to call reduce for unrecognized function"):
            torchcore.load(buf)


def test_tensors_and_sharing_load_with_allowlisted_globals():
    n = torchcore.arange(1, 10)
    buf = _saved({"o": Plain(), "n": n, "e": n[1::2], "w": torchcore.ones(2, 3).t()})
    with ser.safe_globals([Plain]):
        back = torchcore.load(buf)
    assert back["e"].storage_offset() == 1 and back["e"].stride() == (2,)
    back["e"].fill_(0)
    assert back["n"].tolist() == [1, 0, 3, 0, 5, 0, 7, 0, 9]
    assert back["w"].stride() == (1, 3) and back["w"].tolist() == [[1.0, 1.0]] * 3


def test_get_unsafe_globals_in_checkpoint():
    buf = _saved({"o": Plain(), "p": Pair(1, 2), "t": torchcore.zeros(2)})
    assert sorted(ser.get_unsafe_globals_in_checkpoint(buf)) == sorted([_name(Plain), _name(Pair)])
    buf.seek(0)
    with ser.safe_globals([Plain]):
        assert ser.get_unsafe_globals_in_checkpoint(buf) == [_name(Pair)]
    buf.seek(0)
    assert ser.get_unsafe_globals_in_checkpoint(_saved({"t": torchcore.zeros(2)})) == []
    with pytest.raises(ValueError, match="Expected input to be a checkpoint"):
        ser.get_unsafe_globals_in_checkpoint(io.BytesIO(b"not a zip"))


def test_subclasses_of_plain_types_are_pickled_by_class():
    class Tag(str):
        pass

    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        torchcore.save(Tag("x"), io.BytesIO())  # a local class cannot be pickled
    # A namedtuple is not saved as a plain tuple (torch neither).
    with pytest.raises(pickle.UnpicklingError, match="Pair"):
        torchcore.load(_saved(Pair(1, 2)))


def test_tensor_inside_a_python_object_is_refused():
    with pytest.raises(TypeError, match="cannot save a tensor or storage inside"):
        torchcore.save(Pair(torchcore.zeros(1), 2), io.BytesIO())


def test_skip_data_writes_zeros_and_keeps_layout():
    n = torchcore.arange(1.0, 10.0)
    with ser.skip_data():
        buf = _saved({"n": n, "e": n[1::2], "w": torchcore.ones(2, 3).t()})
    back = torchcore.load(buf)
    assert back["n"].tolist() == [0.0] * 9
    assert back["e"].storage_offset() == 1 and back["e"].stride() == (2,)
    assert back["w"].stride() == (1, 3) and back["w"].shape == (3, 2)
    back["n"].fill_(4.0)
    assert back["e"].tolist() == [4.0] * 4  # still one storage
    # Outside the context manager data are written again.
    assert torchcore.load(_saved(n)).tolist() == n.tolist()


@needs_torch
def test_torch_reads_python_pickled_objects_torchcore_saved():
    obj = {"p": Pair(1, 2), "w": WithState(4), "s": Slotted(5, 6), "t": torchcore.arange(4)}
    buf = _saved(obj)
    with pytest.raises(pickle.UnpicklingError, match=f"GLOBAL {_name(Pair)} was not an allowed global"):
        torch.load(buf, weights_only=True)
    buf.seek(0)
    with torch.serialization.safe_globals([Pair, WithState, Slotted]):
        back = torch.load(buf, weights_only=True)
    assert back["p"] == Pair(1, 2) and back["s"] == Slotted(5, 6)
    assert back["w"].n == 4 and back["w"].extra == "yes"
    assert back["t"].tolist() == [0, 1, 2, 3]


@needs_torch
def test_torchcore_reads_python_pickled_objects_torch_saved():
    n = torch.arange(1, 10)
    buf = _saved({"p": Pair(1, 2), "w": WithState(4), "n": n, "e": n[1::2]}, torch.save)
    with pytest.raises(pickle.UnpicklingError, match=f"GLOBAL {_name(Pair)} was not an allowed global"):
        torchcore.load(buf)
    buf.seek(0)
    theirs = torch.serialization.get_unsafe_globals_in_checkpoint(buf)
    buf.seek(0)
    assert sorted(ser.get_unsafe_globals_in_checkpoint(buf)) == sorted(theirs)
    buf.seek(0)
    with ser.safe_globals([Pair, WithState]):
        back = torchcore.load(buf)
    assert back["p"] == Pair(1, 2) and back["w"].extra == "yes"
    back["e"].fill_(0)
    assert back["n"].tolist() == [1, 0, 3, 0, 5, 0, 7, 0, 9]


@needs_torch
def test_skip_data_archives_load_in_torch():
    n = torchcore.arange(1.0, 10.0)
    with ser.skip_data():
        buf = _saved({"n": n, "e": n[1::2]})
    back = torch.load(buf, weights_only=True)
    assert back["n"].tolist() == [0.0] * 9
    assert back["e"].untyped_storage().data_ptr() == back["n"].untyped_storage().data_ptr()


def test_allowlisted_globals_from_a_path_and_legacy_refusal(tmp_path):
    path = tmp_path / "o.pt"
    torchcore.save({"o": Plain(), "t": torchcore.arange(2)}, path)
    with ser.safe_globals([Plain]):
        back = torchcore.load(path)
        assert isinstance(back["o"], Plain) and back["t"].tolist() == [0, 1]
        # The legacy format keeps the Rust loader's refusal.
        buf = io.BytesIO()
        torchcore.save(Pair(1, 2), buf, _use_new_zipfile_serialization=False)
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
            torchcore.load(buf)
