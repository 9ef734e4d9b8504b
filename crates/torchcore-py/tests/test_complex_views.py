"""Complex views (``real``, ``imag`` and their setters, ``view_as_real``,
``view_as_complex``) and the conjugate / negative bits (``conj``,
``_neg_view``, ``is_conj``, ``is_neg``, ``resolve_conj``, ``resolve_neg``,
``conj_physical``, ``H``, ``mH``, ``adjoint``; copies, printing, reads and
NumPy / DLPack export through the bits), side by side with torch where it
is importable: geometry, dtype, bits, ``_base``, values, and the exception
class and message of every refusal."""

import re
import warnings

import pytest

import torchcore as tc

try:
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

needs_torch = pytest.mark.skipif(
    torch is None, reason="torch is not importable: the side-by-side comparisons with torch are skipped"
)


def message(e):
    return re.sub(r" \(Triggered internally at .*\)$", "", str(e).split("\n")[0])


def is_complex(t):
    return str(t.dtype).startswith("torch.complex")


def facts(mod, expr):
    """What `expr` gives with `mod` bound: geometry, dtype, bits, view
    tracking and values, or the exception class and message."""
    c = mod.view_as_complex(mod.arange(8.0).view(4, 2).clone())
    x = mod.arange(8.0)
    env = {"mod": mod, "c": c, "x": x}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = eval(expr, env)
        except Exception as e:  # noqa: BLE001 - the class is compared
            return (type(e).__name__, message(e))
    if isinstance(r, bool):
        return r
    base = r._base
    return (
        tuple(r.shape), r.stride(), r.storage_offset(), str(r.dtype),
        r.is_conj(), r.is_neg(), r._is_view(),
        None if base is None else ("c" if base is c else "x" if base is x else "other"),
        r is c or r is x,
        [r.real.tolist(), r.imag.tolist()] if is_complex(r) else r.tolist(),
    )


CASES = [
    # view_as_real
    "mod.view_as_real(c)", "mod.view_as_real(c[1:])", "mod.view_as_real(c[::2])",
    "mod.view_as_real(c[0])", "mod.view_as_real(x)", "mod.view_as_real(mod.arange(4))",
    "mod.view_as_real(c.conj())", "mod.view_as_real(mod._neg_view(c))",
    # view_as_complex
    "mod.view_as_complex(x)", "mod.view_as_complex(x.view(4, 2)[1:])",
    "mod.view_as_complex(x[1:7].view(3, 2))", "mod.view_as_complex(x.view(2, 4)[:, :2])",
    "mod.view_as_complex(x.view(2, 4).t())", "mod.view_as_complex(x.as_strided((2, 2), (3, 1)))",
    "mod.view_as_complex(mod.arange(8).view(4, 2))",
    "mod.view_as_complex(mod.zeros(4, 2, dtype=mod.float64))",
    "mod.view_as_complex(mod.zeros(4, 2, dtype=mod.bfloat16))",
    "mod.view_as_complex(mod.zeros((), dtype=mod.float64))",
    "mod.view_as_complex(mod.zeros(0, 2))", "mod.view_as_complex(mod.zeros(2, 2).expand(3, 2, 2))",
    "mod.view_as_complex(mod.zeros(2, 1).expand(2, 2))",
    # real / imag
    "x.real", "x.imag", "c.real", "c.imag", "c.conj().real", "c.conj().imag",
    "mod._neg_view(c).conj().imag", "mod.arange(3).real", "mod.real(c)", "mod.imag(c)",
    # conj and the bits
    "c.conj()", "x.conj()", "c.conj().conj()", "c.conj()[1:]", "c.conj().view(2, 2)",
    "mod.conj(c)", "c._conj()", "c.is_conj()", "c.conj().is_conj()", "x.is_neg()",
    "mod._neg_view(x)", "mod._neg_view(mod._neg_view(x))",
    "mod._neg_view(mod.tensor([1, 2], dtype=mod.uint8))", "x._neg_view()",
    "c.conj().resolve_conj()", "c.resolve_conj()", "mod._neg_view(c).conj().resolve_conj()",
    "mod._neg_view(x).resolve_neg()", "x.resolve_neg()", "mod.resolve_conj(c.conj())",
    "c.conj_physical()", "c.conj().conj_physical()", "x.conj_physical()", "mod._neg_view(c).conj_physical()",
    "c.conj().clone()", "c.conj().contiguous()", "c.conj().to(mod.complex128)",
    "c.conj().view(mod.float32)", "c.conj().view(mod.complex64)", "mod._neg_view(x).view(mod.int32)",
    "mod.zeros(4, dtype=mod.complex64).copy_(c.conj())",
    "mod.zeros(4, dtype=mod.complex64).conj().copy_(c)",
    "mod.view_as_real(mod.zeros(4, dtype=mod.complex64).conj().copy_(c)._conj())",
    "mod._neg_view(mod.zeros(2)).copy_(mod.tensor([1.0, 2.0]))._neg_view()",
    "mod._neg_view(mod.zeros(2)).fill_(3)._neg_view()",
    "mod.view_as_real(c.clone().conj().fill_(1)._conj())",
    # conjugate transposes
    "c.view(1, 4).H", "c.H", "x.view(2, 4).H", "mod.zeros(2, 2, 2).H", "c.view(1, 4).mH", "c.mH",
    "c.view(1, 4).adjoint()", "c.adjoint()", "c.view(1, 4, 1).mH", "c.conj().view(4, 1).H",
    "mod.tensor(1.0).H", "mod.tensor(1.0).mH", "mod.adjoint(c.view(2, 2))",
]


@needs_torch
@pytest.mark.parametrize("expr", CASES)
def test_as_torch(expr):
    assert facts(tc, expr) == facts(torch, expr)


@pytest.mark.parametrize("expr", CASES)
def test_runs_without_torch(expr):
    facts(tc, expr)  # never a Rust panic, whatever the case


@needs_torch
def test_setters_write_through():
    for mod in (tc, torch):
        c = mod.view_as_complex(mod.arange(8.0).view(4, 2).clone())
        c.real = mod.tensor([9.0, 9.0, 9.0, 9.0])
        c.imag = 5
        assert mod.view_as_real(c).tolist() == [[9.0, 5.0]] * 4
        y = mod.arange(3.0)
        y.real = mod.zeros(3)
        assert y.tolist() == [0.0, 0.0, 0.0]
    for setter in ("y.imag = mod.zeros(3)", "c.real = mod.zeros(3)"):
        got = []
        for mod in (tc, torch):
            y = mod.arange(3.0)
            c = mod.view_as_complex(mod.arange(8.0).view(4, 2).clone())
            with pytest.raises(Exception) as e:
                exec(setter, {"mod": mod, "y": y, "c": c})
            got.append((e.type.__name__, message(e.value)))
        assert got[0] == got[1], setter


def test_neg_view_of_bool_is_refused_up_front():
    # torch makes the view and fails on the first read ("neg_cpu" not
    # implemented for 'Bool'); torchcore refuses when making it, with that
    # error (docs/pytorch-map.md).
    with pytest.raises(NotImplementedError, match="\"neg_cpu\" not implemented for 'Bool'"):
        tc._neg_view(tc.tensor([True]))


def test_setter_through_a_conjugate_stores_the_conjugate():
    c = tc.view_as_complex(tc.zeros(2, 2))
    cc = c.conj()
    cc.imag = 1.0
    assert tc.view_as_real(c).tolist() == [[0.0, -1.0], [0.0, -1.0]]


@needs_torch
def test_printing_honours_the_bits():
    for expr in ["c.conj()", "mod._neg_view(mod.tensor([0.0, 1.0]))", "mod._neg_view(c)",
                 "c.conj()[0]", "c.conj().imag"]:
        reprs = []
        for mod in (tc, torch):
            c = mod.tensor([1.0, 2.0, 3.0, -4.0]).view(2, 2)
            c = mod.view_as_complex(c)
            reprs.append(repr(eval(expr, {"mod": mod, "c": c})))
        assert reprs[0] == reprs[1], expr


@needs_torch
def test_numpy_and_dlpack_refusals():
    pytest.importorskip("numpy")
    for expr in ["c.conj().numpy()", "c.conj().imag.numpy()", "c.conj().__dlpack__()"]:
        got = []
        for mod in (tc, torch):
            c = mod.view_as_complex(mod.arange(4.0).view(2, 2))
            with pytest.raises(Exception) as e:
                eval(expr, {"c": c})
            got.append((e.type.__name__, message(e.value)))
        assert got[0] == got[1], expr
    # A negative view exports its stored values, as torch 2.15 does.
    import numpy as np
    n = tc._neg_view(tc.arange(3.0))
    assert np.from_dlpack(n).tolist() == [0.0, 1.0, 2.0]
    # Resolved, a conjugate exports.
    c = tc.view_as_complex(tc.arange(4.0).view(2, 2))
    assert np.asarray(c.conj().resolve_conj()).tolist() == [-1j, 2 - 3j]


def test_base_of_complex_views_is_the_root_object():
    x = tc.arange(8.0)
    c = tc.view_as_complex(x.view(4, 2))
    for v in (c, tc.view_as_real(c), c.real, c.imag, c.conj(), c.conj().imag, c.view(2, 2).mH):
        assert v._base is x
