//! Statistics after a scripted sequence (current/peak/allocated/freed per
//! pool), resets, and the snapshot's JSON.

mod common;

#[cfg(feature = "snapshot-json")]
use alloc_cuda::{BlockState, SegmentType};
use common::*;

fn i(v: u64) -> i64 {
    v as i64
}

#[test]
fn scripted_sequence() {
    let a = alloc(GIB, "");
    let pa = a.malloc(1000, S0).unwrap(); // small: 1024 of a 2 MiB segment
    let pb = a.malloc(3 * MIB, S0).unwrap(); // large: 3 of a 20 MiB segment
    free(&a, pa); // the small segment is whole again
    let pc = a.malloc(5 * MIB, S0).unwrap(); // from the 17 MiB remainder
    free(&a, pb); // next to pc (live): stays a separate inactive block
    check(&a);
    assert_eq!(
        layout(&a, pc),
        vec![(3 * MIB, '.'), (5 * MIB, 'A'), (12 * MIB, '.')]
    );

    assert_eq!(s4(&a, "allocation.all"), [1, 2, 3, 2]);
    assert_eq!(s4(&a, "allocation.small_pool"), [0, 1, 1, 1]);
    assert_eq!(s4(&a, "allocation.large_pool"), [1, 2, 2, 1]);
    assert_eq!(s4(&a, "active.all"), [1, 2, 3, 2]);
    assert_eq!(s4(&a, "segment.all"), [2, 2, 2, 0]);
    assert_eq!(s4(&a, "segment.small_pool"), [1, 1, 1, 0]);
    assert_eq!(s4(&a, "segment.large_pool"), [1, 1, 1, 0]);
    assert_eq!(
        s4(&a, "reserved_bytes.all"),
        [i(22 * MIB), i(22 * MIB), i(22 * MIB), 0]
    );
    assert_eq!(
        s4(&a, "reserved_bytes.small_pool"),
        [i(2 * MIB), i(2 * MIB), i(2 * MIB), 0]
    );
    assert_eq!(
        s4(&a, "allocated_bytes.all"),
        [i(5 * MIB), i(8 * MIB), i(1024 + 8 * MIB), i(1024 + 3 * MIB)]
    );
    assert_eq!(s4(&a, "allocated_bytes.small_pool"), [0, 1024, 1024, 1024]);
    assert_eq!(
        s4(&a, "allocated_bytes.large_pool"),
        [i(5 * MIB), i(8 * MIB), i(8 * MIB), i(3 * MIB)]
    );
    assert_eq!(s4(&a, "active_bytes.all"), s4(&a, "allocated_bytes.all"));
    assert_eq!(
        s4(&a, "requested_bytes.all"),
        [i(5 * MIB), i(8 * MIB), i(1000 + 8 * MIB), i(1000 + 3 * MIB)]
    );
    assert_eq!(s4(&a, "requested_bytes.small_pool"), [0, 1000, 1000, 1000]);
    // Inactive split: the small remainder appeared and merged away; the
    // large segment went 17 MiB -> 12 MiB and gained pb's 3 MiB.
    assert_eq!(s4(&a, "inactive_split.small_pool"), [0, 1, 1, 1]);
    assert_eq!(
        s4(&a, "inactive_split_bytes.small_pool"),
        [0, i(2 * MIB - 1024), i(2 * MIB - 1024), i(2 * MIB - 1024)]
    );
    assert_eq!(s4(&a, "inactive_split.large_pool"), [2, 2, 2, 0]);
    assert_eq!(
        s4(&a, "inactive_split_bytes.large_pool"),
        [i(15 * MIB), i(17 * MIB), i(20 * MIB), i(5 * MIB)]
    );
    assert_eq!(s4(&a, "inactive_split.all"), [2, 2, 3, 1]);
    assert_eq!(
        s4(&a, "inactive_split_bytes.all"),
        [
            i(15 * MIB),
            i(19 * MIB - 1024),
            i(22 * MIB - 1024),
            i(7 * MIB - 1024)
        ]
    );
    let m = st(&a);
    assert_eq!(m["num_device_alloc"], 2);
    assert_eq!(m["num_device_free"], 0);
    assert_eq!(m["num_alloc_retries"], 0);
    assert_eq!(m["num_ooms"], 0);
    assert_eq!(m["max_split_size"], -1);
    assert_eq!(a.memory_allocated(), 5 * MIB);
    assert_eq!(a.memory_reserved(), 22 * MIB);

    // reset_peak_stats: peak = current everywhere.
    a.reset_peak_stats();
    assert_eq!(
        s4(&a, "allocated_bytes.all"),
        [i(5 * MIB), i(5 * MIB), i(1024 + 8 * MIB), i(1024 + 3 * MIB)]
    );
    assert_eq!(s4(&a, "inactive_split.small_pool"), [0, 0, 1, 1]);
    let m = st(&a);
    for (k, v) in &m {
        if let Some(base) = k.strip_suffix(".peak") {
            assert_eq!(*v, m[&format!("{base}.current")], "{k}");
        }
    }

    // empty_cache releases the (whole) small segment only.
    a.empty_cache().unwrap();
    assert_eq!(s4(&a, "segment.small_pool"), [0, 1, 1, 1]);
    assert_eq!(
        s4(&a, "reserved_bytes.all"),
        [i(20 * MIB), i(22 * MIB), i(22 * MIB), i(2 * MIB)]
    );
    assert_eq!(st(&a)["num_device_free"], 1);

    // reset_accumulated_stats: allocated/freed and counters to zero.
    a.reset_accumulated_stats();
    assert_eq!(
        s4(&a, "reserved_bytes.all"),
        [i(20 * MIB), i(22 * MIB), 0, 0]
    );
    assert_eq!(st(&a)["num_device_free"], 0);
    assert_eq!(st(&a)["num_device_alloc"], 0);
    assert_eq!(st(&a)["num_sync_all_streams"], 0);
    check(&a);
}

#[test]
fn oversize_stats_and_max_split_size() {
    let a = alloc(GIB, "max_split_size_mb:32");
    assert_eq!(st(&a)["max_split_size"], i(32 * MIB));
    let p = a.malloc(40 * MIB, S0).unwrap();
    let q = a.malloc(20 * MIB, S0).unwrap();
    assert_eq!(s4(&a, "oversize_allocations"), [1, 1, 1, 0]);
    assert_eq!(s4(&a, "oversize_segments"), [1, 1, 1, 0]);
    free(&a, p);
    free(&a, q);
    a.empty_cache().unwrap();
    assert_eq!(s4(&a, "oversize_allocations"), [0, 1, 1, 1]);
    assert_eq!(s4(&a, "oversize_segments"), [0, 1, 1, 1]);
    check(&a);
}

#[test]
#[cfg(feature = "snapshot-json")]
fn snapshot_json_round_trip_and_shape() {
    let a = alloc(GIB, "");
    let p = a.malloc(3 * MIB, S1).unwrap();
    let q = a.malloc(700, S0).unwrap();
    a.record_stream(p, S2).unwrap();
    free(&a, p);
    let snap = a.snapshot();
    let json = a.snapshot_json().unwrap();
    let back: Vec<alloc_cuda::SegmentSnapshot> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, snap);
    // The shape of torch.cuda.memory_snapshot()'s segments.
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let segs = v.as_array().unwrap();
    assert_eq!(segs.len(), 2);
    let small = segs.iter().find(|s| s["segment_type"] == "small").unwrap();
    assert_eq!(small["address"], q.0);
    assert_eq!(small["total_size"], 2 * MIB);
    assert_eq!(small["allocated_size"], 1024);
    assert_eq!(small["requested_size"], 700);
    assert_eq!(small["stream"], 0);
    assert_eq!(small["device"], 0);
    assert_eq!(small["is_expandable"], false);
    assert_eq!(small["segment_pool_id"], serde_json::json!([0, 0]));
    assert_eq!(small["frames"], serde_json::json!([]));
    assert_eq!(small["blocks"][0]["state"], "active_allocated");
    assert_eq!(small["blocks"][0]["size"], 1024);
    assert_eq!(small["blocks"][1]["state"], "inactive");
    let large = segs.iter().find(|s| s["segment_type"] == "large").unwrap();
    assert_eq!(large["stream"], 1);
    assert_eq!(large["active_size"], 3 * MIB);
    assert_eq!(large["allocated_size"], 0);
    assert_eq!(large["blocks"][0]["state"], "active_pending_free");
    assert_eq!(large["blocks"][0]["address"], p.0);
    // Sorted by address.
    assert!(snap.windows(2).all(|w| w[0].address < w[1].address));
    assert_eq!(
        snap.iter()
            .filter(|s| s.segment_type == SegmentType::Small)
            .count(),
        1
    );
    assert_eq!(
        snap.iter()
            .flat_map(|s| &s.blocks)
            .filter(|b| b.state == BlockState::Inactive)
            .count(),
        2
    );
}

#[test]
#[cfg(feature = "snapshot-json")]
fn stats_serialize() {
    let a = alloc(GIB, "");
    let _p = a.malloc(1, S0).unwrap();
    let s = a.stats();
    let j = serde_json::to_string(&s).unwrap();
    let back: alloc_cuda::DeviceStats = serde_json::from_str(&j).unwrap();
    assert_eq!(back, s);
    assert_eq!(
        s.allocation[alloc_cuda::StatType::SmallPool as usize].current,
        1
    );
}
