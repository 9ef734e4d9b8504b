"""torchcore.memory: history recording and PyTorch's snapshot format for
the CPU allocator, checked against PyTorch's own tools when torch is
installed (those tests skip otherwise)."""

import os
import pickle

import pytest

import torchcore
from torchcore import memory


@pytest.fixture
def recording():
    memory._record_memory_history(max_entries=10_000)
    yield
    memory._record_memory_history(None)


def test_snapshot_has_pytorchs_keys_and_the_trace(recording):
    a = torchcore.zeros(1000)
    b = torchcore.empty(3, 1 << 20, dtype=torchcore.uint8)
    a_ptr = a.data_ptr()
    del a
    s = memory._snapshot()
    assert list(s) == [
        "segments",
        "device_traces",
        "allocator_settings",
        "external_annotations",
        "host_segments",
        "host_traces",
    ]
    trace = s["device_traces"][0]
    actions = [e["action"] for e in trace]
    assert actions == [
        "segment_alloc",
        "alloc",
        "segment_alloc",
        "alloc",
        "free_requested",
        "free_completed",
        "segment_free",
        "snapshot",
    ]
    assert (trace[1]["addr"], trace[1]["size"]) == (a_ptr, 4000)
    assert list(trace[1]) == ["action", "addr", "size", "stream", "time_us", "frames"]
    assert trace[1]["time_us"] <= trace[-1]["time_us"]
    (seg,) = s["segments"]
    assert seg["address"] == b.data_ptr()
    assert seg["total_size"] == seg["allocated_size"] == 3 << 20
    (blk,) = seg["blocks"]
    assert blk["state"] == "active_allocated"
    # Rust stacks, without the recorder's own frames.
    assert blk["frames"] and "history" not in blk["frames"][0]["name"]
    assert set(blk["frames"][0]) == {"filename", "line", "name"}


def test_stopping_forgets_and_errors_are_pytorchs():
    memory._record_memory_history()
    memory._record_memory_history(None)
    assert memory._snapshot()["device_traces"] == [[]]
    with pytest.raises(RuntimeError, match="expected state to be 'state', 'all', or None"):
        memory._record_memory_history("bogus")
    with pytest.raises(RuntimeError, match="expected stacks to be 'python', or 'all'"):
        memory._record_memory_history(stacks="cpp")
    with pytest.raises(ValueError):
        memory._record_memory_history(device="meta")


def test_state_mode_keeps_no_trace_and_python_stacks_are_empty():
    memory._record_memory_history("state", stacks="python")
    try:
        t = torchcore.ones(10)
        s = memory._snapshot()
        assert len(s["device_traces"][0]) <= 1
        assert [seg["address"] for seg in s["segments"]] == [t.data_ptr()]
        assert s["segments"][0]["blocks"][0]["frames"] == []
    finally:
        memory._record_memory_history(None)


def test_dump_and_html(tmp_path, recording):
    keep = torchcore.zeros(2, 1 << 18)
    path = tmp_path / "snap.pickle"
    memory._dump_snapshot(str(path))
    with open(path, "rb") as f:
        data = pickle.load(f)
    assert data["segments"][0]["address"] == keep.data_ptr()
    html_path = tmp_path / "memory.html"
    memory._dump_html(str(html_path), snapshot=str(path), title="t<1>")
    html = html_path.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html
    assert "<title>t&lt;1&gt;</title>" in html
    assert '<span class="num" id="allocated">2.0MiB</span>' in html
    memory._dump_html(str(tmp_path / "dict.html"), snapshot=data)
    assert (tmp_path / "dict.html").read_text().count("<svg") == 2


def test_pytorchs_memory_viz_reads_our_dump(tmp_path, recording):
    mv = pytest.importorskip(
        "torch.cuda._memory_viz", reason="PyTorch is not installed: the round trip with its tools was not checked"
    )
    keep = [torchcore.zeros(1 << 20) for _ in range(3)]  # 3 x 4 MiB
    path = tmp_path / "snap.pickle"
    memory._dump_snapshot(str(path))
    with open(path, "rb") as f:
        data = pickle.load(f)
    out = mv.segsum(data)
    assert "segments: 3\n" in out
    assert "total_reserved: 12.0MiB\n" in out
    assert "total_allocated: 12.0MiB\n" in out
    html = mv.trace_plot(data)
    assert "snapshot.pickle" in html
    assert len(keep) == 3
