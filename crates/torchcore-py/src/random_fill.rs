//! The bulk generator behind `torchcore.rand` / `randn` (and
//! `Tensor.uniform_`, which copies from a `rand`-made tensor) for the real
//! floating dtypes on the CPU.
//!
//! The Python layer draws one 64-bit seed from its Mersenne Twister (so
//! `manual_seed` still makes every tensor reproducible) and this module
//! draws the elements from `rand`'s `SmallRng` seeded with it, straight into
//! the tensor's own vector: about a nanosecond per element instead of the
//! microsecond of a Python-level draw, and no memory beyond the tensor. The
//! numbers are not PyTorch's (see `docs/pytorch-map.md`), as before.

use c10_core::{Element, Tensor};
use half::{bf16, f16};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

use crate::convert::OrPy;
use crate::tensor::{wrap, PyTensor};

/// What to draw: `a + b * N(0, 1)` or a uniform value in `[a, b)`.
#[derive(Clone, Copy)]
enum Law {
    Normal { mean: f64, std: f64 },
    Uniform { low: f64, high: f64 },
}

impl Law {
    fn draw(self, rng: &mut SmallRng) -> f64 {
        match self {
            Law::Normal { mean, std } => {
                let z: f64 = rng.sample(StandardNormal);
                mean + std * z
            }
            Law::Uniform { low, high } => low + (high - low) * rng.random::<f64>(),
        }
    }
}

/// `n` draws rounded to `T` by `round` (the same rounding as a `copy_` from
/// float64), as a fresh row-major tensor of `sizes`. A uniform draw that
/// rounds up to `high` is drawn again (`back` reads a `T` as `f64`), so
/// the range stays `[low, high)` in every dtype, as PyTorch's.
fn fresh<T: Element + Copy>(
    sizes: &[i64],
    n: usize,
    law: Law,
    seed: u64,
    round: impl Fn(f64) -> T,
    back: impl Fn(T) -> f64,
) -> c10_core::Result<Tensor> {
    let mut v: Vec<T> = Vec::new();
    // Refused, not aborted, when the memory is not there.
    v.try_reserve_exact(n).map_err(|_| {
        c10_core::TensorError::runtime(format!(
            "DefaultCPUAllocator: can't allocate memory: you tried to allocate {} bytes.",
            n.saturating_mul(std::mem::size_of::<T>())
        ))
    })?;
    let mut rng = SmallRng::seed_from_u64(seed);
    let one = |rng: &mut SmallRng| {
        let mut x = round(law.draw(rng));
        // A bounded number of redraws: when the whole range rounds to
        // `high` or above (a range narrower than the dtype's spacing),
        // every draw would, and the last one is kept.
        for _ in 0..16 {
            match law {
                Law::Uniform { high, .. } if back(x) >= high => x = round(law.draw(rng)),
                _ => break,
            }
        }
        x
    };
    v.extend((0..n).map(|_| one(&mut rng)));
    Tensor::from_vec(v, sizes)
}

/// `_C._random_tensor(sizes, dtype, law, seed, a, b)`: a new CPU tensor of
/// `sizes` (`dtype` one of `"float32"`, `"float64"`, `"float16"`,
/// `"bfloat16"`; `law` `"normal"` with mean `a` and standard deviation `b`,
/// or `"uniform"` on `[a, b)`), its version 0 as a factory's.
#[pyfunction]
fn _random_tensor<'py>(
    py: Python<'py>,
    sizes: Vec<i64>,
    dtype: &str,
    law: &str,
    seed: u64,
    a: f64,
    b: f64,
) -> PyResult<Bound<'py, PyTensor>> {
    let law = match law {
        "normal" => Law::Normal { mean: a, std: b },
        "uniform" => Law::Uniform { low: a, high: b },
        other => return Err(PyValueError::new_err(format!("unknown law {other:?}"))),
    };
    let numel = c10_core::geometry::compute_numel(&sizes).py()?;
    let n = usize::try_from(numel)
        .map_err(|_| PyValueError::new_err(format!("negative element count {numel}")))?;
    let t = py
        .detach(|| match dtype {
            "float32" => fresh(&sizes, n, law, seed, |x| x as f32, f64::from).map(Some),
            "float64" => fresh(&sizes, n, law, seed, |x| x, |x| x).map(Some),
            "float16" => fresh(&sizes, n, law, seed, f16::from_f64, f16::to_f64).map(Some),
            "bfloat16" => fresh(&sizes, n, law, seed, bf16::from_f64, bf16::to_f64).map(Some),
            _ => Ok(None),
        })
        .py()?;
    match t {
        Some(t) => wrap(py, t),
        None => Err(PyValueError::new_err(format!(
            "unsupported dtype {dtype:?}"
        ))),
    }
}

/// Adds `_random_tensor` to the `_C` module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_random_tensor, m)?)?;
    Ok(())
}
