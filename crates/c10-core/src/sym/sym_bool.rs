//! `SymBool`: a plain `bool` or a symbolic condition.

use std::fmt;

use super::node::{BinOp, Decision, NodeKind, SymNode, UnOp};
use crate::error::{Result, TensorError};

/// A boolean that is either concrete or symbolic (c10's `SymBool`).
///
/// Building one never guards; turning it into a Rust `bool` does, in the
/// way the method names (c10's): [`guard_bool`](SymBool::guard_bool),
/// [`guard_or_false`](SymBool::guard_or_false),
/// [`guard_or_true`](SymBool::guard_or_true),
/// [`statically_known_true`](SymBool::statically_known_true),
/// [`expect_true`](SymBool::expect_true).
///
/// ```
/// use c10_core::sym::{ShapeEnv, SymInt};
/// let env = ShapeEnv::new();
/// let s = env.create_symbol(8, "n")?;
/// let b = s.sym_ge(&SymInt::from(4))?;
/// assert!(b.statically_known_true()? == false); // not provable: s >= 2 only
/// assert!(env.guards().is_empty());
/// assert!(b.guard_bool()?); // hint 8: true, recorded
/// assert_eq!(env.guards()[0].to_string(), "s0 >= 4");
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Clone)]
pub enum SymBool {
    /// A concrete boolean.
    Bool(bool),
    /// A symbolic boolean.
    Sym(SymNode),
}

impl From<bool> for SymBool {
    fn from(b: bool) -> Self {
        SymBool::Bool(b)
    }
}

impl SymBool {
    /// Wraps a bool node (a constant node becomes a concrete `SymBool`).
    ///
    /// ```
    /// use c10_core::sym::{ShapeEnv, SymBool, SymInt};
    /// let env = ShapeEnv::new();
    /// let s = env.create_symbol(8, "n")?;
    /// let b = s.sym_eq(&SymInt::from(8))?;
    /// assert!(SymBool::from_node(b.node().unwrap().clone()).is_ok());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn from_node(node: SymNode) -> Result<SymBool> {
        if node.kind() != NodeKind::Bool {
            return Err(TensorError::runtime(format!(
                "expected a bool node but got a {:?} node",
                node.kind()
            )));
        }
        Ok(match node.maybe_as_bool() {
            Some(b) => SymBool::Bool(b),
            None => SymBool::Sym(node),
        })
    }

    /// The concrete value, if known (c10's `maybe_as_bool`).
    ///
    /// ```
    /// assert_eq!(c10_core::sym::SymBool::from(true).maybe_as_bool(), Some(true));
    /// ```
    pub fn maybe_as_bool(&self) -> Option<bool> {
        match self {
            SymBool::Bool(b) => Some(*b),
            SymBool::Sym(n) => n.maybe_as_bool(),
        }
    }

    /// The node, for a symbolic value.
    ///
    /// ```
    /// assert!(c10_core::sym::SymBool::from(true).node().is_none());
    /// ```
    pub fn node(&self) -> Option<&SymNode> {
        match self {
            SymBool::Bool(_) => None,
            SymBool::Sym(n) => Some(n),
        }
    }

    /// The condition as a built-in expression (replacements applied;
    /// `None` for a node of another engine).
    ///
    /// ```
    /// assert_eq!(c10_core::sym::SymBool::from(true).expr().unwrap().as_const(), Some(true));
    /// ```
    pub fn expr(&self) -> Option<super::expr::BoolExpr> {
        match self {
            SymBool::Bool(b) => Some(super::expr::BoolExpr::Const(*b)),
            SymBool::Sym(n) => super::shape_env::builtin_bool_expr(n),
        }
    }

    /// The value under the hints, without guarding.
    ///
    /// ```
    /// assert_eq!(c10_core::sym::SymBool::from(false).hint(), Some(false));
    /// ```
    pub fn hint(&self) -> Option<bool> {
        match self {
            SymBool::Bool(b) => Some(*b),
            SymBool::Sym(n) => n.hint_bool(),
        }
    }

    fn decide(&self, how: Decision) -> Result<bool> {
        match self {
            SymBool::Bool(b) => Ok(*b),
            SymBool::Sym(n) => n.decide(how),
        }
    }

    /// Decides from the hints and records the decision as a guard
    /// (unless the answer is statically known); an error on unbacked
    /// symbols (c10's `guard_bool`).
    ///
    /// ```
    /// assert!(c10_core::sym::SymBool::from(true).guard_bool()?);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn guard_bool(&self) -> Result<bool> {
        self.decide(Decision::Guard)
    }

    /// [`guard_bool`](SymBool::guard_bool), but `false` without a guard
    /// where the answer depends on unbacked symbols.
    ///
    /// ```
    /// assert!(!c10_core::sym::SymBool::from(false).guard_or_false()?);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn guard_or_false(&self) -> Result<bool> {
        self.decide(Decision::GuardOrFalse)
    }

    /// [`guard_bool`](SymBool::guard_bool), but `true` without a guard
    /// where the answer depends on unbacked symbols.
    ///
    /// ```
    /// assert!(c10_core::sym::SymBool::from(true).guard_or_true()?);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn guard_or_true(&self) -> Result<bool> {
        self.decide(Decision::GuardOrTrue)
    }

    /// `true` only when provable without the hints; never guards.
    ///
    /// ```
    /// assert!(c10_core::sym::SymBool::from(true).statically_known_true()?);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn statically_known_true(&self) -> Result<bool> {
        self.decide(Decision::StaticallyKnownTrue)
    }

    /// Asserts the condition: a guard for backed symbols, a deferred
    /// runtime assert for unbacked ones (c10's `expect_true`). Returns
    /// the value; callers raise their own error on `false`.
    ///
    /// ```
    /// assert!(!c10_core::sym::SymBool::from(false).expect_true()?);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn expect_true(&self) -> Result<bool> {
        self.decide(Decision::ExpectTrue)
    }

    /// [`guard_bool`](SymBool::guard_bool) with size-oblivious reasoning
    /// on unbacked symbols (c10's `guard_size_oblivious`): an unbacked
    /// size is assumed to be at least 2 (not 0 or 1) when deciding
    /// statically, which records nothing; backed symbols guard as usual.
    ///
    /// ```
    /// use c10_core::sym::{ShapeEnv, SymInt};
    /// let env = ShapeEnv::new();
    /// let u = env.create_unbacked_symint("u");
    /// let b = u.sym_eq(&SymInt::from(1))?;
    /// assert!(b.guard_bool().is_err());
    /// assert!(!b.guard_size_oblivious()?);
    /// assert!(env.guards().is_empty());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn guard_size_oblivious(&self) -> Result<bool> {
        self.decide(Decision::SizeOblivious)
    }

    fn logic(&self, other: &SymBool, op: BinOp) -> Result<SymBool> {
        match (self, other) {
            (SymBool::Bool(a), SymBool::Bool(b)) => Ok(SymBool::Bool(match op {
                BinOp::And => *a && *b,
                _ => *a || *b,
            })),
            (SymBool::Sym(a), SymBool::Sym(b)) => SymBool::from_node(a.binary(op, b)?),
            (SymBool::Sym(a), SymBool::Bool(b)) => {
                SymBool::from_node(a.binary(op, &a.wrap_bool(*b))?)
            }
            (SymBool::Bool(a), SymBool::Sym(b)) => {
                SymBool::from_node(b.wrap_bool(*a).binary(op, b)?)
            }
        }
    }

    /// `self & other` (c10's `sym_and`).
    ///
    /// ```
    /// use c10_core::sym::SymBool;
    /// assert_eq!(SymBool::from(true).sym_and(&SymBool::from(false))?.maybe_as_bool(), Some(false));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_and(&self, other: &SymBool) -> Result<SymBool> {
        self.logic(other, BinOp::And)
    }

    /// `self | other` (c10's `sym_or`).
    ///
    /// ```
    /// use c10_core::sym::SymBool;
    /// assert_eq!(SymBool::from(true).sym_or(&SymBool::from(false))?.maybe_as_bool(), Some(true));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_or(&self, other: &SymBool) -> Result<SymBool> {
        self.logic(other, BinOp::Or)
    }

    /// `!self` (c10's `sym_not`).
    ///
    /// ```
    /// use c10_core::sym::SymBool;
    /// assert_eq!(SymBool::from(true).sym_not()?.maybe_as_bool(), Some(false));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_not(&self) -> Result<SymBool> {
        match self {
            SymBool::Bool(b) => Ok(SymBool::Bool(!b)),
            SymBool::Sym(n) => SymBool::from_node(n.unary(UnOp::Not)?),
        }
    }
}

impl fmt::Display for SymBool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SymBool::Bool(true) => f.write_str("True"),
            SymBool::Bool(false) => f.write_str("False"),
            SymBool::Sym(n) => write!(f, "{n}"),
        }
    }
}

impl fmt::Debug for SymBool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
