"""`t.requires_grad = flag` and `t.requires_grad_(flag)`: PyTorch's errors
(non-bool, non-leaf, integer dtype) in its order; compared with torch
where installed."""
import pytest

import torchcore as tc


def test_setter_errors():
    with pytest.raises(RuntimeError, match="^requires_grad must be a bool$"):
        tc.ones(2).requires_grad = 1
    v = tc.ones(2, requires_grad=True)[1:]
    with pytest.raises(RuntimeError, match=r"^you can only change requires_grad flags of leaf variables\.$"):
        v.requires_grad = True
    with pytest.raises(RuntimeError, match=r"use var_no_grad = var\.detach\(\)\.$"):
        v.requires_grad = False
    with pytest.raises(RuntimeError, match="^only Tensors of floating point and complex dtype"):
        tc.arange(3).requires_grad = True
    t = tc.ones(2)
    t.requires_grad = True
    assert t.requires_grad and t.is_leaf
    with pytest.raises(TypeError, match=r"argument 'requires_grad' \(position 1\) must be bool, not int"):
        t.requires_grad_(1)


def _set(x, v):
    x.requires_grad = v
    return x.requires_grad, x.is_leaf


CASES = [
    "S(M.arange(3), True)",
    "S(M.arange(3), False)",
    "S(M.ones(2), True)",
    "S(M.ones(2, requires_grad=True)[1:], False)",
    "S(M.ones(2, requires_grad=True)[1:], True)",
    "S(M.ones(2, dtype=M.complex64), True)",
    "S(M.ones(2, dtype=M.bool), True)",
    "S(M.ones(2), None)",
    "S(M.ones(2), 1)",
    "S(M.ones(2), 'a')",
    "M.arange(3).requires_grad_(True).requires_grad",
    "M.ones(2, requires_grad=True)[1:].requires_grad_(False)",
    "M.ones(2).requires_grad_(1).requires_grad",
    "M.ones(2).requires_grad_().requires_grad",
    "M.ones(2, requires_grad=True).requires_grad_(False).requires_grad",
]


def outcome(m, expr):
    try:
        r = eval(expr, {"M": m, "S": _set})
    except Exception as e:  # noqa: BLE001 - compared as class and text
        return type(e).__name__, str(e)
    return repr(r) if not isinstance(r, m.Tensor) else "tensor"


@pytest.mark.parametrize("expr", CASES)
def test_same_as_torch(expr):
    torch = pytest.importorskip("torch")
    assert outcome(tc, expr) == outcome(torch, expr)
