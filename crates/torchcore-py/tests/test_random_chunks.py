"""Random factories fill big tensors chunk by chunk (bounded memory); the
result must not depend on where the chunks end."""
import torchcore as tc
from torchcore import random as tcr


def test_chunked_fill_matches_one_sequence(monkeypatch):
    n = 1000
    tc.manual_seed(11)
    whole = tc.randn(n).tolist()
    monkeypatch.setattr(tcr, "_CHUNK", 7)  # many chunks, the last one short
    tc.manual_seed(11)
    chunked = tc.randn(n).tolist()
    assert chunked == whole
    tc.manual_seed(3)
    a = tc.rand(5, 61, dtype=tc.float64).tolist()
    monkeypatch.setattr(tcr, "_CHUNK", 1 << 16)
    tc.manual_seed(3)
    assert tc.rand(5, 61, dtype=tc.float64).tolist() == a


def test_chunked_fill_covers_every_element(monkeypatch):
    monkeypatch.setattr(tcr, "_CHUNK", 64)
    x = tc.rand(3, 100, dtype=tc.float64)
    vals = [v for row in x.tolist() for v in row]
    assert len(vals) == 300 and all(0 <= v < 1 for v in vals)
    assert len(set(vals)) == 300  # no chunk left at empty's contents or repeated
    z = tc.randn(130, dtype=tc.complex64)
    assert z.dtype is tc.complex64 and len(z.tolist()) == 130
