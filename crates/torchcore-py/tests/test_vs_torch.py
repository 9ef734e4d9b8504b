"""Side by side with torch: every operation runs in torchcore and in torch on
the same inputs; sizes, strides, storage offset, aliasing, ``_version``,
values, exception class and message must agree.  Skipped when torch is not
importable."""

import re

import pytest

torch = pytest.importorskip(
    "torch", reason="torch is not importable: the side-by-side comparisons with torch are skipped"
)

from hypothesis import given, strategies as st  # noqa: E402

import torchcore as tc  # noqa: E402

DTYPES = ["float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool", "float16"]


def make(mod, shape, dtype="float32"):
    n = 1
    for s in shape:
        n *= s
    base = mod.arange(n, dtype=mod.int64)
    if dtype == "bool":
        base = base.remainder(2) if mod is torch else None
    t = mod.arange(n, dtype=getattr(mod, "int64"))
    t = t.to(getattr(mod, dtype)) if dtype != "bool" else (
        mod.tensor([i % 2 == 1 for i in range(n)], dtype=mod.bool))
    return t.reshape(shape) if shape != () else t.reshape(())


def message(e):
    """The first line, without libtorch's "(Triggered internally at <file>)"."""
    return re.sub(r" \(Triggered internally at .*\)$", "", str(e).split("\n")[0])


def run(mod, x, expr):
    try:
        return ("ok", eval(expr, {"x": x, "m": mod}))
    except Exception as e:  # noqa: BLE001
        return ("err", type(e).__name__, message(e))


def storage_ptr(t):
    return t.untyped_storage().data_ptr()


def check_same(a, b, xa, xb, what):
    if isinstance(b, (tuple, list)):
        assert isinstance(a, (tuple, list)) and len(a) == len(b), what
        for i, (p, q) in enumerate(zip(a, b)):
            check_same(p, q, xa, xb, f"{what}[{i}]")
        return
    if isinstance(b, torch.Tensor):
        assert isinstance(a, tc.Tensor), what
        assert tuple(a.shape) == tuple(b.shape), what
        assert a.stride() == b.stride(), what
        assert a.storage_offset() == b.storage_offset(), what
        assert repr(a.dtype) == repr(b.dtype), what
        assert (storage_ptr(a) == storage_ptr(xa)) == (storage_ptr(b) == storage_ptr(xb)), f"{what}: aliasing"
        assert a.is_contiguous() == b.is_contiguous(), what
        assert a._version == b._version, f"{what}: _version {a._version} vs {b._version}"
        assert a.tolist() == b.tolist(), what
        assert (a is xa) == (b is xb), f"{what}: identity"
        return
    assert a == b, what


def compare(shape, dtype, expr):
    xa, xb = make(tc, shape, dtype), make(torch, shape, dtype)
    ra, rb = run(tc, xa, expr), run(torch, xb, expr)
    assert ra[0] == rb[0], f"{expr} on {shape}: torchcore {ra} vs torch {rb}"
    if rb[0] == "err":
        assert ra[1:] == rb[1:], f"{expr} on {shape}"
        return
    check_same(ra[1], rb[1], xa, xb, expr)
    # The input afterwards (in-place ops, writes through views).
    check_same(xa, xb, xa, xb, f"{expr}: input after")


CASES = [
    ((2, 3, 4), "x.view(6, 4)"), ((2, 3, 4), "x.view(-1)"), ((2, 3, 4), "x.view(5, 5)"),
    ((2, 3, 4), "x.view(-1, -1)"), ((2, 3, 4), "x.t()"), ((3, 4), "x.t()"), ((3, 4), "x.T"),
    ((2, 3, 4), "x.mT"), ((2, 3, 4), "x.T"), ((2, 3, 4), "x.transpose(0, 2)"),
    ((2, 3, 4), "x.transpose(0, 3)"), ((2, 3, 4), "x.permute(2, 0, 1)"),
    ((2, 3, 4), "x.permute(0, 0, 1)"), ((2, 3, 4), "x.narrow(1, 1, 2)"),
    ((2, 3, 4), "x.narrow(1, 2, 2)"), ((2, 3, 4), "x.select(2, -1)"), ((2, 3, 4), "x.select(2, 4)"),
    ((3, 1), "x.expand(2, 3, 4)"), ((3, 1), "x.expand(3, 2)"), ((2, 3, 4), "x.expand(3, 4)"),
    ((1, 3, 1), "x.squeeze()"), ((1, 3, 1), "x.squeeze(0)"), ((1, 3, 1), "x.squeeze((0, 2))"),
    ((2, 3), "x.unsqueeze(2)"), ((2, 3), "x.unsqueeze(-1)"), ((2, 3), "x.unsqueeze(4)"),
    ((2, 3, 4), "x.flatten()"), ((2, 3, 4), "x.flatten(1)"), ((2, 3, 4), "x.t().flatten()"),
    ((2, 12), "x.unflatten(1, (3, 4))"), ((2, 12), "x.unflatten(1, (5, -1))"),
    ((7, 3), "x.split(2)"), ((7, 3), "x.split([3, 4])"), ((7, 3), "x.chunk(3)"),
    ((7, 3), "x.unbind(1)"), ((4, 5), "x.diagonal()"), ((4, 5), "x.diagonal(1, 1, 0)"),
    ((10,), "x.unfold(0, 3, 2)"), ((2, 3, 4), "x.movedim(0, 2)"), ((2, 3, 4), "x.movedim((0, 1), (2, 0))"),
    ((3, 4), "x.as_strided((2, 2), (1, 2), 1)"), ((3, 4), "x.as_strided((20,), (1,))"),
    ((3, 4), "x.contiguous()"), ((3, 4), "x.t().contiguous()"), ((3, 4), "x.clone()"),
    ((3, 4), "x.t().clone()"), ((3, 4), "x.reshape(4, 3)"), ((3, 4), "x.t().reshape(12)"),
    ((3, 4), "x.copy_(x.t().t() * 0 if False else x.flip(0) if False else x)"),
    ((3, 4), "x.fill_(7)"), ((3, 4), "x.zero_()"), ((3, 4), "x.t_()"), ((2, 3, 4), "x.t_()"),
    ((3, 4), "x.transpose_(0, 1)"), ((3, 4), "x.unsqueeze_(1)"), ((1, 3, 1), "x.squeeze_()"),
    ((3, 4), "x.resize_(2, 2)"), ((3, 4), "(x.resize_(5, 5), x.fill_(1))[1]"), ((3, 4), "x.as_strided_((2,), (3,), 2)"),
    ((3, 4), "x.set_(x[1:].t())"), ((3, 4), "x.set_()"), ((3, 4), "x.set_(m.zeros(2, 5))"),
    ((3, 4), "x.set_(x.untyped_storage(), 2, (2, 3), (1, 2))"), ((3, 4), "x.set_(x.untyped_storage(), 2, (5,))"),
    ((3, 4), "x.resize_as_(m.zeros(2, 2))"), ((3, 4), "x.squeeze_(0)"), ((1, 4), "x.squeeze_(0)"),
    ((3, 4), "x.to(x.dtype)"), ((3, 4), "x.float()"), ((3, 4), "x.double()"), ((3, 4), "x.long()"),
    ((3, 4), "x.detach()"), ((3, 4), "x.view_as(x.t())"), ((3, 4), "x.expand_as(x)"),
    ((3, 4), "x.view(m.float32)"), ((3, 4), "x.view(m.int16)"),
    ((6, 4), "x[1]"), ((6, 4), "x[-1, 2]"), ((6, 4), "x[1:5:2]"), ((6, 4), "x[..., 1]"),
    ((6, 4), "x[None, :, None]"), ((6, 4), "x[3, 1:5]"), ((6, 4), "x[6]"), ((6, 4), "x[0, 0, 0]"),
    ((6, 4), "x[::-1]"), ((6, 4), "x[::0]"), ((6, 4), "x[..., ...]"), ((6, 4), "x[1.5]"),
    ((6, 4), "x[10:]"), ((6, 4), "x[-100:2]"), ((), "x[None]"), ((), "x[...]"), ((), "x[0]"),
    ((6, 4), "x.__setitem__((1, slice(None)), 5)"), ((6, 4), "x.__setitem__((slice(None), 0), x[:, 1])"),
    ((3, 4), "x.tolist()"), ((), "x.item()"), ((3, 4), "x.item()"), ((3, 4), "len(x)"), ((), "len(x)"),
    ((3, 4), "list(x)"), ((3, 4), "x.numel()"), ((3, 4), "x.element_size()"), ((3, 4), "x.nbytes"),
    ((3, 4), "x.ndim"), ((3, 4), "x.dim()"), ((3, 4), "x.size(1)"), ((3, 4), "x.size(-3)"),
    ((3, 4), "x.stride(0)"), ((3, 4), "x.is_contiguous()"), ((3, 4), "x.t().is_contiguous()"),
    ((3, 4), "x.requires_grad"), ((3, 4), "x.is_leaf"), ((3, 4), "repr(x)"), ((3, 4), "repr(x.t()[1:])"),
    ((3, 4), "str(x.shape)"), ((0, 3), "repr(x)"), ((), "repr(x)"), ((3, 4), "repr(x.dtype)"),
    # Ints past int64 (issue #25): PyTorch's class and message.
    ((2, 3), "x[2**63]"), ((2, 3), "x[0, -2**63 - 1]"), ((2, 3), "x[2**63:2**64]"),
    ((2, 3), "x.transpose(2**63, 0)"), ((2, 3), "x.narrow(0, 0, 2**63)"), ((2, 3), "x.size(2**63)"),
    ((2, 3), "x.unsqueeze(2**63)"), ((2, 3), "x.split(2**63)"), ((2, 3), "x.chunk(2**63)"),
    ((2, 3), "x.as_strided((2,), (1,), 2**63)"), ((2, 3), "x.__setitem__(0, 2**63)"),
    ((2, 3), "x.__setitem__(2**63, 1)"), ((2, 3), "x.fill_(2**63)"), ((2, 3), "x.fill_(2**70)"),
    ((2, 3), "x.fill_(-2**70)"), ((2, 3), "x.long().fill_(2**64 - 1)"),
    ((2, 3), "x.to(m.int8).fill_(2**63)"), ((2, 3), "x.bool().fill_(2**63)"),
]


@pytest.mark.parametrize("shape,expr", CASES, ids=[f"{s}-{e}" for s, e in CASES])
def test_case(shape, expr):
    dtype = "float32"
    if "requires_grad" in expr or "is_leaf" in expr:
        dtype = "float32"
    compare(shape, dtype, expr)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("expr", ["repr(x)", "x.tolist()", "x.t().clone()", "x[1:, ::2]"])
def test_dtypes(dtype, expr):
    compare((3, 4), dtype, expr)


FACTORIES = [
    "m.empty(3, 4).shape", "m.zeros(2, 3)", "m.ones((2, 3), dtype=m.int32)", "m.full((2, 2), 7)",
    "m.full((2,), 1.5)", "m.full((2,), True)", "m.arange(5)", "m.arange(1, 4, 0.5)", "m.arange(0, 10, 3)",
    "m.arange(0, 1, 0)", "m.empty_strided((2, 3), (1, 2)).stride()", "m.eye(3)", "m.eye(2, 4, dtype=m.int64)",
    "m.linspace(0, 1, 5)", "m.linspace(0, 10, 4, dtype=m.int64)", "m.tensor([[1, 2], [3, 4]])",
    "m.tensor([1, 2.5])", "m.tensor([True, False])", "m.tensor([True, 2])", "m.tensor(3.0)", "m.tensor(7)",
    "m.tensor([])", "m.tensor([[1, 2], [3]])", "m.tensor([1, 2], dtype=m.float64)", "m.tensor('a')",
    "m.zeros(2, dtype=m.float16)", "repr(m.tensor([1e-5, 1e5]))", "repr(m.tensor([0.1, 200.0]))",
    "repr(m.arange(2000).view(40, 50))", "repr(m.tensor([[True]]))", "repr(m.zeros(2, requires_grad=True))",
    # Ints past int64 and deep data (issue #25).
    "m.tensor([2**63])", "m.tensor([-2**63 - 1])", "m.tensor(2**64)", "m.tensor([2**63, 1.0])",
    "m.tensor(2**64, dtype=m.float64)", "m.tensor(2**2000, dtype=m.float64)",
    "m.tensor([2**63], dtype=m.int64)", "m.full((2,), 2**63)", "m.full((2,), 2**63, dtype=m.float64)",
    "m.full((2,), 2**70)", "m.full((2,), -2**63 - 1)", "m.arange(0, 2**63, 2**62)",
    "m.linspace(0, 2**63, 3)", "m.linspace(0, 1, 2**63)", "m.eye(2**63)",
    "m.tensor(eval('[' * 128 + '0' + ']' * 128))", "m.tensor(eval('[' * 129 + '0' + ']' * 129))",
    "m.tensor(eval('(' * 129 + '0' + ',)' * 129))", "m.tensor(eval('[' * 30000 + ']' * 30000))",
    "repr(m.zeros([1] * 300))", "repr(m.arange(4.).reshape(2, 1, 1, 1, 2))",
    "len(m.zeros([1] * 20000).tolist())",
]


@pytest.mark.parametrize(
    "expr",
    [
        "m.zeros(2**63)", "m.zeros(2, 2**63)", "m.zeros(2).view([2**63])", "m.zeros(2).reshape(2**63)",
        "m.zeros(1).expand(2**63)", "m.zeros(2).resize_(2**63)", "m.zeros(2).permute(2**63)",
        "m.empty_strided((2,), (2**63,))", "m.full((2**63,), 1.0)",
    ],
)
def test_size_overflow_messages(expr):
    # PyTorch's message continues with a C++ backtrace after its first
    # line and closes the quote after it; torchcore's is that first line
    # with the quote closed.
    ra, rb = run(tc, None, expr), run(torch, None, expr)
    assert rb[:2] == ("err", "TypeError"), rb
    assert ra == ("err", "TypeError", rb[2] + '"'), expr


@pytest.mark.parametrize("expr", FACTORIES)
def test_factories(expr):
    ra, rb = run(tc, None, expr), run(torch, None, expr)
    assert ra[0] == rb[0], f"{expr}: torchcore {ra} vs torch {rb}"
    if rb[0] == "err":
        assert ra[1:] == rb[1:], expr
        return
    a, b = ra[1], rb[1]
    if isinstance(b, torch.Tensor):
        check_same(a, b, a, b, expr)
    else:
        assert tuple(a) == tuple(b) if isinstance(b, tuple) else a == b, expr


def test_dlpack_both_ways():
    a = tc.arange(6).view(2, 3)
    b = torch.from_dlpack(a)
    b[0, 0] = 99
    assert a[0, 0].item() == 99
    assert b.stride() == a.stride()
    c = torch.arange(6.0).view(3, 2).t()
    d = tc.from_dlpack(c)
    d[1, 2] = -1
    assert c[1, 2].item() == -1
    assert d.stride() == c.stride()
    del c
    assert d.tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, -1.0]]


# ---- random chains (Hypothesis) -------------------------------------------

def op_strategy(ndim_hint):
    d = st.integers(-4, 4)
    return st.one_of(
        st.tuples(st.just("t"), st.just(())),
        st.tuples(st.just("transpose"), st.tuples(d, d)),
        st.tuples(st.just("unsqueeze"), st.tuples(d)),
        st.tuples(st.just("squeeze"), st.tuples(d)),
        st.tuples(st.just("narrow"), st.tuples(d, st.integers(-3, 3), st.integers(0, 3))),
        st.tuples(st.just("select"), st.tuples(d, st.integers(-3, 3))),
        st.tuples(st.just("flatten"), st.tuples(d, d)),
        st.tuples(st.just("diagonal"), st.tuples(st.integers(-2, 2), d, d)),
        st.tuples(st.just("unfold"), st.tuples(d, st.integers(0, 3), st.integers(1, 2))),
        st.tuples(st.just("movedim"), st.tuples(d, d)),
        st.tuples(st.just("reshape"), st.tuples(st.integers(-1, 6), st.integers(-1, 4))),
        st.tuples(st.just("view"), st.tuples(st.integers(-1, 6))),
        st.tuples(st.just("expand"), st.tuples(st.integers(1, 3))),
        st.tuples(st.just("contiguous"), st.just(())),
        st.tuples(st.just("clone"), st.just(())),
        st.tuples(st.just("t_"), st.just(())),
        st.tuples(st.just("unsqueeze_"), st.tuples(d)),
        st.tuples(st.just("squeeze_"), st.tuples(d)),
        st.tuples(st.just("transpose_"), st.tuples(d, d)),
        st.tuples(st.just("fill_"), st.tuples(st.integers(-5, 5))),
        st.tuples(st.just("getitem"), st.tuples(st.integers(-3, 3), st.integers(0, 3), st.integers(1, 3))),
        st.tuples(st.just("setitem"), st.tuples(st.integers(-3, 3), st.integers(-9, 9))),
    )


def apply(x, op, args):
    if op == "expand":
        return x.expand(args[0], *x.shape)
    if op == "getitem":
        i, s, k = args
        return x[i % 7 - 3 if False else i, s::k] if x.dim() >= 2 else x[s::k]
    if op == "setitem":
        x[args[0]] = args[1]
        return x
    return getattr(x, op)(*args)


@given(
    shape=st.lists(st.integers(0, 4), min_size=0, max_size=4),
    ops=st.lists(op_strategy(3), min_size=1, max_size=6),
)
def test_random_chains(shape, ops):
    xa, xb = make(tc, tuple(shape)), make(torch, tuple(shape))
    ca, cb = xa, xb
    for op, args in ops:
        ea = eb = None
        try:
            na = apply(ca, op, args)
        except Exception as e:  # noqa: BLE001
            ea = (type(e).__name__, message(e))
        try:
            nb = apply(cb, op, args)
        except Exception as e:  # noqa: BLE001
            eb = (type(e).__name__, message(e))
        assert ea == eb, f"{op}{args} on {tuple(cb.shape)}: torchcore {ea} vs torch {eb}"
        if eb is not None:
            return
        check_same(na, nb, xa, xb, f"{op}{args}")
        check_same(xa, xb, xa, xb, f"{op}{args}: base")
        ca, cb = na, nb
