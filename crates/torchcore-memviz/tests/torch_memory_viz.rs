//! Round trip with PyTorch's own tools: our `_dump_snapshot` pickle is
//! read by `torch.cuda._memory_viz` (`stats`, `segments`, `trace`,
//! `trace_plot`, `segment_plot`), and its printed numbers are checked.
//!
//! Needs a Python with `torch` (`PYTHON`, default `python3`); without one
//! each test prints `SKIPPED` and passes. No GPU is needed: the snapshot
//! comes from the fake device.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, DevicePtr, FakeDevice, StreamId};
use c10_storage::history::HistoryConfig;
use torchcore_memviz::{cuda_snapshot, dump_snapshot, Value};

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Whether `torch` imports; prints the skip message when not.
fn torch_available(test: &str) -> bool {
    let py = python();
    let ok = Command::new(&py)
        .args(["-c", "import torch.cuda._memory_viz"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!(
            "SKIPPED {test}: PyTorch is not importable with `{py}` (pip install torch, or set PYTHON); the round trip with torch.cuda._memory_viz was not checked"
        );
    }
    ok
}

fn run_python(script: &str, args: &[&Path]) -> String {
    let out = Command::new(python())
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "python failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// 24 allocations of 6 MiB (three per 20 MiB segment, 8 segments), every
/// other one freed, one 1000-byte allocation (a 2 MiB small segment), then
/// a 30 MiB request that fails on the 162 MiB device.
fn fragmented(stacks: bool) -> (CachingAllocator<FakeDevice>, Vec<DevicePtr>) {
    let a = CachingAllocator::new(
        FakeDevice::new(162 << 20),
        0,
        CachingAllocatorConfig::default(),
    );
    a.record_memory_history(Some(HistoryConfig {
        stacks,
        ..HistoryConfig::default()
    }));
    let all: Vec<DevicePtr> = (0..24)
        .map(|_| a.malloc(6 << 20, StreamId::DEFAULT).expect("malloc"))
        .collect();
    let mut kept = Vec::new();
    for (i, p) in all.into_iter().enumerate() {
        if i % 2 == 1 {
            // SAFETY: unused.
            unsafe { a.free(p).expect("free") };
        } else {
            kept.push(p);
        }
    }
    kept.push(a.malloc(1000, StreamId::DEFAULT).expect("small"));
    assert!(a.malloc(30 << 20, StreamId::DEFAULT).is_err());
    (a, kept)
}

const STATS: &str = r#"
import subprocess, sys
r = subprocess.run([sys.executable, "-m", "torch.cuda._memory_viz", "stats", sys.argv[1]],
                   capture_output=True, text=True, check=True)
print(r.stdout)
"#;

#[test]
#[cfg_attr(miri, ignore = "starts processes, which Miri cannot")]
fn torch_stats_prints_our_segments() {
    if !torch_available("torch_stats_prints_our_segments") {
        return;
    }
    let (a, _kept) = fragmented(false);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("snap.pickle");
    dump_snapshot(&cuda_snapshot(&[a.memory_snapshot()]), &path).expect("dump");
    let out = run_python(STATS, &[&path]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Summary of segments >= 20.0MiB in size", "{out}");
    // Sorted by (size, allocated): four segments holding one 6 MiB block,
    // then four holding two.
    for l in &lines[1..5] {
        assert_eq!(
            *l, "[a] 20.0MiB allocated, 14.0MiB (0.0% internal) free",
            "{out}"
        );
    }
    for l in &lines[5..9] {
        assert_eq!(
            *l, "[6] 20.0MiB allocated, 8.0MiB (0.0% internal) free",
            "{out}"
        );
    }
    assert!(out.contains("segments: 9\n"), "{out}");
    assert!(out.contains("total_reserved: 162.0MiB\n"), "{out}");
    // 12 × 6 MiB + 1000 requested bytes.
    assert!(out.contains("total_allocated: 72.0MiB\n"), "{out}");
    // 88 MiB in the large segments, 2 MiB - 1024 in the small one, and the
    // 24 bytes of rounding of the small allocation.
    assert!(
        out.contains("total_free: 90.0MiB (0.0% internal)\n"),
        "{out}"
    );
}

const SEGMENTS_AND_TRACE: &str = r#"
import pickle, sys
from torch.cuda import _memory_viz as mv
with open(sys.argv[1], "rb") as f:
    data = pickle.load(f)
# The flamegraph input lines, without running flamegraph.pl.
print(mv.segments(data, format_flamegraph=lambda lines: lines), end="")
print("== trace")
print(mv.trace(data))
"#;

#[test]
#[cfg_attr(miri, ignore = "starts processes, which Miri cannot")]
fn torch_segments_and_trace_account_for_every_byte() {
    if !torch_available("torch_segments_and_trace_account_for_every_byte") {
        return;
    }
    let (a, _kept) = fragmented(false);
    let snap = a.memory_snapshot();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("snap.pickle");
    dump_snapshot(&cuda_snapshot(&[snap]), &path).expect("dump");
    let out = run_python(SEGMENTS_AND_TRACE, &[&path]);
    let (segments, trace) = out.split_once("== trace\n").expect("both parts");
    // `stream_0;seg_<addr>;<state>;<frames> <bytes>` per block.
    let mut by_state: std::collections::BTreeMap<String, u64> = Default::default();
    let mut segs = std::collections::BTreeSet::new();
    for l in segments.lines() {
        let (path, bytes) = l.rsplit_once(' ').expect("size");
        let parts: Vec<&str> = path.split(';').collect();
        assert_eq!(parts[0], "stream_0", "{l}");
        segs.insert(parts[1].to_string());
        let key = format!("{};{}", parts[2], parts[3]);
        *by_state.entry(key).or_default() += bytes.parse::<u64>().expect("bytes");
    }
    assert_eq!(segs.len(), 9);
    assert_eq!(
        by_state["active_allocated;<non-python>"],
        12 * (6 << 20) + 1000
    );
    assert_eq!(by_state["active_allocated;<gaps>"], 24);
    // Inactive blocks keep a stale requested size (as in PyTorch), so
    // torch splits them into that and `<gaps>`; together, the free bytes.
    assert_eq!(
        by_state["inactive;<non-python>"] + by_state["inactive;<gaps>"],
        (88 << 20) + (2 << 20) - 1024
    );
    assert_eq!(by_state.len(), 4, "{by_state:?}");
    // The trace: 9 segment_alloc, 25 alloc, 12 frees (2 entries each),
    // 1 oom, 1 snapshot.
    assert!(
        trace.starts_with("Device 0 ----------------\n60 entries\n"),
        "{trace}"
    );
    assert!(trace.contains("b = a[0:6.0MiB]\n"), "{trace}");
    assert!(trace.contains("c = a[6291456:6.0MiB]\n"), "{trace}");
    assert!(
        trace.contains("raise OutOfMemoryError # 30.0MiB requested, 0.0B free in CUDA\n"),
        "{trace}"
    );
    assert_eq!(trace.matches("cudaMalloc(").count(), 9, "{trace}");
    assert_eq!(trace.matches("# free completed for").count(), 12, "{trace}");
}

const PLOTS: &str = r#"
import base64, json, pickle, subprocess, sys
src, out_dir = sys.argv[1], sys.argv[2]
for cmd in ("trace_plot", "segment_plot"):
    out = f"{out_dir}/{cmd}.html"
    subprocess.run([sys.executable, "-m", "torch.cuda._memory_viz", cmd, src, "-o", out],
                   capture_output=True, check=True)
    html = open(out).read()
    # The page embeds the pickle, base64, for the viewer to unpickle.
    start = html.index("const local_files = ") + len("const local_files = ")
    files = json.loads(html[start:html.index("\n", start)])
    buf = base64.b64decode(files[0]["base64"])
    embedded = pickle.loads(buf.rstrip(b"\x00") if buf.endswith(b"\x00") else buf)
    with open(src, "rb") as f:
        assert embedded == pickle.load(f), cmd
    kind = "Active Memory Timeline" if cmd == "trace_plot" else "Allocator State History"
    assert repr(kind) in html, cmd
    print(cmd, "ok", len(embedded["device_traces"][0]))
"#;

#[test]
#[cfg_attr(miri, ignore = "starts processes, which Miri cannot")]
fn torch_trace_plot_and_segment_plot_embed_our_snapshot() {
    if !torch_available("torch_trace_plot_and_segment_plot_embed_our_snapshot") {
        return;
    }
    let (a, _kept) = fragmented(true);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("snap.pickle");
    dump_snapshot(&cuda_snapshot(&[a.memory_snapshot()]), &path).expect("dump");
    let out = run_python(PLOTS, &[&path, dir.path()]);
    assert_eq!(out, "trace_plot ok 60\nsegment_plot ok 60\n");
}

const KEYS: &str = r#"
import pickle, sys
with open(sys.argv[1], "rb") as f:
    data = pickle.load(f)
seg = data["segments"][0]
print(sorted(data))
print(list(seg))
print(list(seg["blocks"][0]))
print(list(data["device_traces"][0][1]))
print(list(data["allocator_settings"]))
print(type(seg["segment_pool_id"]).__name__, data["allocator_settings"]["max_split_size"])
fr = seg["blocks"][0]["frames"]
print(any(f["name"].endswith("fragmented") for f in fr), sorted(fr[0]))
"#;

#[test]
#[cfg_attr(miri, ignore = "starts processes, which Miri cannot")]
fn the_dict_has_pytorchs_keys_and_our_stacks() {
    if !torch_available("the_dict_has_pytorchs_keys_and_our_stacks") {
        return;
    }
    let (a, _kept) = fragmented(true);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("snap.pickle");
    let snap = cuda_snapshot(&[a.memory_snapshot()]);
    dump_snapshot(&snap, &path).expect("dump");
    let out = run_python(KEYS, &[&path]);
    let want = "['allocator_settings', 'device_traces', 'external_annotations', 'host_segments', 'host_traces', 'segments']\n\
['device', 'address', 'total_size', 'allocated_size', 'active_size', 'requested_size', 'stream', 'segment_type', 'segment_pool_id', 'is_expandable', 'frames', 'blocks']\n\
['address', 'size', 'requested_size', 'state', 'frames']\n\
['action', 'addr', 'size', 'stream', 'time_us', 'frames']\n\
['PYTORCH_CUDA_ALLOC_CONF', 'max_split_size', 'garbage_collection_threshold', 'expandable_segments', 'pinned_num_register_threads', 'release_lock_on_cudamalloc', 'pinned_use_cuda_host_register', 'graph_capture_record_stream_reuse', 'max_round_threshold', 'max_cached_size', 'roundup_power2_divisions']\n\
tuple -1\n";
    assert!(out.starts_with(want), "{out}");
    // Debug test binaries have symbols: the allocating function is named.
    assert!(
        out.ends_with("True ['filename', 'line', 'name']\n"),
        "{out}"
    );
    assert!(matches!(snap.get("segments"), Some(Value::List(_))));
}

const EXPANDABLE: &str = r#"
import pickle, sys
from torch.cuda import _memory_viz as mv
with open(sys.argv[1], "rb") as f:
    data = pickle.load(f)
print(mv.segsum(data).splitlines()[-13:-9])
print([e["action"] for e in data["device_traces"][0]])
"#;

#[test]
#[cfg_attr(miri, ignore = "starts processes, which Miri cannot")]
fn expandable_segments_trace_maps_and_unmaps() {
    if !torch_available("expandable_segments_trace_maps_and_unmaps") {
        return;
    }
    let a = CachingAllocator::new(
        FakeDevice::new(1 << 30),
        0,
        CachingAllocatorConfig::parse("expandable_segments:True").expect("config"),
    );
    a.record_memory_history(Some(HistoryConfig {
        stacks: false,
        ..HistoryConfig::default()
    }));
    let p = a.malloc(30 << 20, StreamId::DEFAULT).expect("malloc");
    let q = a.malloc(5 << 20, StreamId::DEFAULT).expect("malloc");
    // SAFETY: unused.
    unsafe { a.free(p).expect("free") };
    a.empty_cache().expect("empty_cache");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("snap.pickle");
    dump_snapshot(&cuda_snapshot(&[a.memory_snapshot()]), &path).expect("dump");
    let out = run_python(EXPANDABLE, &[&path]);
    let mut lines = out.lines();
    let stats = lines.next().expect("stats");
    assert!(stats.contains("'segments: 1'"), "{out}");
    assert!(stats.contains("'total_allocated: 5.0MiB'"), "{out}");
    let actions = lines.next().expect("actions");
    assert!(actions.contains("'segment_map'"), "{out}");
    assert!(actions.contains("'segment_unmap'"), "{out}");
    assert!(!actions.contains("'segment_alloc'"), "{out}");
    // SAFETY: unused.
    unsafe { a.free(q).expect("free") };
}

const CPU: &str = r#"
import pickle, sys
from torch.cuda import _memory_viz as mv
with open(sys.argv[1], "rb") as f:
    data = pickle.load(f)
print(mv.segsum(data).split("\n\nLegend")[0])
print(mv.trace(data).splitlines()[1])
"#;

#[test]
#[cfg_attr(miri, ignore = "starts processes, which Miri cannot")]
fn torch_reads_a_cpu_allocator_snapshot() {
    use c10_storage::Allocator;
    if !torch_available("torch_reads_a_cpu_allocator_snapshot") {
        return;
    }
    let a = alloc_cpu::CpuAllocator::new();
    a.record_memory_history(Some(HistoryConfig {
        stacks: false,
        ..HistoryConfig::default()
    }));
    let big: Vec<_> = (0..3)
        .map(|_| a.allocate(24 << 20).expect("allocate"))
        .collect();
    let small = a.allocate(1000).expect("allocate");
    drop(a.allocate(5 << 20).expect("allocate"));
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cpu.pickle");
    dump_snapshot(&torchcore_memviz::cpu_snapshot(&a.memory_snapshot()), &path).expect("dump");
    let out = run_python(CPU, &[&path]);
    assert_eq!(
        out,
        "Summary of segments >= 20.0MiB in size\n\
[aa] 24.0MiB allocated, 0.0B free\n\
[aa] 24.0MiB allocated, 0.0B free\n\
[aa] 24.0MiB allocated, 0.0B free\n\
segments: 4\n\
total_reserved: 72.0MiB\n\
total_allocated: 72.0MiB\n\
total_free: 0.0B\n\
14 entries\n"
    );
    drop((big, small));
}
