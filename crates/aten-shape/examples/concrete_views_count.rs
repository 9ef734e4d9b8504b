//! Runs one concrete view op many times, for instruction counts that do
//! not depend on machine load (the machine this was written on is shared):
//!
//!     cargo build --release -p aten-shape --example concrete_views_count
//!     valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!         target/release/examples/concrete_views_count OP N
//!
//! (instructions per call = (Ir at N − Ir at 0) / N; OP 0..6 = view, view
//! with -1, reshape, reshape of a transposed tensor, expand, transpose,
//! narrow). Results in `docs/benchmarks.md`.
use aten_shape::views::ViewOps;
use c10_core::{Result, ScalarType, Tensor};
fn main() -> Result<()> {
    let op: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(0);
    let n: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let m = Tensor::zeros(&[64, 1024], ScalarType::Float)?;
    let p = Tensor::zeros(&[8, 16, 64], ScalarType::Float)?.transpose(0, 1)?;
    let r = Tensor::zeros(&[1, 64], ScalarType::Float)?;
    for _ in 0..n {
        let t = match op {
            0 => m.view(&[64, 32, 32])?,
            1 => m.view(&[-1, 32])?,
            2 => m.reshape(&[64, 32, 32])?,
            3 => p.reshape(&[16, 8, 8, 8])?,
            4 => r.expand(&[512, 64])?,
            5 => m.transpose(0, 1)?,
            _ => m.narrow(0, 16, 32)?,
        };
        std::hint::black_box(t);
    }
    Ok(())
}
