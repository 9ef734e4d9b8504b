//! Minifloat conversions, bit-exact with c10's float8 and bfloat16 converters.

use super::*;

// ---------------------------------------------------------------------------
// Minifloat conversions (bit-exact with c10's float8 / bfloat16 converters)
// ---------------------------------------------------------------------------

/// Exactly `2^e` for `-1074 <= e <= 1023` (`powi` has unspecified precision,
/// and Miri exercises that; these conversions must be bit-exact).
pub(super) fn exp2i(e: i32) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        // Subnormal: a single mantissa bit.
        f64::from_bits(1u64 << (e + 1074).clamp(0, 51))
    }
}

/// Decodes a finite sign/exponent/mantissa byte with `man_bits` mantissa bits
/// and exponent bias `bias` (exponent field 0 = subnormal).
pub(super) fn decode_minifloat(bits: u8, man_bits: u32, bias: i32) -> f64 {
    let magnitude_bits = bits & 0x7F;
    let exponent = i32::from(magnitude_bits >> man_bits);
    let mantissa = f64::from(magnitude_bits & ((1u8 << man_bits) - 1));
    let scale = f64::from(1u32 << man_bits);
    let magnitude = if exponent == 0 {
        mantissa / scale * exp2i(1 - bias)
    } else {
        (1.0 + mantissa / scale) * exp2i(exponent - bias)
    };
    if bits & 0x80 != 0 {
        -magnitude
    } else {
        magnitude
    }
}

/// Rounds a finite, non-negative `a` to the nearest value of a minifloat with
/// `man_bits` mantissa bits and bias `bias` (ties to even, subnormals
/// included) and returns its magnitude code `exponent_field << man_bits |
/// mantissa` without any upper bound: the caller decides what an overflowing
/// code becomes (infinity, NaN), as each c10 converter does differently.
pub(super) fn round_minifloat_magnitude(a: f64, man_bits: u32, bias: i32) -> u32 {
    if a == 0.0 {
        return 0;
    }
    let min_exponent = 1 - bias;
    // `a` comes from an f32, so it is a normal f64 and its unbiased exponent
    // is floor(log2(a)).
    let exponent = ((a.to_bits() >> 52) & 0x7FF) as i32 - 1023;
    let effective = exponent.max(min_exponent);
    // Dividing by a power of two is exact, so the only rounding is here.
    let steps = (a / exp2i(effective - man_bits as i32)).round_ties_even();
    // `steps` is in [2^man_bits, 2^(man_bits+1)] for normal results (the top
    // value is the carry into the next binade) or below 2^man_bits for
    // subnormals; adding it to the binade offset yields the code either way.
    // Saturating so that even an (unexpected) infinite input cannot
    // overflow; callers treat huge codes as overflow anyway.
    ((effective - min_exponent) as u32)
        .saturating_mul(1u32 << man_bits)
        .saturating_add(steps as u32)
}

pub(super) fn f32_to_e5m2(x: f32) -> u8 {
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    if x.is_nan() {
        return sign | 0x7F;
    }
    if x.is_infinite() {
        return sign | 0x7C;
    }
    let code = round_minifloat_magnitude(f64::from(x.abs()), 2, 15);
    // Anything that rounds past the largest finite value (57344) is infinity.
    sign | code.min(0x7C) as u8
}

pub(super) fn f32_to_e4m3fn(x: f32) -> u8 {
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    if !x.is_finite() {
        return sign | 0x7F;
    }
    let code = round_minifloat_magnitude(f64::from(x.abs()), 3, 7);
    // No infinities: overflow (|x| rounding to >= 480) becomes NaN, keeping
    // the sign as c10 does.
    sign | code.min(0x7F) as u8
}

pub(super) fn f32_to_fnuz(x: f32, man_bits: u32, bias: i32) -> u8 {
    if !x.is_finite() {
        return 0x80;
    }
    let code = round_minifloat_magnitude(f64::from(x.abs()), man_bits, bias);
    if code >= 0x80 {
        // Overflow lands on the single NaN encoding.
        0x80
    } else if code == 0 {
        // No negative zero in fnuz formats.
        0
    } else if x.is_sign_negative() {
        0x80 | code as u8
    } else {
        code as u8
    }
}

/// c10 `fp8e8m0fnu_from_fp32_value`: keeps the f32 exponent, rounding to
/// nearest-even on the mantissa (the implicit bit acts as the LSB).
pub(super) fn f32_to_e8m0fnu(x: f32) -> u8 {
    let bits = x.to_bits();
    let exponent = ((bits >> 23) & 0xFF) as u8;
    if exponent == 0xFF {
        return 0xFF;
    }
    let guard = bits & 0x40_0000 != 0;
    let round_or_sticky = bits & 0x3F_FFFF != 0;
    let lsb = exponent > 0;
    if guard && (round_or_sticky || lsb) {
        // exponent < 0xFF here, so this cannot overflow (0xFE + 1 = NaN, as
        // in c10).
        exponent + 1
    } else {
        exponent
    }
}

pub(super) fn e8m0fnu_to_f64(bits: u8) -> f64 {
    if bits == 0xFF {
        f64::NAN
    } else {
        exp2i(i32::from(bits) - 127)
    }
}

/// c10 `round_to_nearest_even(float)` used by `BFloat16(float)`.
pub(super) fn f32_to_bf16(x: f32) -> bf16 {
    if x.is_nan() {
        return bf16::from_bits(0x7FC0);
    }
    let bits = x.to_bits();
    let rounding_bias = ((bits >> 16) & 1) + 0x7FFF;
    bf16::from_bits((bits.wrapping_add(rounding_bias) >> 16) as u16)
}
