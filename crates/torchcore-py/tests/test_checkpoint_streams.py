"""Checkpoints inside a longer stream: where ``torchcore.load`` leaves a
file object's position (as torch leaves it, checked against torch where it
is importable)."""

import io
import pickle

import pytest

import torchcore

try:
    import torch
except ImportError:  # CI has no torch: the differential test skips, the rest run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable: differential test skipped")


def _stream(lib, legacy):
    f = io.BytesIO()
    pickle.dump(41, f)
    lib.save(lib.arange(3.0), f, _use_new_zipfile_serialization=not legacy)
    end_first = f.tell()
    pickle.dump(43, f)
    lib.save(lib.ones(2, 2), f, _use_new_zipfile_serialization=not legacy)
    f.seek(0)
    return f, end_first


@pytest.mark.parametrize("weights_only", [True, False])
def test_legacy_checkpoints_between_pickles_read_in_sequence(weights_only):
    f, end_first = _stream(torchcore, legacy=True)
    assert pickle.load(f) == 41
    assert torchcore.load(f, weights_only=weights_only).tolist() == [0.0, 1.0, 2.0]
    assert f.tell() == end_first  # the position is where the checkpoint ends
    assert pickle.load(f) == 43
    assert torchcore.load(f, weights_only=weights_only).tolist() == [[1.0, 1.0], [1.0, 1.0]]


@needs_torch
def test_position_after_legacy_load_matches_torch():
    for saver in (torch, torchcore):
        f, _ = _stream(saver, legacy=True)
        g = io.BytesIO(f.getvalue())
        pickle.load(f)
        pickle.load(g)
        torchcore.load(f)
        torch.load(g, weights_only=True)
        assert f.tell() == g.tell()
