//! Randomized sequences of malloc / free / record_stream / event completion
//! / empty_cache with injected failures; the allocator's invariants are
//! checked after every step (a seeded loop that also runs under Miri, and
//! a proptest over op lists).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use alloc_cuda::{round_size, CachingAllocatorError, DevicePtr, FakeDevice, StreamId};
use common::*;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Malloc { size: u64, stream: u64 },
    Free(usize),
    Record(usize, u64),
    CompleteStream(u64),
    CompleteEvent(usize),
    EmptyCache,
    FailNextMalloc,
    FailNextMap,
    External(u64),
    ToggleExpandable,
}

struct Harness {
    a: Alloc,
    live: Vec<(DevicePtr, u64)>,
    expandable_conf: bool,
    ooms: u64,
}

impl Harness {
    fn new(conf: &str, capacity: u64) -> Harness {
        let a = alloc_on(FakeDevice::new(capacity).with_alignment(512), conf);
        if conf.contains("garbage_collection_threshold") {
            a.set_memory_fraction(0.8).unwrap();
        }
        Harness {
            a,
            live: Vec::new(),
            expandable_conf: conf.contains("expandable_segments:True"),
            ooms: 0,
        }
    }

    fn apply(&mut self, op: &Op) {
        let a = &self.a;
        match *op {
            Op::Malloc { size, stream } => match a.malloc(size, StreamId(stream)) {
                Ok(p) => self.live.push((p, size)),
                Err(CachingAllocatorError::OutOfMemory(_)) => self.ooms += 1,
                Err(e) => panic!("unexpected error: {e}"),
            },
            Op::Free(i) => {
                if !self.live.is_empty() {
                    let (p, _) = self.live.swap_remove(i % self.live.len());
                    free(a, p);
                }
            }
            Op::Record(i, s) => {
                if !self.live.is_empty() {
                    let (p, _) = self.live[i % self.live.len()];
                    a.record_stream(p, StreamId(s)).unwrap();
                }
            }
            Op::CompleteStream(s) => a.device().complete_stream_work(StreamId(s)),
            Op::CompleteEvent(i) => {
                let evs = a.device().live_events();
                if !evs.is_empty() {
                    a.device().set_event_complete(evs[i % evs.len()]);
                }
            }
            Op::EmptyCache => a.empty_cache().unwrap(),
            Op::FailNextMalloc => a.device().fail_next_mallocs(1),
            Op::FailNextMap => {
                let next = a.device().counters().create_physical_calls + 1;
                a.device().fail_create_physical_call(next);
            }
            Op::External(bytes) => a.device().set_external_usage(bytes),
            Op::ToggleExpandable => {
                if self.expandable_conf {
                    a.set_expandable_segments(!a.expandable_segments());
                }
            }
        }
        self.check();
    }

    fn check(&self) {
        check(&self.a);
        // Live user allocations never overlap, and each lies in a segment.
        let config = self.a.config();
        let mut ranges: Vec<(u64, u64)> = self
            .live
            .iter()
            .map(|&(p, size)| (p.0, p.0 + round_size(size, &config)))
            .collect();
        ranges.sort_unstable();
        for w in ranges.windows(2) {
            assert!(w[0].1 <= w[1].0, "live allocations overlap: {w:?}");
        }
        let snap = self.a.snapshot();
        for &(p, _) in &self.live {
            assert!(
                snap.iter()
                    .any(|s| s.address <= p.0 && p.0 < s.address + s.total_size),
                "live pointer {p} outside every segment"
            );
        }
    }

    fn finish(mut self) {
        for (p, _) in std::mem::take(&mut self.live) {
            free(&self.a, p);
        }
        self.a.set_expandable_segments(self.expandable_conf);
        self.a.device().complete_all_work();
        self.a.empty_cache().unwrap();
        check(&self.a);
        assert_eq!(self.a.memory_allocated(), 0);
        assert_eq!(self.a.memory_reserved(), 0);
        assert!(self.a.device().live_allocations().is_empty());
        assert!(self.a.device().live_mappings().is_empty());
        assert_eq!(self.a.device().live_physical_handles(), 0);
        // Expandable segments whose first mapping failed keep their (empty)
        // address range, as in PyTorch; dropping the allocator frees them.
        let m = st(&self.a);
        assert_eq!(m["active.all.current"], 0);
        assert_eq!(m["inactive_split.all.current"], 0);
    }
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_size(r: &mut Rng) -> u64 {
    match r.below(10) {
        0..=3 => r.below(4096) + 1,
        4..=5 => r.below(MIB) + 1,
        6..=8 => r.below(10 * MIB) + MIB,
        _ => r.below(48 * MIB) + 10 * MIB,
    }
}

fn random_op(r: &mut Rng) -> Op {
    match r.below(100) {
        0..=44 => Op::Malloc {
            size: random_size(r),
            stream: r.below(3),
        },
        45..=71 => Op::Free(r.below(1 << 20) as usize),
        72..=79 => Op::Record(r.below(1 << 20) as usize, r.below(4)),
        80..=85 => Op::CompleteStream(r.below(4)),
        86..=89 => Op::CompleteEvent(r.below(1 << 20) as usize),
        90..=92 => Op::EmptyCache,
        93..=94 => Op::FailNextMalloc,
        95 => Op::FailNextMap,
        96..=97 => Op::External(r.below(4) * 16 * MIB),
        _ => Op::ToggleExpandable,
    }
}

const CONFIGS: [&str; 6] = [
    "",
    "max_split_size_mb:20",
    "max_split_size_mb:24,max_non_split_rounding_mb:40,garbage_collection_threshold:0.6",
    "roundup_power2_divisions:[1:4,8:2,>:8]",
    "expandable_segments:True",
    "expandable_segments:True,max_split_size_mb:32,release_lock_on_cudamalloc:True",
];

#[test]
fn seeded_random_sequences_keep_every_invariant() {
    let (seeds, steps) = if cfg!(miri) { (1u64, 40u64) } else { (4, 500) };
    for conf in CONFIGS {
        for seed in 0..seeds {
            let mut r = Rng(0x9E37_79B9_7F4A_7C15 ^ (seed + 1).wrapping_mul(0x2545_F491_4F6C_DD1D));
            let mut h = Harness::new(conf, 256 * MIB);
            for _ in 0..steps {
                let op = random_op(&mut r);
                h.apply(&op);
            }
            assert!(h.ooms < steps, "{conf}: every malloc failed");
            h.finish();
        }
    }
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let size = prop_oneof![
        1u64..4096,
        1u64..(1 << 20),
        (1u64 << 20)..(12 << 20),
        (10u64 << 20)..(80 << 20),
    ];
    prop_oneof![
        8 => (size, 0u64..3).prop_map(|(size, stream)| Op::Malloc { size, stream }),
        5 => any::<usize>().prop_map(Op::Free),
        2 => (any::<usize>(), 0u64..4).prop_map(|(i, s)| Op::Record(i, s)),
        1 => (0u64..4).prop_map(Op::CompleteStream),
        1 => any::<usize>().prop_map(Op::CompleteEvent),
        1 => Just(Op::EmptyCache),
        1 => Just(Op::FailNextMalloc),
        1 => Just(Op::FailNextMap),
        1 => (0u64..4).prop_map(|k| Op::External(k * (16 << 20))),
        1 => Just(Op::ToggleExpandable),
    ]
}

#[cfg(not(miri))]
proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn proptest_op_sequences(conf in 0usize..CONFIGS.len(), ops in prop::collection::vec(op_strategy(), 1..80)) {
        let mut h = Harness::new(CONFIGS[conf], 192 * MIB);
        for op in &ops {
            h.apply(op);
        }
        h.finish();
    }
}

#[cfg(miri)]
#[test]
fn op_strategy_is_used() {
    let _ = op_strategy();
}
