"""Objects handed out for metadata: `shape`/`size()` reuse one `Size` while
the sizes are unchanged (and always show the current sizes), and ops that
return the tensor itself return its object, as in torch."""

import threading

import torchcore as tc

try:  # torch, where installed, is checked against the same expectations
    import torch
except ImportError:  # pragma: no cover
    torch = None


def test_shape_follows_every_in_place_change():
    t = tc.zeros(2, 3)
    first = t.shape
    assert type(first) is tc.Size and first == (2, 3)
    assert t.size() is first  # the same immutable Size, reused
    changes = [
        (lambda: t.t_(), (3, 2)),
        (lambda: t.unsqueeze_(0), (1, 3, 2)),
        (lambda: t.squeeze_(0), (3, 2)),
        (lambda: t.resize_(4, 5), (4, 5)),
        (lambda: t.transpose_(0, 1), (5, 4)),
        (lambda: t.as_strided_((2, 2), (1, 2)), (2, 2)),
        (lambda: t.set_(tc.ones(7)), (7,)),
        (lambda: t.resize_(2, 2), (2, 2)),
    ]
    for change, want in changes:
        change()
        assert t.shape == want and t.size() == want, (t.shape, want)
        assert type(t.shape) is tc.Size


def test_shape_is_a_fresh_value_per_tensor_and_matches_torch():
    for sizes in [(), (0,), (3,), (2, 3, 4), (1, 1, 1, 1, 1, 1, 1)]:
        a = tc.zeros(sizes)
        assert tuple(a.shape) == sizes
        assert repr(a.shape) == "torch.Size([" + ", ".join(map(str, sizes)) + "])"
        assert hash(a.shape) == hash(sizes)
        if torch is not None:
            b = torch.zeros(sizes)
            assert repr(a.shape) == repr(b.shape)
            assert a.shape.numel() == b.shape.numel()
    # Views of one base have shapes of their own.
    m = tc.zeros(4, 6)
    assert (m[1:].shape, m.t().shape, m.shape) == ((3, 6), (6, 4), (4, 6))


def test_shape_under_threads_that_change_it():
    t = tc.zeros(2, 3)
    stop = threading.Event()
    bad = []

    def flip():
        while not stop.is_set():
            t.t_()

    def read():
        while not stop.is_set():
            s = t.shape
            if tuple(s) not in ((2, 3), (3, 2)):
                bad.append(tuple(s))

    threads = [threading.Thread(target=flip)] + [threading.Thread(target=read) for _ in range(3)]
    for th in threads:
        th.start()
    threading.Event().wait(0.5)
    stop.set()
    for th in threads:
        th.join()
    assert bad == []


def test_ops_that_return_the_tensor_return_its_object_like_torch():
    # The expectations are torch 2.15's, checked against torch where it is
    # installed.
    for mod in [tc] + ([torch] if torch is not None else []):
        x = mod.zeros(3, 4)
        c = mod.zeros(2, dtype=mod.complex64)
        cc = c.conj()
        n = x._neg_view()
        got = (
            x.conj() is x,
            x.resolve_conj() is x,
            x.resolve_neg() is x,
            c.resolve_conj() is c,
            x.conj_physical() is x,
            x.contiguous() is x,
            c.conj() is c,
            x.t().contiguous() is x,
            cc.resolve_conj() is cc,
            n.resolve_neg() is n,
            c.conj_physical() is c,
        )
        want = (True,) * 6 + (False,) * 5
        assert got == want, (mod.__name__, got)
        # The copies resolve the bits.
        assert cc.resolve_conj().is_conj() is False
        assert n.resolve_neg().is_neg() is False


def test_dtype_is_the_module_object_for_every_dtype_from_any_thread():
    names = sorted(k for k, v in vars(tc).items() if isinstance(v, tc.dtype))
    made = []
    for name in names:
        try:
            made.append((name, tc.empty(2, dtype=getattr(tc, name))))
        except (RuntimeError, TypeError, NotImplementedError):
            pass  # dtypes with no factory support (quantized, bits)
    assert len(made) >= 15, [n for n, _ in made]
    bad = []

    def check():
        for _ in range(200):
            for name, t in made:
                if t.dtype is not getattr(tc, name):
                    bad.append(name)

    threads = [threading.Thread(target=check) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not bad, sorted(set(bad))
    # Aliases are the same object, as in torch.
    assert tc.float is tc.float32 and tc.long is tc.int64 and tc.half is tc.float16


def test_stride_follows_layout_changes():
    t = tc.zeros(2, 3, 4)
    assert t.stride() == (12, 4, 1) and type(t.stride()) is tuple
    assert t.permute(2, 0, 1).stride() == (1, 12, 4)
    assert t[:, 1:, ::2].stride() == (12, 4, 2)
    assert t.stride(-1) == 1 and t.stride(0) == 12
    t.transpose_(0, 2)
    assert t.stride() == (1, 4, 12)
    t.as_strided_((2, 2), (5, 7))
    assert t.stride() == (5, 7)
    many = tc.zeros([1] * 9)
    assert many.stride() == (1,) * 9
    if torch is not None:
        for a, b in [(tc.zeros(3, 5).t(), torch.zeros(3, 5).t()),
                     (tc.zeros(4, 1, 6)[::2], torch.zeros(4, 1, 6)[::2]),
                     (tc.zeros(2, 3).expand(4, 2, 3), torch.zeros(2, 3).expand(4, 2, 3))]:
            assert a.stride() == b.stride()
