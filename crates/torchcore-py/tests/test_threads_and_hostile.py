"""Issue #25: Python threads, deep shapes and huge ints.

These tests do not need torch: where PyTorch's behaviour is asserted, the
expected classes and messages were taken from torch 2.15.0 (the same cases
run against torch in ``test_vs_torch.py`` when it is importable).
"""

import random
import sys
import threading
import time

import numpy as np
import pytest

import torchcore as tc


# ---- threads -------------------------------------------------------------

STRESS_SECONDS = 1.5


def _ops(t, u, y, dst, one):
    """Operations on the shared tensors ``t`` (32 elements, any number of
    dims >= 1) and ``u`` (32 elements, 1 or 2 dims) that PyTorch serves
    without error in every interleaving."""
    return [
        # reads
        lambda: t.shape,
        lambda: t.size(),
        lambda: t.stride(),
        lambda: t.dim(),
        lambda: t.numel() == 32 or (_ for _ in ()).throw(AssertionError(t.numel())),
        lambda: t.is_contiguous(),
        lambda: t[0],
        lambda: t[0:1],
        lambda: t.reshape(-1)[3].item(),
        lambda: t.flatten().tolist(),
        lambda: t.clone(),
        lambda: t.contiguous(),
        lambda: t.numpy().sum(),
        lambda: np.asarray(u).shape,
        lambda: repr(t),
        lambda: t.double(),
        lambda: t.to(tc.float64),
        lambda: tc.tensor(t),
        lambda: t.data_ptr(),
        lambda: t._version,
        lambda: len(t),
        lambda: u.t(),
        # in-place metadata ops
        lambda: t.transpose_(0, -1),
        lambda: t.unsqueeze_(0),
        lambda: t.squeeze_(),
        lambda: t.resize_(4, 8),
        lambda: t.resize_(2, 2, 8),
        lambda: u.t_(),
        lambda: u.transpose_(0, -1),
        lambda: u.resize_(8, 4),
        lambda: u.resize_(32),
        lambda: u.as_strided_((4, 8), (8, 1)),
        # data writes and copies
        lambda: t.fill_(1.5),
        lambda: t.zero_(),
        lambda: t.copy_(one),
        lambda: u.copy_(one),
        lambda: dst.copy_(t.reshape(-1)),
        lambda: t.__setitem__(0, 2.0),
        lambda: y.__setitem__(slice(0, 32), t.reshape(-1)),
        lambda: u.__setitem__(Ellipsis, 0.5),
    ]


def test_threads_reading_and_mutating_one_tensor_raise_nothing():
    # Before the fix, a read or write of a tensor while another thread ran
    # an in-place op on it with the GIL released raised PyO3's
    # PanicException ("Already mutably borrowed", a BaseException) or
    # RuntimeError("Already borrowed"), about a million times in 2 s.
    t = tc.zeros(4, 8)
    u = tc.zeros(4, 8)
    y = tc.zeros(32)
    dst = tc.zeros(32)
    one = tc.tensor(1.0)
    ops = _ops(t, u, y, dst, one)
    errors = []
    counts = []
    start = threading.Barrier(6)

    def worker(seed):
        rng = random.Random(seed)
        n = 0
        start.wait()
        deadline = time.monotonic() + STRESS_SECONDS
        while time.monotonic() < deadline:
            op = rng.choice(ops)
            try:
                op()
            except BaseException as e:  # PanicException is a BaseException
                errors.append(repr(e))
                if len(errors) > 20:
                    return
            n += 1
        counts.append(n)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: more interleavings
    try:
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=60)
        assert not any(th.is_alive() for th in threads), "a worker hung"
    finally:
        sys.setswitchinterval(old)
    assert errors == []
    assert len(counts) == 6 and min(counts) > 0
    # Nothing was corrupted: 32 elements, readable, all one of the values
    # written.
    assert t.numel() == 32 and u.numel() == 32
    assert set(t.reshape(-1).tolist()) <= {0.0, 1.0, 1.5, 2.0}
    assert set(u.reshape(-1).tolist()) <= {0.0, 0.5, 1.0}


def test_reads_wait_for_a_resize_in_progress_then_see_it():
    # resize_ runs with the GIL released and the object's lock held: a
    # read from another thread waits for it (it does not fail) and then
    # sees the new shape.
    t = tc.zeros(1)
    shapes = []
    errors = []
    stop = threading.Event()

    def resizer():
        k = 0
        while not stop.is_set():
            k = (k + 1) % 50
            try:
                t.resize_(1 + k * 1000)
            except BaseException as e:
                errors.append(repr(e))
                return

    def reader():
        while not stop.is_set():
            try:
                n = t.shape[0]
                shapes.append(n)
                assert (n - 1) % 1000 == 0
                t[0].item()
                t.clone()
            except BaseException as e:
                errors.append(repr(e))
                return

    threads = [threading.Thread(target=resizer)] + [
        threading.Thread(target=reader) for _ in range(3)
    ]
    for th in threads:
        th.start()
    time.sleep(1.0)
    stop.set()
    for th in threads:
        th.join(timeout=60)
    assert errors == []
    assert len(shapes) > 0


def test_copy_from_self_and_index_by_self_do_not_deadlock():
    # Two locks of one object are never held at once: an argument that is
    # the tensor itself is read before the tensor's lock is taken.
    t = tc.arange(4)
    assert t.copy_(t) is t
    assert t.is_set_to(t)
    assert tc._C._same_impl(t, t)
    z = tc.tensor(1)
    assert t[z].item() == 1
    t[z] = z
    assert t.tolist() == [0, 1, 2, 3]
    # A tensor used as its own index: converted before the lock is taken
    # (torchcore has no advanced indexing: an error, not a hang).
    with pytest.raises(NotImplementedError):
        t[t]
    assert t.view_as(t).shape == (4,)
    assert t.resize_as_(t) is t
    assert t.set_(t) is t


def test_no_panic_exception_class_reachable_from_borrows():
    # The class is frozen: PyO3 keeps no borrow flag, so the "Already
    # borrowed" family of errors cannot occur at all.
    t = tc.zeros(2)
    held = t.numpy()  # a live export while metadata changes
    t.unsqueeze_(0)
    t.squeeze_(0)
    assert held.shape == (2,)


# ---- deep shapes -----------------------------------------------------------


def test_repr_of_fifty_thousand_dims_is_a_string():
    # PyTorch raises RecursionError from about 500 dims (its printer
    # recurses in Python); torchcore prints iteratively, so any number of
    # dims prints, and never crashes the interpreter (before: SIGSEGV).
    n = 50_000
    t = tc.zeros([1] * n)
    assert t.dim() == n
    s = repr(t)
    assert s == "tensor(" + "[" * n + "0." + "]" * n + ")"
    assert str(t) == s


def test_tolist_of_fifty_thousand_dims_nests_that_deep():
    # PyTorch returns the nested list; so does torchcore (before: SIGSEGV).
    n = 50_000
    t = tc.full([1] * n, 7)
    v = t.tolist()
    depth = 0
    while isinstance(v, list):
        assert len(v) == 1
        v = v[0]
        depth += 1
    assert depth == n and v == 7


def test_tolist_shapes_with_zero_sizes():
    assert tc.zeros(2, 0, 3).tolist() == [[], []]
    assert tc.zeros(0, 3).tolist() == []
    assert tc.arange(6).reshape(2, 1, 3).tolist() == [[[0, 1, 2]], [[3, 4, 5]]]


def _nested(depth, leaf=0, seq=list):
    x = leaf
    for _ in range(depth):
        x = seq([x])
    return x


def test_tensor_of_data_nested_too_deep_is_value_error():
    # PyTorch: MAX_DIMS = 128 for data read from sequences.
    assert tc.tensor(_nested(128)).dim() == 128
    for depth in (129, 1000, 30_000):
        with pytest.raises(ValueError, match=r"^too many dimensions 'list'$"):
            tc.tensor(_nested(depth))
    with pytest.raises(ValueError, match=r"^too many dimensions 'tuple'$"):
        tc.tensor(_nested(129, seq=tuple))


# ---- huge ints ---------------------------------------------------------------

OVERFLOW = r"^Overflow when unpacking long long$"
NO_INT64 = r"^value cannot be converted to type int64_t without overflow$"


@pytest.mark.parametrize("data", [[2**63], [-(2**63) - 1], 2**64, [[1], [2**100]]])
def test_tensor_of_huge_int_is_value_error(data):
    with pytest.raises(ValueError, match=OVERFLOW):
        tc.tensor(data)


def test_tensor_of_huge_int_as_float_is_read_as_float():
    assert tc.tensor([2**63, 1.0]).dtype == tc.float32
    assert tc.tensor(2**64, dtype=tc.float64).item() == float(2**64)
    with pytest.raises(ValueError, match=OVERFLOW):
        tc.tensor([2**63], dtype=tc.int64)
    with pytest.raises(OverflowError, match="int too large to convert to float"):
        tc.tensor(2**2000, dtype=tc.float64)


def test_fill_full_arange_linspace_with_huge_ints():
    assert tc.zeros(2).fill_(2**63).tolist() == [float(2**63)] * 2
    with pytest.raises(RuntimeError, match=NO_INT64):
        tc.zeros(2, dtype=tc.int64).fill_(2**64 - 1)
    with pytest.raises(
        RuntimeError, match="^value cannot be converted to type int8_t without overflow$"
    ):
        tc.zeros(2, dtype=tc.int8).fill_(2**63)
    assert tc.zeros(2, dtype=tc.bool).fill_(2**63).tolist() == [True, True]
    with pytest.raises(OverflowError):
        tc.zeros(2).fill_(2**70)
    with pytest.raises(OverflowError):
        tc.zeros(2).fill_(-(2**70))
    with pytest.raises(RuntimeError, match=NO_INT64):
        tc.full((2,), 2**63)
    assert tc.full((2,), 2**63, dtype=tc.float64).tolist() == [float(2**63)] * 2
    with pytest.raises(RuntimeError, match=NO_INT64):
        tc.arange(0, 2**63, 2**62)
    assert tc.linspace(0, 2**63, 3).shape == (3,)


@pytest.mark.parametrize(
    "call",
    [
        lambda: tc.zeros(2)[2**63],
        lambda: tc.zeros(2)[-(2**63) - 1],
        lambda: tc.zeros(2, 2)[0, 2**63],
        lambda: tc.zeros(2).__setitem__(0, 2**63),
        lambda: tc.zeros(2).__setitem__(2**63, 1),
        lambda: tc.zeros(2, dtype=tc.int64).__setitem__(slice(None), 2**63),
        lambda: tc.zeros(2).transpose(2**63, 0),
        lambda: tc.zeros(2, 2).transpose_(0, 2**63),
        lambda: tc.zeros(2).narrow(0, 2**63, 1),
        lambda: tc.zeros(2).narrow(0, 0, 2**63),
        lambda: tc.zeros(2).size(2**63),
        lambda: tc.zeros(2).size(-(2**63) - 1),
        lambda: tc.zeros(2).split(2**63),
        lambda: tc.zeros(2).chunk(2**63),
        lambda: tc.zeros(2).squeeze(2**63),
        lambda: tc.zeros(2).unsqueeze(2**63),
        lambda: tc.zeros(2).as_strided((2,), (1,), 2**63),
        lambda: tc.eye(2**63),
        lambda: tc.linspace(0, 1, 2**63),
    ],
)
def test_int_arguments_past_int64_are_value_error(call):
    with pytest.raises(ValueError) as e:
        call()
    # PyTorch's text; for typed parameters PyO3 adds a note naming the
    # argument ("while processing 'dim'"), shown in tracebacks only.
    assert str(e.value) == "Overflow when unpacking long long"


@pytest.mark.parametrize(
    "call, what, pos",
    [
        (lambda: tc.zeros(2**63), "zeros(): argument 'size'", 1),
        (lambda: tc.zeros((2**63,)), "zeros(): argument 'size'", 1),
        (lambda: tc.zeros(2, 2**63), "zeros(): argument 'size'", 2),
        (lambda: tc.zeros(2).view([2**63]), "view(): argument 'size'", 1),
        (lambda: tc.zeros(2).reshape(2**63), "reshape(): argument 'shape'", 1),
        (lambda: tc.zeros(1).expand(2**63), "expand(): argument 'size'", 1),
        (lambda: tc.zeros(2).resize_(2**63), "resize_(): argument 'size'", 1),
        (lambda: tc.zeros(2).permute(2**63), "permute(): argument 'dims'", 1),
        (lambda: tc.empty_strided((2,), (2**63,)), "empty_strided(): argument 'stride'", 1),
        (lambda: tc.full((2**63,), 1.0), "full(): argument 'size'", 1),
    ],
)
def test_sizes_past_int64_are_type_error(call, what, pos):
    want = (
        f"{what} failed to unpack the object at pos {pos} with error "
        '"Overflow when unpacking long long"'
    )
    with pytest.raises(TypeError) as e:
        call()
    assert str(e.value) == want


def test_huge_slice_bounds_clamp():
    assert tc.zeros(2)[2**63 : 2**64].shape == (0,)
    assert tc.zeros(2)[-(2**70) :].shape == (2,)


# ---- no Rust panic reaches Python ------------------------------------------

I64_EDGES = [
    -(2**63), -(2**63) + 1, -(2**62), -(2**31), -3, -2, -1, 0, 1, 2, 3,
    2**31, 2**62, 2**63 - 2, 2**63 - 1,
]


def _small(*xs):
    return all(abs(x) < 2**20 for x in xs)


def _calls(t):
    """Calls taking 1, 2 or 3 ints, on tensor ``t``. Guards keep out the
    calls whose *result* is legitimately huge (millions of tensors or
    elements), which PyTorch would build too."""
    has_empty = 0 in t.shape
    return {
        1: [
            lambda a: t.size(a), lambda a: t.stride(a), lambda a: t.select(0, a),
            lambda a: t.unsqueeze(a), lambda a: t.squeeze(a),
            lambda a: t.chunk(a) if _small(a) or not has_empty else None,
            lambda a: t.split(a), lambda a: t.unbind(a), lambda a: t.flatten(a),
            lambda a: t[a], lambda a: t[a:], lambda a: t[:a], lambda a: t[::a],
            lambda a: t.clone().unsqueeze_(a),
            lambda a: t.clone().resize_(a) if _small(a) else None,
            lambda a: t.view(a), lambda a: t.reshape(a), lambda a: t.expand(a),
            lambda a: t.narrow(0, a, 1),
            lambda a: t.tensor_split(a) if _small(a) else t.tensor_split([a]),
            lambda a: t.clone().__setitem__(a, 1.0), lambda a: t.movedim(a, 0),
            lambda a: t.clone().fill_(a), lambda a: t.permute(a),
            lambda a: t.unflatten(0, (a, -1)), lambda a: t.as_strided((1,), (1,), a),
        ],
        2: [
            lambda a, b: t.transpose(a, b), lambda a, b: t.select(a, b),
            lambda a, b: t.narrow(0, a, b), lambda a, b: t.flatten(a, b),
            lambda a, b: t[a:b], lambda a, b: t[a, b], lambda a, b: t.swapaxes(a, b),
            lambda a, b: t.unfold(a, b, 1), lambda a, b: t.diagonal(a, 0, 1),
            lambda a, b: t.movedim(a, b),
            lambda a, b: t.split(a, b) if a > 0 else None,
            lambda a, b: t.chunk(a, b) if _small(a) or not has_empty else None,
            lambda a, b: t.clone().transpose_(a, b), lambda a, b: t.view(a, b),
            lambda a, b: t.as_strided((a,), (b,)), lambda a, b: t.unflatten(a, (b, -1)),
            lambda a, b: tc.empty_strided((a,), (b,)) if _small(a, b)
            else tc.empty_strided((2, a), (b, 0)) if _small(b) else None,
            lambda a, b: tc.arange(a, b) if _small(b - a)
            else tc.arange(a, b, max(1, abs(b - a) // 4)),
        ],
        3: [
            lambda a, b, c: t.narrow(a, b, c), lambda a, b, c: t[a:b:c],
            lambda a, b, c: t.diagonal(a, b, c), lambda a, b, c: t.unfold(a, b, c),
            lambda a, b, c: t.as_strided((2, a), (b, 1), c),
            lambda a, b, c: tc.arange(a, b, c) if c != 0 and _small((b - a) // c) else None,
            lambda a, b, c: tc.linspace(a, b, c) if c < 2**16 else None,
        ],
    }


def test_extreme_int_arguments_never_panic():
    # 51 methods x every combination of 1-3 ints from I64_EDGES x 5
    # tensors (about 140,000 calls, a few seconds): every failure must be an
    # ordinary exception (a Rust panic would surface as PyO3's
    # PanicException, a BaseException; the debug build checks overflow).
    import itertools

    bases = lambda: [
        tc.zeros(3, 4), tc.zeros(0), tc.zeros(()), tc.zeros(2, 1, 3),
        tc.arange(6).reshape(2, 3).t(),
    ]
    n_calls = 0
    escaped = []
    for arity in (1, 2, 3):
        for args in itertools.product(I64_EDGES, repeat=arity):
            for t in bases():
                for f in _calls(t)[arity]:
                    n_calls += 1
                    try:
                        r = f(*args)
                        if isinstance(r, tc.Tensor) and r.numel() < 10_000:
                            repr(r)
                    except Exception:
                        pass
                    except BaseException as e:
                        escaped.append((arity, args, type(e).__name__, str(e)[:200]))
    assert n_calls > 100_000
    assert escaped == []


def test_resize_to_the_same_sizes_restrides_only_with_a_memory_format():
    # PyTorch 2.15: `x.t().resize_(4, 3)` keeps strides (1, 4); with
    # `memory_format=torch.contiguous_format` it restrides to (3, 1).
    x = tc.zeros(3, 4).t()
    x.resize_(4, 3)
    assert x.stride() == (1, 4)
    x.resize_(4, 3, memory_format=None)
    assert x.stride() == (1, 4)
    x.resize_(4, 3, memory_format=tc.contiguous_format)
    assert x.stride() == (3, 1)
    y = tc.zeros(3, 4).t()
    y.resize_as_(tc.zeros(4, 3))
    assert y.stride() == (1, 4)


def test_swapaxes_and_swapdims_in_place_transpose_like_transpose_():
    for name in ("swapaxes_", "swapdims_"):
        x = tc.arange(24).view(2, 3, 4)
        before = x._version
        out = getattr(x, name)(0, 2)
        assert out is x
        assert tuple(x.shape) == (4, 3, 2)
        assert tuple(x.stride()) == (1, 4, 12)
        assert x._version == before + 1  # torch 2.15 bumps it, as for transpose_
        with pytest.raises(IndexError, match="Dimension out of range"):
            getattr(x, name)(0, 3)
