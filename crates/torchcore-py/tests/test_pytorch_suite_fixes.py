"""Behaviours PyTorch's own test_view_ops.py / test_torch.py rely on, checked
against torch where it is installed (written for torchcore, not copied)."""
import warnings

import pytest

import torchcore as tc

torch = pytest.importorskip("torch")


def both(fn):
    return fn(tc), fn(torch)


def test_dtype_objects_are_singletons():
    assert tc.empty(2).dtype is tc.float32
    assert tc.float is tc.float32 and tc.long is tc.int64 and tc.cfloat is tc.complex64
    assert tc.IntStorage([1]).float().dtype is tc.float32
    assert (torch.empty(2).dtype is torch.float32) and (torch.float is torch.float32)


@pytest.mark.parametrize("pytype", [float, int, bool, complex])
def test_python_scalar_types_as_dtype(pytype):
    a, b = both(lambda m: m.empty(2, dtype=pytype).dtype)
    assert repr(a) == repr(b)
    a, b = both(lambda m: m.zeros(1, dtype=pytype).dtype)
    assert repr(a) == repr(b)


def test_swapdims_swapaxes_keywords():
    for m in (tc, torch):
        x = m.zeros(2, 3, 4)
        assert tuple(m.swapdims(x, dim0=0, dim1=2).shape) == (4, 3, 2)
        assert tuple(x.swapaxes(axis0=1, axis1=2).shape) == (2, 4, 3)
        assert tuple(x.swapdims(dim0=-1, dim1=0).stride()) == tuple(
            torch.zeros(2, 3, 4).swapdims(-1, 0).stride())


@pytest.mark.parametrize("fmt,shape", [("channels_last", (2, 3, 4, 5)),
                                       ("channels_last_3d", (2, 3, 4, 5, 6))])
def test_resize_as_memory_format(fmt, shape):
    def run(m):
        tmpl = m.empty(shape).contiguous(memory_format=getattr(m, fmt))
        flat = m.empty(tmpl.numel())
        flat.resize_as_(tmpl, memory_format=m.preserve_format)
        plain = m.empty(3)
        plain.resize_as_(tmpl)
        cont = m.empty(shape).t() if len(shape) == 2 else m.empty(shape)
        cont.resize_as_(tmpl, memory_format=m.contiguous_format)
        return flat.stride(), plain.stride(), cont.stride()
    a, b = both(run)
    assert a == b


@pytest.mark.parametrize("src,reps", [((3,), (2,)), ((2, 3), (2, 1, 3)), ((), (4,)),
                                      ((2, 1), (1, 1)), ((0, 2), (3, 2)), ((2,), (0, 2))])
def test_repeat_matches_torch(src, reps):
    def run(m):
        x = m.arange(max(1, int(__import__("math").prod(src))) if src else 1).reshape(src) \
            if src != (0, 2) else m.zeros(0, 2, dtype=m.int64)
        r = x.repeat(*reps)
        return r.tolist(), tuple(r.shape), r.stride(), r.data_ptr() == x.data_ptr()
    a, b = both(run)
    assert a == b
    with pytest.raises(RuntimeError, match="can not be smaller"):
        tc.zeros(2, 2).repeat(2)


def test_zero_dim_conjugate_transposes():
    for op in ("H", "mH"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = getattr(tc.tensor(1 + 2j), op)
            b = getattr(torch.tensor(1 + 2j), op)
        assert a.is_conj() == b.is_conj() is True
        assert a.resolve_conj().numpy().tolist() == b.resolve_conj().numpy().tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tc.tensor(1 + 2j).adjoint().is_conj()
        assert tc.tensor(3.0).H.is_conj() is torch.tensor(3.0).H.is_conj()


@pytest.mark.parametrize("dt", ["float64", "float32", "float16", "bfloat16", "int64",
                                "int32", "int16", "int8", "uint8", "bool",
                                "complex128", "complex64"])
def test_untyped_storage_byteswap(dt):
    def run(m):
        s = m.UntypedStorage(list(range(16)))
        s.byteswap(getattr(m, dt))
        return s.tolist()
    a, b = both(run)
    assert a == b


@pytest.mark.parametrize("fmt,shape", [("channels_last", (2, 3, 4, 4)),
                                       ("channels_last_3d", (2, 3, 2, 4, 4))])
def test_random_like_layouts(fmt, shape):
    for name, args in (("rand_like", ()), ("randn_like", ()), ("randint_like", (3, 9)),
                       ("randint_like", (9,))):
        def run(m):
            x = m.empty(shape).contiguous(memory_format=getattr(m, fmt))[..., ::2]
            r1 = getattr(m, name)(x, *args)
            r2 = getattr(m, name)(x, *args, memory_format=m.contiguous_format)
            return r1.stride(), r2.stride(), repr(r1.dtype), tuple(r1.shape)
        a, b = both(run)
        assert a == b, name
    r = tc.randint_like(tc.empty(50), 3, 9)
    assert all(3 <= v < 9 for v in r.tolist())


def test_random_factories_shapes_seeds_and_errors():
    for m in (tc, torch):
        assert tuple(m.randn(2, 3).shape) == (2, 3) and m.randn(2, 3).dtype is m.float32
        assert tuple(m.rand((4,)).shape) == (4,)
        assert m.randint(5, (2, 2)).dtype is m.int64
        assert m.randn((), dtype=m.complex64).dtype is m.complex64
        assert m.randn(2, device="meta").device.type == "meta"
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            m.randn(2, dtype=m.int64)
        with pytest.raises(RuntimeError, match="from=3 >= to=2"):
            m.randint(3, 2, (2,))
    tc.manual_seed(7)
    a = tc.randn(5).tolist()
    tc.manual_seed(7)
    assert tc.randn(5).tolist() == a and tc.initial_seed() == 7
    assert all(0 <= v < 1 for v in tc.rand(100).tolist())
    x = tc.empty(3, 4).uniform_(2, 3)
    assert all(2 <= v < 3 for row in x.tolist() for v in row)


def test_device_modules_and_equal_method():
    assert tc.cuda.is_available() is torch.cuda.is_available() is False
    assert tc.cpu.is_available() is True
    x = tc.tensor([1.0, 2.0])
    assert x.equal(x.clone()) and not x.equal(tc.tensor([1.0, 3.0]))


def test_always_warn_getter():
    st = tc.storage
    prev = st._get_always_warn_typed_storage_removal()
    st._set_always_warn_typed_storage_removal(True)
    assert st._get_always_warn_typed_storage_removal() is True
    st._set_always_warn_typed_storage_removal(prev)
    assert torch.storage._get_always_warn_typed_storage_removal() in (True, False)
