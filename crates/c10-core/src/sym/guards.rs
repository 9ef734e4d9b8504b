//! Guards: the conditions under which a trace over symbolic shapes is
//! valid.

use std::fmt;

use super::expr::{BoolExpr, SymbolId};

/// One recorded guard (PyTorch's `ShapeGuard`): a boolean expression
/// over the environment's symbols that held for the hints when a
/// decision was taken.
///
/// ```
/// use c10_core::sym::ShapeEnv;
/// let env = ShapeEnv::new();
/// let s = env.create_symbol(6, "n")?;
/// s.sym_eq(&6.into())?.guard_bool()?;
/// let g = &env.guards()[0];
/// assert_eq!(g.to_string(), "Eq(s0, 6)");
/// assert_eq!(g.evaluate(&|_| Some(6)), Some(true));
/// assert_eq!(g.evaluate(&|_| Some(7)), Some(false));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Guard {
    expr: BoolExpr,
}

impl Guard {
    pub(crate) fn new(expr: BoolExpr) -> Guard {
        Guard { expr }
    }

    /// The condition.
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// let env = ShapeEnv::new();
    /// env.create_symbol(6, "n")?.guard_int()?;
    /// assert_eq!(env.guards()[0].expr().free_symbols(), vec![0]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn expr(&self) -> &BoolExpr {
        &self.expr
    }

    /// Whether the guard holds under an assignment (`None` when a symbol
    /// is unassigned or a divisor is 0).
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// let env = ShapeEnv::new();
    /// env.create_symbol(6, "n")?.guard_int()?;
    /// assert_eq!(env.guards()[0].evaluate(&|_| None), None);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn evaluate(&self, value: &dyn Fn(SymbolId) -> Option<i64>) -> Option<bool> {
        self.expr.eval(value)
    }
}

impl fmt::Display for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.expr)
    }
}
