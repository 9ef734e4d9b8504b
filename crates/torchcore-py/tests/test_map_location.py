"""`torchcore.load(map_location=...)` toward CUDA raises torch's CPU-only
error (RuntimeError, "Attempting to deserialize object on a CUDA device"),
whichever form names the device; a checkpoint without storages loads."""
import io

import pytest

import torchcore as tc


def saved(obj):
    buf = io.BytesIO()
    tc.save(obj, buf)
    buf.seek(0)
    return buf


@pytest.mark.parametrize(
    "loc", ["cuda", "cuda:0", tc.device("cuda", 0), {"cpu": "cuda:1"}]
)
def test_cuda_targets_raise_torchs_error(loc):
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        tc.load(saved({"w": tc.arange(3.0)}), map_location=loc)


def test_cuda_target_without_storages_loads():
    assert tc.load(saved({"epoch": 3, "name": "x"}), map_location="cuda") == {"epoch": 3, "name": "x"}


def test_cpu_target_loads():
    got = tc.load(saved({"w": tc.arange(3.0)}), map_location="cpu")
    assert got["w"].tolist() == [0.0, 1.0, 2.0]


torch = pytest.importorskip("torch")


@pytest.mark.parametrize("loc", ["cuda", "cuda:0", {"cpu": "cuda:0"}])
def test_same_error_class_as_torch(loc):
    if torch.cuda.is_available():
        pytest.skip("torch has CUDA here: it would load")
    for m in (tc, torch):
        buf = io.BytesIO()
        m.save({"w": m.arange(3.0)}, buf)
        buf.seek(0)
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
            m.load(buf, map_location=loc, weights_only=True)
