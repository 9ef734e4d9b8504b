//! The built-in expression engine: integer expressions as canonical
//! polynomials over *atoms* (symbols and the non-polynomial functions
//! `FloorDiv`, `Mod`, `Min`, `Max`), boolean expressions over relations,
//! evaluation under an assignment, and interval bounds.
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
//! ```
//! use c10_core::sym::expr::IntExpr;
//! let (a, b) = (IntExpr::symbol(0), IntExpr::symbol(1));
//! let e = a.mul(&b).add(&IntExpr::constant(3));
//! assert_eq!(e.to_string(), "s0*s1 + 3");
//! assert_eq!(e.eval(&|s| Some([4, 5][s as usize])), Some(23));
//! assert!(e.sub(&b.mul(&a)).as_const() == Some(3));
//! ```

use std::collections::BTreeMap;
use std::fmt;

/// A symbol's index in its [`ShapeEnv`](super::ShapeEnv).
pub type SymbolId = u32;

/// A non-polynomial building block of an [`IntExpr`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Atom {
    /// A free symbol (`s<id>`).
    Symbol(SymbolId),
    /// `a // b`, flooring (torch's `FloorDiv`).
    FloorDiv(Box<IntExpr>, Box<IntExpr>),
    /// `a mod b` with the divisor's sign (torch's `Mod`/`PythonMod`).
    Mod(Box<IntExpr>, Box<IntExpr>),
    /// `min(a, b)`.
    Min(Box<IntExpr>, Box<IntExpr>),
    /// `max(a, b)`.
    Max(Box<IntExpr>, Box<IntExpr>),
}

/// A product of atoms with positive powers, sorted by atom (empty: the
/// constant monomial `1`).
type Monomial = Vec<(Atom, u32)>;

/// An integer expression in canonical form: a sum of distinct monomials
/// with non-zero coefficients.
///
/// ```
/// use c10_core::sym::expr::IntExpr;
/// let s = IntExpr::symbol(2);
/// assert_eq!(s.add(&IntExpr::constant(1)).floordiv(&IntExpr::constant(2)).unwrap().to_string(), "((s2 + 1)//2)");
/// assert_eq!(s.mul(&IntExpr::constant(4)).floordiv(&IntExpr::constant(2)).unwrap().to_string(), "2*s2");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IntExpr {
    terms: BTreeMap<Monomial, i64>,
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

fn mono_mul(a: &Monomial, b: &Monomial) -> Monomial {
    let mut out: Monomial = a.clone();
    for (atom, p) in b {
        match out.binary_search_by(|(x, _)| x.cmp(atom)) {
            Ok(i) => out[i].1 = out[i].1.saturating_add(*p),
            Err(i) => out.insert(i, (atom.clone(), *p)),
        }
    }
    out
}

impl IntExpr {
    /// The constant `c`.
    ///
    /// ```
    /// assert_eq!(c10_core::sym::expr::IntExpr::constant(7).as_const(), Some(7));
    /// ```
    pub fn constant(c: i64) -> IntExpr {
        let mut terms = BTreeMap::new();
        if c != 0 {
            terms.insert(Vec::new(), c);
        }
        IntExpr { terms }
    }

    /// The symbol `s<id>`.
    ///
    /// ```
    /// assert_eq!(c10_core::sym::expr::IntExpr::symbol(3).to_string(), "s3");
    /// ```
    pub fn symbol(id: SymbolId) -> IntExpr {
        IntExpr::atom(Atom::Symbol(id))
    }

    fn atom(a: Atom) -> IntExpr {
        let mut terms = BTreeMap::new();
        terms.insert(vec![(a, 1)], 1);
        IntExpr { terms }
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
        match (self.terms.len(), m.as_slice(), *c) {
            (1, [(Atom::Symbol(s), 1)], 1) => Some(*s),
            _ => None,
        }
    }

    /// The constant term.
    fn constant_term(&self) -> i64 {
        self.terms.get(&Vec::new()).copied().unwrap_or(0)
    }

    fn add_term(&mut self, m: Monomial, c: i64) {
        if c == 0 {
            return;
        }
        let e = self.terms.entry(m).or_insert(0);
        *e = e.wrapping_add(c);
        if *e == 0 {
            self.terms.retain(|_, v| *v != 0);
        }
    }

    /// `self + o`.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let s = IntExpr::symbol(0);
    /// assert_eq!(s.add(&s).to_string(), "2*s0");
    /// ```
    pub fn add(&self, o: &IntExpr) -> IntExpr {
        let mut out = self.clone();
        for (m, c) in &o.terms {
            out.add_term(m.clone(), *c);
        }
        out
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
        }
    }

    /// `self - o`.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let s = IntExpr::symbol(0);
    /// assert_eq!(s.sub(&s).as_const(), Some(0));
    /// ```
    pub fn sub(&self, o: &IntExpr) -> IntExpr {
        self.add(&o.neg())
    }

    /// `self * o`, expanded.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let s = IntExpr::symbol(0).add(&IntExpr::constant(1));
    /// assert_eq!(s.mul(&s).to_string(), "s0**2 + 2*s0 + 1");
    /// ```
    pub fn mul(&self, o: &IntExpr) -> IntExpr {
        let mut out = IntExpr::default();
        for (ma, ca) in &self.terms {
            for (mb, cb) in &o.terms {
                out.add_term(mono_mul(ma, mb), ca.wrapping_mul(*cb));
            }
        }
        out
    }

    /// `self // o` (flooring), simplified like torch's `FloorDiv`:
    /// constants fold, `x // 1 = x`, `(c*q + r) // c = q + r // c`, and
    /// `x // x = 1`. `None` when `o` is the constant 0.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let s = IntExpr::symbol(0);
    /// let e = s.mul(&IntExpr::constant(6)).add(&IntExpr::constant(1));
    /// assert_eq!(e.floordiv(&IntExpr::constant(3)).unwrap().to_string(), "2*s0");
    /// assert!(s.floordiv(&IntExpr::constant(0)).is_none());
    /// ```
    pub fn floordiv(&self, o: &IntExpr) -> Option<IntExpr> {
        if let Some(d) = o.as_const() {
            if d == 0 {
                return None;
            }
            if let Some(n) = self.as_const() {
                return py_floordiv(n, d).map(IntExpr::constant);
            }
            if d == 1 {
                return Some(self.clone());
            }
            if d > 0 {
                // Split off the monomials whose coefficients `d` divides.
                let (mut q, mut r) = (IntExpr::default(), IntExpr::default());
                for (m, c) in &self.terms {
                    if c % d == 0 {
                        q.add_term(m.clone(), c / d);
                    } else {
                        r.add_term(m.clone(), *c);
                    }
                }
                if !q.terms.is_empty() {
                    let rest = r.floordiv(o)?;
                    return Some(q.add(&rest));
                }
            }
        } else if self == o {
            return Some(IntExpr::constant(1));
        }
        if self.terms.is_empty() {
            return Some(IntExpr::default());
        }
        Some(IntExpr::atom(Atom::FloorDiv(
            Box::new(self.clone()),
            Box::new(o.clone()),
        )))
    }

    /// `self mod o` (Python's sign rule), simplified: constants fold,
    /// multiples of a constant divisor drop, `x mod x = 0`. `None` when
    /// `o` is the constant 0.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let s = IntExpr::symbol(0);
    /// let e = s.mul(&IntExpr::constant(8));
    /// assert_eq!(e.modulo(&IntExpr::constant(4)).unwrap().as_const(), Some(0));
    /// assert_eq!(s.modulo(&IntExpr::constant(4)).unwrap().to_string(), "Mod(s0, 4)");
    /// ```
    pub fn modulo(&self, o: &IntExpr) -> Option<IntExpr> {
        if let Some(d) = o.as_const() {
            if d == 0 {
                return None;
            }
            if d == 1 || d == -1 {
                return Some(IntExpr::default());
            }
            let mut r = IntExpr::default();
            for (m, c) in &self.terms {
                if c % d != 0 {
                    r.add_term(m.clone(), *c);
                }
            }
            if let Some(n) = r.as_const() {
                return py_mod(n, d).map(IntExpr::constant);
            }
            return Some(IntExpr::atom(Atom::Mod(Box::new(r), Box::new(o.clone()))));
        }
        if self == o || self.terms.is_empty() {
            return Some(IntExpr::default());
        }
        Some(IntExpr::atom(Atom::Mod(
            Box::new(self.clone()),
            Box::new(o.clone()),
        )))
    }

    /// `min(self, o)`; arguments are put in canonical order, so `min`
    /// commutes structurally.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let (a, b) = (IntExpr::symbol(0), IntExpr::symbol(1));
    /// assert_eq!(a.sym_min(&b), b.sym_min(&a));
    /// assert_eq!(a.sym_min(&a), a);
    /// ```
    pub fn sym_min(&self, o: &IntExpr) -> IntExpr {
        match (self.as_const(), o.as_const()) {
            (Some(a), Some(b)) => IntExpr::constant(a.min(b)),
            _ if self == o => self.clone(),
            _ => {
                let (a, b) = if self <= o { (self, o) } else { (o, self) };
                IntExpr::atom(Atom::Min(Box::new(a.clone()), Box::new(b.clone())))
            }
        }
    }

    /// `max(self, o)`, like [`IntExpr::min`].
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// assert_eq!(IntExpr::constant(2).sym_max(&IntExpr::constant(5)).as_const(), Some(5));
    /// ```
    pub fn sym_max(&self, o: &IntExpr) -> IntExpr {
        match (self.as_const(), o.as_const()) {
            (Some(a), Some(b)) => IntExpr::constant(a.max(b)),
            _ if self == o => self.clone(),
            _ => {
                let (a, b) = if self <= o { (self, o) } else { (o, self) };
                IntExpr::atom(Atom::Max(Box::new(a.clone()), Box::new(b.clone())))
            }
        }
    }

    /// The value under an assignment of the symbols (`None` when a symbol
    /// is unassigned, a divisor is 0, or the arithmetic overflows).
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let e = IntExpr::symbol(0).floordiv(&IntExpr::constant(2)).unwrap();
    /// assert_eq!(e.eval(&|_| Some(7)), Some(3));
    /// ```
    pub fn eval(&self, value: &dyn Fn(SymbolId) -> Option<i64>) -> Option<i64> {
        let mut total: i64 = 0;
        for (m, c) in &self.terms {
            let mut t = *c;
            for (a, p) in m {
                let v = a.eval(value)?;
                for _ in 0..*p {
                    t = t.checked_mul(v)?;
                }
            }
            total = total.checked_add(t)?;
        }
        Some(total)
    }

    /// Rebuilds the expression with every symbol `s` replaced by
    /// `f(s)` (kept when `f` gives `None`), re-simplifying on the way.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let e = IntExpr::symbol(0).mul(&IntExpr::symbol(1));
    /// let r = e.subst(&|s| (s == 1).then(|| IntExpr::constant(8)));
    /// assert_eq!(r.to_string(), "8*s0");
    /// ```
    pub fn subst(&self, f: &dyn Fn(SymbolId) -> Option<IntExpr>) -> IntExpr {
        let mut out = IntExpr::default();
        for (m, c) in &self.terms {
            let mut t = IntExpr::constant(*c);
            for (a, p) in m {
                let v = a.subst(f);
                for _ in 0..*p {
                    t = t.mul(&v);
                }
            }
            out = out.add(&t);
        }
        out
    }

    /// Every symbol the expression mentions, in order, once.
    ///
    /// ```
    /// use c10_core::sym::expr::IntExpr;
    /// let e = IntExpr::symbol(3).mul(&IntExpr::symbol(1));
    /// assert_eq!(e.free_symbols(), vec![1, 3]);
    /// ```
    pub fn free_symbols(&self) -> Vec<SymbolId> {
        let mut out = Vec::new();
        self.collect_symbols(&mut out);
        sorted_unique(out)
    }

    fn collect_symbols(&self, out: &mut Vec<SymbolId>) {
        for m in self.terms.keys() {
            for (a, _) in m {
                match a {
                    Atom::Symbol(s) => out.push(*s),
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
    /// the polynomial is expanded, and the monomials are bounded by
    /// interval arithmetic; so `s0*s1 - 3` with `s0, s1 ≥ 2` is `≥ 1`.
    ///
    /// ```
    /// use c10_core::sym::expr::{Interval, IntExpr};
    /// let e = IntExpr::symbol(0).mul(&IntExpr::symbol(1)).sub(&IntExpr::constant(3));
    /// let iv = e.bounds(&|_| Interval::at_least(2));
    /// assert_eq!(iv.lo, Some(1));
    /// assert_eq!(iv.hi, None);
    /// ```
    pub fn bounds(&self, range: &dyn Fn(SymbolId) -> Interval) -> Interval {
        // Shift top-level symbols with a finite lower bound: s = lo + t,
        // t >= 0, and expand. Other atoms stay opaque (their arguments are
        // bounded in the original symbols), so nothing is re-simplified
        // and the recursion only descends into strictly smaller terms.
        let mut shifted = IntExpr::default();
        for (m, c) in &self.terms {
            let mut t = IntExpr::constant(*c);
            for (a, p) in m {
                let f = match a {
                    Atom::Symbol(s) => match range(*s).lo.and_then(|l| i64::try_from(l).ok()) {
                        Some(lo) if lo != 0 => IntExpr::symbol(*s).add(&IntExpr::constant(lo)),
                        _ => IntExpr::symbol(*s),
                    },
                    other => IntExpr::atom(other.clone()),
                };
                for _ in 0..*p {
                    t = t.mul(&f);
                }
            }
            shifted = shifted.add(&t);
        }
        let mut total = Interval::point(0);
        for (m, c) in &shifted.terms {
            let mut t = Interval::point(i128::from(*c));
            for (a, p) in m {
                let iv = match a {
                    Atom::Symbol(s) => {
                        let r = range(*s);
                        match r.lo {
                            Some(lo) if i64::try_from(lo).is_ok() => Interval {
                                lo: Some(0),
                                hi: r.hi.map(|h| h.saturating_sub(lo)),
                            },
                            _ => r,
                        }
                    }
                    other => other.bounds(range),
                };
                for _ in 0..*p {
                    t = t.mul(&iv);
                }
            }
            total = total.add(&t);
        }
        total
    }
}

impl Atom {
    fn eval(&self, value: &dyn Fn(SymbolId) -> Option<i64>) -> Option<i64> {
        match self {
            Atom::Symbol(s) => value(*s),
            Atom::FloorDiv(a, b) => py_floordiv(a.eval(value)?, b.eval(value)?),
            Atom::Mod(a, b) => py_mod(a.eval(value)?, b.eval(value)?),
            Atom::Min(a, b) => Some(a.eval(value)?.min(b.eval(value)?)),
            Atom::Max(a, b) => Some(a.eval(value)?.max(b.eval(value)?)),
        }
    }

    fn subst(&self, f: &dyn Fn(SymbolId) -> Option<IntExpr>) -> IntExpr {
        let zero = IntExpr::default;
        match self {
            Atom::Symbol(s) => f(*s).unwrap_or_else(|| IntExpr::symbol(*s)),
            // A divisor that became 0 cannot occur for a valid assignment;
            // keep the expression total by folding to 0.
            Atom::FloorDiv(a, b) => a.subst(f).floordiv(&b.subst(f)).unwrap_or_else(zero),
            Atom::Mod(a, b) => a.subst(f).modulo(&b.subst(f)).unwrap_or_else(zero),
            Atom::Min(a, b) => IntExpr::sym_min(&a.subst(f), &b.subst(f)),
            Atom::Max(a, b) => IntExpr::sym_max(&a.subst(f), &b.subst(f)),
        }
    }
}

impl Atom {
    /// Bounds of one non-symbol atom from its arguments' bounds.
    fn bounds(&self, range: &dyn Fn(SymbolId) -> Interval) -> Interval {
        match self {
            Atom::Symbol(s) => range(*s),
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
    fn from_ext(lo: Ext, hi: Ext) -> Interval {
        Interval {
            lo: match lo {
                Ext::Fin(v) => Some(v),
                _ => None,
            },
            hi: match hi {
                Ext::Fin(v) => Some(v),
                _ => None,
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
/// ```
/// use c10_core::sym::expr::{BoolExpr, IntExpr, RelOp};
/// let s = IntExpr::symbol(0);
/// let b = BoolExpr::rel(RelOp::Eq, &s.modulo(&IntExpr::constant(8)).unwrap(), &IntExpr::constant(0));
/// assert_eq!(b.to_string(), "Eq(Mod(s0, 8), 0)");
/// assert_eq!(b.eval(&|_| Some(16)), Some(true));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BoolExpr {
    /// `true` / `false`.
    Const(bool),
    /// `lhs OP rhs`.
    Rel(RelOp, IntExpr, IntExpr),
    /// All of these.
    And(Vec<BoolExpr>),
    /// Any of these.
    Or(Vec<BoolExpr>),
    /// Negation.
    Not(Box<BoolExpr>),
}

impl BoolExpr {
    /// `lhs OP rhs`, folded to a constant when both sides are constants
    /// or structurally equal.
    ///
    /// ```
    /// use c10_core::sym::expr::{BoolExpr, IntExpr, RelOp};
    /// let s = IntExpr::symbol(0);
    /// assert_eq!(BoolExpr::rel(RelOp::Eq, &s, &s), BoolExpr::Const(true));
    /// ```
    pub fn rel(op: RelOp, lhs: &IntExpr, rhs: &IntExpr) -> BoolExpr {
        match lhs.sub(rhs).as_const() {
            Some(d) => BoolExpr::Const(op.holds(d, 0)),
            None => BoolExpr::Rel(op, lhs.clone(), rhs.clone()),
        }
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
    /// assert_eq!(BoolExpr::Const(true).and(&BoolExpr::Const(false)), BoolExpr::Const(false));
    /// ```
    pub fn and(&self, o: &BoolExpr) -> BoolExpr {
        self.junction(o, false)
    }

    /// Disjunction, folding constants.
    ///
    /// ```
    /// use c10_core::sym::expr::BoolExpr;
    /// assert_eq!(BoolExpr::Const(false).or(&BoolExpr::Const(true)), BoolExpr::Const(true));
    /// ```
    pub fn or(&self, o: &BoolExpr) -> BoolExpr {
        self.junction(o, true)
    }

    /// `and` (`absorbing` false) or `or` (`absorbing` true): the absorbing
    /// constant wins, the other one drops out, and nested junctions of the
    /// same kind are flattened.
    fn junction(&self, o: &BoolExpr, absorbing: bool) -> BoolExpr {
        match (self.as_const(), o.as_const()) {
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
                if absorbing {
                    BoolExpr::Or(v)
                } else {
                    BoolExpr::And(v)
                }
            }
        }
    }

    /// Negation; a relation is negated by flipping its operator (so
    /// `Not(Eq(a, b))` prints `Ne(a, b)`, as in sympy).
    ///
    /// ```
    /// use c10_core::sym::expr::{BoolExpr, IntExpr, RelOp};
    /// let b = BoolExpr::rel(RelOp::Lt, &IntExpr::symbol(0), &IntExpr::constant(4));
    /// assert_eq!(b.not().to_string(), "s0 >= 4");
    /// ```
    pub fn not(&self) -> BoolExpr {
        match self {
            BoolExpr::Const(b) => BoolExpr::Const(!b),
            BoolExpr::Rel(op, a, b) => BoolExpr::Rel(op.negate(), a.clone(), b.clone()),
            BoolExpr::Not(x) => (**x).clone(),
            x => BoolExpr::Not(Box::new(x.clone())),
        }
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
                for x in xs {
                    all &= x.eval(value)?;
                }
                Some(all)
            }
            BoolExpr::Or(xs) => {
                let mut any = false;
                for x in xs {
                    any |= x.eval(value)?;
                }
                Some(any)
            }
            BoolExpr::Not(x) => x.eval(value).map(|b| !b),
        }
    }

    /// Rebuilds with symbols substituted (see [`IntExpr::subst`]),
    /// folding what becomes constant.
    ///
    /// ```
    /// use c10_core::sym::expr::{BoolExpr, IntExpr, RelOp};
    /// let b = BoolExpr::rel(RelOp::Eq, &IntExpr::symbol(0), &IntExpr::constant(4));
    /// assert_eq!(b.subst(&|_| Some(IntExpr::constant(4))), BoolExpr::Const(true));
    /// ```
    pub fn subst(&self, f: &dyn Fn(SymbolId) -> Option<IntExpr>) -> BoolExpr {
        match self {
            BoolExpr::Const(b) => BoolExpr::Const(*b),
            BoolExpr::Rel(op, a, b) => BoolExpr::rel(*op, &a.subst(f), &b.subst(f)),
            BoolExpr::And(xs) => xs
                .iter()
                .fold(BoolExpr::Const(true), |acc, x| acc.and(&x.subst(f))),
            BoolExpr::Or(xs) => xs
                .iter()
                .fold(BoolExpr::Const(false), |acc, x| acc.or(&x.subst(f))),
            BoolExpr::Not(x) => x.subst(f).not(),
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
        match self {
            BoolExpr::Const(b) => Some(*b),
            BoolExpr::Rel(op, a, b) => op.decide(&a.sub(b).bounds(range)),
            BoolExpr::And(xs) => BoolExpr::decide_junction(xs, range, false),
            BoolExpr::Or(xs) => BoolExpr::decide_junction(xs, range, true),
            BoolExpr::Not(x) => x.decide_static(range).map(|b| !b),
        }
    }

    /// [`decide_static`](Self::decide_static) of a conjunction (`absorbing`
    /// false) or a disjunction (`absorbing` true): decided as soon as one
    /// term is the absorbing value, else once every term is decided.
    fn decide_junction(
        xs: &[BoolExpr],
        range: &dyn Fn(SymbolId) -> Interval,
        absorbing: bool,
    ) -> Option<bool> {
        let mut unknown = false;
        for x in xs {
            match x.decide_static(range) {
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
            BoolExpr::And(xs) | BoolExpr::Or(xs) => xs.iter().for_each(|x| x.collect_symbols(out)),
            BoolExpr::Not(x) => x.collect_symbols(out),
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
            Atom::Mod(a, b) => write!(f, "Mod({a}, {b})"),
            Atom::Min(a, b) => write!(f, "Min({a}, {b})"),
            Atom::Max(a, b) => write!(f, "Max({a}, {b})"),
        }
    }
}

/// Prints an expression, parenthesised unless it is a single term.
struct Paren<'a>(&'a IntExpr);

impl fmt::Display for Paren<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.terms.len() > 1 {
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
            BoolExpr::Not(x) => write!(f, "~({x})"),
        }
    }
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
    fn canonical_form_commutes_and_cancels() {
        let a = s(0).mul(&s(1)).mul(&s(2));
        let b = s(2).mul(&s(0)).mul(&s(1));
        assert_eq!(a, b);
        assert_eq!(a.sub(&b).as_const(), Some(0));
        assert_eq!(a.to_string(), "s0*s1*s2");
    }

    #[test]
    fn floordiv_and_mod_follow_python() {
        assert_eq!(py_floordiv(7, -2), Some(-4));
        assert_eq!(py_mod(7, -2), Some(-1));
        assert_eq!(py_floordiv(i64::MIN, -1), None);
        assert_eq!(py_mod(5, 0), None);
        let e = s(0).floordiv(&c(3)).unwrap();
        for v in -10..10 {
            assert_eq!(e.eval(&|_| Some(v)), py_floordiv(v, 3));
        }
        let m = s(0).sub(&c(7)).modulo(&c(3)).unwrap();
        for v in -10..10 {
            assert_eq!(m.eval(&|_| Some(v)), py_mod(v - 7, 3));
        }
    }

    #[test]
    fn static_decisions_match_pytorch_examples() {
        let r = |_| Interval::at_least(2);
        // Eq(s36, s36*s49) is statically false for sizes >= 2.
        let b = BoolExpr::rel(RelOp::Eq, &s(0), &s(0).mul(&s(1)));
        assert_eq!(b.decide_static(&r), Some(false));
        // 1 <= s49 - 3 needs the hint.
        let b = BoolExpr::rel(RelOp::Le, &c(1), &s(1).sub(&c(3)));
        assert_eq!(b.decide_static(&r), None);
        // (s+1)//2 >= 1 holds for s >= 2.
        let h = s(0).add(&c(1)).floordiv(&c(2)).unwrap();
        let b = BoolExpr::rel(RelOp::Ge, &h, &c(1));
        assert_eq!(b.decide_static(&r), Some(true));
        // Mod(s, 8) < 8.
        let m = s(0).modulo(&c(8)).unwrap();
        assert_eq!(
            BoolExpr::rel(RelOp::Lt, &m, &c(8)).decide_static(&r),
            Some(true)
        );
    }

    #[test]
    fn substitution_resimplifies() {
        let n = s(0).mul(&s(1)).mul(&s(2));
        let q = n.floordiv(&c(8)).unwrap();
        assert_eq!(q.to_string(), "((s0*s1*s2)//8)");
        let r = q.subst(&|i| (i == 2).then(|| c(8)));
        assert_eq!(r.to_string(), "s0*s1");
    }

    #[test]
    fn printing() {
        let e = s(1).sub(&c(4));
        assert_eq!(e.to_string(), "s1 - 4");
        assert_eq!(c(-3).to_string(), "-3");
        assert_eq!(
            IntExpr::sym_min(&s(0), &s(1).sub(&c(1))).to_string(),
            "Min(s1 - 1, s0)"
        );
        let b = BoolExpr::rel(RelOp::Eq, &s(0), &c(1)).or(&BoolExpr::rel(RelOp::Ne, &s(1), &c(2)));
        assert_eq!(b.to_string(), "Eq(s0, 1) | Ne(s1, 2)");
        assert_eq!(b.not().to_string(), "~(Eq(s0, 1) | Ne(s1, 2))");
    }
}
