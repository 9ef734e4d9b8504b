//! Replays an allocation trace through our caching allocator and writes the
//! normalized segment layout and statistics after each `check`, for the
//! differential check against `torch.cuda` (`tools/cuda-bundle/torch_replay.py`
//! replays the same trace through PyTorch and compares; see docs/cuda.md).
//!
//! With `ALLOC_CUDA_REPLAY_IN=trace.json` and `ALLOC_CUDA_REPLAY_OUT=out.json`
//! the `replay_trace` test replays that trace on device 0 of the real driver
//! (or on the fake device with `ALLOC_CUDA_REPLAY_FAKE=1`, or when there is
//! no GPU, saying so in the output's `"device"`). Without them it replays
//! a built-in trace on the fake device and checks a few known numbers, so it
//! is an ordinary test everywhere.
//!
//! Trace format (JSON):
//!
//! ```json
//! {"name": "split", "conf": "max_split_size_mb:64",
//!  "ops": [{"op": "malloc", "id": 1, "size": 1000, "stream": 0},
//!          {"op": "free", "id": 1}, {"op": "empty_cache"}, {"op": "check"}]}
//! ```
//!
//! `stream` 0 is the default stream, `k > 0` the k-th stream the trace
//! creates. The output is `{"device": ..., "checks": [{"segments": [...],
//! "stats": {...}}]}`, where each segment is `{"total_size", "segment_type",
//! "stream", "is_expandable", "blocks": [[size, state], ...]}` with the
//! stream as the trace's index, segments sorted (addresses differ between
//! runs and processes, so they are left out).

#![cfg(all(feature = "cuda", feature = "snapshot-json"))]

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use alloc_cuda::{
    CachingAllocator, CachingAllocatorConfig, DevicePtr, FakeDevice, RawDevice, SegmentSnapshot,
    StreamId,
};
use serde_json::{json, Value};

/// The stream a trace index names, created on first use.
trait Streams {
    fn stream(&mut self, k: u64) -> Result<StreamId, String>;
    fn index_of(&self, s: StreamId) -> u64;
}

struct FakeStreams;

impl Streams for FakeStreams {
    fn stream(&mut self, k: u64) -> Result<StreamId, String> {
        Ok(StreamId(k))
    }
    fn index_of(&self, s: StreamId) -> u64 {
        s.0
    }
}

struct CudaStreams(HashMap<u64, StreamId>);

impl Streams for CudaStreams {
    fn stream(&mut self, k: u64) -> Result<StreamId, String> {
        if k == 0 {
            return Ok(StreamId::DEFAULT);
        }
        if let Some(s) = self.0.get(&k) {
            return Ok(*s);
        }
        let s = alloc_cuda::cuda::CudaStream::new(0)
            .map_err(|e| e.to_string())?
            .id();
        self.0.insert(k, s);
        Ok(s)
    }
    fn index_of(&self, s: StreamId) -> u64 {
        self.0.iter().find(|(_, v)| **v == s).map_or(
            if s == StreamId::DEFAULT { 0 } else { u64::MAX },
            |(k, _)| *k,
        )
    }
}

fn normalize(segs: &[SegmentSnapshot], streams: &dyn Streams) -> Value {
    let mut out: Vec<Value> = segs
        .iter()
        .map(|s| {
            let blocks: Vec<Value> = s
                .blocks
                .iter()
                .map(|b| json!([b.size, serde_json::to_value(b.state).unwrap_or(Value::Null)]))
                .collect();
            json!({
                "total_size": s.total_size,
                "segment_type": serde_json::to_value(s.segment_type).unwrap_or(Value::Null),
                "stream": streams.index_of(StreamId(s.stream)),
                "is_expandable": s.is_expandable,
                "blocks": blocks,
            })
        })
        .collect();
    out.sort_by_key(|v| v.to_string());
    Value::Array(out)
}

fn replay<D: RawDevice>(
    alloc: &CachingAllocator<D>,
    trace: &Value,
    streams: &mut dyn Streams,
) -> Result<Vec<Value>, String> {
    let ops = trace["ops"]
        .as_array()
        .ok_or("the trace has no \"ops\" list")?;
    let mut live: BTreeMap<u64, DevicePtr> = BTreeMap::new();
    let mut checks = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let name = op["op"].as_str().unwrap_or("");
        match name {
            "malloc" => {
                let id = op["id"].as_u64().ok_or(format!("op {i}: no id"))?;
                let size = op["size"].as_u64().ok_or(format!("op {i}: no size"))?;
                let s = streams.stream(op["stream"].as_u64().unwrap_or(0))?;
                match alloc.malloc(size, s) {
                    Ok(p) => {
                        live.insert(id, p);
                    }
                    // An expected OOM is part of the trace (torch raises
                    // OutOfMemoryError at the same point).
                    Err(e) if op["may_oom"].as_bool() == Some(true) => {
                        println!("op {i}: out of memory (expected): {e}");
                    }
                    Err(e) => return Err(format!("op {i}: malloc({size}): {e}")),
                }
            }
            "free" => {
                let id = op["id"].as_u64().ok_or(format!("op {i}: no id"))?;
                if let Some(p) = live.remove(&id) {
                    // SAFETY: the trace uses this block no more; nothing
                    // was queued on it.
                    unsafe { alloc.free(p) }.map_err(|e| format!("op {i}: free: {e}"))?;
                }
            }
            "empty_cache" => alloc.empty_cache().map_err(|e| format!("op {i}: {e}"))?,
            "check" => {
                let stats: BTreeMap<String, i64> = alloc.stats().to_flat_map();
                checks.push(json!({
                    "op": i,
                    "segments": normalize(&alloc.snapshot(), streams),
                    "stats": stats,
                }));
            }
            other => return Err(format!("op {i}: unknown op {other:?}")),
        }
    }
    for (_, p) in live {
        // SAFETY: the trace is over; nothing uses the block.
        unsafe { alloc.free(p) }.map_err(|e| format!("final free: {e}"))?;
    }
    alloc.empty_cache().map_err(|e| e.to_string())?;
    Ok(checks)
}

fn config(trace: &Value) -> Result<CachingAllocatorConfig, String> {
    CachingAllocatorConfig::parse(trace["conf"].as_str().unwrap_or(""))
        .map_err(|e| format!("conf: {e}"))
}

/// Replays `trace` on the fake device or device 0; returns the output.
fn run(trace: &Value, fake: bool) -> Result<Value, String> {
    let conf = config(trace)?;
    let gpu = if fake {
        Err("ALLOC_CUDA_REPLAY_FAKE=1".to_owned())
    } else {
        alloc_cuda::cuda::CudaDevice::new(0).map_err(|e| e.to_string())
    };
    match gpu {
        Ok(dev) => {
            let name = dev.name().to_owned();
            let dev = Arc::new(dev);
            let alloc = CachingAllocator::new(dev, 0, conf);
            let mut streams = CudaStreams(HashMap::new());
            let checks = replay(&alloc, trace, &mut streams)?;
            Ok(json!({"device": name, "checks": checks}))
        }
        Err(why) => {
            let capacity = trace["fake_capacity"].as_u64().unwrap_or(80 << 30);
            let alloc = CachingAllocator::new(FakeDevice::new(capacity), 0, conf);
            let checks = replay(&alloc, trace, &mut FakeStreams)?;
            Ok(json!({"device": format!("fake ({why})"), "checks": checks}))
        }
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn replay_trace() {
    if let (Ok(input), Ok(output)) = (
        std::env::var("ALLOC_CUDA_REPLAY_IN"),
        std::env::var("ALLOC_CUDA_REPLAY_OUT"),
    ) {
        let fake = std::env::var("ALLOC_CUDA_REPLAY_FAKE").is_ok_and(|v| v == "1");
        let text = std::fs::read_to_string(&input).expect("read the trace");
        let trace: Value = serde_json::from_str(&text).expect("trace JSON");
        let out = run(&trace, fake).unwrap_or_else(|e| json!({"error": e}));
        std::fs::write(&output, serde_json::to_string_pretty(&out).expect("json"))
            .expect("write the output");
        println!("replayed {input} -> {output} on {}", out["device"]);
        return;
    }
    // Built-in: a split, a second stream, an oversize block, empty_cache.
    let trace = json!({
        "name": "builtin", "conf": "max_split_size_mb:64",
        "ops": [
            {"op": "malloc", "id": 1, "size": 1000, "stream": 0},
            {"op": "malloc", "id": 2, "size": 3 << 20, "stream": 0},
            {"op": "malloc", "id": 3, "size": 100 << 20, "stream": 1},
            {"op": "check"},
            {"op": "free", "id": 2},
            {"op": "free", "id": 3},
            {"op": "check"},
            {"op": "empty_cache"},
            {"op": "check"},
        ]
    });
    let out = run(&trace, true).expect("replay");
    let checks = out["checks"].as_array().expect("checks");
    assert_eq!(checks.len(), 3);
    let segs = checks[0]["segments"].as_array().expect("segments");
    assert_eq!(segs.len(), 3, "{segs:?}");
    assert_eq!(
        checks[0]["stats"]["reserved_bytes.all.current"],
        (2 << 20) + (20 << 20) + (100 << 20)
    );
    let big = segs
        .iter()
        .find(|s| s["total_size"] == 100 << 20)
        .expect("the oversize segment");
    assert_eq!(big["stream"], 1);
    assert_eq!(big["blocks"], json!([[100 << 20, "active_allocated"]]));
    let split = segs
        .iter()
        .find(|s| s["total_size"] == 20 << 20)
        .expect("the 20 MiB segment");
    assert_eq!(
        split["blocks"],
        json!([[3 << 20, "active_allocated"], [17 << 20, "inactive"]])
    );
    assert_eq!(checks[1]["stats"]["allocated_bytes.all.current"], 1024);
    assert_eq!(checks[2]["stats"]["reserved_bytes.all.current"], 2 << 20);
    assert_eq!(checks[2]["segments"].as_array().map(Vec::len), Some(1));
}
