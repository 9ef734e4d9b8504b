//! The cost of history recording per alloc/free pair, on the CUDA caching
//! allocator (fake device, a cached 4 KiB block reused each time) and the
//! CPU allocator (4 KiB), with recording off and in each mode. Prints the
//! best of several runs in ns per pair. Build in release:
//!
//! ```text
//! cargo run --release -p torchcore-memviz --example history_overhead
//! ```
//!
//! `-- --quick` runs a thousandth of the pairs once (CI's check that the
//! example works; its numbers mean nothing).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Instant;

use alloc_cpu::CpuAllocator;
use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, FakeDevice, StreamId};
use c10_storage::history::HistoryConfig;
use c10_storage::Allocator;

const PAIRS: u32 = 200_000;
const RUNS: usize = 7;

/// `(pairs, runs)`: the full measurement, or a smoke run with `--quick`.
fn sizes() -> (u32, usize) {
    if std::env::args().any(|a| a == "--quick") {
        (PAIRS / 1000, 1)
    } else {
        (PAIRS, RUNS)
    }
}

fn best(mut f: impl FnMut(u32)) -> f64 {
    let (pairs, runs) = sizes();
    f(pairs / 10); // warm up
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f(pairs);
            t.elapsed().as_nanos() as f64 / f64::from(pairs)
        })
        .fold(f64::INFINITY, f64::min)
}

fn modes() -> Vec<(&'static str, Option<HistoryConfig>)> {
    let trace = |stacks, on_free| HistoryConfig {
        trace: true,
        max_entries: 100_000,
        stacks,
        stacks_on_free: on_free,
    };
    vec![
        ("off", None),
        ("trace, no stacks", Some(trace(false, false))),
        ("trace + alloc stacks", Some(trace(true, false))),
        ("trace + all stacks", Some(trace(true, true))),
    ]
}

fn main() {
    println!(
        "{:<24} {:>14} {:>14}",
        "mode", "cuda ns/pair", "cpu ns/pair"
    );
    for (name, cfg) in modes() {
        let cuda = CachingAllocator::new(
            FakeDevice::new(1 << 30),
            0,
            CachingAllocatorConfig::default(),
        );
        cuda.record_memory_history(cfg);
        let cuda_ns = best(|n| {
            for _ in 0..n {
                let p = cuda.malloc(4096, StreamId::DEFAULT).expect("malloc");
                // SAFETY: unused.
                unsafe { cuda.free(black_box(p)).expect("free") };
            }
        });
        let cpu = CpuAllocator::new();
        cpu.record_memory_history(cfg);
        let cpu_ns = best(|n| {
            for _ in 0..n {
                drop(black_box(cpu.allocate(4096).expect("allocate")));
            }
        });
        println!("{name:<24} {cuda_ns:>14.1} {cpu_ns:>14.1}");
    }
}
