//! Runs one concrete view op many times, for instruction counts that do
//! not depend on machine load (the machine this was written on is shared):
//!
//!     cargo build --release -p aten-shape --example concrete_views_count
//!     valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!         target/release/examples/concrete_views_count OP N
//!
//! (instructions per call = (Ir at N − Ir at 0) / N; OP 0..18 = view, view
//! with -1, reshape, reshape of a transposed tensor, expand, transpose,
//! narrow, permute, movedim, unsqueeze, squeeze, squeeze_dim, select,
//! slice, diagonal, unfold, flatten, unflatten, as_strided; 19 = `empty([3, 4])`,
//! not a view, for the fresh-tensor path). Results in `docs/benchmarks.md`.
use aten_shape::views::ViewOps;
use c10_core::{Result, ScalarType, Tensor, TensorOptions};
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
    let q = Tensor::zeros(&[8, 16, 64], ScalarType::Float)?;
    for _ in 0..n {
        let t = match op {
            0 => m.view(&[64, 32, 32])?,
            1 => m.view(&[-1, 32])?,
            2 => m.reshape(&[64, 32, 32])?,
            3 => p.reshape(&[16, 8, 8, 8])?,
            4 => r.expand(&[512, 64])?,
            5 => m.transpose(0, 1)?,
            6 => m.narrow(0, 16, 32)?,
            7 => m.permute(&[1, 0])?,
            8 => q.movedim(&[0], &[-1])?,
            9 => m.unsqueeze(1)?,
            10 => r.squeeze()?,
            11 => r.squeeze_dim(0)?,
            12 => m.select(0, 3)?,
            13 => m.slice(1, Some(2), Some(100), 3)?,
            14 => m.diagonal(0, 0, 1)?,
            15 => m.unfold(1, 4, 2)?,
            16 => q.flatten(0, 1)?,
            17 => m.unflatten(1, &[32, 32])?,
            18 => m.as_strided(&[32, 32], &[64, 2], Some(1))?,
            _ => Tensor::empty(&[3, 4], TensorOptions::new())?,
        };
        std::hint::black_box(t);
    }
    Ok(())
}
