//! Elementwise dtype conversion for `copy_` between different dtypes, with
//! PyTorch's (C++ `static_cast`, x86-64) results.
//!
//! Each source element is loaded into a [`Value`] that keeps it exactly
//! (integers as `i64`, `uint64` as `u64`, floating types as `f64`, complex
//! types as two `f64`s), then stored as the destination type:
//!
//! * integer → integer wraps modulo the destination width;
//! * integer → floating rounds once, as C++ does (`int64` → `float` directly;
//!   to `Half`/`BFloat16`/float8 through `float`);
//! * floating → floating rounds once to `float` then to the narrow type, as
//!   C++ does (`double` → `Half` rounds through `float`);
//! * floating → integer truncates toward zero; out-of-range values and NaN
//!   give what PyTorch gives on x86-64 (the "integer indefinite" value of
//!   the 32- or 64-bit conversion instruction, then wrapped), checked
//!   against torch 2.15 in this crate's tests;
//! * anything → `bool` is `!= 0` (NaN is `true`; complex: either part);
//!   `bool` → anything is 0 or 1;
//! * complex → real keeps the real part (PyTorch also warns); real →
//!   complex has a zero imaginary part.
//!
//! Conversion runs in chunks: a run of source elements is loaded into a
//! small buffer of [`Value`]s by a loader for the source dtype, then stored
//! by a storer for the destination dtype, so only one loader and one storer
//! per dtype are compiled (not one kernel per pair of dtypes).

use std::ops::Range;

use c10_core::scalar_type::{
    BComplex32 as ComplexBf16, Complex128, Complex32, Complex64, Element, ScalarType,
};
use half::{bf16, f16};

use super::kernel::{CopyPlan, Kind};

/// One element, kept exactly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Value {
    /// A `bool`.
    Bool(bool),
    /// A signed or narrow unsigned integer.
    Int(i64),
    /// A `uint64`.
    UInt(u64),
    /// A real floating-point value.
    Float(f64),
    /// A complex value (real, imaginary).
    Complex(f64, f64),
}

/// C++ `static_cast<int32_t>(x)` on x86-64 (`cvttsd2si`): truncation, or
/// `i32::MIN` for NaN and out-of-range values.
fn cvt32(x: f64) -> i32 {
    if x.is_nan() || x <= -2_147_483_649.0 || x >= 2_147_483_648.0 {
        i32::MIN
    } else {
        x as i32
    }
}

/// C++ `static_cast<int64_t>(x)` on x86-64: truncation, or `i64::MIN` for
/// NaN and out-of-range values.
fn cvt64(x: f64) -> i64 {
    if x.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// The bits PyTorch produces when casting the floating value `x` to the
/// integer dtype `to` (the caller wraps them to the destination width).
fn float_to_int_bits(x: f64, to: ScalarType) -> i64 {
    match to {
        // 8- and 16-bit targets (except uint8) go through int32.
        ScalarType::Char | ScalarType::Short | ScalarType::UInt16 | ScalarType::Int => {
            i64::from(cvt32(x))
        }
        // uint32: through int64, keeping the low 32 bits (PyTorch's
        // element-by-element loop: 1e10 gives 1410065408, NaN and the
        // infinities 0). Its vectorised loop differs for values out of
        // range (undefined behaviour in C++; see docs/pytorch-map.md).
        ScalarType::UInt32 => i64::from(cvt64(x) as u32),
        // uint64: the same through int64.
        ScalarType::UInt64 => {
            if x >= 9_223_372_036_854_775_808.0 {
                cvt64(x - 9_223_372_036_854_775_808.0) ^ i64::MIN
            } else {
                cvt64(x)
            }
        }
        // uint8 (c10 casts through int64 explicitly) and int64.
        _ => cvt64(x),
    }
}

impl Value {
    fn truthy(self) -> bool {
        match self {
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::UInt(u) => u != 0,
            Value::Float(x) => x != 0.0,
            Value::Complex(re, im) => re != 0.0 || im != 0.0,
        }
    }

    /// As the real floating type `C` (also a complex type's component).
    fn to_real<C: Element>(self) -> C {
        match self {
            Value::Bool(b) => C::from_i64(i64::from(b)),
            Value::Int(i) => C::from_i64(i),
            Value::UInt(u) if C::SCALAR_TYPE == ScalarType::Double => C::from_f64(u as f64),
            // C++ converts uint64 to float, then to the narrow type.
            Value::UInt(u) => C::from_f64(f64::from(u as f32)),
            Value::Float(x) | Value::Complex(x, _) => C::from_f64(x),
        }
    }

    /// The imaginary part as the component type `C`.
    fn imag<C: Element>(self) -> C {
        match self {
            Value::Complex(_, im) => C::from_f64(im),
            _ => C::from_f64(0.0),
        }
    }

    /// As the integer type `T`.
    fn to_int<T: Element>(self) -> T {
        match self {
            Value::Bool(b) => T::from_i64(i64::from(b)),
            Value::Int(i) => T::from_i64(i),
            Value::UInt(u) => T::from_i64(u as i64),
            Value::Float(x) | Value::Complex(x, _) => {
                T::from_i64(float_to_int_bits(x, T::SCALAR_TYPE))
            }
        }
    }
}

fn is_int(t: ScalarType) -> bool {
    use ScalarType::*;
    matches!(
        t,
        Byte | Char | Short | Int | Long | UInt16 | UInt32 | UInt64
    )
}

/// Loads one element of type `T`.
///
/// # Safety
///
/// `p` must be valid for reads of `size_of::<T>()` initialised bytes.
#[inline(always)]
unsafe fn load<T: Element>(p: *const u8) -> Value {
    use ScalarType::*;
    // SAFETY: (all arms) `p` is valid for one element of `T`'s size
    // (caller); each arm reads a type of exactly that size whose every bit
    // pattern is valid (bool is read as a byte).
    unsafe {
        match T::SCALAR_TYPE {
            Bool => Value::Bool(p.read() != 0),
            UInt64 => Value::UInt(p.cast::<u64>().read_unaligned()),
            t if is_int(t) => Value::Int(p.cast::<T>().read_unaligned().to_i64()),
            ComplexHalf => {
                let c = p.cast::<Complex32>().read_unaligned();
                Value::Complex(c.re.to_f64(), c.im.to_f64())
            }
            BComplex32 => {
                let c = p.cast::<ComplexBf16>().read_unaligned();
                Value::Complex(c.re.to_f64(), c.im.to_f64())
            }
            ComplexFloat => {
                let c = p.cast::<Complex64>().read_unaligned();
                Value::Complex(f64::from(c.re), f64::from(c.im))
            }
            ComplexDouble => {
                let c = p.cast::<Complex128>().read_unaligned();
                Value::Complex(c.re, c.im)
            }
            _ => Value::Float(p.cast::<T>().read_unaligned().to_f64()),
        }
    }
}

/// Stores `v` as one element of type `T`.
///
/// # Safety
///
/// `p` must be valid for writes of `size_of::<T>()` bytes.
#[inline(always)]
unsafe fn store<T: Element>(p: *mut u8, v: Value) {
    use ScalarType::*;
    // SAFETY: (all arms) `p` is valid for one element of `T`'s size
    // (caller), and each arm writes a type of exactly that size.
    unsafe {
        match T::SCALAR_TYPE {
            Bool => p.write(u8::from(v.truthy())),
            t if is_int(t) => p.cast::<T>().write_unaligned(v.to_int::<T>()),
            ComplexHalf => p
                .cast::<Complex32>()
                .write_unaligned(Complex32::new(v.to_real::<f16>(), v.imag::<f16>())),
            BComplex32 => p
                .cast::<ComplexBf16>()
                .write_unaligned(ComplexBf16::new(v.to_real::<bf16>(), v.imag::<bf16>())),
            ComplexFloat => p
                .cast::<Complex64>()
                .write_unaligned(Complex64::new(v.to_real::<f32>(), v.imag::<f32>())),
            ComplexDouble => p
                .cast::<Complex128>()
                .write_unaligned(Complex128::new(v.to_real::<f64>(), v.imag::<f64>())),
            _ => p.cast::<T>().write_unaligned(v.to_real::<T>()),
        }
    }
}

/// Loads `out.len()` elements at byte stride `stride` from `p`.
type LoadRun = unsafe fn(*const u8, isize, &mut [Value]);
/// Stores the values at byte stride `stride` from `p`.
type StoreRun = unsafe fn(*mut u8, isize, &[Value]);

/// # Safety
///
/// The `out.len()` elements at `p + i·stride` are valid for reads.
unsafe fn load_run<T: Element>(p: *const u8, stride: isize, out: &mut [Value]) {
    let mut q = p;
    for o in out {
        // SAFETY: element i of the run (caller).
        *o = unsafe { load::<T>(q) };
        q = q.wrapping_offset(stride);
    }
}

/// # Safety
///
/// The `vals.len()` elements at `p + i·stride` are valid for writes.
unsafe fn store_run<T: Element>(p: *mut u8, stride: isize, vals: &[Value]) {
    let mut q = p;
    for &v in vals {
        // SAFETY: element i of the run (caller).
        unsafe { store::<T>(q, v) };
        q = q.wrapping_offset(stride);
    }
}

/// A loader and a storer for converting `from` into `to`, or `None` when
/// one of them has no element type (quantized, bit and sub-byte dtypes).
#[derive(Clone, Copy)]
pub(crate) struct Converter {
    load: LoadRun,
    store: StoreRun,
}

impl Converter {
    /// The converter from `from` to `to`.
    pub(crate) fn new(from: ScalarType, to: ScalarType) -> Option<Converter> {
        let load = c10_core::dispatch_dtype!(from, T => Some(load_run::<T> as LoadRun), { None })?;
        let store = c10_core::dispatch_dtype!(to, T => Some(store_run::<T> as StoreRun), { None })?;
        Some(Converter { load, store })
    }

    /// Converts every element of `plan` whose outermost index lies in
    /// `range`.
    ///
    /// # Safety
    ///
    /// * `plan.src_elem`/`plan.dst_elem` are the sizes of the dtypes this
    ///   converter was made for;
    /// * for every index of the plan (outermost index in `range`), the
    ///   source element at `src + Σ i_k·plan.src[k]` is valid for reads and
    ///   the destination element at `dst + Σ i_k·plan.dst[k]` for writes;
    /// * no destination byte is a source byte, and no other thread writes
    ///   either side (or reads the destination) meanwhile.
    pub(crate) unsafe fn run(
        &self,
        plan: &CopyPlan,
        dst: *mut u8,
        src: *const u8,
        range: Range<usize>,
    ) {
        if plan.kind == Kind::Empty {
            return;
        }
        const CHUNK: usize = 128;
        let mut buf = [Value::Bool(false); CHUNK];
        let last = plan.sizes.len() - 1;
        let (len, ds, ss) = (plan.sizes[last], plan.dst[last], plan.src[last]);
        // Converts `n` elements of an innermost row, in chunks.
        let mut row = |d: *mut u8, s: *const u8, n: usize| {
            let mut done = 0;
            while done < n {
                let k = CHUNK.min(n - done);
                let at = done as isize;
                // SAFETY: elements done..done + k of a valid innermost row
                // (contract); `buf[..k]` holds what was just loaded.
                unsafe {
                    (self.load)(s.wrapping_offset(at * ss), ss, &mut buf[..k]);
                    (self.store)(d.wrapping_offset(at * ds), ds, &buf[..k]);
                }
                done += k;
            }
        };
        if last == 0 {
            // A single dim: the range is part of the row itself.
            let range = range.start..range.end.min(len);
            let at = range.start as isize;
            row(
                dst.wrapping_offset(at * ds),
                src.wrapping_offset(at * ss),
                range.len(),
            );
            return;
        }
        plan.for_each_row(range, |d, s| {
            row(dst.wrapping_offset(d), src.wrapping_offset(s), len);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_to_int_matches_torch_on_x86() {
        // Expected values observed with torch 2.15 (CPU, x86-64).
        let xs = [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1.5,
            70000.7,
            3e9,
            5e9,
            -3e9,
            1e19,
            2e19,
            -1e19,
            200.5,
            -200.5,
            9_223_372_036_854_775_808.0,
            18_446_744_073_709_551_616.0,
        ];
        let conv =
            |t: ScalarType| -> Vec<i64> { xs.iter().map(|&x| float_to_int_bits(x, t)).collect() };
        let i8s: Vec<i8> = conv(ScalarType::Char).iter().map(|&v| v as i8).collect();
        assert_eq!(i8s, [0, 0, 0, -1, 112, 0, 0, 0, 0, 0, 0, -56, 56, 0, 0]);
        let u16s: Vec<u16> = conv(ScalarType::UInt16).iter().map(|&v| v as u16).collect();
        assert_eq!(
            u16s,
            [0, 0, 0, 65535, 4464, 0, 0, 0, 0, 0, 0, 200, 65336, 0, 0]
        );
        let u8s: Vec<u8> = conv(ScalarType::Byte).iter().map(|&v| v as u8).collect();
        assert_eq!(u8s, [0, 0, 0, 255, 112, 0, 0, 0, 0, 0, 0, 200, 56, 0, 0]);
        let m = i32::MIN;
        let i32s: Vec<i32> = conv(ScalarType::Int).iter().map(|&v| v as i32).collect();
        assert_eq!(
            i32s,
            [m, m, m, -1, 70000, m, m, m, m, m, m, 200, -200, m, m]
        );
        let u32s: Vec<u32> = conv(ScalarType::UInt32).iter().map(|&v| v as u32).collect();
        // PyTorch's element-by-element loop (through int64); its vectorised
        // loop differs for out-of-range values (docs/pytorch-map.md).
        assert_eq!(
            u32s,
            [
                0, 0, 0, 4294967295, 70000, 3000000000, 705032704, 1294967296, 0, 0, 0, 200,
                4294967096, 0, 0
            ]
        );
        let u64s: Vec<u64> = conv(ScalarType::UInt64).iter().map(|&v| v as u64).collect();
        let h = 9_223_372_036_854_775_808u64;
        assert_eq!(
            u64s,
            [
                h,
                0,
                h,
                u64::MAX,
                70000,
                3000000000,
                5000000000,
                18446744070709551616,
                10000000000000000000,
                0,
                h,
                200,
                18446744073709551416,
                h,
                0
            ]
        );
        let m = i64::MIN;
        let i64s = conv(ScalarType::Long);
        assert_eq!(
            i64s,
            [
                m,
                m,
                m,
                -1,
                70000,
                3000000000,
                5000000000,
                -3000000000,
                m,
                m,
                m,
                200,
                -200,
                m,
                m
            ]
        );
    }

    #[test]
    fn values_round_like_cpp() {
        // int64 -> float rounds once; uint64 -> half goes through float.
        assert_eq!(
            Value::Int((1 << 53) + 1).to_real::<f32>(),
            9007199254740992.0
        );
        assert_eq!(Value::UInt(u64::MAX).to_real::<f16>(), f16::INFINITY);
        assert_eq!(
            Value::UInt(u64::MAX).to_real::<f64>(),
            18446744073709551615.0
        );
        // double -> half rounds through float (double rounding, as C++).
        let x = 1.0 + 1.0 / 2048.0 + 1.0 / 1_099_511_627_776.0; // 1 + 2^-11 + 2^-40
        assert_eq!(Value::Float(x).to_real::<f16>(), f16::from_f32(1.0));
        assert!(Value::Float(f64::NAN).truthy());
        assert!(Value::Complex(0.0, 1.0).truthy());
        assert!(!Value::Complex(0.0, 0.0).truthy());
    }
}
