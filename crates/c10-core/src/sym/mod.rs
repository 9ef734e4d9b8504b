//! Symbolic shapes: [`SymInt`], [`SymBool`], [`SymFloat`], the
//! [`SymNodeImpl`] interface engines implement, the built-in expression
//! engine ([`expr`]) and shape environment ([`ShapeEnv`]) with its
//! [`Guard`]s, and the integer traits ([`ShapeInt`], [`ShapeBool`]) that
//! let one implementation of each shape rule ([`rules`]) run on plain
//! `i64` and on `SymInt`.
//!
//! The model (details in `docs/symbolic-shapes.md`): a size is either a
//! number or an expression over *symbols*, each made from an example
//! value (its *hint*). Arithmetic builds expressions. A decision that
//! needs a Rust `bool` (is this size 1? does 8 divide the numel?) is
//! taken from the hints and, unless the answer follows from what is
//! already known (symbol ranges, earlier guards), recorded as a
//! *guard*: the trace is valid exactly for the assignments that satisfy
//! every guard.
//!
//! **Where a `SymInt` finds its environment.** Every built-in node holds
//! an `Arc<ShapeEnv>`; there is no global or thread-local environment.
//! A `ShapeEnv` is `Send + Sync` (its tables sit behind one mutex), so
//! symbolic values can be moved and shared across threads; decisions
//! from several threads are serialised.
//!
//! ```
//! use c10_core::sym::{ShapeBool, ShapeEnv, ShapeInt, SymInt};
//! let env = ShapeEnv::new();
//! let (a, b, c) = (env.create_symbol(4, "x.size(0)")?, env.create_symbol(6, "x.size(1)")?,
//!                  env.create_symbol(8, "x.size(2)")?);
//! let numel = a.mul(&b)?.mul(&c)?;
//! // x.view(-1, 8) asks: does 8 divide the numel?
//! let divides = numel.rem(&SymInt::from(8))?.sym_eq(&SymInt::from(0))?.guard_bool()?;
//! assert!(divides); // decided from the hints (4 * 6 * 8), and recorded:
//! let guards: Vec<String> = env.guards().iter().map(|g| g.to_string()).collect();
//! assert_eq!(guards, ["Eq(Mod(s0*s1*s2, 8), 0)"]);
//! // Valid for sizes (5, 7, 8)? yes; for (5, 7, 9)? no.
//! assert!(env.evaluate_guards(&|s| Some([5, 7, 8][s as usize]))?);
//! assert!(!env.evaluate_guards(&|s| Some([5, 7, 9][s as usize]))?);
//! # Ok::<(), c10_core::TensorError>(())
//! ```

pub mod expr;
mod guards;
mod node;
pub mod rules;
mod shape_env;
mod sym_bool;
mod sym_int;
mod tensor;

use std::fmt;

pub use guards::{python_guard_text, Guard};
pub use node::{BinOp, Decision, NodeKind, SymNode, SymNodeImpl, UnOp};
pub use shape_env::{DimDynamic, ShapeEnv, ShapeEnvConfig, SymbolInfo};
pub use sym_bool::SymBool;
pub use sym_int::{SymFloat, SymInt};
pub use tensor::storage_nbytes_sym as storage_nbytes;

use crate::error::{Result, TensorError};

/// The integer type shape rules are written over: `i64` (concrete, where
/// every method is the plain operation and inlines away) or [`SymInt`].
///
/// Comparisons return [`ShapeInt::Bool`] (`bool` or [`SymBool`]); a rule
/// turns one into a Rust `bool` with the [`ShapeBool`] method that
/// PyTorch's C++ uses at that site (`guard_bool`, `guard_or_false`, ...),
/// which for `i64` is the identity.
///
/// Division is [`ShapeInt::div`]/[`ShapeInt::rem`], C++'s `/` and `%` on
/// `SymInt`: truncating on `i64`, flooring on symbols, which agree on the
/// non-negative values shape rules divide.
///
/// ```
/// use c10_core::sym::{ShapeBool, ShapeInt};
/// fn is_one<T: ShapeInt>(x: &T) -> c10_core::Result<bool> {
///     x.sym_eq(&T::from_i64(1))?.guard_bool()
/// }
/// assert!(is_one(&1i64)?);
/// let env = c10_core::sym::ShapeEnv::new();
/// assert!(!is_one(&env.create_symbol(5, "n")?)?); // statically false, no guard
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub trait ShapeInt: Clone + fmt::Debug + fmt::Display + Sized {
    /// The comparison result type.
    type Bool: ShapeBool;
    /// A constant.
    fn from_i64(v: i64) -> Self;
    /// The concrete value, if known.
    fn maybe_as_int(&self) -> Option<i64>;
    /// `self + o` (wrapping on `i64`).
    fn add(&self, o: &Self) -> Result<Self>;
    /// `self - o` (wrapping on `i64`).
    fn sub(&self, o: &Self) -> Result<Self>;
    /// `self * o` (wrapping on `i64`).
    fn mul(&self, o: &Self) -> Result<Self>;
    /// `self * o`, setting `*wrapped` when an `i64` product overflows
    /// (symbolic products never wrap).
    #[inline]
    fn mul_flagged(&self, o: &Self, wrapped: &mut bool) -> Result<Self> {
        let _ = wrapped;
        self.mul(o)
    }
    /// `self + o`, setting `*wrapped` when an `i64` sum overflows
    /// (symbolic sums never wrap).
    #[inline]
    fn add_flagged(&self, o: &Self, wrapped: &mut bool) -> Result<Self> {
        let _ = wrapped;
        self.add(o)
    }
    /// `self - o`, setting `*wrapped` when an `i64` difference overflows
    /// (symbolic differences never wrap).
    #[inline]
    fn sub_flagged(&self, o: &Self, wrapped: &mut bool) -> Result<Self> {
        let _ = wrapped;
        self.sub(o)
    }
    /// C++'s `/` on `SymInt` (see the trait docs); an error for 0.
    fn div(&self, o: &Self) -> Result<Self>;
    /// C++'s `%` on `SymInt`; an error for 0.
    fn rem(&self, o: &Self) -> Result<Self>;
    /// `min(self, o)` (no guard).
    fn min(&self, o: &Self) -> Result<Self>;
    /// `max(self, o)` (no guard).
    fn max(&self, o: &Self) -> Result<Self>;
    /// `self == o`.
    fn sym_eq(&self, o: &Self) -> Result<Self::Bool>;
    /// `self != o`.
    fn sym_ne(&self, o: &Self) -> Result<Self::Bool>;
    /// `self < o`.
    fn sym_lt(&self, o: &Self) -> Result<Self::Bool>;
    /// `self <= o`.
    fn sym_le(&self, o: &Self) -> Result<Self::Bool>;
    /// `self > o`.
    fn sym_gt(&self, o: &Self) -> Result<Self::Bool>;
    /// `self >= o`.
    fn sym_ge(&self, o: &Self) -> Result<Self::Bool>;
    /// Whether the value has a hint (every concrete value does; a
    /// symbolic one unless it mentions an unbacked symbol).
    #[inline(always)]
    fn has_hint(&self) -> bool {
        true
    }
}

/// The boolean type of a [`ShapeInt`]: `bool` or [`SymBool`].
///
/// ```
/// use c10_core::sym::ShapeBool;
/// assert!(true.guard_bool()?);
/// assert_eq!(true.sym_and(&false)?, false);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub trait ShapeBool: Clone + fmt::Debug + fmt::Display + Sized {
    /// A constant.
    fn from_bool(b: bool) -> Self;
    /// The concrete value, if known.
    fn maybe_as_bool(&self) -> Option<bool>;
    /// See [`SymBool::guard_bool`].
    fn guard_bool(&self) -> Result<bool>;
    /// See [`SymBool::guard_or_false`].
    fn guard_or_false(&self) -> Result<bool>;
    /// See [`SymBool::guard_or_true`].
    fn guard_or_true(&self) -> Result<bool>;
    /// See [`SymBool::expect_true`].
    fn expect_true(&self) -> Result<bool>;
    /// See [`SymBool::statically_known_true`].
    fn statically_known_true(&self) -> Result<bool>;
    /// See [`SymBool::guard_size_oblivious`] (the identity on `bool`).
    #[inline(always)]
    fn guard_size_oblivious(&self) -> Result<bool> {
        self.guard_bool()
    }
    /// `self & o`.
    fn sym_and(&self, o: &Self) -> Result<Self>;
    /// `self | o`.
    fn sym_or(&self, o: &Self) -> Result<Self>;
    /// `!self`.
    fn sym_not(&self) -> Result<Self>;
}

fn zero_div() -> TensorError {
    TensorError::runtime("ZeroDivisionError: integer division or modulo by zero")
}

impl ShapeInt for i64 {
    type Bool = bool;
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v
    }
    #[inline(always)]
    fn maybe_as_int(&self) -> Option<i64> {
        Some(*self)
    }
    #[inline(always)]
    fn add(&self, o: &Self) -> Result<Self> {
        Ok(self.wrapping_add(*o))
    }
    #[inline(always)]
    fn sub(&self, o: &Self) -> Result<Self> {
        Ok(self.wrapping_sub(*o))
    }
    #[inline(always)]
    fn mul(&self, o: &Self) -> Result<Self> {
        Ok(self.wrapping_mul(*o))
    }
    #[inline(always)]
    fn mul_flagged(&self, o: &Self, wrapped: &mut bool) -> Result<Self> {
        let (r, w) = self.overflowing_mul(*o);
        *wrapped |= w;
        Ok(r)
    }
    #[inline(always)]
    fn sub_flagged(&self, o: &Self, wrapped: &mut bool) -> Result<Self> {
        let (r, w) = self.overflowing_sub(*o);
        *wrapped |= w;
        Ok(r)
    }
    #[inline(always)]
    fn add_flagged(&self, o: &Self, wrapped: &mut bool) -> Result<Self> {
        let (r, w) = self.overflowing_add(*o);
        *wrapped |= w;
        Ok(r)
    }
    #[inline(always)]
    fn div(&self, o: &Self) -> Result<Self> {
        if *o == 0 {
            return Err(zero_div());
        }
        Ok(self.wrapping_div(*o))
    }
    #[inline(always)]
    fn rem(&self, o: &Self) -> Result<Self> {
        if *o == 0 {
            return Err(zero_div());
        }
        Ok(self.wrapping_rem(*o))
    }
    #[inline(always)]
    fn min(&self, o: &Self) -> Result<Self> {
        Ok(std::cmp::min(*self, *o))
    }
    #[inline(always)]
    fn max(&self, o: &Self) -> Result<Self> {
        Ok(std::cmp::max(*self, *o))
    }
    #[inline(always)]
    fn sym_eq(&self, o: &Self) -> Result<bool> {
        Ok(self == o)
    }
    #[inline(always)]
    fn sym_ne(&self, o: &Self) -> Result<bool> {
        Ok(self != o)
    }
    #[inline(always)]
    fn sym_lt(&self, o: &Self) -> Result<bool> {
        Ok(self < o)
    }
    #[inline(always)]
    fn sym_le(&self, o: &Self) -> Result<bool> {
        Ok(self <= o)
    }
    #[inline(always)]
    fn sym_gt(&self, o: &Self) -> Result<bool> {
        Ok(self > o)
    }
    #[inline(always)]
    fn sym_ge(&self, o: &Self) -> Result<bool> {
        Ok(self >= o)
    }
}

impl ShapeBool for bool {
    #[inline(always)]
    fn from_bool(b: bool) -> Self {
        b
    }
    #[inline(always)]
    fn maybe_as_bool(&self) -> Option<bool> {
        Some(*self)
    }
    #[inline(always)]
    fn guard_bool(&self) -> Result<bool> {
        Ok(*self)
    }
    #[inline(always)]
    fn guard_or_false(&self) -> Result<bool> {
        Ok(*self)
    }
    #[inline(always)]
    fn guard_or_true(&self) -> Result<bool> {
        Ok(*self)
    }
    #[inline(always)]
    fn expect_true(&self) -> Result<bool> {
        Ok(*self)
    }
    #[inline(always)]
    fn statically_known_true(&self) -> Result<bool> {
        Ok(*self)
    }
    #[inline(always)]
    fn sym_and(&self, o: &Self) -> Result<Self> {
        Ok(*self && *o)
    }
    #[inline(always)]
    fn sym_or(&self, o: &Self) -> Result<Self> {
        Ok(*self || *o)
    }
    #[inline(always)]
    fn sym_not(&self) -> Result<Self> {
        Ok(!*self)
    }
}

impl ShapeInt for SymInt {
    type Bool = SymBool;
    #[inline]
    fn from_i64(v: i64) -> Self {
        SymInt::Int(v)
    }
    #[inline]
    fn maybe_as_int(&self) -> Option<i64> {
        SymInt::maybe_as_int(self)
    }
    #[inline]
    fn add(&self, o: &Self) -> Result<Self> {
        SymInt::add(self, o)
    }
    #[inline]
    fn sub(&self, o: &Self) -> Result<Self> {
        SymInt::sub(self, o)
    }
    #[inline]
    fn mul(&self, o: &Self) -> Result<Self> {
        SymInt::mul(self, o)
    }
    #[inline]
    fn mul_flagged(&self, o: &Self, wrapped: &mut bool) -> Result<Self> {
        if let (SymInt::Int(a), SymInt::Int(b)) = (self, o) {
            let (r, w) = a.overflowing_mul(*b);
            *wrapped |= w;
            return Ok(SymInt::Int(r));
        }
        SymInt::mul(self, o)
    }
    fn div(&self, o: &Self) -> Result<Self> {
        if let (SymInt::Int(a), SymInt::Int(b)) = (self, o) {
            return ShapeInt::div(a, b).map(SymInt::Int);
        }
        self.floordiv(o)
    }
    fn rem(&self, o: &Self) -> Result<Self> {
        if let (SymInt::Int(a), SymInt::Int(b)) = (self, o) {
            return ShapeInt::rem(a, b).map(SymInt::Int);
        }
        self.modulo(o)
    }
    fn min(&self, o: &Self) -> Result<Self> {
        SymInt::min(self, o)
    }
    fn max(&self, o: &Self) -> Result<Self> {
        SymInt::max(self, o)
    }
    fn sym_eq(&self, o: &Self) -> Result<SymBool> {
        SymInt::sym_eq(self, o)
    }
    fn sym_ne(&self, o: &Self) -> Result<SymBool> {
        SymInt::sym_ne(self, o)
    }
    fn sym_lt(&self, o: &Self) -> Result<SymBool> {
        SymInt::sym_lt(self, o)
    }
    fn sym_le(&self, o: &Self) -> Result<SymBool> {
        SymInt::sym_le(self, o)
    }
    fn sym_gt(&self, o: &Self) -> Result<SymBool> {
        SymInt::sym_gt(self, o)
    }
    fn sym_ge(&self, o: &Self) -> Result<SymBool> {
        SymInt::sym_ge(self, o)
    }
    fn has_hint(&self) -> bool {
        SymInt::has_hint(self)
    }
}

impl ShapeBool for SymBool {
    fn from_bool(b: bool) -> Self {
        SymBool::Bool(b)
    }
    fn maybe_as_bool(&self) -> Option<bool> {
        SymBool::maybe_as_bool(self)
    }
    fn guard_bool(&self) -> Result<bool> {
        SymBool::guard_bool(self)
    }
    fn guard_or_false(&self) -> Result<bool> {
        SymBool::guard_or_false(self)
    }
    fn guard_or_true(&self) -> Result<bool> {
        SymBool::guard_or_true(self)
    }
    fn expect_true(&self) -> Result<bool> {
        SymBool::expect_true(self)
    }
    fn statically_known_true(&self) -> Result<bool> {
        SymBool::statically_known_true(self)
    }
    fn guard_size_oblivious(&self) -> Result<bool> {
        SymBool::guard_size_oblivious(self)
    }
    fn sym_and(&self, o: &Self) -> Result<Self> {
        SymBool::sym_and(self, o)
    }
    fn sym_or(&self, o: &Self) -> Result<Self> {
        SymBool::sym_or(self, o)
    }
    fn sym_not(&self) -> Result<Self> {
        SymBool::sym_not(self)
    }
}

/// c10's `throw_cannot_call_with_symbolic(meth)`: the error of a concrete
/// accessor on a tensor with symbolic sizes/strides.
pub(crate) fn cannot_call_with_symbolic(meth: &str) -> TensorError {
    TensorError::runtime(format!(
        "Cannot call {meth}() on tensor with symbolic sizes/strides"
    ))
}

/// Formats a list like c10's `IntArrayRef`/`SymIntArrayRef` printing:
/// `[2, s0, 3]`.
///
/// ```
/// assert_eq!(c10_core::sym::fmt_list(&[1i64, -1]), "[1, -1]");
/// ```
pub fn fmt_list<T: fmt::Display>(v: &[T]) -> String {
    crate::geometry::fmt_list(v)
}

#[cfg(test)]
mod tests;
