//! Type promotion: c10's `promoteTypes` and ATen's `result_type` over a
//! list of tensors, as used by `cat` and `stack`.
//!
//! The table is PyTorch 2.15's, checked pair by pair against
//! `torch.promote_types` for every dtype with a Rust element type (the
//! `join` conformance corpus holds mixed-dtype `cat`s): booleans promote to
//! anything, integers to the wider (or signed) integer, any floating type
//! wins over integers (`Half` + `BFloat16` is `Float`), complex wins over
//! real with at least the real side's precision (`ComplexHalf` + `Float` is
//! `ComplexFloat`). `UInt16`/`UInt32`/`UInt64` promote only to themselves
//! and to real floating types, float8 types only to themselves; other pairs
//! are PyTorch's errors.

use c10_core::{Result, ScalarType, TensorError};

use ScalarType as S;

/// Rank of a real floating type among `Half < Float < Double` (with
/// `BFloat16` beside `Half`).
fn float_rank(t: ScalarType) -> u8 {
    match t {
        S::Half | S::BFloat16 => 0,
        S::Float => 1,
        _ => 2,
    }
}

/// The real floating type holding both of two real floating types.
fn promote_floats(a: ScalarType, b: ScalarType) -> ScalarType {
    if a == b {
        return a;
    }
    match (float_rank(a), float_rank(b)) {
        // Half and BFloat16: neither holds the other.
        (0, 0) => S::Float,
        (ra, rb) if ra >= rb => a,
        _ => b,
    }
}

/// The real component type of a complex type.
fn complex_component(t: ScalarType) -> ScalarType {
    match t {
        S::ComplexHalf => S::Half,
        S::ComplexFloat => S::Float,
        _ => S::Double,
    }
}

fn complex_of(t: ScalarType) -> ScalarType {
    match t {
        S::Half => S::ComplexHalf,
        S::Float | S::BFloat16 => S::ComplexFloat,
        _ => S::ComplexDouble,
    }
}

/// Width rank of a signed or `Byte` integer type.
fn int_rank(t: ScalarType) -> u8 {
    match t {
        S::Byte | S::Char => 0,
        S::Short => 1,
        S::Int => 2,
        _ => 3,
    }
}

fn is_basic(t: ScalarType) -> bool {
    matches!(
        t,
        S::Byte
            | S::Char
            | S::Short
            | S::Int
            | S::Long
            | S::UInt16
            | S::UInt32
            | S::UInt64
            | S::Half
            | S::BFloat16
            | S::Float
            | S::Double
            | S::Bool
            | S::ComplexHalf
            | S::ComplexFloat
            | S::ComplexDouble
    )
}

fn is_float8(t: ScalarType) -> bool {
    matches!(
        t,
        S::Float8_e5m2
            | S::Float8_e4m3fn
            | S::Float8_e5m2fnuz
            | S::Float8_e4m3fnuz
            | S::Float8_e8m0fnu
    )
}

fn is_quantized(t: ScalarType) -> bool {
    matches!(
        t,
        S::QInt8 | S::QUInt8 | S::QInt32 | S::QUInt4x2 | S::QUInt2x4
    )
}

/// c10's `promoteTypes(a, b)`: the smallest dtype both `a` and `b` convert
/// to without losing their category (PyTorch's `torch.promote_types`).
///
/// Errors are PyTorch's: `Promotion for Float8 Types is not supported,
/// attempted to promote Float8_e5m2 and Float`, `Promotion for uint16,
/// uint32, uint64 types is not supported, attempted to promote UInt16 and
/// Char`, and for quantized types `promoteTypes with quantized numbers is
/// not handled yet; ...`. Pairs this crate has no rule for (`BComplex32`,
/// the sub-byte and bit types with a different dtype) are refused with a
/// message naming both.
///
/// ```
/// use aten_shape::promote::promote_types;
/// use c10_core::ScalarType as S;
/// assert_eq!(promote_types(S::Byte, S::Char)?, S::Short);
/// assert_eq!(promote_types(S::Half, S::BFloat16)?, S::Float);
/// assert_eq!(promote_types(S::ComplexHalf, S::Float)?, S::ComplexFloat);
/// assert_eq!(promote_types(S::UInt32, S::Double)?, S::Double);
/// assert!(promote_types(S::UInt16, S::Long).is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn promote_types(a: ScalarType, b: ScalarType) -> Result<ScalarType> {
    if a == b {
        return Ok(a);
    }
    let (an, bn) = (a.name(), b.name());
    if is_quantized(a) || is_quantized(b) {
        return Err(TensorError::Runtime(format!(
            "promoteTypes with quantized numbers is not handled yet; figure out what the correct rules should be, offending types: {an} {bn}"
        )));
    }
    if is_float8(a) || is_float8(b) {
        return Err(TensorError::Runtime(format!(
            "Promotion for Float8 Types is not supported, attempted to promote {an} and {bn}"
        )));
    }
    if !is_basic(a) || !is_basic(b) {
        return Err(TensorError::Runtime(format!(
            "type promotion of {an} and {bn} is not supported"
        )));
    }
    let unsigned = |t| matches!(t, S::UInt16 | S::UInt32 | S::UInt64);
    if unsigned(a) || unsigned(b) {
        if a.is_floating_point() {
            return Ok(a);
        }
        if b.is_floating_point() {
            return Ok(b);
        }
        return Err(TensorError::Runtime(format!(
            "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote {an} and {bn}"
        )));
    }
    if a == S::Bool {
        return Ok(b);
    }
    if b == S::Bool {
        return Ok(a);
    }
    if a.is_complex() || b.is_complex() {
        let (c, other) = if a.is_complex() { (a, b) } else { (b, a) };
        let part = complex_component(c);
        let real = if other.is_complex() {
            promote_floats(part, complex_component(other))
        } else if other.is_floating_point() {
            promote_floats(part, other)
        } else {
            part
        };
        return Ok(complex_of(real));
    }
    match (a.is_floating_point(), b.is_floating_point()) {
        (true, true) => return Ok(promote_floats(a, b)),
        (true, false) => return Ok(a),
        (false, true) => return Ok(b),
        (false, false) => {}
    }
    // Two different integer types among Byte, Char, Short, Int, Long.
    if matches!((a, b), (S::Byte, S::Char) | (S::Char, S::Byte)) {
        return Ok(S::Short);
    }
    Ok(if int_rank(a) >= int_rank(b) { a } else { b })
}

/// ATen's `result_type` over a list of dtypes of tensors that all have at
/// least one dimension: `promote_types` folded left to right (so an error
/// names the dtype promoted so far and the next one, as PyTorch's does).
///
/// ```
/// use aten_shape::promote::result_type;
/// use c10_core::ScalarType as S;
/// assert_eq!(result_type([S::Bool, S::Byte, S::Char])?, S::Short);
/// assert_eq!(result_type([S::Long, S::Half])?, S::Half);
/// assert!(result_type(Vec::<S>::new()).is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn result_type(dtypes: impl IntoIterator<Item = ScalarType>) -> Result<ScalarType> {
    let mut it = dtypes.into_iter();
    let first = it
        .next()
        .ok_or_else(|| TensorError::Runtime("result_type of an empty list of tensors".into()))?;
    it.try_fold(first, promote_types)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_spot_checks() {
        let p = |a, b| promote_types(a, b).unwrap();
        assert_eq!(p(S::Bool, S::Byte), S::Byte);
        assert_eq!(p(S::Byte, S::Short), S::Short);
        assert_eq!(p(S::Int, S::Byte), S::Int);
        assert_eq!(p(S::BFloat16, S::ComplexHalf), S::ComplexFloat);
        assert_eq!(p(S::Double, S::ComplexHalf), S::ComplexDouble);
        assert_eq!(p(S::Long, S::ComplexHalf), S::ComplexHalf);
        assert_eq!(p(S::UInt64, S::Half), S::Half);
        assert!(promote_types(S::UInt16, S::Bool).is_err());
        assert!(promote_types(S::UInt16, S::ComplexFloat).is_err());
        assert!(promote_types(S::Float8_e5m2, S::Float8_e4m3fn).is_err());
    }
}
