"""`Tensor.layout`/`torchcore.strided`/`torchcore.layout` and the math
constants (`from torchcore import inf, nan`), checked against torch."""

import math
import pickle

import pytest

import torchcore as tc

torch = pytest.importorskip(
    "torch", reason="torch is not importable: the side-by-side comparisons with torch are skipped"
)


def test_layout_matches_torch():
    t, c = torch.zeros(2, 3).t(), tc.zeros(2, 3).t()
    assert repr(c.layout) == repr(t.layout) == "torch.strided"
    assert c.layout is tc.strided and isinstance(c.layout, tc.layout)
    assert pickle.loads(pickle.dumps(tc.strided)) is tc.strided
    for lib in (torch, tc):
        with pytest.raises(TypeError, match="cannot create 'torch.layout' instances"):
            lib.layout()
    with pytest.raises(AttributeError, match="attribute 'layout' of .* objects is not writable"):
        c.layout = tc.strided


def test_constants_match_torch():
    from torchcore import e, inf, nan, newaxis, pi

    assert inf == torch.inf and math.isnan(nan) and math.isnan(torch.nan)
    assert pi == torch.pi and e == torch.e and newaxis is torch.newaxis is None


@pytest.mark.parametrize("fn", ["empty", "zeros", "ones"])
@pytest.mark.parametrize("which", ["strided", "none", "int", "str"])
def test_factories_take_layout(fn, which):
    def arg(lib):
        return {"strided": lib.strided, "none": None, "int": 3, "str": "strided"}[which]

    def outcome(lib):
        try:
            r = getattr(lib, fn)(2, 3, layout=arg(lib))
        except Exception as e:  # noqa: BLE001 - the class and text are compared
            return type(e).__name__, str(e)
        return tuple(r.shape), r.stride()

    assert outcome(tc) == outcome(torch)
