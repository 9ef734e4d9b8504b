//! One-thread `contiguous()` of a transposed square f32 matrix against a
//! `memcpy` of the same bytes (issue #13's copy target), interleaved run by
//! run so that both see the same machine load; prints the best of 15 runs,
//! timed on the thread's CPU clock (time the thread is descheduled on a
//! shared machine does not count; memory-bandwidth contention still does).
//!
//! ```sh
//! cargo run --release -p torchcore --example transpose_vs_memcpy
//! ```
//!
//! `-- --quick` runs one 256x256 matrix once: a smoke test (`cargo xtask
//! examples` runs it so in debug mode), not a measurement.
//!
//! Two sources: a `Vec` handed over with `Tensor::from_vec` (the global
//! allocator's pages) and a tensor torchcore allocated itself (alloc-cpu
//! advises huge pages for large blocks), since the transpose's source side
//! is bounded by its TLB misses.

use std::hint::black_box;

use torchcore::prelude::*;
use torchcore::shape::copy::set_copy_threads;

/// The calling thread's CPU time, in milliseconds.
fn cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable `timespec`; the clock id is a
    // constant the kernel knows.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 * 1e-6
}

fn best(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn main() -> Result<(), TensorError> {
    set_copy_threads(1);
    let quick = std::env::args().any(|a| a == "--quick");
    let (sides, runs): (&[usize], usize) = if quick {
        (&[256], 1)
    } else {
        (&[4096, 2048, 1024], 15)
    };
    for &side in sides {
        let n = side * side;
        let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let from_vec = Tensor::from_vec(data.clone(), &[side as i64, side as i64])?;
        let own = Tensor::empty(&[side as i64, side as i64], ScalarType::Float)?;
        own.copy_(&from_vec)?;
        let (tv, to) = (from_vec.transpose(0, 1)?, own.transpose(0, 1)?);
        let mut dst = vec![0f32; n];
        let (mut m, mut a, mut b) = (vec![], vec![], vec![]);
        for _ in 0..runs {
            let t0 = cpu_ms();
            black_box(&mut dst[..]).copy_from_slice(black_box(&data));
            black_box(&dst);
            m.push(cpu_ms() - t0);
            let t0 = cpu_ms();
            drop(black_box(black_box(&tv).contiguous()?));
            a.push(cpu_ms() - t0);
            let t0 = cpu_ms();
            drop(black_box(black_box(&to).contiguous()?));
            b.push(cpu_ms() - t0);
        }
        let (m, a, b) = (best(&m), best(&a), best(&b));
        println!(
            "{side}x{side} f32: memcpy {m:.2} ms | from_vec source {a:.2} ms ({:.0}% of memcpy) | torchcore-allocated source {b:.2} ms ({:.0}%)",
            100.0 * m / a,
            100.0 * m / b
        );
    }
    Ok(())
}
