//! The `SymNode` interface: what a symbolic value must be able to do, so
//! that engines other than the built-in one (a Python binding to sympy,
//! say) can plug in. c10's `SymNodeImpl` has one virtual method per
//! operation; here the operations are enums ([`BinOp`], [`UnOp`]) and a
//! node implements two methods for them, which keeps new operations from
//! breaking every engine.
//!
//! A node is shared and immutable; [`SymNode`] is the handle (an `Arc`,
//! so clone = one atomic increment). Operations take the other operand
//! as a node of the *same engine*: [`SymInt`](super::SymInt) wraps plain
//! integers with [`SymNodeImpl::wrap_int`] before calling, as c10's
//! `DEFINE_BINARY` does. Mixing engines (or two different shape
//! environments) is an error, not a silent conversion.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use super::expr::RelOp;
use crate::error::Result;

/// What a node denotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// An integer (`SymInt`).
    Int,
    /// A boolean (`SymBool`).
    Bool,
    /// A float (`SymFloat`).
    Float,
}

/// A binary operation on nodes (c10's `add`, `sub`, ..., `sym_and`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a * b`
    Mul,
    /// `a // b` (flooring, Python semantics; c10's `floordiv` / `/` on SymInt)
    FloorDiv,
    /// `a % b` (Python semantics; c10's `mod`)
    Mod,
    /// `min(a, b)` (c10's `sym_min`)
    Min,
    /// `max(a, b)` (c10's `sym_max`)
    Max,
    /// true division of two ints or floats, giving a float
    TrueDiv,
    /// `a == b`, `a != b`, `a < b`, ... (the relation is a
    /// [`RelOp`]), a bool node
    Cmp(RelOp),
    /// `a & b` on bools
    And,
    /// `a | b` on bools
    Or,
}

/// A unary operation on nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `-a`
    Neg,
    /// `!a` on bools
    Not,
    /// int → float (c10's `sym_float`)
    ToFloat,
}

/// How a decision on a boolean node is taken (c10's `guard_bool`,
/// `guard_or_false`, ...; see `docs/symbolic-shapes.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    /// `guard_bool`: the hint decides; a guard is recorded unless the
    /// answer is statically known; an error on unbacked symbols.
    Guard,
    /// `guard_or_false`: like `Guard` for backed symbols; `false`, with
    /// no guard, where the expression depends on unbacked symbols.
    GuardOrFalse,
    /// `guard_or_true`: as above, defaulting to `true`.
    GuardOrTrue,
    /// `statically_known_true`: never records anything; `true` only when
    /// provable from ranges and earlier guards.
    StaticallyKnownTrue,
    /// `expect_true`: a guard for backed symbols; a deferred runtime
    /// assert (and `true`) for unbacked ones.
    ExpectTrue,
    /// `guard_size_oblivious`: like `Guard` for backed symbols; on
    /// unbacked size-like symbols, decided statically as if each were
    /// at least 2 (no guard), else an error.
    SizeOblivious,
}

/// A symbolic value's implementation (c10's `SymNodeImpl`).
///
/// ```
/// use c10_core::sym::{ShapeEnv, SymInt};
/// let env = ShapeEnv::new();
/// let s = env.create_symbol(8, "x.size(0)")?;
/// let node = s.node().unwrap();
/// assert!(node.has_hint());
/// assert_eq!(node.hint_int(), Some(8));
/// assert_eq!(node.to_string(), "s0");
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub trait SymNodeImpl: Send + Sync + fmt::Debug + fmt::Display + Any {
    /// For engines to recognise their own nodes (downcast).
    fn as_any(&self) -> &dyn Any;
    /// What the node denotes.
    fn kind(&self) -> NodeKind;
    /// The integer, when the node is a known constant.
    fn maybe_as_int(&self) -> Option<i64> {
        None
    }
    /// The boolean, when the node is a known constant.
    fn maybe_as_bool(&self) -> Option<bool> {
        None
    }
    /// Whether every symbol in the node has a hint (c10's `has_hint`).
    fn has_hint(&self) -> bool;
    /// The integer value under the hints, without recording a guard
    /// (PyTorch's `optimization_hint`/`size_hint`).
    fn hint_int(&self) -> Option<i64>;
    /// The boolean value under the hints, without recording a guard.
    fn hint_bool(&self) -> Option<bool>;
    /// The float value under the hints, without recording a guard.
    fn hint_float(&self) -> Option<f64> {
        self.hint_int().map(|v| v as f64)
    }
    /// A constant integer node of this engine (c10's `wrap_int`).
    fn wrap_int(&self, v: i64) -> SymNode;
    /// A constant boolean node of this engine (c10's `wrap_bool`).
    fn wrap_bool(&self, b: bool) -> SymNode;
    /// A constant float node of this engine (c10's `wrap_float`).
    fn wrap_float(&self, v: f64) -> Result<SymNode>;
    /// `self OP other`; `other` belongs to the same engine.
    fn binary(&self, op: BinOp, other: &SymNode) -> Result<SymNode>;
    /// `OP self`.
    fn unary(&self, op: UnOp) -> Result<SymNode>;
    /// Decides a boolean node (see [`Decision`]).
    fn decide(&self, how: Decision) -> Result<bool>;
    /// The integer value under the hints, recording `Eq(self, value)`
    /// (c10's `guard_int`; it specialises).
    fn guard_int(&self) -> Result<i64>;
    /// The float value under the hints (c10's `guard_float`).
    fn guard_float(&self) -> Result<f64>;
}

/// A shared handle to a node.
///
/// ```
/// use c10_core::sym::ShapeEnv;
/// let env = ShapeEnv::new();
/// let s = env.create_symbol(4, "n")?;
/// let n = s.node().unwrap().clone(); // one atomic increment
/// assert_eq!(n.to_string(), "s0");
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Clone)]
pub struct SymNode(pub(crate) Arc<dyn SymNodeImpl>);

impl SymNode {
    /// Wraps an engine's node.
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// let env = ShapeEnv::new();
    /// let s = env.create_symbol(4, "n")?;
    /// let again = c10_core::sym::SymNode::new(s.node().unwrap().inner().clone());
    /// assert_eq!(again.to_string(), "s0");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn new(node: Arc<dyn SymNodeImpl>) -> SymNode {
        SymNode(node)
    }

    /// The engine's node.
    ///
    /// ```
    /// use c10_core::sym::{ShapeEnv, NodeKind};
    /// let env = ShapeEnv::new();
    /// let s = env.create_symbol(4, "n")?;
    /// assert_eq!(s.node().unwrap().inner().kind(), NodeKind::Int);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn inner(&self) -> &Arc<dyn SymNodeImpl> {
        &self.0
    }

    /// Whether both handles point at the same node (c10's `is_same`).
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// let env = ShapeEnv::new();
    /// let s = env.create_symbol(4, "n")?;
    /// let n = s.node().unwrap();
    /// assert!(n.is_same(&n.clone()));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn is_same(&self, other: &SymNode) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::ops::Deref for SymNode {
    type Target = dyn SymNodeImpl;
    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl fmt::Debug for SymNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for SymNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}
