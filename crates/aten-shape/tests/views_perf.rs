//! Rough per-op timings of the view ops (ignored by default; run with
//! `cargo test --release -p aten-shape --test views_perf -- --ignored --nocapture`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Instant;

use aten_shape::views::ViewOps;
use c10_core::{ScalarType, Tensor};

fn time(name: &str, f: impl Fn() -> c10_core::Result<Tensor>) {
    for _ in 0..10_000 {
        black_box(f().unwrap());
    }
    let n = 1_000_000u32;
    let start = Instant::now();
    for _ in 0..n {
        black_box(f().unwrap());
    }
    let ns = start.elapsed().as_nanos() as f64 / f64::from(n);
    println!("{name:>14}: {ns:6.1} ns/op");
}

#[test]
#[ignore = "timing report, run in release"]
fn view_op_timings() {
    let base = Tensor::arange(0, 120, 1, ScalarType::Float).unwrap();
    let x = base.view(&[2, 3, 4, 5]).unwrap();
    let tr = x.transpose(1, 2).unwrap();
    let col = base.view(&[120, 1]).unwrap();
    time("view", || x.view(&[6, -1]));
    time("view (strided)", || tr.view(&[2, 4, 3, 5, 1]));
    time("reshape", || x.reshape(&[6, 20]));
    time("as_strided", || x.as_strided(&[2, 3], &[3, 1], Some(1)));
    time("slice", || x.slice(2, Some(1), None, 2));
    time("narrow", || x.narrow(-1, 1, 3));
    time("select", || x.select(1, -1));
    time("transpose", || x.transpose(0, 3));
    time("t", || col.t());
    time("permute", || x.permute(&[3, 1, 0, 2]));
    time("movedim", || x.movedim(&[0, 1], &[3, 2]));
    time("expand", || col.expand(&[4, 120, 7]));
    time("squeeze", || col.squeeze());
    time("unsqueeze", || x.unsqueeze(2));
    time("flatten", || x.flatten(1, 2));
    time("unflatten", || x.unflatten(3, &[5, 1]));
    time("diagonal", || x.diagonal(1, 2, 3));
    time("unfold", || x.unfold(3, 2, 1));
    time("alias", || x.alias());
}

#[test]
#[ignore = "timing report, run in release"]
fn baseline_timings() {
    let base = Tensor::arange(0, 120, 1, ScalarType::Float).unwrap();
    let x = base.view(&[2, 3, 4, 5]).unwrap();
    time("handle clone", || Ok(x.clone()));
    time("view_with_geometry", || {
        x.view_with_geometry(x.sizes(), x.strides(), x.storage_offset())
    });
    let m = x.movedim(&[0, 1], &[3, 2]).unwrap();
    time("vwg (movedim)", || {
        x.view_with_geometry(m.sizes(), m.strides(), 0)
    });
    let e = base.view(&[120, 1]).unwrap().expand(&[4, 120, 7]).unwrap();
    time("vwg (expand)", || {
        x.view_with_geometry(e.sizes(), e.strides(), 0)
    });
    let n = 1_000_000u32;
    let start = Instant::now();
    for i in 0..n {
        black_box(Box::new([i as u64; 20]));
    }
    println!(
        "box 160B: {:6.1} ns/op",
        start.elapsed().as_nanos() as f64 / f64::from(n)
    );
}
