//! torchcore's shape layer against candle, ndarray and (separately, through
//! `benches/torch/bench.cpp`) libtorch.
//!
//! One criterion group per case, one function per implementation (`ours`,
//! `candle`, `ndarray_arc`, `ndarray_view`, `memcpy`); `cargo xtask bench`
//! reads the medians back from `target/criterion` into `docs/benchmarks.md`.
//! Single-threaded, f32, inputs built outside the timed loop, results
//! returned from the closure so that criterion drops them inside the timed
//! region (reference-count decrements and frees are counted).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

#[path = "shape/alloc.rs"]
mod alloc;
#[path = "shape/copy.rs"]
mod copy;
#[path = "shape/meta.rs"]
mod meta;
#[path = "shape/scaling.rs"]
mod scaling;

/// Settings for the nanosecond-scale metadata cases.
fn fast() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(60)
}

/// Settings for copies and allocations of megabytes.
fn slow() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20)
}

criterion_group! {
    name = meta_ops;
    config = fast();
    targets = meta::benches
}
criterion_group! {
    name = alloc_ops;
    config = fast();
    targets = alloc::benches
}
criterion_group! {
    name = copy_ops;
    config = slow();
    targets = copy::benches
}
criterion_group! {
    name = scaling_views;
    config = fast();
    targets = scaling::views
}
criterion_group! {
    name = scaling_copies;
    config = slow();
    targets = scaling::copies
}
criterion_group! {
    name = scaling_allocs;
    config = slow();
    targets = alloc::scaling
}
criterion_main!(
    meta_ops,
    alloc_ops,
    copy_ops,
    scaling_views,
    scaling_copies,
    scaling_allocs
);
