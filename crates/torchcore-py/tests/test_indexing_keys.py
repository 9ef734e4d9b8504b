"""Basic indexing keys against torch 2.15's behaviour: the one-pass view of
multi-entry keys, the tuple form of one-entry keys on 0-dim tensors, keys
with several ellipses (PyTorch reads past its size array), and the values
`t[key] = value` accepts. Literal expectations were observed with torch
2.15; where torch is installed, random keys are also compared with it."""
import random

import numpy as np
import pytest

import torchcore as tc


def geometry(t):
    return tuple(t.shape), tuple(t.stride()), t.storage_offset()


def test_multi_entry_keys_are_one_view_of_the_base():
    m = tc.arange(48.0).reshape(6, 8).clone()  # not itself a view
    v = m[3, 1:5]
    assert geometry(v) == ((4,), (1,), 25)
    assert v._base is m and v.tolist() == [25.0, 26.0, 27.0, 28.0]
    w = m[:, 1]
    assert geometry(w) == ((6,), (8,), 1) and w._base is m
    x = m[..., None, ::3]
    assert geometry(x) == ((6, 1, 3), (8, 8, 3), 0)
    # A view of a view records the first base.
    assert m.t()[1:, 2]._base is m
    # Writes through the view reach the base.
    m[2, 3:5] = 7
    assert m[2].tolist()[3:5] == [7.0, 7.0]


def test_one_entry_tuple_keys_on_a_0_dim_tensor():
    s = tc.tensor(1.0)
    for key in [(0,), (slice(None),), (slice(2, 3),)]:
        with pytest.raises(IndexError, match="^too many indices for tensor of dimension 0$"):
            s[key]
        with pytest.raises(IndexError, match="^too many indices for tensor of dimension 0$"):
            s[key] = 1.0
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        s[0]
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        s[0] = 1.0
    assert tuple(s[(None,)].shape) == (1,) and tuple(s[(...,)].shape) == ()
    # The value is converted first, as in torch.
    with pytest.raises(TypeError, match="can't assign a str to a torch.FloatTensor"):
        s[(0,)] = "x"


def test_several_ellipses_read_past_the_sizes_as_torch():
    with pytest.raises(IndexError, match=r"^index 0 is out of bounds for dimension 2 with size 0$"):
        tc.zeros(3, 4, 5)[..., ..., 0]
    # Past the five inline size slots PyTorch reads the strides (6 here),
    # so the select itself fails on the dim.
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-4, 3\], but got 6\)"):
        tc.zeros(0, 2, 3, 2)[..., ..., -2, ...]
    with pytest.raises(IndexError, match=r"expected to be in range of \[-4, 3\], but got 5"):
        tc.zeros(3, 4, 5)[..., None, ..., 0]
    assert tuple(tc.zeros(0, 2, 3, 2)[..., ..., :].shape) == (0, 2, 3, 2)


@pytest.mark.parametrize(
    "value, name",
    [
        ([1, 2], "list"),
        ((1, 2), "tuple"),
        ("x", "str"),
        (None, "NoneType"),
        (np.float32(2), "numpy.float32"),
        (np.array([1.0, 2.0]), "numpy.ndarray"),
        (np.bool_(True), "numpy.bool"),
    ],
)
def test_setitem_refuses_what_torch_refuses(value, name):
    t = tc.zeros(3, 2)
    with pytest.raises(TypeError, match=f"^can't assign a {name} to a torch.FloatTensor$"):
        t[0] = value
    assert t.tolist() == [[0.0, 0.0]] * 3


def test_setitem_type_names_follow_the_tensor():
    with pytest.raises(TypeError, match="^can't assign a list to a torch.BFloat16Tensor$"):
        tc.zeros(2, dtype=tc.bfloat16)[0] = [1]
    with pytest.raises(TypeError, match="^can't assign a str to a torch.meta.LongTensor$"):
        tc.zeros(2, dtype=tc.int64, device="meta")[0] = "x"

    class Mine:
        pass

    with pytest.raises(TypeError, match="^can't assign a Mine to a torch.FloatTensor$"):
        tc.zeros(2)[0] = Mine()


def test_setitem_accepts_numbers_numpy_ints_and_tensors():
    class F(float):
        pass

    t = tc.zeros(6)
    t[0] = np.int64(3)
    t[1] = np.float64(2.5)
    t[2] = True
    t[3] = F(1.5)
    t[4] = tc.tensor(4.0)
    t[5:] = tc.tensor([5.0])
    assert t.tolist() == [3.0, 2.5, 1.0, 1.5, 4.0, 5.0]


def _entry(rng):
    r = rng.random()
    if r < 0.3:
        return rng.randint(-6, 6)
    if r < 0.7:
        b = lambda: rng.choice([None, rng.randint(-8, 8)])
        return slice(b(), b(), rng.choice([None, 1, 2, 3, 7]))
    return None if r < 0.85 else Ellipsis


def _outcome(lib, t, key):
    try:
        return geometry(t[key])
    except Exception as e:  # noqa: BLE001 - the error is the outcome
        return type(e).__name__, str(e)


def test_random_keys_match_torch():
    torch = pytest.importorskip("torch")
    rng = random.Random(30)
    for _ in range(3000):
        sizes = [rng.randint(0, 4) for _ in range(rng.randint(0, 5))]
        t, c = torch.zeros(sizes), tc.zeros(sizes)
        if len(sizes) >= 2 and rng.random() < 0.5:
            t, c = t.transpose(0, -1), c.transpose(0, -1)
        key = tuple(_entry(rng) for _ in range(rng.randint(1, 4)))
        if len(key) == 1 and rng.random() < 0.3:
            key = key[0]
        assert _outcome(tc, c, key) == _outcome(torch, t, key), (sizes, key)
