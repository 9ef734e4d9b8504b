//! `SymInt` and `SymFloat`: a plain number or a symbolic node.

use std::fmt;

use super::expr::RelOp;
use super::node::{BinOp, NodeKind, SymNode, UnOp};
use super::sym_bool::SymBool;
use crate::error::{Result, TensorError};

/// An integer that is either concrete or symbolic (c10's `SymInt`).
///
/// The concrete case is a plain `i64` in the enum (16 bytes in all, no
/// allocation); arithmetic on two concrete values is plain `i64`
/// arithmetic. A symbolic value is a shared [`SymNode`]; arithmetic with
/// one builds a new node.
///
/// Two rules from c10 are kept: comparisons that return a Rust `bool`
/// (the `guard_*` methods) *guard* (they decide from the hints and record
/// the decision), while the `sym_*` comparisons return a [`SymBool`] and
/// never guard. Division is `floordiv`/`modulo`, Python's flooring rules
/// on both paths (c10's int fast path truncates, which agrees for the
/// non-negative values sizes and strides are; see `docs/symbolic-shapes.md`).
///
/// ```
/// use c10_core::sym::{ShapeEnv, SymInt};
/// let env = ShapeEnv::new();
/// let a = env.create_symbol(4, "x.size(0)")?;
/// let b = env.create_symbol(6, "x.size(1)")?;
/// let n = a.mul(&b)?;
/// assert_eq!(n.to_string(), "s0*s1");
/// assert_eq!(n.hint(), Some(24));
/// assert!(n.sym_eq(&SymInt::from(1))?.guard_bool()? == false); // statically false: no guard
/// assert!(env.guards().is_empty());
/// assert_eq!(SymInt::from(3).mul(&SymInt::from(4))?, SymInt::from(12));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Clone)]
pub enum SymInt {
    /// A concrete integer.
    Int(i64),
    /// A symbolic integer.
    Sym(SymNode),
}

impl Default for SymInt {
    /// c10's `SymInt()` is 0.
    fn default() -> Self {
        SymInt::Int(0)
    }
}

impl From<i64> for SymInt {
    fn from(v: i64) -> Self {
        SymInt::Int(v)
    }
}

impl PartialEq for SymInt {
    /// Structural equality: equal concrete values, or the same node (or
    /// equal printed expressions). This is *not* a guard; use
    /// [`SymInt::sym_eq`] for the symbolic relation.
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (SymInt::Int(a), SymInt::Int(b)) => a == b,
            (SymInt::Sym(a), SymInt::Sym(b)) => a.is_same(b) || a.to_string() == b.to_string(),
            _ => false,
        }
    }
}

fn wrong_kind(what: &str) -> TensorError {
    TensorError::runtime(format!("expected an int node but got a {what} node"))
}

impl SymInt {
    /// Wraps a node, which must be an integer node; a node that is a
    /// known constant becomes a concrete `SymInt` (c10's `maybe_as_int`
    /// sees through constant nodes).
    ///
    /// ```
    /// use c10_core::sym::{ShapeEnv, SymInt};
    /// let env = ShapeEnv::new();
    /// let s = env.create_symbol(4, "n")?;
    /// let node = s.node().unwrap().clone();
    /// assert_eq!(SymInt::from_node(node)?, s);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn from_node(node: SymNode) -> Result<SymInt> {
        if node.kind() != NodeKind::Int {
            return Err(wrong_kind(&format!("{:?}", node.kind())));
        }
        Ok(match node.maybe_as_int() {
            Some(v) => SymInt::Int(v),
            None => SymInt::Sym(node),
        })
    }

    /// The concrete value, if any (c10's `maybe_as_int`).
    ///
    /// ```
    /// assert_eq!(c10_core::sym::SymInt::from(5).maybe_as_int(), Some(5));
    /// ```
    #[inline]
    pub fn maybe_as_int(&self) -> Option<i64> {
        match self {
            SymInt::Int(v) => Some(*v),
            SymInt::Sym(n) => n.maybe_as_int(),
        }
    }

    /// Whether the value is symbolic (c10's `is_symbolic`).
    ///
    /// ```
    /// assert!(!c10_core::sym::SymInt::from(5).is_symbolic());
    /// ```
    #[inline]
    pub fn is_symbolic(&self) -> bool {
        self.maybe_as_int().is_none()
    }

    /// The node, for a symbolic value.
    ///
    /// ```
    /// assert!(c10_core::sym::SymInt::from(5).node().is_none());
    /// ```
    pub fn node(&self) -> Option<&SymNode> {
        match self {
            SymInt::Int(_) => None,
            SymInt::Sym(n) => Some(n),
        }
    }

    /// The value as a built-in expression with the environment's
    /// replacements applied (a constant for a concrete value; `None` for
    /// a node of another engine).
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// let env = ShapeEnv::new();
    /// let s = env.create_symbol(7, "n")?.mul(&2.into())?;
    /// assert_eq!(s.expr().unwrap().eval(&|_| Some(5)), Some(10));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn expr(&self) -> Option<super::expr::IntExpr> {
        match self {
            SymInt::Int(v) => Some(super::expr::IntExpr::constant(*v)),
            SymInt::Sym(n) => super::shape_env::builtin_int_expr(n),
        }
    }

    /// The value under the hints, without guarding (PyTorch's
    /// `size_hint`); `None` for unbacked symbols.
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// let env = ShapeEnv::new();
    /// assert_eq!(env.create_symbol(7, "n")?.hint(), Some(7));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn hint(&self) -> Option<i64> {
        match self {
            SymInt::Int(v) => Some(*v),
            SymInt::Sym(n) => n.hint_int(),
        }
    }

    /// Whether the value has a hint (false for unbacked symbols).
    ///
    /// ```
    /// assert!(c10_core::sym::SymInt::from(1).has_hint());
    /// ```
    pub fn has_hint(&self) -> bool {
        match self {
            SymInt::Int(_) => true,
            SymInt::Sym(n) => n.has_hint(),
        }
    }

    /// The concrete value, or an error for a symbolic one (c10's
    /// `expect_int`).
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// let env = ShapeEnv::new();
    /// let s = env.create_symbol(7, "n")?;
    /// assert_eq!(s.expect_int().unwrap_err().to_string(),
    ///            "when unpacking SymInt, expected int but got s0");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn expect_int(&self) -> Result<i64> {
        self.maybe_as_int().ok_or_else(|| {
            TensorError::runtime(format!(
                "when unpacking SymInt, expected int but got {self}"
            ))
        })
    }

    /// The concrete value; a symbolic value is decided from its hint and
    /// the decision `Eq(self, value)` is recorded as a guard, which
    /// specialises the symbol (c10's `guard_int`).
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// let env = ShapeEnv::new();
    /// let s = env.create_symbol(8, "n")?;
    /// assert_eq!(s.guard_int()?, 8);
    /// assert_eq!(env.guards()[0].to_string(), "Eq(s0, 8)");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn guard_int(&self) -> Result<i64> {
        match self {
            SymInt::Int(v) => Ok(*v),
            SymInt::Sym(n) => n.guard_int(),
        }
    }

    fn binary(&self, op: BinOp, other: &SymInt) -> Result<SymNode> {
        match (self, other) {
            (SymInt::Sym(a), SymInt::Sym(b)) => a.binary(op, b),
            (SymInt::Sym(a), SymInt::Int(b)) => a.binary(op, &a.wrap_int(*b)),
            (SymInt::Int(a), SymInt::Sym(b)) => b.wrap_int(*a).binary(op, b),
            (SymInt::Int(_), SymInt::Int(_)) => Err(TensorError::runtime(
                "internal: binary node op on two concrete SymInts",
            )),
        }
    }

    fn arith(
        &self,
        other: &SymInt,
        op: BinOp,
        int: impl FnOnce(i64, i64) -> Option<i64>,
    ) -> Result<SymInt> {
        if let (SymInt::Int(a), SymInt::Int(b)) = (self, other) {
            return int(*a, *b).map(SymInt::Int).ok_or_else(|| {
                TensorError::runtime(format!(
                    "integer overflow or division by zero in {a} {op:?} {b}"
                ))
            });
        }
        SymInt::from_node(self.binary(op, other)?)
    }

    /// `self + other` (concrete: wrapping, like C++ `int64_t`).
    ///
    /// ```
    /// use c10_core::sym::SymInt;
    /// assert_eq!(SymInt::from(2).add(&SymInt::from(3))?, SymInt::from(5));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn add(&self, other: &SymInt) -> Result<SymInt> {
        self.arith(other, BinOp::Add, |a, b| Some(a.wrapping_add(b)))
    }

    /// `self - other` (concrete: wrapping).
    ///
    /// ```
    /// use c10_core::sym::SymInt;
    /// assert_eq!(SymInt::from(2).sub(&SymInt::from(3))?, SymInt::from(-1));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn sub(&self, other: &SymInt) -> Result<SymInt> {
        self.arith(other, BinOp::Sub, |a, b| Some(a.wrapping_sub(b)))
    }

    /// `self * other` (concrete: wrapping).
    ///
    /// ```
    /// use c10_core::sym::SymInt;
    /// assert_eq!(SymInt::from(2).mul(&SymInt::from(3))?, SymInt::from(6));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn mul(&self, other: &SymInt) -> Result<SymInt> {
        self.arith(other, BinOp::Mul, |a, b| Some(a.wrapping_mul(b)))
    }

    /// `self // other`, flooring; an error for a zero divisor.
    ///
    /// ```
    /// use c10_core::sym::SymInt;
    /// assert_eq!(SymInt::from(-7).floordiv(&SymInt::from(2))?, SymInt::from(-4));
    /// assert!(SymInt::from(1).floordiv(&SymInt::from(0)).is_err());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn floordiv(&self, other: &SymInt) -> Result<SymInt> {
        self.arith(other, BinOp::FloorDiv, super::expr::py_floordiv)
    }

    /// `self % other`, with the divisor's sign (Python's `%`).
    ///
    /// ```
    /// use c10_core::sym::SymInt;
    /// assert_eq!(SymInt::from(-7).modulo(&SymInt::from(3))?, SymInt::from(2));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn modulo(&self, other: &SymInt) -> Result<SymInt> {
        self.arith(other, BinOp::Mod, super::expr::py_mod)
    }

    /// `min(self, other)` (c10's `sym_min`, no guard).
    ///
    /// ```
    /// use c10_core::sym::SymInt;
    /// assert_eq!(SymInt::from(2).min(&SymInt::from(3))?, SymInt::from(2));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn min(&self, other: &SymInt) -> Result<SymInt> {
        self.arith(other, BinOp::Min, |a, b| Some(a.min(b)))
    }

    /// `max(self, other)` (c10's `sym_max`, no guard).
    ///
    /// ```
    /// use c10_core::sym::SymInt;
    /// assert_eq!(SymInt::from(2).max(&SymInt::from(3))?, SymInt::from(3));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn max(&self, other: &SymInt) -> Result<SymInt> {
        self.arith(other, BinOp::Max, |a, b| Some(a.max(b)))
    }

    /// `-self`.
    ///
    /// ```
    /// use c10_core::sym::SymInt;
    /// assert_eq!(SymInt::from(2).neg()?, SymInt::from(-2));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn neg(&self) -> Result<SymInt> {
        match self {
            SymInt::Int(v) => Ok(SymInt::Int(v.wrapping_neg())),
            SymInt::Sym(n) => SymInt::from_node(n.unary(UnOp::Neg)?),
        }
    }

    fn rel(
        &self,
        other: &SymInt,
        op: BinOp,
        int: impl FnOnce(i64, i64) -> bool,
    ) -> Result<SymBool> {
        if let (SymInt::Int(a), SymInt::Int(b)) = (self, other) {
            return Ok(SymBool::Bool(int(*a, *b)));
        }
        SymBool::from_node(self.binary(op, other)?)
    }

    /// `self == other` as a [`SymBool`] (no guard).
    ///
    /// ```
    /// use c10_core::sym::SymInt;
    /// assert_eq!(SymInt::from(2).sym_eq(&SymInt::from(2))?.maybe_as_bool(), Some(true));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_eq(&self, other: &SymInt) -> Result<SymBool> {
        self.rel(other, BinOp::Cmp(RelOp::Eq), |a, b| a == b)
    }
    /// `self != other` as a [`SymBool`] (no guard).
    ///
    /// ```
    /// use c10_core::sym::SymInt;
    /// assert_eq!(SymInt::from(2).sym_ne(&SymInt::from(2))?.maybe_as_bool(), Some(false));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_ne(&self, other: &SymInt) -> Result<SymBool> {
        self.rel(other, BinOp::Cmp(RelOp::Ne), |a, b| a != b)
    }
    /// `self < other` as a [`SymBool`] (no guard).
    ///
    /// ```
    /// use c10_core::sym::SymInt;
    /// assert_eq!(SymInt::from(1).sym_lt(&SymInt::from(2))?.maybe_as_bool(), Some(true));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_lt(&self, other: &SymInt) -> Result<SymBool> {
        self.rel(other, BinOp::Cmp(RelOp::Lt), |a, b| a < b)
    }
    /// `self <= other` as a [`SymBool`] (no guard).
    ///
    /// ```
    /// use c10_core::sym::SymInt;
    /// assert_eq!(SymInt::from(2).sym_le(&SymInt::from(2))?.maybe_as_bool(), Some(true));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_le(&self, other: &SymInt) -> Result<SymBool> {
        self.rel(other, BinOp::Cmp(RelOp::Le), |a, b| a <= b)
    }
    /// `self > other` as a [`SymBool`] (no guard).
    ///
    /// ```
    /// use c10_core::sym::SymInt;
    /// assert_eq!(SymInt::from(3).sym_gt(&SymInt::from(2))?.maybe_as_bool(), Some(true));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_gt(&self, other: &SymInt) -> Result<SymBool> {
        self.rel(other, BinOp::Cmp(RelOp::Gt), |a, b| a > b)
    }
    /// `self >= other` as a [`SymBool`] (no guard).
    ///
    /// ```
    /// use c10_core::sym::SymInt;
    /// assert_eq!(SymInt::from(1).sym_ge(&SymInt::from(2))?.maybe_as_bool(), Some(false));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_ge(&self, other: &SymInt) -> Result<SymBool> {
        self.rel(other, BinOp::Cmp(RelOp::Ge), |a, b| a >= b)
    }

    /// The value as a [`SymFloat`] (c10's `operator SymFloat`).
    ///
    /// ```
    /// use c10_core::sym::SymInt;
    /// assert_eq!(SymInt::from(3).to_sym_float()?.maybe_as_float(), Some(3.0));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn to_sym_float(&self) -> Result<SymFloat> {
        match self {
            SymInt::Int(v) => Ok(SymFloat::Float(*v as f64)),
            SymInt::Sym(n) => Ok(SymFloat::Sym(n.unary(UnOp::ToFloat)?)),
        }
    }

    /// `self / other` as a float (Python's `/` on ints).
    ///
    /// ```
    /// use c10_core::sym::SymInt;
    /// assert_eq!(SymInt::from(3).truediv(&SymInt::from(2))?.maybe_as_float(), Some(1.5));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn truediv(&self, other: &SymInt) -> Result<SymFloat> {
        if let (SymInt::Int(a), SymInt::Int(b)) = (self, other) {
            return Ok(SymFloat::Float(*a as f64 / *b as f64));
        }
        Ok(SymFloat::Sym(self.binary(BinOp::TrueDiv, other)?))
    }
}

impl fmt::Display for SymInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SymInt::Int(v) => write!(f, "{v}"),
            SymInt::Sym(n) => write!(f, "{n}"),
        }
    }
}

impl fmt::Debug for SymInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A float that is either concrete or symbolic (c10's `SymFloat`). Only
/// what ops need: conversion from ints, true division, and decisions.
///
/// ```
/// use c10_core::sym::{ShapeEnv, SymInt};
/// let env = ShapeEnv::new();
/// let n = env.create_symbol(6, "n")?;
/// let f = n.truediv(&SymInt::from(4))?;
/// assert_eq!(f.hint(), Some(1.5));
/// assert_eq!(f.to_string(), "s0/4");
/// // Printed with Python's precedence: the text evaluates to the value.
/// let g = n.add(&SymInt::from(2))?.truediv(&n.mul(&SymInt::from(3))?)?;
/// assert_eq!(g.to_string(), "(s0 + 2)/(3*s0)");
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Clone, Debug)]
pub enum SymFloat {
    /// A concrete float.
    Float(f64),
    /// A symbolic float.
    Sym(SymNode),
}

impl SymFloat {
    /// The concrete value, if any.
    ///
    /// ```
    /// assert_eq!(c10_core::sym::SymFloat::Float(0.5).maybe_as_float(), Some(0.5));
    /// ```
    pub fn maybe_as_float(&self) -> Option<f64> {
        match self {
            SymFloat::Float(v) => Some(*v),
            SymFloat::Sym(_) => None,
        }
    }

    /// The value under the hints, without guarding.
    ///
    /// ```
    /// assert_eq!(c10_core::sym::SymFloat::Float(0.5).hint(), Some(0.5));
    /// ```
    pub fn hint(&self) -> Option<f64> {
        match self {
            SymFloat::Float(v) => Some(*v),
            SymFloat::Sym(n) => n.hint_float(),
        }
    }

    /// The value, decided from the hints (c10's `guard_float`).
    ///
    /// ```
    /// assert_eq!(c10_core::sym::SymFloat::Float(0.5).guard_float()?, 0.5);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn guard_float(&self) -> Result<f64> {
        match self {
            SymFloat::Float(v) => Ok(*v),
            SymFloat::Sym(n) => n.guard_float(),
        }
    }
}

impl fmt::Display for SymFloat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SymFloat::Float(v) => write!(f, "{v}"),
            SymFloat::Sym(n) => write!(f, "{n}"),
        }
    }
}
