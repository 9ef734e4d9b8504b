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

/// Rewrites a printed guard (sympy's spelling, as [`Guard`] prints) into
/// Python's, as PyTorch's `produce_guards` writes its guards:
/// `Eq(a, b)` → `a == b`, `Ne(a, b)` → `a != b`, `Mod(a, b)` →
/// `(a % b)`, `Min`/`Max` → `min`/`max`, `|`/`&`/`~` → `or`/`and`/`not`.
/// Compound operands are parenthesised, so the text evaluates with
/// Python's precedence to the guard's value.
///
/// ```
/// use c10_core::sym::python_guard_text;
/// assert_eq!(python_guard_text("Eq(Mod(n*m, 8), 0) | Eq(n*m, 8)"), "((n*m) % 8) == 0 or (n*m) == 8");
/// assert_eq!(python_guard_text("~(Ne(n, 4))"), "not (n != 4)");
/// ```
pub fn python_guard_text(text: &str) -> String {
    let out = rewrite_calls(text);
    out.replace(" | ", " or ")
        .replace(" & ", " and ")
        .replace("~(", "not (")
}

/// Whether a printed operand needs no parentheses as a Python operand:
/// no space and no operator outside brackets.
fn is_simple(s: &str) -> bool {
    let mut depth = 0i32;
    for ch in s.chars() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ' ' | '+' | '-' | '*' | '/' | '%' | '<' | '>' | '=' | '!' if depth == 0 => {
                return false
            }
            _ => {}
        }
    }
    true
}

fn paren(s: &str) -> String {
    if is_simple(s) {
        s.to_string()
    } else {
        format!("({s})")
    }
}

/// Splits `s` at its top-level commas.
fn split_args(s: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0i32, 0usize, Vec::new());
    for (i, ch) in s.char_indices() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}

/// Rewrites the sympy function calls of `text`, innermost arguments
/// first.
fn rewrite_calls(text: &str) -> String {
    const NAMES: [&str; 5] = ["Eq(", "Ne(", "Mod(", "Min(", "Max("];
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let boundary = !text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.');
        let Some(name) = NAMES.iter().find(|n| boundary && rest.starts_with(**n)) else {
            let ch = rest.chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
            continue;
        };
        // Find the matching ')'.
        let open = i + name.len();
        let mut depth = 1i32;
        let mut end = None;
        for (k, ch) in text[open..].char_indices() {
            match ch {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(open + k);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            out.push_str(rest);
            break;
        };
        let inner = rewrite_calls(&text[open..end]);
        let args = split_args(&inner);
        let (a, b) = (
            args.first().copied().unwrap_or(""),
            args.get(1).copied().unwrap_or(""),
        );
        out.push_str(&match *name {
            "Eq(" => format!("{} == {}", paren(a), paren(b)),
            "Ne(" => format!("{} != {}", paren(a), paren(b)),
            "Mod(" => format!("({} % {})", paren(a), paren(b)),
            "Min(" => format!("min({a}, {b})"),
            _ => format!("max({a}, {b})"),
        });
        i = end + 1;
    }
    out
}
