//! Range factories: `arange`, `linspace`, `eye`, with PyTorch's values bit
//! for bit.
//!
//! PyTorch computes `arange` with a vectorised CPU kernel: blocks of
//! `2 * W` elements (`W` lanes of the dtype's SIMD vector) start from a base
//! computed like a scalar element and add `k * step` per lane; the tail past
//! the last whole block is computed element by element. The two paths round
//! differently, so the last bits of a value depend on its position. This
//! module reproduces both paths (the AVX2 lane counts that PyTorch 2.15's
//! x86-64 build uses for this kernel, and the fused multiply-adds its
//! compiler emits). `linspace` computes every element on its own (one fused
//! multiply-add from whichever end is nearer). Both are checked against
//! PyTorch by the fidelity corpus (`shape-conformance`, categories
//! `arange`, `linspace`, `eye`). PyTorch splits outputs of 32768 elements and more
//! between threads, each restarting the blocks; we follow its one-thread
//! result (see `docs/pytorch-map.md`).

use half::{bf16, f16};

use crate::error::{Result, TensorError};
use crate::options::TensorOptions;
use crate::scalar::Scalar;
use crate::scalar_type::{Complex128, Complex64, Element, ScalarType};
use crate::tensor::Tensor;

/// C++ `static_cast<int64_t>(double)` on x86-64: truncation, or `i64::MIN`
/// for NaN and out-of-range values.
fn cvt_i64(x: f64) -> i64 {
    if x.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// C++ `static_cast<int32_t>(double)` on x86-64.
fn cvt_i32(x: f64) -> i32 {
    if x.is_nan() || x <= -2_147_483_649.0 || x >= 2_147_483_648.0 {
        i32::MIN
    } else {
        x as i32
    }
}

/// The integer dtypes' conversion of a computed `double` (narrow signed
/// types go through `int32`, `uint8` through `int64`, as C++ compiles it).
fn int_from_f64(x: f64, dtype: ScalarType) -> i64 {
    match dtype {
        ScalarType::Char | ScalarType::Short | ScalarType::Int => i64::from(cvt_i32(x)),
        _ => cvt_i64(x),
    }
}

/// AVX2 lanes of the dtype's vector in PyTorch's kernels.
fn lanes(dtype: ScalarType) -> usize {
    match dtype {
        ScalarType::Byte | ScalarType::Char | ScalarType::Bool => 32,
        ScalarType::Short | ScalarType::Half | ScalarType::BFloat16 => 16,
        ScalarType::Int | ScalarType::Float => 8,
        ScalarType::ComplexFloat => 4,
        ScalarType::ComplexDouble => 2,
        _ => 4, // Long, Double
    }
}

/// Where an element is computed in PyTorch's kernel.
#[derive(Clone, Copy)]
enum Pos {
    /// Lane `k` of the vector that starts at element `base`.
    Lane { base: usize, k: usize },
    /// Element `i` of the scalar tail.
    Scalar(usize),
}

/// The `n` values of a kernel with `w` lanes: whole blocks of `2 * w`
/// elements are vectors, the rest is the scalar tail.
fn kernel_values<T>(n: usize, w: usize, mut f: impl FnMut(Pos) -> T) -> Result<Vec<T>> {
    let mut out = crate::access::try_vec_with_capacity(n as u64, "range factory")?;
    let block = 2 * w;
    let whole = n - n % block;
    for base in (0..whole).step_by(w) {
        for k in 0..w {
            out.push(f(Pos::Lane { base, k }));
        }
    }
    for i in whole..n {
        out.push(f(Pos::Scalar(i)));
    }
    Ok(out)
}

fn not_implemented(op: &str, dtype: ScalarType) -> TensorError {
    TensorError::NotImplemented(format!("\"{op}\" not implemented for '{}'", dtype.name()))
}

/// A double as C++'s `ostream` prints it (6 significant digits, `%g`).
pub(crate) fn fmt_g(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let exp = x.abs().log10().floor() as i32;
    if (-5..6).contains(&exp) {
        let decimals = (5 - exp).max(0) as usize;
        let s = format!("{x:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        let s = format!("{x:.5e}");
        let (mantissa, e) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = if mantissa.contains('.') {
            mantissa.trim_end_matches('0').trim_end_matches('.')
        } else {
            mantissa
        };
        let e: i32 = e.parse().unwrap_or(0);
        format!("{mantissa}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    }
}

impl Tensor {
    /// `arange(start, end, step)`: `ceil((end - start) / step)` values
    /// `start + i * step`, with PyTorch's rules:
    ///
    /// * the dtype, when none is given, is `int64` if every argument is an
    ///   integer (or bool), else `float32`;
    /// * `start`, `end` and `step` are first converted (with c10's range
    ///   check) to the dtype's accumulation type (`int64` for integer
    ///   dtypes, `double` for `float32`/`float64`, `float` for
    ///   `float16`/`bfloat16`): `arange(0, 10, 2.5, int64)` steps by 2;
    /// * the size is computed in double precision from the arguments as
    ///   given: `arange(0, 10, 2.5, int64)` is `[0, 2, 4, 6]`;
    /// * values follow PyTorch's vectorised kernel bit for bit (see the
    ///   module docs);
    /// * errors: `step must be nonzero`, `unsupported range: 0 -> inf`,
    ///   `upper bound and lower bound inconsistent with step sign`, `invalid
    ///   size, possible overflow?`, and `NotImplementedError` for `bool`,
    ///   complex and the wide unsigned dtypes (`"arange_cpu" not
    ///   implemented for 'Bool'`).
    ///
    /// ```
    /// use c10_core::{Tensor, ScalarType, TensorOptions};
    /// let t = Tensor::arange(0, 10, 3, TensorOptions::new())?;
    /// assert_eq!((t.dtype(), t.to_vec::<i64>()?), (ScalarType::Long, vec![0, 3, 6, 9]));
    /// let t = Tensor::arange(0, 10, 2.5, ScalarType::Long)?;
    /// assert_eq!(t.to_vec::<i64>()?, vec![0, 2, 4, 6]);
    /// let f = Tensor::arange(-1, 1, 0.1, TensorOptions::new())?;
    /// assert_eq!(f.to_vec::<f32>()?[10], -2.9802322831784522e-09); // as PyTorch
    /// assert!(Tensor::arange(0, 10, 0, ScalarType::Long).is_err());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn arange(
        start: impl Into<Scalar>,
        end: impl Into<Scalar>,
        step: impl Into<Scalar>,
        options: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        let (start, end, step) = (start.into(), end.into(), step.into());
        let mut o = options.into();
        let any_float = [start, end, step].iter().any(|s| s.is_floating_point());
        let dtype = o.dtype.unwrap_or(if any_float {
            ScalarType::Float
        } else {
            ScalarType::Long
        });
        o = o.dtype(dtype);
        let r = Range { start, end, step };
        use ScalarType as S;
        match dtype {
            S::Byte | S::Char | S::Short | S::Int | S::Long => arange_int(r, dtype, any_float, o),
            S::Float | S::Double => arange_float(r, dtype, o),
            S::Half | S::BFloat16 => arange_half(r, dtype, o),
            other => Err(not_implemented("arange_cpu", other)),
        }
    }

    /// `linspace(start, end, steps)`: `steps` values from `start` to `end`
    /// inclusive, with PyTorch's kernel bit for bit: `step = (end - start) /
    /// (steps - 1)`, the first half counted up from `start` and the second
    /// down from `end`, each value one fused multiply-add (in double for
    /// `float64` and the integer dtypes, else in float). The dtype defaults to `float32`; `start` and
    /// `end` are converted to it with c10's range check first. Errors:
    /// `number of steps must be non-negative`, and `NotImplementedError`
    /// for `bool` and the wide unsigned dtypes.
    ///
    /// ```
    /// use c10_core::{Tensor, ScalarType, TensorOptions};
    /// let t = Tensor::linspace(0, 1, 5, TensorOptions::new())?;
    /// assert_eq!(t.to_vec::<f32>()?, vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    /// let i = Tensor::linspace(0, 10, 4, ScalarType::Long)?;
    /// assert_eq!(i.to_vec::<i64>()?, vec![0, 3, 6, 10]);
    /// assert!(Tensor::linspace(0, 1, -1, TensorOptions::new()).is_err());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn linspace(
        start: impl Into<Scalar>,
        end: impl Into<Scalar>,
        steps: i64,
        options: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        let (start, end) = (start.into(), end.into());
        let mut o = options.into();
        let dtype = o.dtype_or_default();
        o = o.dtype(dtype);
        if steps < 0 {
            return Err(TensorError::runtime("number of steps must be non-negative"));
        }
        let t = Tensor::empty(&[steps], o)?;
        if steps == 0 {
            return Ok(t);
        }
        if steps == 1 {
            t.fill_(start)?;
            reset_version(&t);
            return Ok(t);
        }
        if t.device().is_meta() {
            return Ok(t);
        }
        let args = LinspaceArgs {
            start,
            end,
            steps,
            dtype,
        };
        use ScalarType as S;
        match dtype {
            S::Byte | S::Char | S::Short | S::Int | S::Long => linspace_int(&t, args)?,
            S::Float | S::ComplexFloat | S::Half | S::BFloat16 => linspace_float(&t, args)?,
            S::Double | S::ComplexDouble => linspace_double(&t, args)?,
            other => return Err(not_implemented("linspace_cpu", other)),
        }
        Ok(t)
    }

    /// `eye(n, m)`: an `n x m` (`n x n` when `m` is `None`) tensor with
    /// ones on the diagonal and zeros elsewhere; the dtype defaults to
    /// `float32`. Errors: `n must be greater or equal to 0, got -1` (and
    /// the same for `m`).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::eye(2, Some(3), ScalarType::Long)?;
    /// assert_eq!(t.to_vec::<i64>()?, vec![1, 0, 0, 0, 1, 0]);
    /// assert_eq!(
    ///     Tensor::eye(-1, None, ScalarType::Float).unwrap_err().to_string(),
    ///     "n must be greater or equal to 0, got -1"
    /// );
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn eye(n: i64, m: Option<i64>, options: impl Into<TensorOptions>) -> Result<Tensor> {
        let m_val = m.unwrap_or(n);
        if n < 0 {
            return Err(TensorError::runtime(format!(
                "n must be greater or equal to 0, got {n}"
            )));
        }
        if m_val < 0 {
            return Err(TensorError::runtime(format!(
                "m must be greater or equal to 0, got {m_val}"
            )));
        }
        let o = options.into();
        let requires_grad = o.requires_grad;
        let mut t = Tensor::zeros(&[n, m_val], o.requires_grad(false))?;
        if !t.device().is_meta() {
            for i in 0..n.min(m_val) {
                t.as_strided(&[], &[], Some(i * m_val + i))?.fill_(1)?;
            }
            reset_version(&t);
        }
        if requires_grad {
            t.set_requires_grad(true)?;
        }
        Ok(t)
    }
}

/// Writes element `i` of the dense 1-d `t` as `f(i)`, without bumping the
/// version (a factory's own initialisation).
fn write_all<T: Element>(t: &Tensor, mut f: impl FnMut(usize) -> T) -> Result<()> {
    {
        let mut g = t.write::<T>()?;
        let mut i = 0usize;
        g.map_inplace(|_| {
            let v = f(i);
            i += 1;
            v
        });
    }
    reset_version(t);
    Ok(())
}

/// A factory's writes are not user-visible in-place ops: PyTorch's fresh
/// tensors report `_version == 0`.
pub(crate) fn reset_version(t: &Tensor) {
    if let Some(c) = t.imp.version.cell(&t.imp.storage) {
        c.store(0, std::sync::atomic::Ordering::SeqCst);
    }
}

/// `arange`'s arguments as given.
#[derive(Clone, Copy)]
struct Range {
    start: Scalar,
    end: Scalar,
    step: Scalar,
}

/// `arange`'s checks and length: `xs`, `xe`, `xstep` are the arguments as
/// the kernel's accumulate type sees them (the checks use them), `finite`
/// whether both bounds are; the length comes from the arguments in double,
/// as in ATen's `RangeFactories`.
fn arange_size(r: Range, xs: f64, xe: f64, xstep: f64, finite: bool) -> Result<i64> {
    if xstep == 0.0 {
        return Err(TensorError::runtime("step must be nonzero"));
    }
    if !finite {
        return Err(TensorError::runtime(format!(
            "unsupported range: {} -> {}",
            fmt_g(xs),
            fmt_g(xe)
        )));
    }
    if !((xstep > 0.0 && xe >= xs) || (xstep < 0.0 && xe <= xs)) {
        return Err(TensorError::runtime(
            "upper bound and lower bound inconsistent with step sign",
        ));
    }
    let size_d = ((r.end.to_f64() - r.start.to_f64()) / r.step.to_f64()).ceil();
    if !(size_d >= 0.0 && size_d <= i64::MAX as f64) {
        return Err(TensorError::runtime("invalid size, possible overflow?"));
    }
    Ok(size_d as i64)
}

/// `arange` for the signed integer dtypes (accumulated in int64).
fn arange_int(r: Range, dtype: ScalarType, any_float: bool, o: TensorOptions) -> Result<Tensor> {
    use ScalarType as S;
    let Range { start, end, step } = r;
    let acc = |s: Scalar| -> Result<i64> {
        s.check_fits(S::Long)?;
        Ok(s.to_i64())
    };
    // The checks and the size use the arguments as given; the
    // values use them converted (`arange(0, 10, 2.5, int64)` is
    // `[0, 2, 4, 6]`, `arange(0, 1, 0.1, int64)` ten zeros).
    let (fs, fe) = (start.to_f64(), end.to_f64());
    let n = arange_size(r, fs, fe, step.to_f64(), fs.is_finite() && fe.is_finite())?;
    let (xs, xe, xstep) = (acc(start)?, acc(end)?, acc(step)?);
    let n = if dtype == S::Long && !any_float {
        // int64 with integer arguments: c10 counts in int64
        // (wrapping, so a span beyond int64 is refused).
        let sgn = xstep.signum();
        let span = xe.wrapping_sub(xs).wrapping_add(xstep).wrapping_sub(sgn);
        let size_d = span.wrapping_div(xstep) as f64;
        if !(size_d >= 0.0 && size_d <= i64::MAX as f64) {
            return Err(TensorError::runtime("invalid size, possible overflow?"));
        }
        size_d as i64
    } else {
        n
    };
    let t = Tensor::empty(&[n], o)?;
    if t.device().is_meta() {
        return Ok(t);
    }
    let value = |i: usize| xs.wrapping_add(xstep.wrapping_mul(i as i64));
    crate::dispatch_dtype!(dtype, T => {
        write_all::<T>(&t, |i| T::from_i64(value(i)))?;
    }, {});
    Ok(t)
}

/// `arange` for `float32` and `float64` (accumulated in double).
fn arange_float(r: Range, dtype: ScalarType, o: TensorOptions) -> Result<Tensor> {
    use ScalarType as S;
    let Range { start, end, step } = r;
    let acc = |s: Scalar| -> Result<f64> {
        s.check_fits(dtype)?;
        Ok(s.to_f64())
    };
    let (xs, xe, xstep) = (acc(start)?, acc(end)?, acc(step)?);
    let n = arange_size(r, xs, xe, xstep, xs.is_finite() && xe.is_finite())?;
    let t = Tensor::empty(&[n], o)?;
    if t.device().is_meta() {
        return Ok(t);
    }
    let w = lanes(dtype);
    // The compiler fuses `start + step * i` into one fma.
    let out = kernel_values(n as usize, w, |p| match p {
        Pos::Lane { base: v, k } => {
            let base = xstep.mul_add(v as f64, xs);
            let base = if dtype == S::Float {
                f64::from(base as f32)
            } else {
                base
            };
            (k as f64).mul_add(xstep, base)
        }
        Pos::Scalar(i) => xstep.mul_add(i as f64, xs),
    })?;
    if dtype == S::Float {
        write_all::<f32>(&t, |i| out[i] as f32)?;
    } else {
        write_all::<f64>(&t, |i| out[i])?;
    }
    Ok(t)
}

/// `arange` for `float16` and `bfloat16` (accumulated in float, each
/// value rounded to the dtype).
fn arange_half(r: Range, dtype: ScalarType, o: TensorOptions) -> Result<Tensor> {
    use ScalarType as S;
    let Range { start, end, step } = r;
    let acc = |s: Scalar| -> Result<f32> {
        s.check_fits(S::Float)?;
        Ok(s.to_f64() as f32)
    };
    let (xs, xe, xstep) = (acc(start)?, acc(end)?, acc(step)?);
    let n = arange_size(
        r,
        f64::from(xs),
        f64::from(xe),
        f64::from(xstep),
        xs.is_finite() && xe.is_finite(),
    )?;
    let t = Tensor::empty(&[n], o)?;
    if t.device().is_meta() {
        return Ok(t);
    }
    let round = |x: f32| -> f32 {
        if dtype == S::Half {
            f16::from_f32(x).to_f32()
        } else {
            bf16::from_f32(x).to_f32()
        }
    };
    let out = kernel_values(n as usize, lanes(dtype), |p| match p {
        Pos::Lane { base: v, k } => {
            let base = round(xstep.mul_add(v as f32, xs));
            round(base + k as f32 * xstep)
        }
        Pos::Scalar(i) => round(xstep.mul_add(i as f32, xs)),
    })?;
    if dtype == S::Half {
        write_all::<f16>(&t, |i| f16::from_f32(out[i]))?;
    } else {
        write_all::<bf16>(&t, |i| bf16::from_f32(out[i]))?;
    }
    Ok(t)
}

/// `linspace`'s arguments, once the output exists (`steps >= 2`).
#[derive(Clone, Copy)]
struct LinspaceArgs {
    start: Scalar,
    end: Scalar,
    steps: i64,
    dtype: ScalarType,
}

impl LinspaceArgs {
    /// `start` and `end`, after c10's check that they fit the dtype.
    fn checked_ends(self) -> Result<(Scalar, Scalar)> {
        self.start.check_fits(self.dtype)?;
        self.end.check_fits(self.dtype)?;
        Ok((self.start, self.end))
    }
}

/// `linspace` into `t` (`steps >= 2` elements) for the integer dtypes.
fn linspace_int(t: &Tensor, args: LinspaceArgs) -> Result<()> {
    let (start, end) = args.checked_ends()?;
    let LinspaceArgs { steps, dtype, .. } = args;
    // `start` and `end` as the dtype, then as double; each value
    // is one fused multiply-add in double, truncated.
    let as_t = |s: Scalar| -> f64 {
        crate::dispatch_dtype!(dtype, T => s.to_element::<T>().to_f64(), { 0.0 })
    };
    let lerp = linspace_values(as_t(start), as_t(end), steps);
    let value = |i: usize| -> i64 { int_from_f64(lerp(i), dtype) };
    crate::dispatch_dtype!(dtype, T => {
        write_all::<T>(t, |i| T::from_i64(value(i)))?;
    }, {});
    Ok(())
}

/// `linspace` into `t` for the dtypes computed in float (`float32`,
/// `complex64`, `float16`, `bfloat16`).
fn linspace_float(t: &Tensor, args: LinspaceArgs) -> Result<()> {
    let (start, end) = args.checked_ends()?;
    let LinspaceArgs { steps, dtype, .. } = args;
    use ScalarType as S;
    // In float (16-bit types: their rounded ends, float steps).
    let round = |x: f32| -> f32 {
        match dtype {
            S::Half => f16::from_f32(x).to_f32(),
            S::BFloat16 => bf16::from_f32(x).to_f32(),
            _ => x,
        }
    };
    let value = linspace_values(
        round(start.to_f64() as f32),
        round(end.to_f64() as f32),
        steps,
    );
    match dtype {
        S::Float => write_all::<f32>(t, value)?,
        S::Half => write_all::<f16>(t, |i| f16::from_f32(value(i)))?,
        S::BFloat16 => write_all::<bf16>(t, |i| bf16::from_f32(value(i)))?,
        _ => write_all::<Complex64>(t, |i| Complex64 {
            re: value(i),
            im: 0.0,
        })?,
    }
    Ok(())
}

/// `linspace` into `t` for the dtypes computed in double (`float64`,
/// `complex128`).
fn linspace_double(t: &Tensor, args: LinspaceArgs) -> Result<()> {
    let (start, end) = args.checked_ends()?;
    let LinspaceArgs { steps, dtype, .. } = args;
    use ScalarType as S;
    let value = linspace_values(start.to_f64(), end.to_f64(), steps);
    if dtype == S::Double {
        write_all::<f64>(t, value)?;
    } else {
        write_all::<Complex128>(t, |i| Complex128 {
            re: value(i),
            im: 0.0,
        })?;
    }
    Ok(())
}

/// The float types `linspace` computes in.
trait LinspaceFloat:
    Copy + std::ops::Sub<Output = Self> + std::ops::Div<Output = Self> + std::ops::Neg<Output = Self>
{
    /// `x as Self`.
    fn of_i64(x: i64) -> Self;
    /// `self * a + b` rounded once.
    fn mul_add(self, a: Self, b: Self) -> Self;
}

impl LinspaceFloat for f32 {
    fn of_i64(x: i64) -> f32 {
        x as f32
    }
    fn mul_add(self, a: f32, b: f32) -> f32 {
        f32::mul_add(self, a, b)
    }
}

impl LinspaceFloat for f64 {
    fn of_i64(x: i64) -> f64 {
        x as f64
    }
    fn mul_add(self, a: f64, b: f64) -> f64 {
        f64::mul_add(self, a, b)
    }
}

/// ATen's linspace kernel for `steps >= 2` values from `a` to `b`: `step =
/// (b - a) / (steps - 1)`; the first half counted up from `a`, the second
/// down from `b`, each value one fused multiply-add.
fn linspace_values<F: LinspaceFloat>(a: F, b: F, steps: i64) -> impl Fn(usize) -> F {
    let halfway = steps / 2;
    let last = steps - 1;
    let step = (b - a) / F::of_i64(last);
    move |i| {
        let i = i as i64;
        if i < halfway {
            step.mul_add(F::of_i64(i), a)
        } else {
            (-step).mul_add(F::of_i64(last - i), b)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fmt_g;

    #[test]
    fn fmt_g_matches_ostream() {
        assert_eq!(fmt_g(0.0), "0");
        assert_eq!(fmt_g(1.0), "1");
        assert_eq!(fmt_g(f64::INFINITY), "inf");
        assert_eq!(fmt_g(f64::NAN), "nan");
        assert_eq!(fmt_g(0.5), "0.5");
        assert_eq!(fmt_g(1e10), "1e+10");
        assert_eq!(fmt_g(123456.0), "123456");
        assert_eq!(fmt_g(1234567.0), "1.23457e+06");
        assert_eq!(fmt_g(-2.5e-7), "-2.5e-07");
    }
}
