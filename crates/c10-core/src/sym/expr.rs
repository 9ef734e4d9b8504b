//! The built-in expression engine: integer expressions as canonical
//! polynomials over *atoms* (symbols and the non-polynomial functions
//! `FloorDiv`, `Mod`, `Min`, `Max`, and sums kept unexpanded inside a
//! product), boolean expressions over relations, evaluation under an
//! assignment, and interval bounds.
//!
//! Canonical form is what makes static decisions possible: `s0*s1` and
//! `s1*s0` are the same polynomial, `s0*s1 - s1*s0` folds to `0`, and
//! `Eq(s1, s1*s0)` becomes a question about the sign of one polynomial,
//! which the shape environment answers from the symbols' ranges (PyTorch's
//! `_maybe_evaluate_static`: shift each symbol by its lower bound, expand,
//! bound).
//!
//! Integer semantics are Python's: `FloorDiv` floors and `Mod` takes the
//! divisor's sign, as in torch's sympy functions. Coefficients are `i64`
//! in wrapping arithmetic (a shape expression whose coefficients overflow
//! `i64` describes no real tensor); evaluation is checked and reports
//! overflow as "no value".
//!
//! # Bounded work
//!
//! Every expression is checked when it is built, so that no operation on
//! it can recurse without bound or do work out of proportion to what the
//! caller wrote:
//!
//! * nesting (a `FloorDiv`, `Mod`, `Min`, `Max` or kept factor inside
//!   another) is at most [`MAX_DEPTH`] levels, and an expression has at
//!   most [`MAX_SIZE`] nodes; an operation whose result would exceed
//!   either returns an error (where PyTorch raises `RecursionError`), so
//!   evaluation, comparison, printing, substitution and drop recurse at
//!   most [`MAX_DEPTH`] levels;
//! * sub-expressions are shared (`Arc`), so building a deep expression
//!   copies nothing;
//! * a product is expanded only while the expansion stays small
//!   ([`EXPAND_PAIRS`] term pairs); larger products of sums are kept
//!   factored (`(s0 + s1)**7`), as sympy keeps them, and bounded by
//!   interval arithmetic on the factors;
//! * powers are computed by squaring, and an exponent that would overflow
//!   `u32` is an error, never a saturated value.
//!
//! ```
//! use c10_core::sym::expr::IntExpr;
//! let (a, b) = (IntExpr::symbol(0), IntExpr::symbol(1));
//! let e = a.mul(&b)?.add(&IntExpr::constant(3))?;
//! assert_eq!(e.to_string(), "s0*s1 + 3");
//! assert_eq!(e.eval(&|s| Some([4, 5][s as usize])), Some(23));
//! assert!(e.sub(&b.mul(&a)?)?.as_const() == Some(3));
//! # Ok::<(), c10_core::TensorError>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::error::{Result, TensorError};

/// A symbol's index in its [`ShapeEnv`](super::ShapeEnv).
pub type SymbolId = u32;

/// The deepest nesting of function atoms (`FloorDiv`, `Mod`, `Min`, `Max`,
/// kept factors) an expression may have; deeper is an error.
pub const MAX_DEPTH: u32 = 128;

/// The most nodes (terms plus atoms, counted through every nested
/// argument) an expression may have; more is an error.
pub const MAX_SIZE: u64 = 1 << 13;

/// A product of two polynomials is expanded when it forms at most this
/// many pairs of terms (and neither side holds a kept factor); otherwise
/// the sums are kept as factors.
pub const EXPAND_PAIRS: usize = 256;

/// A non-polynomial building block of an [`IntExpr`].
///
/// Arguments are shared, so cloning an atom copies no sub-expression.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Atom {
    /// A free symbol (`s<id>`).
    Symbol(SymbolId),
    /// `a // b`, flooring (torch's `FloorDiv`).
    FloorDiv(Arc<IntExpr>, Arc<IntExpr>),
    /// `a mod b` with the divisor's sign (torch's `Mod`/`PythonMod`).
    Mod(Arc<IntExpr>, Arc<IntExpr>),
    /// `min(a, b)`.
    Min(Arc<IntExpr>, Arc<IntExpr>),
    /// `max(a, b)`.
    Max(Arc<IntExpr>, Arc<IntExpr>),
    /// A sum of two or more terms kept unexpanded inside a product (the
    /// `(s0 + s1)` of `(s0 + s1)**7`).
    Factor(Arc<IntExpr>),
}

/// A product of atoms with positive powers, sorted by atom (empty: the
/// constant monomial `1`). Shared, so that copying a sum of many terms
/// (every `add` copies the larger side's map) allocates no monomial.
type Monomial = Arc<[(Atom, u32)]>;

/// The constant monomial `1`.
fn unit() -> Monomial {
    Arc::from(Vec::new())
}

/// An integer expression in canonical form: a sum of distinct monomials
/// with non-zero coefficients, within the [`MAX_DEPTH`] and [`MAX_SIZE`]
/// budgets.
///
/// ```
/// use c10_core::sym::expr::IntExpr;
/// let s = IntExpr::symbol(2);
/// assert_eq!(s.add(&IntExpr::constant(1))?.floordiv(&IntExpr::constant(2))?.to_string(), "((s2 + 1)//2)");
/// assert_eq!(s.mul(&IntExpr::constant(4))?.floordiv(&IntExpr::constant(2))?.to_string(), "2*s2");
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IntExpr {
    terms: BTreeMap<Monomial, i64>,
    /// Nesting depth of function atoms (0 for a polynomial in symbols).
    depth: u32,
    /// Node count (terms plus atoms, through nested arguments).
    size: u64,
}

/// Python's floor division (`None` for a zero divisor or overflow).
///
/// ```
/// assert_eq!(c10_core::sym::expr::py_floordiv(-7, 2), Some(-4));
/// ```
pub fn py_floordiv(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q.checked_sub(1)
    } else {
        Some(q)
    }
}

/// Python's `%` (the result takes the divisor's sign; `None` for zero).
///
/// ```
/// assert_eq!(c10_core::sym::expr::py_mod(-7, 3), Some(2));
/// ```
pub fn py_mod(a: i64, b: i64) -> Option<i64> {
    let r = a.checked_rem(b)?;
    if r != 0 && ((r < 0) != (b < 0)) {
        r.checked_add(b)
    } else {
        Some(r)
    }
}

/// The error for a zero divisor (Python's `ZeroDivisionError`).
pub(crate) fn div_by_zero() -> TensorError {
    TensorError::runtime("ZeroDivisionError: integer division or modulo by zero")
}

fn too_deep(depth: u32) -> TensorError {
    TensorError::runtime(format!(
        "symbolic expression too deeply nested: {depth} levels of FloorDiv/Mod/Min/Max exceed \
         the limit of {MAX_DEPTH} (PyTorch raises RecursionError here)"
    ))
}

fn too_big(size: u64) -> TensorError {
    TensorError::runtime(format!(
        "symbolic expression too large: {size} nodes exceed the limit of {MAX_SIZE}"
    ))
}

fn exponent_overflow() -> TensorError {
    TensorError::runtime(format!(
        "symbolic expression exponent overflows: a power above {} cannot be represented",
        u32::MAX
    ))
}

/// `a * b` of two monomials (exponents added; an overflow is an error).
fn mono_mul(a: &Monomial, b: &Monomial) -> Result<Monomial> {
    let mut out: Vec<(Atom, u32)> = a.to_vec();
    for (atom, p) in b.iter() {
        match out.binary_search_by(|(x, _)| x.cmp(atom)) {
            Ok(i) => out[i].1 = out[i].1.checked_add(*p).ok_or_else(exponent_overflow)?,
            Err(i) => out.insert(i, (atom.clone(), *p)),
        }
    }
    Ok(out.into())
}

/// A monomial's node count (itself plus its atoms) and nesting depth.
fn mono_measure(m: &Monomial) -> (u64, u32) {
    let mut size: u64 = 1;
    let mut depth = 0;
    for (a, _) in m.iter() {
        size = size.saturating_add(a.size());
        depth = depth.max(a.depth());
    }
    (size, depth)
}

/// Adds `c * m` to a term map, dropping a monomial whose coefficient
/// cancels to 0.
fn add_term(terms: &mut BTreeMap<Monomial, i64>, m: Monomial, c: i64) {
    if c == 0 {
        return;
    }
    match terms.entry(m) {
        std::collections::btree_map::Entry::Vacant(v) => {
            v.insert(c);
        }
        std::collections::btree_map::Entry::Occupied(mut o) => {
            let v = o.get().wrapping_add(c);
            if v == 0 {
                o.remove();
            } else {
                *o.get_mut() = v;
            }
        }
    }
}

impl Atom {
    /// This atom as an expression, with [`IntExpr::exact_division_in`]
    /// applied to its arguments (rebuilt, so it re-simplifies); `None` when
    /// rebuilding fails (a divisor became 0, a budget).
    fn exact_division_in(&self, a: &IntExpr, c: i64) -> Option<(IntExpr, bool)> {
        let two = |x: &IntExpr, y: &IntExpr| {
            let (x2, cx) = x.exact_division_in(a, c);
            let (y2, cy) = y.exact_division_in(a, c);
            (x2, y2, cx || cy)
        };
        let (e, changed) = match self {
            Atom::Symbol(_) => return Some((IntExpr::atom(self.clone()).ok()?, false)),
            Atom::Factor(x) => x.exact_division_in(a, c),
            Atom::FloorDiv(x, y) | Atom::Mod(x, y) | Atom::Min(x, y) | Atom::Max(x, y) => {
                let (x2, y2, ch) = two(x, y);
                if !ch {
                    return Some((IntExpr::atom(self.clone()).ok()?, false));
                }
                let e = match self {
                    Atom::FloorDiv(..) => x2.floordiv(&y2),
                    Atom::Mod(..) => x2.modulo(&y2),
                    Atom::Min(..) => x2.sym_min(&y2),
                    _ => x2.sym_max(&y2),
                };
                (e.ok()?, true)
            }
        };
        Some((e, changed))
    }
}

impl Atom {
    /// Nesting depth: 0 for a symbol, one more than the deepest argument
    /// otherwise.
    fn depth(&self) -> u32 {
        match self {
            Atom::Symbol(_) => 0,
            Atom::Factor(x) => x.depth + 1,
            Atom::FloorDiv(a, b) | Atom::Mod(a, b) | Atom::Min(a, b) | Atom::Max(a, b) => {
                a.depth.max(b.depth) + 1
            }
        }
    }

    /// Node count, through the arguments.
    fn size(&self) -> u64 {
        match self {
            Atom::Symbol(_) => 1,
            Atom::Factor(x) => x.size.saturating_add(1),
            Atom::FloorDiv(a, b) | Atom::Mod(a, b) | Atom::Min(a, b) | Atom::Max(a, b) => {
                a.size.saturating_add(b.size).saturating_add(1)
            }
        }
    }
}

impl IntExpr {
    /// Wraps a term map, measuring it against the budgets.
    fn finish(terms: BTreeMap<Monomial, i64>) -> Result<IntExpr> {
        let mut depth = 0;
        let mut size: u64 = 0;
        for m in terms.keys() {
            let (m_size, m_depth) = mono_measure(m);
            size = size.saturating_add(m_size);
            depth = depth.max(m_depth);
        }
        if depth > MAX_DEPTH {
            return Err(too_deep(depth));
        }
        if size > MAX_SIZE {
            return Err(too_big(size));
        }
        Ok(IntExpr { terms, depth, size })
    }

    /// The constant `c`.
    ///
    /// ```
    /// assert_eq!(c10_core::sym::expr::IntExpr::constant(7).as_const(), Some(7));
    /// ```
    pub fn constant(c: i64) -> IntExpr {
        let mut terms = BTreeMap::new();
        if c != 0 {
            terms.insert(unit(), c);
        }
        let size = terms.len() as u64;
        IntExpr {
            terms,
            depth: 0,
            size,
        }
    }

    /// The symbol `s<id>`.
    ///
    /// ```
    /// assert_eq!(c10_core::sym::expr::IntExpr::symbol(3).to_string(), "s3");
    /// ```
    pub fn symbol(id: SymbolId) -> IntExpr {
        let mut terms = BTreeMap::new();
        terms.insert(Arc::from([(Atom::Symbol(id), 1)]), 1);
        IntExpr {
            terms,
            depth: 0,
            size: 2,
        }
    }

    fn atom(a: Atom) -> Result<IntExpr> {
        let mut terms = BTreeMap::new();
        terms.insert(Arc::from([(a, 1)]), 1);
        IntExpr::finish(terms)
    }

    /// How deeply function atoms nest in this expression (0 for a
    /// polynomial in the symbols); at most [`MAX_DEPTH`].
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let s = IntExpr::symbol(0);
    /// assert_eq!(s.depth(), 0);
    /// assert_eq!(s.floordiv(&IntExpr::constant(2))?.depth(), 1);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The node count (terms plus atoms, through nested arguments); at
    /// most [`MAX_SIZE`]. Every traversal of the expression is linear in
    /// it.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// assert_eq!(IntExpr::symbol(0).size(), 2);
    /// ```
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The value, when the expression is a constant.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// assert_eq!(IntExpr::symbol(0).as_const(), None);
    /// ```
    pub fn as_const(&self) -> Option<i64> {
        match self.terms.len() {
            0 => Some(0),
            1 => self
                .terms
                .iter()
                .next()
                .and_then(|(m, c)| m.is_empty().then_some(*c)),
            _ => None,
        }
    }

    /// The symbol, when the expression is exactly one symbol.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// assert_eq!(IntExpr::symbol(4).as_symbol(), Some(4));
    /// ```
    pub fn as_symbol(&self) -> Option<SymbolId> {
        let (m, c) = self.terms.iter().next()?;
        match (self.terms.len(), &m[..], *c) {
            (1, [(Atom::Symbol(s), 1)], 1) => Some(*s),
            _ => None,
        }
    }

    /// The constant term.
    fn constant_term(&self) -> i64 {
        self.terms.get::<[(Atom, u32)]>(&[]).copied().unwrap_or(0)
    }

    /// Whether some monomial holds a kept factor.
    fn has_factor(&self) -> bool {
        self.terms
            .keys()
            .any(|m| m.iter().any(|(a, _)| matches!(a, Atom::Factor(_))))
    }

    /// `self + o`.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let s = IntExpr::symbol(0);
    /// assert_eq!(s.add(&s)?.to_string(), "2*s0");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn add(&self, o: &IntExpr) -> Result<IntExpr> {
        // Insert the smaller side into a copy of the larger one.
        let (big, small) = if self.terms.len() >= o.terms.len() {
            (self, o)
        } else {
            (o, self)
        };
        // The measures are kept up to date term by term, so that adding a
        // small expression to a large one costs the copy of the map and
        // no second pass over it (a cancelled term may lower the depth:
        // only then is it measured again).
        let mut terms = big.terms.clone();
        let (mut size, mut depth, mut cancelled) = (big.size, big.depth, false);
        for (m, c) in &small.terms {
            let (m_size, m_depth) = mono_measure(m);
            match terms.entry(m.clone()) {
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(*c);
                    size = size.saturating_add(m_size);
                    depth = depth.max(m_depth);
                }
                std::collections::btree_map::Entry::Occupied(mut o) => {
                    let v = o.get().wrapping_add(*c);
                    if v == 0 {
                        o.remove();
                        size = size.saturating_sub(m_size);
                        cancelled = true;
                    } else {
                        *o.get_mut() = v;
                    }
                }
            }
        }
        if cancelled {
            return IntExpr::finish(terms);
        }
        if depth > MAX_DEPTH {
            return Err(too_deep(depth));
        }
        if size > MAX_SIZE {
            return Err(too_big(size));
        }
        Ok(IntExpr { terms, depth, size })
    }

    /// `-self`.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// assert_eq!(IntExpr::symbol(0).neg().to_string(), "-s0");
    /// ```
    pub fn neg(&self) -> IntExpr {
        IntExpr {
            terms: self
                .terms
                .iter()
                .map(|(m, c)| (m.clone(), c.wrapping_neg()))
                .collect(),
            depth: self.depth,
            size: self.size,
        }
    }

    /// `self - o`.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let s = IntExpr::symbol(0);
    /// assert_eq!(s.sub(&s)?.as_const(), Some(0));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sub(&self, o: &IntExpr) -> Result<IntExpr> {
        self.add(&o.neg())
    }

    /// `c * self`.
    fn scale(&self, c: i64) -> Result<IntExpr> {
        let mut terms = BTreeMap::new();
        for (m, k) in &self.terms {
            add_term(&mut terms, m.clone(), k.wrapping_mul(c));
        }
        IntExpr::finish(terms)
    }

    /// The expression as one monomial and coefficient: itself when it has
    /// one term, else the whole sum as a kept factor.
    fn as_monomial(&self) -> (Monomial, i64) {
        match self.terms.iter().next() {
            Some((m, c)) if self.terms.len() == 1 => (m.clone(), *c),
            None => (unit(), 0),
            _ => (Arc::from([(Atom::Factor(Arc::new(self.clone())), 1)]), 1),
        }
    }

    /// `self * o`: expanded while the expansion is small (at most
    /// [`EXPAND_PAIRS`] pairs of terms, no kept factor on either side),
    /// otherwise a product of kept factors, as sympy keeps `(a + b)*(c + d)`.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let s = IntExpr::symbol(0).add(&IntExpr::constant(1))?;
    /// assert_eq!(s.mul(&s)?.to_string(), "s0**2 + 2*s0 + 1");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn mul(&self, o: &IntExpr) -> Result<IntExpr> {
        if let Some(c) = o.as_const() {
            return self.scale(c);
        }
        if let Some(c) = self.as_const() {
            return o.scale(c);
        }
        let pairs = self.terms.len().saturating_mul(o.terms.len());
        let mut terms = BTreeMap::new();
        if pairs == 1 || (pairs <= EXPAND_PAIRS && !self.has_factor() && !o.has_factor()) {
            for (ma, ca) in &self.terms {
                for (mb, cb) in &o.terms {
                    add_term(&mut terms, mono_mul(ma, mb)?, ca.wrapping_mul(*cb));
                }
            }
        } else {
            let (ma, ca) = self.as_monomial();
            let (mb, cb) = o.as_monomial();
            add_term(&mut terms, mono_mul(&ma, &mb)?, ca.wrapping_mul(cb));
        }
        IntExpr::finish(terms)
    }

    /// `self ** p`, by squaring (so `p` may be huge: `s0**(2**31)` is one
    /// monomial, computed in 31 steps). An exponent overflowing `u32` is
    /// an error.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let s = IntExpr::symbol(0);
    /// assert_eq!(s.pow(3)?.to_string(), "s0**3");
    /// assert_eq!(s.pow(0)?.as_const(), Some(1));
    /// let big = s.pow(1 << 31)?;
    /// assert_eq!(big.eval(&|_| Some(1)), Some(1));
    /// assert!(big.pow(2).is_err());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn pow(&self, p: u32) -> Result<IntExpr> {
        if p == 0 {
            return Ok(IntExpr::constant(1));
        }
        if let Some(c) = self.as_const() {
            return Ok(IntExpr::constant(c.wrapping_pow(p)));
        }
        if self.terms.len() == 1 {
            // One monomial: multiply the exponents.
            let (m, c) = self.as_monomial();
            let mut out = Vec::with_capacity(m.len());
            for (a, k) in m.iter() {
                out.push((a.clone(), k.checked_mul(p).ok_or_else(exponent_overflow)?));
            }
            let mut terms = BTreeMap::new();
            add_term(&mut terms, out.into(), c.wrapping_pow(p));
            return IntExpr::finish(terms);
        }
        let mut result = IntExpr::constant(1);
        let mut base = self.clone();
        let mut e = p;
        loop {
            if e & 1 == 1 {
                result = result.mul(&base)?;
            }
            e >>= 1;
            if e == 0 {
                return Ok(result);
            }
            base = base.mul(&base)?;
        }
    }

    /// `self // o` (flooring), simplified like torch's `FloorDiv`:
    /// constants fold, `x // 1 = x`, `(c*q + r) // c = q + r // c`, and
    /// `x // x = 1`. A constant 0 divisor is Python's `ZeroDivisionError`.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let s = IntExpr::symbol(0);
    /// let e = s.mul(&IntExpr::constant(6))?.add(&IntExpr::constant(1))?;
    /// assert_eq!(e.floordiv(&IntExpr::constant(3))?.to_string(), "2*s0");
    /// assert!(s.floordiv(&IntExpr::constant(0)).is_err());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn floordiv(&self, o: &IntExpr) -> Result<IntExpr> {
        self.floordiv_opt(o)?.ok_or_else(div_by_zero)
    }

    /// [`floordiv`](Self::floordiv), with `None` for a zero divisor.
    fn floordiv_opt(&self, o: &IntExpr) -> Result<Option<IntExpr>> {
        if let Some(d) = o.as_const() {
            if d == 0 {
                return Ok(None);
            }
            if let Some(n) = self.as_const() {
                return Ok(py_floordiv(n, d).map(IntExpr::constant));
            }
            if d == 1 {
                return Ok(Some(self.clone()));
            }
            if d > 0 {
                // Split off the monomials whose coefficients `d` divides.
                let (mut q, mut r) = (BTreeMap::new(), BTreeMap::new());
                for (m, c) in &self.terms {
                    if c % d == 0 {
                        add_term(&mut q, m.clone(), c / d);
                    } else {
                        add_term(&mut r, m.clone(), *c);
                    }
                }
                if !q.is_empty() {
                    let q = IntExpr::finish(q)?;
                    let rest = IntExpr::finish(r)?.floordiv(o)?;
                    return q.add(&rest).map(Some);
                }
            }
        } else if self == o {
            return Ok(Some(IntExpr::constant(1)));
        } else if let Some(k) = self.constant_multiple_of(o) {
            // sympy's FloorDiv cancels a common factor: `(2*u - 2)//(u - 1)`
            // is 2.
            return Ok(Some(IntExpr::constant(k)));
        } else if self.is_multiple_of_term(o) {
            // A multiple of a one-term divisor divides exactly (sympy's
            // FloorDiv cancels the gcd: `(s0*s1*s2)//s2` is `s0*s1`).
            if let Some(q) = self.div_by_term(o) {
                return Ok(Some(q));
            }
        }
        if self.terms.is_empty() {
            return Ok(Some(IntExpr::default()));
        }
        IntExpr::atom(Atom::FloorDiv(Arc::new(self.clone()), Arc::new(o.clone()))).map(Some)
    }

    /// `self mod o` (Python's sign rule), simplified: constants fold,
    /// multiples of a constant divisor drop, `x mod x = 0`. A constant 0
    /// divisor is Python's `ZeroDivisionError`.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let s = IntExpr::symbol(0);
    /// let e = s.mul(&IntExpr::constant(8))?;
    /// assert_eq!(e.modulo(&IntExpr::constant(4))?.as_const(), Some(0));
    /// assert_eq!(s.modulo(&IntExpr::constant(4))?.to_string(), "Mod(s0, 4)");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn modulo(&self, o: &IntExpr) -> Result<IntExpr> {
        self.modulo_opt(o)?.ok_or_else(div_by_zero)
    }

    /// [`modulo`](Self::modulo), with `None` for a zero divisor.
    fn modulo_opt(&self, o: &IntExpr) -> Result<Option<IntExpr>> {
        if let Some(d) = o.as_const() {
            if d == 0 {
                return Ok(None);
            }
            if d == 1 || d == -1 {
                return Ok(Some(IntExpr::default()));
            }
            let mut r = BTreeMap::new();
            for (m, c) in &self.terms {
                if c % d != 0 {
                    add_term(&mut r, m.clone(), *c);
                }
            }
            let r = IntExpr::finish(r)?;
            if let Some(n) = r.as_const() {
                return Ok(py_mod(n, d).map(IntExpr::constant));
            }
            return IntExpr::atom(Atom::Mod(Arc::new(r), Arc::new(o.clone()))).map(Some);
        }
        if self == o || self.terms.is_empty() || self.is_multiple_of_term(o) {
            return Ok(Some(IntExpr::default()));
        }
        IntExpr::atom(Atom::Mod(Arc::new(self.clone()), Arc::new(o.clone()))).map(Some)
    }

    /// `min(self, o)`; arguments are put in canonical order, so `min`
    /// commutes structurally.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let (a, b) = (IntExpr::symbol(0), IntExpr::symbol(1));
    /// assert_eq!(a.sym_min(&b)?, b.sym_min(&a)?);
    /// assert_eq!(a.sym_min(&a)?, a);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_min(&self, o: &IntExpr) -> Result<IntExpr> {
        self.min_max(o, false)
    }

    /// `max(self, o)`, like [`IntExpr::sym_min`].
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// assert_eq!(IntExpr::constant(2).sym_max(&IntExpr::constant(5))?.as_const(), Some(5));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn sym_max(&self, o: &IntExpr) -> Result<IntExpr> {
        self.min_max(o, true)
    }

    fn min_max(&self, o: &IntExpr, max: bool) -> Result<IntExpr> {
        match (self.as_const(), o.as_const()) {
            (Some(a), Some(b)) => Ok(IntExpr::constant(if max { a.max(b) } else { a.min(b) })),
            _ if self == o => Ok(self.clone()),
            _ => {
                let (a, b) = if self <= o { (self, o) } else { (o, self) };
                let (a, b) = (Arc::new(a.clone()), Arc::new(b.clone()));
                IntExpr::atom(if max {
                    Atom::Max(a, b)
                } else {
                    Atom::Min(a, b)
                })
            }
        }
    }

    /// The value under an assignment of the symbols (`None` when a symbol
    /// is unassigned, a divisor is 0, or the arithmetic overflows).
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let e = IntExpr::symbol(0).floordiv(&IntExpr::constant(2))?;
    /// assert_eq!(e.eval(&|_| Some(7)), Some(3));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn eval(&self, value: &dyn Fn(SymbolId) -> Option<i64>) -> Option<i64> {
        let mut total: i64 = 0;
        for (m, c) in &self.terms {
            let mut t = *c;
            for (a, p) in m.iter() {
                t = t.checked_mul(a.eval(value)?.checked_pow(*p)?)?;
            }
            total = total.checked_add(t)?;
        }
        Some(total)
    }

    /// Rebuilds the expression with every symbol `s` replaced by
    /// `f(s)` (kept when `f` gives `None`), re-simplifying on the way.
    /// Should the rebuilt expression exceed a budget, the expression is
    /// returned as it was: it has the same value, only less simplified.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let e = IntExpr::symbol(0).mul(&IntExpr::symbol(1))?;
    /// let r = e.subst(&|s| (s == 1).then(|| IntExpr::constant(8)));
    /// assert_eq!(r.to_string(), "8*s0");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn subst(&self, f: &dyn Fn(SymbolId) -> Option<IntExpr>) -> IntExpr {
        self.try_subst(f).unwrap_or_else(|_| self.clone())
    }

    fn try_subst(&self, f: &dyn Fn(SymbolId) -> Option<IntExpr>) -> Result<IntExpr> {
        let mut out = BTreeMap::new();
        for (m, c) in &self.terms {
            let mut t = IntExpr::constant(*c);
            for (a, p) in m.iter() {
                t = t.mul(&a.try_subst(f)?.pow(*p)?)?;
            }
            for (tm, tc) in t.terms {
                add_term(&mut out, tm, tc);
            }
        }
        IntExpr::finish(out)
    }

    /// Every symbol the expression mentions, in order, once.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let e = IntExpr::symbol(3).mul(&IntExpr::symbol(1))?;
    /// assert_eq!(e.free_symbols(), vec![1, 3]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn free_symbols(&self) -> Vec<SymbolId> {
        let mut out = Vec::new();
        self.collect_symbols(&mut out);
        sorted_unique(out)
    }

    /// `self = k*s + rest` with a constant `k != 0` and `s` nowhere in
    /// `rest` (not inside any atom either): the form PyTorch's `try_solve`
    /// isolates a symbol from.
    pub(crate) fn linear_in(&self, s: SymbolId) -> Option<(i64, IntExpr)> {
        let mut k = None;
        let mut rest = BTreeMap::new();
        for (m, c) in &self.terms {
            if let [(Atom::Symbol(x), 1)] = &m[..] {
                if *x == s {
                    k = Some(*c);
                    continue;
                }
            }
            if m.iter().any(|(a, _)| a.mentions(s)) {
                return None;
            }
            rest.insert(m.clone(), *c);
        }
        Some((k?, IntExpr::finish(rest).ok()?))
    }

    /// `self` with `a` known to be divisible by `c > 0` (PyTorch's
    /// `ShapeEnv.divisible`): every `a // c` read as the exact quotient and
    /// every `Mod(a, c)` as 0, as `ShapeEnv.simplify` does with `CleanDiv`,
    /// kept only when the result has integer coefficients (sympy's "no new
    /// rationals": `2*(s//2)` becomes `s`, `s1*(s//2)` stays). `None` when
    /// nothing changed.
    ///
    /// ```
    /// # use c10_core::sym::expr::IntExpr;
    /// let s = IntExpr::symbol(0);
    /// let q = s.floordiv(&IntExpr::constant(4))?;
    /// let e = q.mul(&IntExpr::constant(4))?.sub(&s)?; // 4*(s0//4) - s0
    /// assert_eq!(e.with_exact_division(&s, 4).and_then(|x| x.as_const()), Some(0));
    /// assert!(q.with_exact_division(&s, 4).is_none()); // s0/4: not integral
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn with_exact_division(&self, a: &IntExpr, c: i64) -> Option<IntExpr> {
        if c <= 0 {
            return None;
        }
        let (e, changed) = self.exact_division_in(a, c);
        changed.then_some(e)
    }

    /// [`with_exact_division`](Self::with_exact_division) through the
    /// arguments of every atom too (`Mod(2*s0*(s2//2), s2)` is 0); the
    /// flag says whether anything changed. Where the quotient would not be
    /// integral, that level is kept as it was.
    fn exact_division_in(&self, a: &IntExpr, c: i64) -> (IntExpr, bool) {
        let unchanged = || (self.clone(), false);
        let divisor = |y: &IntExpr| y.as_const() == Some(c);
        let is_fd = |at: &Atom| matches!(at, Atom::FloorDiv(x, y) if **x == *a && divisor(y));
        let is_mod = |at: &Atom| matches!(at, Atom::Mod(x, y) if **x == *a && divisor(y));
        let kmax = self
            .terms
            .keys()
            .flat_map(|m| m.iter())
            .filter(|(at, _)| is_fd(at))
            .map(|(_, p)| *p)
            .max()
            .unwrap_or(0);
        let Some(scale) = c.checked_pow(kmax) else {
            return unchanged();
        };
        let mut changed = false;
        let mut out = IntExpr::default();
        for (m, coef) in &self.terms {
            if m.iter().any(|(at, _)| is_mod(at)) {
                changed = true;
                continue;
            }
            let Some(t) = (|| {
                let mut k = 0;
                let mut t = IntExpr::constant(*coef);
                for (at, p) in m.iter() {
                    if is_fd(at) {
                        k = *p;
                        continue;
                    }
                    let (x, ch) = at.exact_division_in(a, c)?;
                    changed |= ch;
                    t = t.mul(&x.pow(*p).ok()?).ok()?;
                }
                let rescale = IntExpr::constant(c.checked_pow(kmax - k)?);
                t.mul(&a.pow(k).ok()?).ok()?.mul(&rescale).ok()
            })() else {
                return unchanged();
            };
            let Ok(sum) = out.add(&t) else {
                return unchanged();
            };
            out = sum;
        }
        match out.div_exact(scale) {
            Some(e) => (e, changed || kmax > 0),
            None => unchanged(),
        }
    }

    /// `k * atom` when the expression is one term of one atom to the
    /// first power: the atom and `k`.
    pub(crate) fn single_atom_term(&self) -> Option<(&Atom, i64)> {
        if self.terms.len() != 1 {
            return None;
        }
        let (m, c) = self.terms.iter().next()?;
        match &m[..] {
            [(a, 1)] => Some((a, *c)),
            _ => None,
        }
    }

    /// `self / k` when `k` divides every coefficient exactly.
    pub(crate) fn div_exact(&self, k: i64) -> Option<IntExpr> {
        if k == 0 {
            return None;
        }
        let mut out = BTreeMap::new();
        for (m, c) in &self.terms {
            if c % k != 0 {
                return None;
            }
            out.insert(m.clone(), c.checked_div(k)?);
        }
        IntExpr::finish(out).ok()
    }

    /// `self` without its monomial content: the gcd of the coefficients
    /// and every symbol (to its least power) that divides all terms and
    /// that `positive` says is never 0. Such a content is a non-zero
    /// factor, so `self == 0` exactly when the result is 0 (how
    /// `Eq(s0*s1*(s2 - 2), 0)` becomes `Eq(s2 - 2, 0)`).
    /// The flag says whether symbols were divided out (sympy then keeps a
    /// quotient of a sum unsimplified, so only a single-term solution is
    /// integral to it).
    pub(crate) fn without_content(&self, positive: &dyn Fn(SymbolId) -> bool) -> (IntExpr, bool) {
        let mut g: i64 = 0;
        let mut common: Option<Vec<(SymbolId, u32)>> = None;
        for (m, c) in &self.terms {
            g = gcd(g, *c);
            let syms: Vec<(SymbolId, u32)> = m
                .iter()
                .filter_map(|(a, p)| match a {
                    Atom::Symbol(x) if positive(*x) => Some((*x, *p)),
                    _ => None,
                })
                .collect();
            common = Some(match common {
                None => syms,
                Some(prev) => prev
                    .into_iter()
                    .filter_map(|(x, p)| {
                        syms.iter()
                            .find(|(y, _)| *y == x)
                            .map(|(_, q)| (x, p.min(*q)))
                    })
                    .collect(),
            });
        }
        let common = common.unwrap_or_default();
        if (g <= 1) && common.is_empty() {
            return (self.clone(), false);
        }
        let g = g.max(1);
        let mut out = BTreeMap::new();
        for (m, c) in &self.terms {
            if c % g != 0 {
                return (self.clone(), false);
            }
            let mono: Vec<(Atom, u32)> = m
                .iter()
                .filter_map(|(a, p)| {
                    let drop = match a {
                        Atom::Symbol(x) => {
                            common.iter().find(|(y, _)| y == x).map_or(0, |(_, q)| *q)
                        }
                        _ => 0,
                    };
                    (*p > drop).then(|| (a.clone(), *p - drop))
                })
                .collect();
            out.insert(Monomial::from(mono), c / g);
        }
        match IntExpr::finish(out) {
            Ok(e) => (e, !common.is_empty()),
            Err(_) => (self.clone(), false),
        }
    }

    /// Whether the expression is a single term (`c*m`, or a constant).
    pub(crate) fn is_single_term(&self) -> bool {
        self.terms.len() <= 1
    }

    /// Whether `o` is one term `c*m` that divides every term of `self`
    /// (coefficient and monomial), so that `Mod(self, o)` is 0 wherever
    /// it is defined (sympy: `Mod(s0*s1*s2, s0)` is `0`).
    fn is_multiple_of_term(&self, o: &IntExpr) -> bool {
        let mut it = o.terms.iter();
        let (Some((m, c)), None) = (it.next(), it.next()) else {
            return false;
        };
        if m.is_empty() {
            return false;
        }
        self.terms.iter().all(|(tm, tc)| {
            tc % c == 0
                && m.iter()
                    .all(|(a, p)| tm.iter().any(|(b, q)| b == a && q >= p))
        })
    }

    /// `k` when `self == k * o` for a constant `k` (both non-constant).
    fn constant_multiple_of(&self, o: &IntExpr) -> Option<i64> {
        if self.terms.len() != o.terms.len() || o.as_const().is_some() {
            return None;
        }
        let mut k = None;
        for ((m, c), (om, oc)) in self.terms.iter().zip(&o.terms) {
            if m != om || *oc == 0 || c % oc != 0 {
                return None;
            }
            let r = c / oc;
            if *k.get_or_insert(r) != r {
                return None;
            }
        }
        k
    }

    /// `self / o` for a one-term `o` of which [`is_multiple_of_term`] holds
    /// (every term's coefficient and monomial divisible by it).
    fn div_by_term(&self, o: &IntExpr) -> Option<IntExpr> {
        let (m, c) = o.terms.iter().next()?;
        let mut out = BTreeMap::new();
        for (tm, tc) in &self.terms {
            let mut rest: Vec<(Atom, u32)> = Vec::with_capacity(tm.len());
            for (b, q) in tm.iter() {
                let p = m.iter().find(|(a, _)| a == b).map_or(0, |(_, p)| *p);
                if *q > p {
                    rest.push((b.clone(), q - p));
                }
            }
            add_term(&mut out, Arc::from(rest), tc.checked_div(*c)?);
        }
        IntExpr::finish(out).ok()
    }

    /// Whether some atom, at any depth, satisfies `f`.
    pub(crate) fn has_atom(&self, f: &dyn Fn(&Atom) -> bool) -> bool {
        self.terms.keys().any(|m| {
            m.iter().any(|(a, _)| {
                f(a) || match a {
                    Atom::Symbol(_) => false,
                    Atom::Factor(x) => x.has_atom(f),
                    Atom::FloorDiv(x, y) | Atom::Mod(x, y) | Atom::Min(x, y) | Atom::Max(x, y) => {
                        x.has_atom(f) || y.has_atom(f)
                    }
                }
            })
        })
    }

    fn collect_symbols(&self, out: &mut Vec<SymbolId>) {
        for m in self.terms.keys() {
            for (a, _) in m.iter() {
                match a {
                    Atom::Symbol(s) => out.push(*s),
                    Atom::Factor(x) => x.collect_symbols(out),
                    Atom::FloorDiv(x, y) | Atom::Mod(x, y) | Atom::Min(x, y) | Atom::Max(x, y) => {
                        x.collect_symbols(out);
                        y.collect_symbols(out);
                    }
                }
            }
        }
    }

    /// Bounds of the expression when every symbol `s` lies in
    /// `range(s)`: PyTorch's static evaluation (`bound_sympy` after
    /// shifting each symbol by its lower bound and expanding). Each
    /// symbol `s ∈ [lo, hi]` is rewritten `lo + t` with `t ∈ [0, hi-lo]`,
    /// the polynomial is expanded (within the expansion budget: a
    /// monomial whose shifted expansion would be large is bounded as it
    /// stands), and the monomials are bounded by interval arithmetic; so
    /// `s0*s1 - 3` with `s0, s1 ≥ 2` is `≥ 1`.
    ///
    /// ```
    /// use c10_core::sym::expr::{Interval, IntExpr};
    /// let e = IntExpr::symbol(0).mul(&IntExpr::symbol(1))?.sub(&IntExpr::constant(3))?;
    /// let iv = e.bounds(&|_| Interval::at_least(2));
    /// assert_eq!(iv.lo, Some(1));
    /// assert_eq!(iv.hi, None);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn bounds(&self, range: &dyn Fn(SymbolId) -> Interval) -> Interval {
        // Shift top-level symbols with a finite lower bound: s = lo + t,
        // t >= 0, and expand. Other atoms stay opaque (their arguments are
        // bounded in the original symbols), so nothing is re-simplified
        // and the recursion only descends into strictly smaller terms.
        let shift_of = |s: SymbolId| {
            range(s)
                .lo
                .and_then(|l| i64::try_from(l).ok())
                .filter(|l| *l != 0)
        };
        self.bound_terms(range, &shift_of)
    }

    /// Bounds as sympy's assumptions give them (its `_monotonic_sign`)
    /// when the symbols for which `positive` holds are positive integers
    /// and nothing else is known: a single monomial `k*m` of positive
    /// symbols is at least `k` (for `k > 0`), a sum of several such
    /// monomials only positive (so `s0 + s1 + c` is decided for `c >= 0`
    /// only); any other term leaves the expression unbounded.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let e = IntExpr::symbol(0).mul(&IntExpr::symbol(1))?.sub(&IntExpr::constant(1))?;
    /// assert_eq!(e.positive_bounds(&|_| true).lo, Some(0));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn positive_bounds(&self, positive: &dyn Fn(SymbolId) -> bool) -> Interval {
        let mut c: i128 = 0;
        let mut sign: i64 = 0;
        let mut count = 0usize;
        let mut k: i128 = 0;
        // One `Min`/`Max` term (sympy's `MinMaxBase` signs): its
        // arguments' bounds, scaled.
        let mut rest = self.terms.iter().filter(|(m, _)| !m.is_empty());
        if let (Some((m, k)), None) = (rest.next(), rest.next()) {
            if let [(atom @ (Atom::Min(a, b) | Atom::Max(a, b)), 1)] = &m[..] {
                let (ia, ib) = (a.positive_bounds(positive), b.positive_bounds(positive));
                let iv = if matches!(atom, Atom::Min(..)) {
                    ia.min(&ib)
                } else {
                    ia.max(&ib)
                };
                let c0 = self.terms.get(&unit()).copied().unwrap_or(0);
                return Interval::point(i128::from(*k))
                    .mul(&iv)
                    .add(&Interval::point(i128::from(c0)));
            }
        }
        for (m, coef) in &self.terms {
            if m.is_empty() {
                c = i128::from(*coef);
                continue;
            }
            let all_positive = m
                .iter()
                .all(|(a, _)| matches!(a, Atom::Symbol(s) if positive(*s)));
            if !all_positive || (sign != 0 && coef.signum() != sign) {
                return Interval::unbounded();
            }
            sign = coef.signum();
            count += 1;
            k = i128::from(*coef);
        }
        match (count, sign > 0) {
            (0, _) => Interval::point(c),
            (1, true) => Interval::at_least(c.saturating_add(k)),
            (1, false) => Interval {
                lo: None,
                hi: Some(c.saturating_add(k)),
            },
            (_, true) if c >= 0 => Interval::at_least(c.saturating_add(1)),
            (_, false) if c <= 0 => Interval {
                lo: None,
                hi: Some(c.saturating_sub(1)),
            },
            _ => Interval::unbounded(),
        }
    }

    /// The shifted expansion of `c * m` (each symbol `s` with a non-zero
    /// lower bound `lo` replaced by `s + lo`), or `None` when it would be
    /// too large.
    fn shift_monomial(
        m: &Monomial,
        c: i64,
        shift_of: &dyn Fn(SymbolId) -> Option<i64>,
    ) -> Option<IntExpr> {
        // The expansion has the product of (p + 1) over the shifted
        // symbols' powers as its term count; bail out early when large.
        let mut count: u64 = 1;
        for (a, p) in m.iter() {
            if let Atom::Symbol(s) = a {
                if shift_of(*s).is_some() {
                    count = count.saturating_mul(u64::from(*p).saturating_add(1));
                }
            }
        }
        if count > EXPAND_PAIRS as u64 {
            return None;
        }
        let mut t = IntExpr::constant(c);
        for (a, p) in m.iter() {
            let fp = match a {
                Atom::Symbol(s) if shift_of(*s).is_some() => {
                    let lo = shift_of(*s)?;
                    let f = IntExpr::symbol(*s).add(&IntExpr::constant(lo)).ok()?;
                    // Expanded fully: the count above bounds `p`.
                    let mut fp = IntExpr::constant(1);
                    for _ in 0..*p {
                        fp = fp.mul_expanded(&f).ok()?;
                    }
                    fp
                }
                // One atom: its power is one monomial.
                Atom::Symbol(s) => IntExpr::symbol(*s).pow(*p).ok()?,
                other => IntExpr::atom(other.clone()).ok()?.pow(*p).ok()?,
            };
            t = t.mul_expanded(&fp).ok()?;
        }
        Some(t)
    }

    /// `self * o` always expanded (callers bound the size).
    fn mul_expanded(&self, o: &IntExpr) -> Result<IntExpr> {
        let mut terms = BTreeMap::new();
        for (ma, ca) in &self.terms {
            for (mb, cb) in &o.terms {
                add_term(&mut terms, mono_mul(ma, mb)?, ca.wrapping_mul(*cb));
            }
        }
        IntExpr::finish(terms)
    }

    /// Bounds of the sum: monomials whose shifted expansion is small are
    /// shifted, expanded and summed first (so that terms cancel, as in
    /// PyTorch's expand step); the others are bounded as they stand.
    fn bound_terms(
        &self,
        range: &dyn Fn(SymbolId) -> Interval,
        shift_of: &dyn Fn(SymbolId) -> Option<i64>,
    ) -> Interval {
        let mut shifted = BTreeMap::new();
        let mut total = Interval::point(0);
        for (m, c) in &self.terms {
            match IntExpr::shift_monomial(m, *c, shift_of) {
                Some(t) => {
                    for (tm, tc) in t.terms {
                        add_term(&mut shifted, tm, tc);
                    }
                }
                None => total = total.add(&IntExpr::bound_monomial(m, *c, range, false)),
            }
        }
        for (m, c) in &shifted {
            total = total.add(&IntExpr::bound_monomial(m, *c, range, true));
        }
        total
    }

    /// Interval bounds of `c * m`. With `shifted`, a symbol with a finite
    /// lower bound stands for `s - lo` (range `[0, hi - lo]`).
    fn bound_monomial(
        m: &Monomial,
        c: i64,
        range: &dyn Fn(SymbolId) -> Interval,
        shifted: bool,
    ) -> Interval {
        let mut t = Interval::point(i128::from(c));
        for (a, p) in m.iter() {
            let iv = match a {
                Atom::Symbol(s) => {
                    let r = range(*s);
                    match r.lo {
                        Some(lo) if shifted && i64::try_from(lo).is_ok() => Interval {
                            lo: Some(0),
                            hi: r.hi.map(|h| h.saturating_sub(lo)),
                        },
                        _ => r,
                    }
                }
                other => other.bounds(range),
            };
            t = t.mul(&iv.pow(*p));
        }
        t
    }
}

impl Atom {
    /// Whether the atom is, or has an argument mentioning, symbol `s`.
    fn mentions(&self, s: SymbolId) -> bool {
        match self {
            Atom::Symbol(x) => *x == s,
            Atom::Factor(x) => x.free_symbols().contains(&s),
            Atom::FloorDiv(x, y) | Atom::Mod(x, y) | Atom::Min(x, y) | Atom::Max(x, y) => {
                x.free_symbols().contains(&s) || y.free_symbols().contains(&s)
            }
        }
    }

    fn eval(&self, value: &dyn Fn(SymbolId) -> Option<i64>) -> Option<i64> {
        match self {
            Atom::Symbol(s) => value(*s),
            Atom::Factor(x) => x.eval(value),
            Atom::FloorDiv(a, b) => py_floordiv(a.eval(value)?, b.eval(value)?),
            Atom::Mod(a, b) => py_mod(a.eval(value)?, b.eval(value)?),
            Atom::Min(a, b) => Some(a.eval(value)?.min(b.eval(value)?)),
            Atom::Max(a, b) => Some(a.eval(value)?.max(b.eval(value)?)),
        }
    }

    fn try_subst(&self, f: &dyn Fn(SymbolId) -> Option<IntExpr>) -> Result<IntExpr> {
        // A divisor that became 0 cannot occur for a valid assignment;
        // keep the expression total by folding to 0.
        let zero = |r: Option<IntExpr>| r.unwrap_or_default();
        match self {
            Atom::Symbol(s) => Ok(f(*s).unwrap_or_else(|| IntExpr::symbol(*s))),
            Atom::Factor(x) => x.try_subst(f),
            Atom::FloorDiv(a, b) => a.try_subst(f)?.floordiv_opt(&b.try_subst(f)?).map(zero),
            Atom::Mod(a, b) => a.try_subst(f)?.modulo_opt(&b.try_subst(f)?).map(zero),
            Atom::Min(a, b) => a.try_subst(f)?.sym_min(&b.try_subst(f)?),
            Atom::Max(a, b) => a.try_subst(f)?.sym_max(&b.try_subst(f)?),
        }
    }

    /// Bounds of one non-symbol atom from its arguments' bounds.
    fn bounds(&self, range: &dyn Fn(SymbolId) -> Interval) -> Interval {
        match self {
            Atom::Symbol(s) => range(*s),
            Atom::Factor(x) => x.bounds(range),
            Atom::FloorDiv(x, y) => x.bounds(range).floordiv(&y.bounds(range)),
            Atom::Mod(x, y) => x.bounds(range).modulo(&y.bounds(range)),
            Atom::Min(x, y) => x.bounds(range).min(&y.bounds(range)),
            Atom::Max(x, y) => x.bounds(range).max(&y.bounds(range)),
        }
    }
}

/// An integer interval; `None` bounds are infinite.
///
/// ```
/// use c10_core::sym::expr::Interval;
/// let a = Interval::at_least(2);
/// assert_eq!(a.mul(&a).lo, Some(4));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    /// Lower bound (`None`: −∞).
    pub lo: Option<i128>,
    /// Upper bound (`None`: +∞).
    pub hi: Option<i128>,
}

/// An extended integer for interval arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ext {
    NegInf,
    Fin(i128),
    PosInf,
}

impl Ext {
    fn mul(self, o: Ext) -> Ext {
        use Ext::*;
        let sign = |e: Ext| match e {
            NegInf => -1,
            PosInf => 1,
            Fin(v) => v.signum(),
        };
        match (self, o) {
            (Fin(a), Fin(b)) => a.checked_mul(b).map(Fin).unwrap_or(if (a < 0) != (b < 0) {
                NegInf
            } else {
                PosInf
            }),
            _ => match sign(self) * sign(o) {
                0 => Fin(0),
                s if s > 0 => PosInf,
                _ => NegInf,
            },
        }
    }
}

impl Interval {
    /// `[v, v]`.
    ///
    /// ```
    /// assert_eq!(c10_core::sym::expr::Interval::point(3).hi, Some(3));
    /// ```
    pub fn point(v: i128) -> Interval {
        Interval {
            lo: Some(v),
            hi: Some(v),
        }
    }

    /// `[lo, +∞)`.
    ///
    /// ```
    /// assert_eq!(c10_core::sym::expr::Interval::at_least(2).lo, Some(2));
    /// ```
    pub fn at_least(lo: i128) -> Interval {
        Interval {
            lo: Some(lo),
            hi: None,
        }
    }

    /// `(−∞, +∞)`.
    ///
    /// ```
    /// assert_eq!(c10_core::sym::expr::Interval::unbounded().lo, None);
    /// ```
    pub fn unbounded() -> Interval {
        Interval { lo: None, hi: None }
    }

    fn lo_ext(&self) -> Ext {
        self.lo.map_or(Ext::NegInf, Ext::Fin)
    }
    fn hi_ext(&self) -> Ext {
        self.hi.map_or(Ext::PosInf, Ext::Fin)
    }
    /// From extended bounds. A lower bound of +∞ (a value too large for
    /// `i128`) is kept as `i128::MAX`, and an upper bound of −∞ as
    /// `i128::MIN`: still true bounds, and they keep the sign known.
    fn from_ext(lo: Ext, hi: Ext) -> Interval {
        Interval {
            lo: match lo {
                Ext::Fin(v) => Some(v),
                Ext::PosInf => Some(i128::MAX),
                Ext::NegInf => None,
            },
            hi: match hi {
                Ext::Fin(v) => Some(v),
                Ext::NegInf => Some(i128::MIN),
                Ext::PosInf => None,
            },
        }
    }

    /// Interval sum.
    ///
    /// ```
    /// use c10_core::sym::expr::Interval;
    /// assert_eq!(Interval::point(1).add(&Interval::at_least(2)).lo, Some(3));
    /// ```
    pub fn add(&self, o: &Interval) -> Interval {
        Interval {
            lo: match (self.lo, o.lo) {
                (Some(a), Some(b)) => a.checked_add(b),
                _ => None,
            },
            hi: match (self.hi, o.hi) {
                (Some(a), Some(b)) => a.checked_add(b),
                _ => None,
            },
        }
    }

    /// Interval product.
    ///
    /// ```
    /// use c10_core::sym::expr::Interval;
    /// assert_eq!(Interval::point(-1).mul(&Interval::at_least(2)).hi, Some(-2));
    /// ```
    pub fn mul(&self, o: &Interval) -> Interval {
        let c = [
            self.lo_ext().mul(o.lo_ext()),
            self.lo_ext().mul(o.hi_ext()),
            self.hi_ext().mul(o.lo_ext()),
            self.hi_ext().mul(o.hi_ext()),
        ];
        let lo = c.iter().copied().min().unwrap_or(Ext::NegInf);
        let hi = c.iter().copied().max().unwrap_or(Ext::PosInf);
        Interval::from_ext(lo, hi)
    }

    /// `self ** p` exactly (an even power of an interval containing 0
    /// starts at 0), by squaring; a bound that overflows is infinite.
    ///
    /// ```
    /// use c10_core::sym::expr::Interval;
    /// let iv = Interval { lo: Some(-2), hi: Some(3) };
    /// assert_eq!(iv.pow(2), Interval { lo: Some(0), hi: Some(9) });
    /// assert_eq!(iv.pow(3), Interval { lo: Some(-8), hi: Some(27) });
    /// // Too big for i128, but still known to be positive and huge.
    /// assert_eq!(Interval::at_least(2).pow(u32::MAX).lo, Some(i128::MAX));
    /// ```
    pub fn pow(&self, p: u32) -> Interval {
        if p == 0 {
            return Interval::point(1);
        }
        if p == 1 {
            return *self;
        }
        let pw = |e: Ext| match e {
            Ext::Fin(v) => v
                .checked_pow(p)
                .map(Ext::Fin)
                .unwrap_or(if v < 0 && p % 2 == 1 {
                    Ext::NegInf
                } else {
                    Ext::PosInf
                }),
            Ext::NegInf if p % 2 == 1 => Ext::NegInf,
            _ => Ext::PosInf,
        };
        let (lo, hi) = (self.lo_ext(), self.hi_ext());
        if p % 2 == 1 || lo >= Ext::Fin(0) {
            // Monotone: odd powers everywhere, any power on [0, ∞).
            Interval::from_ext(pw(lo), pw(hi))
        } else if hi <= Ext::Fin(0) {
            // Even power of non-positive numbers: decreasing.
            Interval::from_ext(pw(hi), pw(lo))
        } else {
            Interval::from_ext(Ext::Fin(0), pw(lo).max(pw(hi)))
        }
    }

    fn floordiv(&self, d: &Interval) -> Interval {
        // Only positive divisors are bounded (sizes); anything else is
        // unbounded, which merely prevents a static decision.
        match d.lo {
            Some(dl) if dl > 0 => {
                let div = |n: Ext, by: Ext| match (n, by) {
                    (Ext::Fin(a), Ext::Fin(b)) => Ext::Fin(a.div_euclid(b)),
                    // a finite numerator over an unbounded divisor
                    (Ext::Fin(a), _) => Ext::Fin(if a >= 0 { 0 } else { -1 }),
                    (inf, _) => inf,
                };
                let lo = if self.lo_ext() >= Ext::Fin(0) {
                    div(self.lo_ext(), d.hi_ext())
                } else {
                    div(self.lo_ext(), Ext::Fin(dl))
                };
                let hi = if self.hi_ext() >= Ext::Fin(0) {
                    div(self.hi_ext(), Ext::Fin(dl))
                } else {
                    div(self.hi_ext(), d.hi_ext())
                };
                Interval::from_ext(lo.min(hi), hi)
            }
            _ => Interval::unbounded(),
        }
    }

    fn modulo(&self, d: &Interval) -> Interval {
        match (d.lo, self.lo) {
            (Some(dl), lo) if dl > 0 => {
                let hi = d.hi.map(|h| h - 1);
                let hi = match (hi, self.hi, lo) {
                    (Some(h), Some(n), Some(l)) if l >= 0 => Some(h.min(n)),
                    (None, Some(n), Some(l)) if l >= 0 => Some(n),
                    (h, _, _) => h,
                };
                Interval { lo: Some(0), hi }
            }
            _ => Interval::unbounded(),
        }
    }

    fn min(&self, o: &Interval) -> Interval {
        Interval::from_ext(self.lo_ext().min(o.lo_ext()), self.hi_ext().min(o.hi_ext()))
    }

    fn max(&self, o: &Interval) -> Interval {
        Interval::from_ext(self.lo_ext().max(o.lo_ext()), self.hi_ext().max(o.hi_ext()))
    }
}

/// A relation between two integer expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RelOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl RelOp {
    fn negate(self) -> RelOp {
        match self {
            RelOp::Eq => RelOp::Ne,
            RelOp::Ne => RelOp::Eq,
            RelOp::Lt => RelOp::Ge,
            RelOp::Le => RelOp::Gt,
            RelOp::Gt => RelOp::Le,
            RelOp::Ge => RelOp::Lt,
        }
    }

    fn holds(self, a: i64, b: i64) -> bool {
        match self {
            RelOp::Eq => a == b,
            RelOp::Ne => a != b,
            RelOp::Lt => a < b,
            RelOp::Le => a <= b,
            RelOp::Gt => a > b,
            RelOp::Ge => a >= b,
        }
    }

    /// Decides `d OP 0` from bounds of `d`, when the bounds suffice.
    fn decide(self, d: &Interval) -> Option<bool> {
        let (lo, hi) = (d.lo, d.hi);
        let pos = lo.is_some_and(|l| l > 0);
        let neg = hi.is_some_and(|h| h < 0);
        let nonneg = lo.is_some_and(|l| l >= 0);
        let nonpos = hi.is_some_and(|h| h <= 0);
        let zero = lo == Some(0) && hi == Some(0);
        match self {
            RelOp::Eq if zero => Some(true),
            RelOp::Eq if pos || neg => Some(false),
            RelOp::Ne if zero => Some(false),
            RelOp::Ne if pos || neg => Some(true),
            RelOp::Lt if neg => Some(true),
            RelOp::Lt if nonneg => Some(false),
            RelOp::Le if nonpos => Some(true),
            RelOp::Le if pos => Some(false),
            RelOp::Gt if pos => Some(true),
            RelOp::Gt if nonpos => Some(false),
            RelOp::Ge if nonneg => Some(true),
            RelOp::Ge if neg => Some(false),
            _ => None,
        }
    }
}

/// A boolean expression over integer relations.
///
/// The operands of `And`, `Or` and `Not` are a [`BoolTerms`], which only
/// the checked constructors ([`BoolExpr::and`], [`BoolExpr::or`],
/// [`BoolExpr::not`]) make, so every boolean expression stays within the
/// nesting and size budgets of [`IntExpr`].
///
/// ```
/// use c10_core::sym::expr::{BoolExpr, IntExpr, RelOp};
/// let s = IntExpr::symbol(0);
/// let b = BoolExpr::rel(RelOp::Eq, &s.modulo(&IntExpr::constant(8))?, &IntExpr::constant(0));
/// assert_eq!(b.to_string(), "Eq(Mod(s0, 8), 0)");
/// assert_eq!(b.eval(&|_| Some(16)), Some(true));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BoolExpr {
    /// `true` / `false`.
    Const(bool),
    /// `lhs OP rhs`.
    Rel(RelOp, IntExpr, IntExpr),
    /// All of these.
    And(BoolTerms),
    /// Any of these.
    Or(BoolTerms),
    /// Negation of the one term held.
    Not(BoolTerms),
}

/// The operands of a junction or negation: shared, measured, and made
/// only by [`BoolExpr`]'s checked constructors. Reads as a slice.
///
/// ```
/// use c10_core::sym::expr::{BoolExpr, IntExpr, RelOp};
/// let a = BoolExpr::rel(RelOp::Lt, &IntExpr::symbol(0), &IntExpr::constant(4));
/// let b = BoolExpr::rel(RelOp::Gt, &IntExpr::symbol(1), &IntExpr::constant(2));
/// let BoolExpr::And(terms) = a.and(&b)? else { unreachable!() };
/// assert_eq!(terms.len(), 2);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BoolTerms {
    items: Arc<[BoolExpr]>,
    depth: u32,
    size: u64,
}

impl std::ops::Deref for BoolTerms {
    type Target = [BoolExpr];
    fn deref(&self) -> &[BoolExpr] {
        &self.items
    }
}

/// A boolean expression may hold a few integer expressions of the
/// largest size.
const MAX_BOOL_SIZE: u64 = 4 * MAX_SIZE;

impl BoolTerms {
    fn new(items: Vec<BoolExpr>) -> Result<BoolTerms> {
        let mut depth = 0;
        let mut size: u64 = 1;
        for x in &items {
            depth = depth.max(x.depth());
            size = size.saturating_add(x.size());
        }
        let depth = depth + 1;
        if depth > MAX_DEPTH {
            return Err(too_deep(depth));
        }
        if size > MAX_BOOL_SIZE {
            return Err(too_big(size));
        }
        Ok(BoolTerms {
            items: items.into(),
            depth,
            size,
        })
    }
}

impl BoolExpr {
    /// Nesting depth (junctions and negations, plus the deepest integer
    /// expression); at most [`MAX_DEPTH`].
    ///
    /// ```
    /// use c10_core::sym::expr::{BoolExpr, IntExpr, RelOp};
    /// let a = BoolExpr::rel(RelOp::Lt, &IntExpr::symbol(0), &IntExpr::constant(4));
    /// assert_eq!(a.depth(), 0);
    /// assert_eq!(a.not()?.depth(), 0);
    /// let b = BoolExpr::rel(RelOp::Gt, &IntExpr::symbol(1), &IntExpr::constant(2));
    /// assert_eq!(a.or(&b)?.depth(), 1);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn depth(&self) -> u32 {
        match self {
            BoolExpr::Const(_) => 0,
            BoolExpr::Rel(_, a, b) => a.depth.max(b.depth),
            BoolExpr::And(t) | BoolExpr::Or(t) | BoolExpr::Not(t) => t.depth,
        }
    }

    /// Node count, through the integer expressions.
    ///
    /// ```
    /// use c10_core::sym::expr::{BoolExpr, IntExpr, RelOp};
    /// let a = BoolExpr::rel(RelOp::Lt, &IntExpr::symbol(0), &IntExpr::constant(4));
    /// assert_eq!(a.size(), 4);
    /// ```
    pub fn size(&self) -> u64 {
        match self {
            BoolExpr::Const(_) => 1,
            BoolExpr::Rel(_, a, b) => a.size.saturating_add(b.size).saturating_add(1),
            BoolExpr::And(t) | BoolExpr::Or(t) | BoolExpr::Not(t) => t.size,
        }
    }

    /// `lhs OP rhs`, folded to a constant when both sides are constants
    /// or structurally equal.
    ///
    /// ```
    /// use c10_core::sym::expr::{BoolExpr, IntExpr, RelOp};
    /// let s = IntExpr::symbol(0);
    /// assert_eq!(BoolExpr::rel(RelOp::Eq, &s, &s), BoolExpr::Const(true));
    /// ```
    pub fn rel(op: RelOp, lhs: &IntExpr, rhs: &IntExpr) -> BoolExpr {
        match lhs.sub(rhs).ok().and_then(|d| d.as_const()) {
            Some(d) => BoolExpr::Const(op.holds(d, 0)),
            None => BoolExpr::Rel(op, lhs.clone(), rhs.clone()),
        }
    }

    /// One spelling of a fact, so that the same fact written two ways is
    /// recognised (PyTorch's `canonicalize_bool_expr`): every relation
    /// becomes `d <= 0` (integers: `a < b` is `a - b + 1 <= 0`) or
    /// `Eq(d, 0)` / `Ne(d, 0)` with the sign of `d` normalised; a negated
    /// relation is the opposite relation.
    pub(crate) fn canonical(&self) -> BoolExpr {
        // The integer content (the gcd of every coefficient, constant
        // included) divided out, as sympy does: `Eq(2*u3 - 10*(u3//5), 0)`
        // and `Eq(u3 - 5*(u3//5), 0)` are one fact.
        let reduce = |d: IntExpr| d.without_content(&|_| false).0;
        let le = |a: &IntExpr, b: &IntExpr, plus: i64| -> Option<BoolExpr> {
            let d = reduce(a.sub(b).ok()?.add(&IntExpr::constant(plus)).ok()?);
            Some(BoolExpr::rel(RelOp::Le, &d, &IntExpr::constant(0)))
        };
        let out = match self {
            BoolExpr::Rel(op, a, b) => match op {
                RelOp::Le => le(a, b, 0),
                RelOp::Lt => le(a, b, 1),
                RelOp::Ge => le(b, a, 0),
                RelOp::Gt => le(b, a, 1),
                RelOp::Eq | RelOp::Ne => a.sub(b).ok().map(|d| {
                    let d = reduce(d);
                    let n = d.neg();
                    BoolExpr::rel(*op, if n < d { &n } else { &d }, &IntExpr::constant(0))
                }),
            },
            BoolExpr::Not(x) => match x.first() {
                Some(r @ BoolExpr::Rel(..)) => r.not().ok().map(|n| n.canonical()),
                _ => None,
            },
            _ => None,
        };
        out.unwrap_or_else(|| self.clone())
    }

    /// The constant, if the expression is one.
    ///
    /// ```
    /// assert_eq!(c10_core::sym::expr::BoolExpr::Const(true).as_const(), Some(true));
    /// ```
    pub fn as_const(&self) -> Option<bool> {
        match self {
            BoolExpr::Const(b) => Some(*b),
            _ => None,
        }
    }

    /// Conjunction, folding constants.
    ///
    /// ```
    /// use c10_core::sym::expr::BoolExpr;
    /// assert_eq!(BoolExpr::Const(true).and(&BoolExpr::Const(false))?, BoolExpr::Const(false));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn and(&self, o: &BoolExpr) -> Result<BoolExpr> {
        self.junction(o, false)
    }

    /// Disjunction, folding constants.
    ///
    /// ```
    /// use c10_core::sym::expr::BoolExpr;
    /// assert_eq!(BoolExpr::Const(false).or(&BoolExpr::Const(true))?, BoolExpr::Const(true));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn or(&self, o: &BoolExpr) -> Result<BoolExpr> {
        self.junction(o, true)
    }

    /// `and` (`absorbing` false) or `or` (`absorbing` true): the absorbing
    /// constant wins, the other one drops out, and nested junctions of the
    /// same kind are flattened.
    fn junction(&self, o: &BoolExpr, absorbing: bool) -> Result<BoolExpr> {
        Ok(match (self.as_const(), o.as_const()) {
            (Some(c), _) | (_, Some(c)) if c == absorbing => BoolExpr::Const(absorbing),
            (Some(_), _) => o.clone(),
            (_, Some(_)) => self.clone(),
            _ => {
                let mut v = Vec::new();
                for x in [self, o] {
                    match (x, absorbing) {
                        (BoolExpr::And(xs), false) | (BoolExpr::Or(xs), true) => {
                            v.extend(xs.iter().cloned())
                        }
                        (x, _) => v.push(x.clone()),
                    }
                }
                let terms = BoolTerms::new(v)?;
                if absorbing {
                    BoolExpr::Or(terms)
                } else {
                    BoolExpr::And(terms)
                }
            }
        })
    }

    /// Negation; a relation is negated by flipping its operator (so
    /// `Not(Eq(a, b))` prints `Ne(a, b)`, as in sympy).
    ///
    /// ```
    /// use c10_core::sym::expr::{BoolExpr, IntExpr, RelOp};
    /// let b = BoolExpr::rel(RelOp::Lt, &IntExpr::symbol(0), &IntExpr::constant(4));
    /// assert_eq!(b.not()?.to_string(), "s0 >= 4");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn not(&self) -> Result<BoolExpr> {
        Ok(match self {
            BoolExpr::Const(b) => BoolExpr::Const(!b),
            BoolExpr::Rel(op, a, b) => BoolExpr::Rel(op.negate(), a.clone(), b.clone()),
            BoolExpr::Not(x) => match x.first() {
                Some(inner) => inner.clone(),
                None => BoolExpr::Const(true),
            },
            x => BoolExpr::Not(BoolTerms::new(vec![x.clone()])?),
        })
    }

    /// The truth value under an assignment (`None` if some integer
    /// sub-expression has no value).
    ///
    /// ```
    /// use c10_core::sym::expr::{BoolExpr, IntExpr, RelOp};
    /// let b = BoolExpr::rel(RelOp::Ge, &IntExpr::symbol(0), &IntExpr::constant(4));
    /// assert_eq!(b.eval(&|_| Some(3)), Some(false));
    /// ```
    pub fn eval(&self, value: &dyn Fn(SymbolId) -> Option<i64>) -> Option<bool> {
        match self {
            BoolExpr::Const(b) => Some(*b),
            BoolExpr::Rel(op, a, b) => Some(op.holds(a.eval(value)?, b.eval(value)?)),
            BoolExpr::And(xs) => {
                let mut all = true;
                for x in xs.iter() {
                    all &= x.eval(value)?;
                }
                Some(all)
            }
            BoolExpr::Or(xs) => {
                let mut any = false;
                for x in xs.iter() {
                    any |= x.eval(value)?;
                }
                Some(any)
            }
            BoolExpr::Not(x) => {
                let mut all = true;
                for x in x.iter() {
                    all &= x.eval(value)?;
                }
                Some(!all)
            }
        }
    }

    /// Rebuilds with symbols substituted (see [`IntExpr::subst`]),
    /// folding what becomes constant (and, like it, returning the
    /// expression unchanged should the rebuilt one exceed a budget).
    ///
    /// ```
    /// use c10_core::sym::expr::{BoolExpr, IntExpr, RelOp};
    /// let b = BoolExpr::rel(RelOp::Eq, &IntExpr::symbol(0), &IntExpr::constant(4));
    /// assert_eq!(b.subst(&|_| Some(IntExpr::constant(4))), BoolExpr::Const(true));
    /// ```
    pub fn subst(&self, f: &dyn Fn(SymbolId) -> Option<IntExpr>) -> BoolExpr {
        self.try_subst(f).unwrap_or_else(|_| self.clone())
    }

    fn try_subst(&self, f: &dyn Fn(SymbolId) -> Option<IntExpr>) -> Result<BoolExpr> {
        match self {
            BoolExpr::Const(b) => Ok(BoolExpr::Const(*b)),
            BoolExpr::Rel(op, a, b) => Ok(BoolExpr::rel(*op, &a.try_subst(f)?, &b.try_subst(f)?)),
            BoolExpr::And(xs) => xs
                .iter()
                .try_fold(BoolExpr::Const(true), |acc, x| acc.and(&x.try_subst(f)?)),
            BoolExpr::Or(xs) => xs
                .iter()
                .try_fold(BoolExpr::Const(false), |acc, x| acc.or(&x.try_subst(f)?)),
            BoolExpr::Not(x) => x
                .iter()
                .try_fold(BoolExpr::Const(true), |acc, x| acc.and(&x.try_subst(f)?))?
                .not(),
        }
    }

    /// Decides the expression from symbol ranges alone, when they
    /// suffice (PyTorch's `_maybe_evaluate_static`); `None` otherwise.
    ///
    /// ```
    /// use c10_core::sym::expr::{BoolExpr, Interval, IntExpr, RelOp};
    /// let s = IntExpr::symbol(0);
    /// let b = BoolExpr::rel(RelOp::Eq, &s, &IntExpr::constant(1));
    /// assert_eq!(b.decide_static(&|_| Interval::at_least(2)), Some(false));
    /// ```
    pub fn decide_static(&self, range: &dyn Fn(SymbolId) -> Interval) -> Option<bool> {
        self.decide_by(&|d: &IntExpr| d.bounds(range))
    }

    /// What sympy decides on creating the relation when the symbols for
    /// which `positive` holds were created `positive=True, integer=True`
    /// (PyTorch's size symbols, even with a range `[0, ∞)`): see
    /// [`IntExpr::positive_bounds`]. PyTorch decides these statically
    /// with `specialize_zero_one=False`, as if no size could be 0.
    ///
    /// ```
    /// use c10_core::sym::expr::{BoolExpr, IntExpr, RelOp};
    /// let n = IntExpr::symbol(0).mul(&IntExpr::symbol(1))?;
    /// let z = IntExpr::constant(0);
    /// assert_eq!(BoolExpr::rel(RelOp::Eq, &n, &z).decide_positive(&|_| true), Some(false));
    /// let two = IntExpr::symbol(0).add(&IntExpr::symbol(1))?;
    /// let one = IntExpr::constant(1);
    /// assert_eq!(BoolExpr::rel(RelOp::Ge, &two, &one).decide_positive(&|_| true), None);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn decide_positive(&self, positive: &dyn Fn(SymbolId) -> bool) -> Option<bool> {
        self.decide_by(&|d: &IntExpr| d.positive_bounds(positive))
    }

    /// Decides the relations by the bounds `bound` gives their
    /// differences (`lhs - rhs`).
    fn decide_by(&self, bound: &dyn Fn(&IntExpr) -> Interval) -> Option<bool> {
        match self {
            BoolExpr::Const(b) => Some(*b),
            BoolExpr::Rel(op, a, b) => op.decide(&bound(&a.sub(b).ok()?)),
            BoolExpr::And(xs) => BoolExpr::decide_junction(xs, bound, false),
            BoolExpr::Or(xs) => BoolExpr::decide_junction(xs, bound, true),
            BoolExpr::Not(x) => BoolExpr::decide_junction(x, bound, false).map(|b| !b),
        }
    }

    /// [`decide_static`](Self::decide_static) of a conjunction (`absorbing`
    /// false) or a disjunction (`absorbing` true): decided as soon as one
    /// term is the absorbing value, else once every term is decided.
    fn decide_junction(
        xs: &[BoolExpr],
        bound: &dyn Fn(&IntExpr) -> Interval,
        absorbing: bool,
    ) -> Option<bool> {
        let mut unknown = false;
        for x in xs {
            match x.decide_by(bound) {
                Some(b) if b == absorbing => return Some(absorbing),
                None => unknown = true,
                Some(_) => {}
            }
        }
        (!unknown).then_some(!absorbing)
    }

    /// Every symbol mentioned, sorted, once.
    ///
    /// ```
    /// use c10_core::sym::expr::{BoolExpr, IntExpr, RelOp};
    /// let b = BoolExpr::rel(RelOp::Lt, &IntExpr::symbol(2), &IntExpr::symbol(1));
    /// assert_eq!(b.free_symbols(), vec![1, 2]);
    /// ```
    pub fn free_symbols(&self) -> Vec<SymbolId> {
        let mut out = Vec::new();
        self.collect_symbols(&mut out);
        sorted_unique(out)
    }

    fn collect_symbols(&self, out: &mut Vec<SymbolId>) {
        match self {
            BoolExpr::Const(_) => {}
            BoolExpr::Rel(_, a, b) => {
                a.collect_symbols(out);
                b.collect_symbols(out);
            }
            BoolExpr::And(xs) | BoolExpr::Or(xs) | BoolExpr::Not(xs) => {
                xs.iter().for_each(|x| x.collect_symbols(out))
            }
        }
    }
}

// ---- printing (sympy's `str`, close enough to read side by side) ----

fn fmt_monomial(m: &Monomial, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    for (i, (a, p)) in m.iter().enumerate() {
        if i > 0 {
            f.write_str("*")?;
        }
        write!(f, "{a}")?;
        if *p > 1 {
            write!(f, "**{p}")?;
        }
    }
    Ok(())
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Atom::Symbol(s) => write!(f, "s{s}"),
            Atom::FloorDiv(a, b) => write!(f, "(({a})//{})", Paren(b)),
            Atom::Factor(x) => write!(f, "({x})"),
            Atom::Mod(a, b) => write!(f, "Mod({a}, {b})"),
            Atom::Min(a, b) => write!(f, "Min({a}, {b})"),
            Atom::Max(a, b) => write!(f, "Max({a}, {b})"),
        }
    }
}

/// Prints a divisor, parenthesised unless it is a single atom or a
/// non-negative constant (so that the printed text parses back, with
/// Python's precedence, to the same value).
struct Paren<'a>(&'a IntExpr);

impl IntExpr {
    /// Whether the expression prints as one operand that binds tighter
    /// than `*` and `/` on its right: a non-negative constant or one atom.
    pub(crate) fn prints_bare(&self) -> bool {
        match self.as_const() {
            Some(c) => c >= 0,
            None => matches!(
                self.terms.iter().next(),
                Some((m, 1)) if self.terms.len() == 1 && m.len() == 1 && m[0].1 == 1
            ),
        }
    }

    /// Whether the expression prints as a sum of several terms (which
    /// needs parentheses as the left operand of `*` or `/`).
    pub(crate) fn prints_as_sum(&self) -> bool {
        self.terms.len() > 1
    }
}

impl fmt::Display for Paren<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Bare: a non-negative constant or one atom. Anything else (a sum,
        // a product, a coefficient) would bind wrongly after `//`.
        if !self.0.prints_bare() {
            write!(f, "({})", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

impl fmt::Display for IntExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.terms.is_empty() {
            return f.write_str("0");
        }
        // sympy prints the constant term last; BTreeMap puts the empty
        // monomial first, so visit it at the end. Higher-degree terms
        // first reads more naturally.
        let mut terms: Vec<(&Monomial, &i64)> =
            self.terms.iter().filter(|(m, _)| !m.is_empty()).collect();
        terms.sort_by(|a, b| {
            let deg = |m: &Monomial| m.iter().map(|(_, p)| *p).sum::<u32>();
            deg(b.0).cmp(&deg(a.0)).then(a.0.cmp(b.0))
        });
        let c0 = self.constant_term();
        let mut first = true;
        for (m, c) in terms {
            let (neg, mag) = (*c < 0, c.unsigned_abs());
            match (first, neg) {
                (true, true) => f.write_str("-")?,
                (false, true) => f.write_str(" - ")?,
                (false, false) => f.write_str(" + ")?,
                (true, false) => {}
            }
            if mag != 1 {
                write!(f, "{mag}*")?;
            }
            fmt_monomial(m, f)?;
            first = false;
        }
        if c0 != 0 {
            match (first, c0 < 0) {
                (true, _) => write!(f, "{c0}")?,
                (false, true) => write!(f, " - {}", c0.unsigned_abs())?,
                (false, false) => write!(f, " + {c0}")?,
            }
        }
        Ok(())
    }
}

impl fmt::Display for BoolExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoolExpr::Const(true) => f.write_str("True"),
            BoolExpr::Const(false) => f.write_str("False"),
            BoolExpr::Rel(op, a, b) => match op {
                RelOp::Eq => write!(f, "Eq({a}, {b})"),
                RelOp::Ne => write!(f, "Ne({a}, {b})"),
                RelOp::Lt => write!(f, "{a} < {b}"),
                RelOp::Le => write!(f, "{a} <= {b}"),
                RelOp::Gt => write!(f, "{a} > {b}"),
                RelOp::Ge => write!(f, "{a} >= {b}"),
            },
            BoolExpr::And(xs) | BoolExpr::Or(xs) => {
                let sep = if matches!(self, BoolExpr::And(_)) {
                    " & "
                } else {
                    " | "
                };
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(sep)?;
                    }
                    match x {
                        BoolExpr::And(_) | BoolExpr::Or(_) => write!(f, "({x})")?,
                        x => write!(f, "{x}")?,
                    }
                }
                Ok(())
            }
            BoolExpr::Not(x) => match x.first() {
                Some(x) => write!(f, "~({x})"),
                None => f.write_str("False"),
            },
        }
    }
}

/// The greatest common divisor of `|a|` and `|b|` (`gcd(0, b) = |b|`).
fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i64::try_from(a).unwrap_or(i64::MAX)
}

/// `ids` sorted, each once (the `free_symbols` of both expression kinds).
fn sorted_unique(mut ids: Vec<SymbolId>) -> Vec<SymbolId> {
    ids.sort_unstable();
    ids.dedup();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(i: u32) -> IntExpr {
        IntExpr::symbol(i)
    }
    fn c(v: i64) -> IntExpr {
        IntExpr::constant(v)
    }

    #[test]
    fn canonical_form_commutes_and_cancels() -> Result<()> {
        let a = s(0).mul(&s(1))?.mul(&s(2))?;
        let b = s(2).mul(&s(0))?.mul(&s(1))?;
        assert_eq!(a, b);
        assert_eq!(a.sub(&b)?.as_const(), Some(0));
        assert_eq!(a.to_string(), "s0*s1*s2");
        Ok(())
    }

    #[test]
    fn floordiv_and_mod_follow_python() -> Result<()> {
        assert_eq!(py_floordiv(7, -2), Some(-4));
        assert_eq!(py_mod(7, -2), Some(-1));
        assert_eq!(py_floordiv(i64::MIN, -1), None);
        assert_eq!(py_mod(5, 0), None);
        let e = s(0).floordiv(&c(3))?;
        for v in -10..10 {
            assert_eq!(e.eval(&|_| Some(v)), py_floordiv(v, 3));
        }
        let m = s(0).sub(&c(7))?.modulo(&c(3))?;
        for v in -10..10 {
            assert_eq!(m.eval(&|_| Some(v)), py_mod(v - 7, 3));
        }
        assert!(s(0).modulo(&c(0)).is_err());
        Ok(())
    }

    #[test]
    fn static_decisions_match_pytorch_examples() -> Result<()> {
        let r = |_| Interval::at_least(2);
        // Eq(s36, s36*s49) is statically false for sizes >= 2.
        let b = BoolExpr::rel(RelOp::Eq, &s(0), &s(0).mul(&s(1))?);
        assert_eq!(b.decide_static(&r), Some(false));
        // 1 <= s49 - 3 needs the hint.
        let b = BoolExpr::rel(RelOp::Le, &c(1), &s(1).sub(&c(3))?);
        assert_eq!(b.decide_static(&r), None);
        // (s+1)//2 >= 1 holds for s >= 2.
        let h = s(0).add(&c(1))?.floordiv(&c(2))?;
        let b = BoolExpr::rel(RelOp::Ge, &h, &c(1));
        assert_eq!(b.decide_static(&r), Some(true));
        // Mod(s, 8) < 8.
        let m = s(0).modulo(&c(8))?;
        assert_eq!(
            BoolExpr::rel(RelOp::Lt, &m, &c(8)).decide_static(&r),
            Some(true)
        );
        Ok(())
    }

    #[test]
    fn substitution_resimplifies() -> Result<()> {
        let n = s(0).mul(&s(1))?.mul(&s(2))?;
        let q = n.floordiv(&c(8))?;
        assert_eq!(q.to_string(), "((s0*s1*s2)//8)");
        let r = q.subst(&|i| (i == 2).then(|| c(8)));
        assert_eq!(r.to_string(), "s0*s1");
        Ok(())
    }

    #[test]
    fn printing() -> Result<()> {
        let e = s(1).sub(&c(4))?;
        assert_eq!(e.to_string(), "s1 - 4");
        assert_eq!(c(-3).to_string(), "-3");
        assert_eq!(
            IntExpr::sym_min(&s(0), &s(1).sub(&c(1))?)?.to_string(),
            "Min(s1 - 1, s0)"
        );
        let b =
            BoolExpr::rel(RelOp::Eq, &s(0), &c(1)).or(&BoolExpr::rel(RelOp::Ne, &s(1), &c(2)))?;
        assert_eq!(b.to_string(), "Eq(s0, 1) | Ne(s1, 2)");
        assert_eq!(b.not()?.to_string(), "~(Eq(s0, 1) | Ne(s1, 2))");
        assert_eq!(b.not()?.not()?, b);
        Ok(())
    }

    #[test]
    fn floordiv_divisors_print_with_python_precedence() -> Result<()> {
        // FloorDiv(d0*d1*d2, 4*d1*d2) must not read as (.. // 4)*d1*d2.
        let n = s(0).mul(&s(1))?.mul(&s(2))?;
        let d = c(4).mul(&s(1))?.mul(&s(2))?;
        let q = n.floordiv(&d)?;
        assert_eq!(q.to_string(), "((s0*s1*s2)//(4*s1*s2))");
        assert_eq!(s(0).floordiv(&s(1))?.to_string(), "((s0)//s1)");
        assert_eq!(s(0).floordiv(&s(1).pow(2)?)?.to_string(), "((s0)//(s1**2))");
        assert_eq!(s(0).floordiv(&c(-4))?.to_string(), "((s0)//(-4))");
        Ok(())
    }

    /// Runs `f` on a thread with a 2 MiB stack (Rust's default for
    /// spawned threads), so that a recursion the budgets fail to bound
    /// shows as a test failure, not only on small stacks.
    fn on_small_stack(f: impl FnOnce() + Send + 'static) {
        let h = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(f)
            .expect("spawn test thread");
        assert!(h.join().is_ok(), "the test thread panicked");
    }

    /// `e = e // b + a` repeated: the deepest expression the budget
    /// allows, and the error past it.
    fn deepest_chain() -> (IntExpr, TensorError, usize) {
        let (a, b) = (s(0), s(1));
        let mut e = s(2);
        for level in 0..100_000 {
            match e.floordiv(&b).and_then(|q| q.add(&a)) {
                Ok(next) => e = next,
                Err(err) => return (e, err, level),
            }
        }
        panic!("100,000 levels built without reaching the depth budget");
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and slow under the interpreter")]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        on_small_stack(|| {
            let (e, err, level) = deepest_chain();
            assert_eq!(level, MAX_DEPTH as usize);
            assert_eq!(e.depth(), MAX_DEPTH);
            assert!(err.to_string().contains("too deeply nested"), "{err}");
            assert_eq!(err.kind(), crate::ErrorKind::Runtime);
            // Every traversal of the deepest allowed expression runs on
            // a 2 MiB stack.
            let copy = e.clone();
            assert_eq!(copy, e);
            assert_eq!(copy.cmp(&e), std::cmp::Ordering::Equal);
            let mut h = std::collections::hash_map::DefaultHasher::new();
            std::hash::Hash::hash(&e, &mut h);
            assert_eq!(e.eval(&|i| Some([3, 2, 5][i as usize])), {
                let mut v: i64 = 5;
                for _ in 0..MAX_DEPTH {
                    v = v.div_euclid(2) + 3;
                }
                Some(v)
            });
            assert!(e.to_string().len() > MAX_DEPTH as usize);
            assert_eq!(e.free_symbols(), vec![0, 1, 2]);
            let _ = e.bounds(&|_| Interval::at_least(2));
            let r = e.subst(&|i| (i == 2).then(|| c(7)));
            assert_eq!(r.free_symbols(), vec![0, 1]);
            let b = BoolExpr::rel(RelOp::Gt, &e, &c(0));
            assert_eq!(b.decide_static(&|_| Interval::at_least(2)), Some(true));
            drop(copy);
            drop(e);
        });
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and slow under the interpreter")]
    fn deep_boolean_nesting_is_an_error() {
        on_small_stack(|| {
            let x = BoolExpr::rel(RelOp::Lt, &s(0), &c(4));
            let y = BoolExpr::rel(RelOp::Gt, &s(1), &c(2));
            let mut b = x.clone();
            let mut failed = None;
            for level in 0..100_000 {
                match b.not().and_then(|n| n.or(&y)).and_then(|o| o.and(&x)) {
                    Ok(next) => b = next,
                    Err(e) => {
                        failed = Some((level, e));
                        break;
                    }
                }
            }
            let (level, err) = failed.expect("the budget stops the chain");
            assert!(level <= MAX_DEPTH as usize, "{level}");
            assert!(err.to_string().contains("too deeply nested"), "{err}");
            assert!(b.depth() <= MAX_DEPTH);
            assert!(b.eval(&|_| Some(3)).is_some());
            assert!(!b.to_string().is_empty());
        });
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and slow under the interpreter")]
    fn shared_subexpressions_cannot_blow_up_traversals() {
        // e = Max(e, e + 1) doubles the tree each step while sharing the
        // storage; the size budget stops it long before traversals get
        // expensive.
        let mut e = s(0);
        let mut steps = 0;
        while let Ok(next) = e.add(&c(1)).and_then(|e1| e.sym_max(&e1)) {
            e = next;
            steps += 1;
            assert!(steps < 64, "the size budget did not stop doubling");
        }
        assert!(e.size() <= MAX_SIZE);
        assert!(e.eval(&|_| Some(1)).is_some());
    }

    /// `(s0 + ... + s7) ** k` by repeated multiplication.
    fn sum_power(k: u32) -> Result<(IntExpr, IntExpr)> {
        let mut sum = IntExpr::default();
        for i in 0..8 {
            sum = sum.add(&s(i))?;
        }
        let mut e = sum.clone();
        for _ in 1..k {
            e = e.mul(&sum)?;
        }
        Ok((sum, e))
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and slow under the interpreter")]
    fn products_of_sums_stay_factored_and_decide_statically() -> Result<()> {
        for k in 1..=40 {
            let (_, e) = sum_power(k)?;
            assert!(e.size() <= 4096, "k = {k}: {} nodes", e.size());
            let ranges = |_| Interval::at_least(2);
            // Guards PyTorch decides without a hint: the value is at
            // least 16**k.
            assert_eq!(
                BoolExpr::rel(RelOp::Eq, &e, &c(0)).decide_static(&ranges),
                Some(false),
                "k = {k}"
            );
            assert_eq!(
                BoolExpr::rel(RelOp::Ge, &e, &c(16)).decide_static(&ranges),
                Some(true),
                "k = {k}"
            );
            // The value is exact wherever it fits.
            let v = |i: SymbolId| Some(i64::from(i % 3));
            let sum: i64 = (0..8).map(|i| i64::from(i % 3)).sum();
            assert_eq!(e.eval(&v), sum.checked_pow(k), "k = {k}");
        }
        let (sum, e) = sum_power(2)?;
        assert_eq!(e.terms.len(), 36, "small products expand");
        assert_eq!(e.sub(&sum.pow(2)?)?.as_const(), Some(0));
        Ok(())
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and slow under the interpreter")]
    fn huge_powers_are_computed_by_squaring() -> Result<()> {
        let mut e = s(0).add(&c(1))?;
        let mut squarings = 0;
        while let Ok(next) = e.mul(&e) {
            e = next;
            squarings += 1;
            assert!(squarings <= 40, "the exponent never overflowed");
        }
        // (s0 + 1)**16 is expanded (17 terms), then kept as a factor whose
        // exponent doubles until it no longer fits a u32: 4 + 31 squarings.
        assert_eq!(squarings, 35);
        assert_eq!(e.eval(&|_| Some(0)), Some(1));
        assert_eq!(e.eval(&|_| Some(-2)), Some(1));
        assert_eq!(e.eval(&|_| Some(-1)), Some(0));
        assert_eq!(e.eval(&|_| Some(1)), None, "2**(2**31) overflows");
        let iv = e.bounds(&|_| Interval::at_least(2));
        assert!(iv.lo.is_some_and(|l| l > 0));
        let r = e.subst(&|_| Some(c(0)));
        assert_eq!(r.as_const(), Some(1));
        let r = e.subst(&|_| Some(s(5)));
        assert_eq!(r.free_symbols(), vec![5]);
        let p = s(0).pow(u32::MAX)?;
        assert_eq!(p.eval(&|_| Some(-1)), Some(-1));
        assert!(p.mul(&s(0)).is_err(), "exponent overflow is an error");
        Ok(())
    }

    #[test]
    fn interval_powers_are_exact() {
        let iv = |lo, hi| Interval {
            lo: Some(lo),
            hi: Some(hi),
        };
        assert_eq!(iv(-3, 2).pow(2), iv(0, 9));
        assert_eq!(iv(-3, -2).pow(2), iv(4, 9));
        assert_eq!(iv(-3, 2).pow(3), iv(-27, 8));
        assert_eq!(iv(5, 5).pow(0), iv(1, 1));
        assert_eq!(Interval::unbounded().pow(2).lo, Some(0));
        assert_eq!(Interval::unbounded().pow(3), Interval::unbounded());
    }

    /// A tiny reader for the text expressions print as (sympy's syntax with
    /// Python's precedence: `+ -` < `* //` < unary `-` < `**`, and the
    /// functions `Mod`, `Min`, `Max`), evaluating with Python's integer
    /// rules. Used to check that printing round-trips.
    struct Reader<'a> {
        text: &'a [u8],
        at: usize,
        value: &'a dyn Fn(SymbolId) -> Option<i64>,
    }

    /// Both values, when both exist.
    fn both(a: Option<i64>, b: Option<i64>) -> Option<(i64, i64)> {
        Some((a?, b?))
    }

    impl Reader<'_> {
        fn peek(&mut self) -> Option<u8> {
            while self.text.get(self.at) == Some(&b' ') {
                self.at += 1;
            }
            self.text.get(self.at).copied()
        }
        fn eat(&mut self, tok: &str) -> bool {
            self.peek();
            if self.text[self.at..].starts_with(tok.as_bytes()) {
                self.at += tok.len();
                true
            } else {
                false
            }
        }
        // Each rule parses its whole text and yields `None` as the value
        // when Python would raise (division by zero) or i64 overflows.
        fn sum(&mut self) -> Option<i64> {
            let mut v = self.product();
            loop {
                if self.eat("+") {
                    let r = self.product();
                    v = both(v, r).and_then(|(a, b)| a.checked_add(b));
                } else if self.peek() == Some(b'-') {
                    self.at += 1;
                    let r = self.product();
                    v = both(v, r).and_then(|(a, b)| a.checked_sub(b));
                } else {
                    return v;
                }
            }
        }
        fn product(&mut self) -> Option<i64> {
            let mut v = self.unary();
            loop {
                if self.eat("//") {
                    let r = self.unary();
                    v = both(v, r).and_then(|(a, b)| py_floordiv(a, b));
                } else if !self.text[self.at..].starts_with(b"**") && self.eat("*") {
                    let r = self.unary();
                    v = both(v, r).and_then(|(a, b)| a.checked_mul(b));
                } else {
                    return v;
                }
            }
        }
        fn unary(&mut self) -> Option<i64> {
            if self.eat("-") {
                return self.unary().and_then(i64::checked_neg);
            }
            self.power()
        }
        fn power(&mut self) -> Option<i64> {
            let base = self.atom();
            if self.eat("**") {
                let e = self.unary();
                return both(base, e).and_then(|(b, e)| b.checked_pow(u32::try_from(e).ok()?));
            }
            base
        }
        fn args(&mut self) -> (Option<i64>, Option<i64>) {
            let a = self.sum();
            assert!(self.eat(","), "expected ',' at {}", self.at);
            let b = self.sum();
            assert!(self.eat(")"), "expected ')' at {}", self.at);
            (a, b)
        }
        fn atom(&mut self) -> Option<i64> {
            if self.eat("(") {
                let v = self.sum();
                assert!(self.eat(")"), "unbalanced at {}", self.at);
                return v;
            }
            for (name, f) in [
                ("Mod(", py_mod as fn(i64, i64) -> Option<i64>),
                ("Min(", |a: i64, b: i64| Some(a.min(b))),
                ("Max(", |a: i64, b: i64| Some(a.max(b))),
            ] {
                if self.eat(name) {
                    let (a, b) = self.args();
                    return both(a, b).and_then(|(a, b)| f(a, b));
                }
            }
            let sym = self.eat("s");
            let start = self.at;
            while self.text.get(self.at).is_some_and(u8::is_ascii_digit) {
                self.at += 1;
            }
            let digits = std::str::from_utf8(&self.text[start..self.at]).unwrap_or("");
            let n: i64 = digits
                .parse()
                .unwrap_or_else(|_| panic!("a number at {start}"));
            if sym {
                (self.value)(SymbolId::try_from(n).ok()?)
            } else {
                Some(n)
            }
        }
    }

    fn read(text: &str, value: &dyn Fn(SymbolId) -> Option<i64>) -> Option<i64> {
        let mut r = Reader {
            text: text.as_bytes(),
            at: 0,
            value,
        };
        let v = r.sum();
        assert_eq!(r.peek(), None, "trailing text in {text:?} at {}", r.at);
        v
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and slow under the interpreter")]
    fn printed_expressions_read_back_to_the_same_value() -> Result<()> {
        // A deterministic mix of every constructor, from small pieces.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let leaves = [s(0), s(1), s(2), c(3), c(-2), c(1)];
        let mut pool: Vec<IntExpr> = leaves.to_vec();
        let mut checked = 0;
        let mut dump: Vec<String> = Vec::new();
        for _ in 0..3000 {
            let a = pool[next(pool.len() as u64) as usize].clone();
            let b = pool[next(pool.len() as u64) as usize].clone();
            let e = match next(9) {
                0 => a.add(&b),
                1 => a.sub(&b),
                2 => a.mul(&b),
                3 => a.floordiv(&b),
                4 => a.modulo(&b),
                5 => a.sym_min(&b),
                6 => a.sym_max(&b),
                7 => a.neg().add(&c(next(7) as i64)),
                _ => a.pow(next(4) as u32),
            };
            let Ok(e) = e else { continue };
            if e.size() > 200 {
                continue;
            }
            let text = e.to_string();
            let mut values = Vec::new();
            for assignment in [[2, 3, 5], [7, -4, 3], [-3, 6, -5], [1, 1, 9]] {
                let value = |i: SymbolId| assignment.get(i as usize).copied();
                assert_eq!(
                    read(&text, &value),
                    e.eval(&value),
                    "{text} at {assignment:?}"
                );
                values.push(match e.eval(&value) {
                    Some(v) => v.to_string(),
                    None => "null".to_string(),
                });
                checked += 1;
            }
            dump.push(format!(
                "{{\"text\": \"{text}\", \"values\": [{}]}}",
                values.join(", ")
            ));
            pool.push(e);
        }
        assert!(checked > 5000, "{checked}");
        // SYM_PRINT_DUMP=file: the printed expressions and their values at
        // the four assignments, for `tools/check_sym_printing.py` (sympy
        // parses each text back and must find the same values).
        if let Some(path) = std::env::var_os("SYM_PRINT_DUMP") {
            std::fs::write(path, dump.join("\n")).expect("writing the dump");
        }
        Ok(())
    }
}
