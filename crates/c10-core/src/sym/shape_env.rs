//! The built-in shape environment (PyTorch's `ShapeEnv`) and its node
//! type.
//!
//! A [`ShapeEnv`] owns the symbols (with their hints, ranges and
//! sources), the replacements found from equality guards, and the guards
//! themselves. Every node the built-in engine makes holds an
//! `Arc<ShapeEnv>`, so a `SymInt` finds its environment without any
//! global or thread-local state; the environment's tables sit behind one
//! mutex, so nodes may be sent and shared between threads (decisions
//! from several threads are serialised, and each is recorded exactly
//! once).

use std::any::Any;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

use parking_lot::Mutex;

use super::expr::{Atom, BoolExpr, IntExpr, Interval, RelOp, SymbolId};
use super::guards::{python_guard_text, Guard};
use super::node::{BinOp, Decision, NodeKind, SymNode, SymNodeImpl, UnOp};
use super::sym_bool::SymBool;
use super::sym_int::SymInt;
use crate::error::{Result, TensorError};

/// How a dimension becomes symbolic (PyTorch's `DimDynamic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DimDynamic {
    /// A constant: the hint itself.
    Static,
    /// Reuse the symbol of an earlier dim with the same hint.
    Duck,
    /// Always a fresh symbol.
    Dynamic,
    /// A fresh unbacked, size-like symbol (no hint, range `[0, ∞)`), as
    /// [`ShapeEnv::create_unbacked_symint`] makes; sizes 0 and 1 too.
    Unbacked,
}

/// Settings of a [`ShapeEnv`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapeEnvConfig {
    /// Hints 0 and 1 become constants, and other backed size symbols get
    /// the range `[2, ∞)` (PyTorch's default, `specialize_zero_one`).
    pub specialize_zero_one: bool,
}

impl Default for ShapeEnvConfig {
    fn default() -> Self {
        ShapeEnvConfig {
            specialize_zero_one: true,
        }
    }
}

/// What the environment knows about one symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolInfo {
    /// The symbol's index (printed `s<id>`).
    pub id: SymbolId,
    /// Where the value came from, e.g. `x.size(1)`.
    pub source: String,
    /// The example value (`None` for unbacked symbols).
    pub hint: Option<i64>,
    /// Smallest value the symbol may take.
    pub lo: i64,
    /// Largest value the symbol may take (`None`: unbounded).
    pub hi: Option<i64>,
}

#[derive(Default)]
struct EnvState {
    symbols: Vec<SymbolInfo>,
    replacements: BTreeMap<SymbolId, IntExpr>,
    guards: Vec<Guard>,
    deferred: Vec<BoolExpr>,
    /// Facts implied by recorded guards (PyTorch's `axioms`).
    axioms: BTreeSet<BoolExpr>,
    /// Duck sizing: hint -> symbol.
    val_to_var: HashMap<i64, SymbolId>,
    /// `(a, c)`: `a` is divisible by the constant `c`, from a guard
    /// `Eq(Mod(a, c), 0)` (PyTorch's `divisible`).
    divisible: Vec<(IntExpr, i64)>,
    suppress: u32,
    /// Without 0/1 specialisation: decide what sympy decides from
    /// PyTorch's `positive=True` on backed symbols (ranges `[0, ∞)`).
    positive: bool,
}

impl EnvState {
    fn range(&self, s: SymbolId) -> Interval {
        match self.symbols.get(s as usize) {
            Some(info) => Interval {
                lo: Some(i128::from(info.lo)),
                hi: info.hi.map(i128::from),
            },
            None => Interval::unbounded(),
        }
    }

    fn hint(&self, s: SymbolId) -> Option<i64> {
        self.symbols.get(s as usize).and_then(|i| i.hint)
    }

    /// `e` with the replacements applied; borrowed when none applies, so
    /// that reading an expression (its hint, its symbols) copies nothing.
    fn simplify<'a>(&self, e: &'a IntExpr) -> Cow<'a, IntExpr> {
        if self.replacements.is_empty() || !self.mentions_replaced(&e.free_symbols()) {
            return Cow::Borrowed(e);
        }
        Cow::Owned(e.subst(&|s| self.replacements.get(&s).cloned()))
    }

    fn simplify_bool<'a>(&self, e: &'a BoolExpr) -> Cow<'a, BoolExpr> {
        if self.replacements.is_empty() || !self.mentions_replaced(&e.free_symbols()) {
            return Cow::Borrowed(e);
        }
        Cow::Owned(e.subst(&|s| self.replacements.get(&s).cloned()))
    }

    fn mentions_replaced(&self, syms: &[SymbolId]) -> bool {
        syms.iter().any(|s| self.replacements.contains_key(s))
    }

    fn static_value(&self, e: &BoolExpr) -> Option<bool> {
        if let Some(b) = self.static_value_once(e) {
            return Some(b);
        }
        // PyTorch's `simplify` with `divisible`: a floor division known to
        // be exact is the quotient (`4*(s//4)` is `s` after
        // `Eq(Mod(s, 4), 0)`).
        if self.divisible.is_empty() {
            return None;
        }
        self.static_value_once(&self.exact_divisions(e)?)
    }

    fn static_value_once(&self, e: &BoolExpr) -> Option<bool> {
        if let Some(b) = e.decide_static(&|s| self.range(s)) {
            return Some(b);
        }
        if self.positive {
            if let Some(b) = e.decide_positive(&|s| self.hint(s).is_some()) {
                return Some(b);
            }
        }
        if self.implied(e) {
            return Some(true);
        }
        if e.not().is_ok_and(|n| self.implied(&n)) {
            return Some(false);
        }
        None
    }

    /// `e` with the terms of its top-level `Or`/`And` that sympy settles
    /// on creation from `positive=True` dropped (`s - 1 > 0 | Eq(s, 0)`
    /// is `s - 1 > 0`), as PyTorch's guard holds them.
    fn prune_positive(&self, e: BoolExpr) -> BoolExpr {
        let (xs, or) = match &e {
            BoolExpr::Or(xs) => (xs, true),
            BoolExpr::And(xs) => (xs, false),
            _ => return e,
        };
        let mut acc = BoolExpr::Const(!or);
        for x in xs.iter() {
            let y = match x.decide_positive(&|s| self.hint(s).is_some()) {
                Some(b) => BoolExpr::Const(b),
                None => x.clone(),
            };
            let next = if or { acc.or(&y) } else { acc.and(&y) };
            match next {
                Ok(n) => acc = n,
                Err(_) => return e,
            }
        }
        acc
    }

    /// `e` with the known-exact floor divisions and known-zero `Mod`s of
    /// [`EnvState::divisible`] simplified ([`IntExpr::with_exact_division`]);
    /// `None` when nothing changed.
    fn exact_divisions(&self, e: &BoolExpr) -> Option<BoolExpr> {
        match e {
            BoolExpr::Rel(op, a, b) => {
                let mut d = a.sub(b).ok()?;
                let mut changed = false;
                for (x, c) in &self.divisible {
                    if let Some(n) = d.with_exact_division(&self.simplify(x), *c) {
                        d = n;
                        changed = true;
                    }
                }
                changed.then(|| BoolExpr::rel(*op, &d, &IntExpr::constant(0)))
            }
            BoolExpr::And(xs) | BoolExpr::Or(xs) => {
                let and = matches!(e, BoolExpr::And(_));
                let mut changed = false;
                let mut acc = BoolExpr::Const(and);
                for x in xs.iter() {
                    let y = match self.exact_divisions(x) {
                        Some(y) => {
                            changed = true;
                            y
                        }
                        None => x.clone(),
                    };
                    acc = if and { acc.and(&y) } else { acc.or(&y) }.ok()?;
                }
                changed.then_some(acc)
            }
            BoolExpr::Not(xs) => self.exact_divisions(xs.first()?)?.not().ok(),
            BoolExpr::Const(_) => None,
        }
    }

    /// PyTorch's `_add_divisible`: an equality `k*Mod(a, c) == 0` (`c` a
    /// positive constant) records that `a` is divisible by `c`.
    fn add_divisible(&mut self, d: &IntExpr) {
        let Some((Atom::Mod(a, c), _)) = d.single_atom_term() else {
            return;
        };
        let Some(c) = c.as_const().filter(|&c| c > 0) else {
            return;
        };
        let a = (**a).clone();
        if !self.divisible.iter().any(|(x, k)| *x == a && *k == c) {
            self.divisible.push((a, c));
        }
    }

    /// Whether earlier guards imply `e` (PyTorch's `axioms`): the same
    /// fact in any spelling (`1 <= n - 3` is `4 <= n`), or `d <= 0` when
    /// `d - k <= 0` with `k >= 0` was guarded.
    fn implied(&self, e: &BoolExpr) -> bool {
        let c = e.canonical();
        if self.axioms.contains(&c) {
            return true;
        }
        let BoolExpr::Rel(RelOp::Le, d, _) = &c else {
            return false;
        };
        self.axioms.iter().any(|a| match a {
            BoolExpr::Rel(RelOp::Le, da, _) => d
                .sub(da)
                .ok()
                .and_then(|x| x.as_const())
                .is_some_and(|k| k <= 0),
            _ => false,
        })
    }

    fn unhinted(&self, syms: &[SymbolId]) -> bool {
        syms.iter().any(|s| self.hint(*s).is_none())
    }

    /// Records a guard (PyTorch's `_evaluate_expr` step 6): appends it,
    /// remembers it and what it implies as axioms, and derives
    /// replacements and range refinements from it.
    fn record(&mut self, g: BoolExpr) {
        if self.suppress > 0 {
            return;
        }
        self.guards.push(Guard::new(g.clone()));
        self.add_axioms(&g);
        self.maybe_guard_rel(&g);
    }

    /// A guard and its direct implications (PyTorch's
    /// `get_implications`): `Eq(a, b)` gives `a <= b` and `a >= b`, a
    /// strict inequality gives `Ne`, a conjunction each of its terms.
    fn add_axioms(&mut self, g: &BoolExpr) {
        match g {
            BoolExpr::And(xs) => {
                for x in xs.iter() {
                    self.add_axioms(x);
                }
            }
            BoolExpr::Rel(op, a, b) => {
                self.axioms.insert(g.canonical());
                let extra: &[RelOp] = match op {
                    RelOp::Eq => &[RelOp::Le, RelOp::Ge],
                    RelOp::Lt | RelOp::Gt => &[RelOp::Ne],
                    _ => &[],
                };
                for op in extra {
                    self.axioms.insert(BoolExpr::rel(*op, a, b).canonical());
                }
            }
            _ => {
                self.axioms.insert(g.canonical());
            }
        }
    }

    /// PyTorch's `_maybe_guard_rel`: every relation refines the ranges of
    /// the symbols it bounds (`_refine_ranges`); an equality without
    /// `Mod`/`FloorDiv` is solved for one symbol (the one with the
    /// largest hint, unbacked first, then the newest), after dropping
    /// non-zero factors (`Eq(s0*s1*(s2 - 2), 0)` gives `s2 = 2`), and the
    /// solution becomes a replacement when it is integral and fits the
    /// symbol's range. `Ne` teaches nothing.
    fn maybe_guard_rel(&mut self, g: &BoolExpr) {
        let g = match g {
            BoolExpr::And(xs) => {
                for x in xs.iter() {
                    self.maybe_guard_rel(x);
                }
                return;
            }
            BoolExpr::Rel(RelOp::Ne, ..) => return,
            BoolExpr::Rel(..) => self.simplify_bool(g).into_owned(),
            _ => return,
        };
        let BoolExpr::Rel(op, a, b) = &g else { return };
        let Ok(d) = a.sub(b) else { return };
        let syms = d.free_symbols();
        if syms.is_empty() || syms.len() > 5 {
            return;
        }
        self.refine_ranges(*op, &d, &syms);
        if *op == RelOp::Eq {
            self.add_divisible(&d);
        }
        if *op != RelOp::Eq || d.has_atom(&|x| matches!(x, Atom::Mod(..) | Atom::FloorDiv(..))) {
            return;
        }
        let d = self.simplify(&d).into_owned();
        let mut order: Vec<SymbolId> = d.free_symbols();
        order.sort_by_key(|s| std::cmp::Reverse((self.hint(*s).unwrap_or(i64::MAX), *s)));
        let Some(&s) = order.first() else { return };
        let Some(sol) = self.solve_eq(&d, s) else {
            return;
        };
        if self.unhinted(&sol.free_symbols()) {
            return;
        }
        self.set_replacement(s, sol);
    }

    /// PyTorch's `_refine_ranges`: for each symbol the relation isolates
    /// (`k*s + rest OP 0` with `rest/k` integral), the bounds of the other
    /// side narrow the symbol's range; a range narrowed to one value
    /// becomes a replacement.
    fn refine_ranges(&mut self, op: RelOp, d: &IntExpr, syms: &[SymbolId]) {
        for &s in syms {
            if self.replacements.contains_key(&s) {
                continue;
            }
            let (sol, op) = if op == RelOp::Eq {
                let Some(sol) = self.solve_eq(d, s) else {
                    continue;
                };
                (sol, op)
            } else {
                let Some((k, rest)) = d.linear_in(s) else {
                    continue;
                };
                let Some(sol) = rest.neg().div_exact(k) else {
                    continue;
                };
                (sol, if k > 0 { op } else { flip(op) })
            };
            let iv = sol.bounds(&|x| self.range(x));
            let (lo, hi) = match op {
                RelOp::Eq => (iv.lo, iv.hi),
                RelOp::Ge => (iv.lo, None),
                RelOp::Gt => (iv.lo.map(|l| l + 1), None),
                RelOp::Le => (None, iv.hi),
                RelOp::Lt => (None, iv.hi.map(|h| h - 1)),
                RelOp::Ne => (None, None),
            };
            self.narrow_range(s, lo, hi);
            if let Some(info) = self.symbols.get(s as usize) {
                if info.hi == Some(info.lo) {
                    let v = info.lo;
                    self.set_replacement(s, IntExpr::constant(v));
                }
            }
        }
    }

    /// Solves `d = 0` for `s` as sympy's `try_solve` does on the expanded
    /// expression: `s`'s coefficient may be a product of backed size
    /// symbols (positive to sympy), divided out of the other terms; an
    /// integral solution results when that division leaves a constant or
    /// one term (`Eq(s0*s1*(s2 - 2), 0)` gives `s2 = 2`; `Eq(s0*(s1 + s2
    /// - 13), 0)` gives nothing).
    fn solve_eq(&self, d: &IntExpr, s: SymbolId) -> Option<IntExpr> {
        let (d, symbolic_content) = d.without_content(&|x| self.hint(x).is_some());
        let (k, rest) = d.linear_in(s)?;
        let sol = rest.neg().div_exact(k)?;
        (!symbolic_content || sol.is_single_term()).then_some(sol)
    }

    /// Intersects a symbol's range with `[lo, hi]` (`None`: no bound).
    fn narrow_range(&mut self, s: SymbolId, lo: Option<i128>, hi: Option<i128>) {
        let Some(info) = self.symbols.get_mut(s as usize) else {
            return;
        };
        if let Some(l) = lo.and_then(|l| i64::try_from(l).ok()) {
            info.lo = info.lo.max(l);
        }
        if let Some(h) = hi.and_then(|h| i64::try_from(h).ok()) {
            info.hi = Some(info.hi.map_or(h, |x| x.min(h)));
        }
    }

    /// PyTorch's `_set_replacement`: `a`'s range narrows to the bounds
    /// of `tgt`; if those bounds do not fit `a`'s old range, a target
    /// linear in one symbol `b` narrows `b`'s range until they do, and
    /// otherwise no replacement is made (it would lose a range fact).
    /// Earlier replacements and the axioms are rewritten with it.
    fn set_replacement(&mut self, a: SymbolId, tgt: IntExpr) {
        if tgt.free_symbols().contains(&a) || self.replacements.contains_key(&a) {
            return;
        }
        let src = self.range(a);
        let fits = |st: &EnvState, t: &IntExpr| {
            let tb = t.bounds(&|x| st.range(x));
            src.lo.is_none_or(|l| tb.lo.is_some_and(|x| x >= l))
                && src.hi.is_none_or(|h| tb.hi.is_some_and(|x| x <= h))
        };
        let tb = tgt.bounds(&|x| self.range(x));
        self.narrow_range(a, tb.lo, tb.hi);
        if !fits(self, &tgt) {
            let syms = tgt.free_symbols();
            let [b] = syms.as_slice() else { return };
            let Some((k, c)) = tgt.linear_in(*b) else {
                return;
            };
            let Some(c) = c.as_const() else { return };
            // a = k*b + c, so b = (a - c)/k over a's old range.
            let (k, c) = (i128::from(k), i128::from(c));
            let ceil = |n: i128| n.div_euclid(k.abs()) + i128::from(n.rem_euclid(k.abs()) != 0);
            let floor = |n: i128| n.div_euclid(k.abs());
            let (lo, hi) = if k > 0 {
                (src.lo.map(|l| ceil(l - c)), src.hi.map(|h| floor(h - c)))
            } else {
                (src.hi.map(|h| ceil(c - h)), src.lo.map(|l| floor(c - l)))
            };
            self.narrow_range(*b, lo, hi);
            if !fits(self, &tgt) {
                return;
            }
        }
        if let Some(v) = tgt.as_const() {
            if let Some(info) = self.symbols.get_mut(a as usize) {
                info.lo = v;
                info.hi = Some(v);
            }
        }
        for v in self.replacements.values_mut() {
            *v = v.subst(&|x| (x == a).then(|| tgt.clone()));
        }
        self.replacements.insert(a, tgt);
        // Axioms mention the replaced symbol; re-simplify them.
        let axioms: Vec<BoolExpr> = self.axioms.iter().cloned().collect();
        self.axioms = axioms
            .iter()
            .map(|x| self.simplify_bool(x).canonical())
            .collect();
    }
}

/// Reverses the sides of a relation (`a < b` ⇔ `b > a`).
fn flip(op: RelOp) -> RelOp {
    match op {
        RelOp::Lt => RelOp::Gt,
        RelOp::Le => RelOp::Ge,
        RelOp::Gt => RelOp::Lt,
        RelOp::Ge => RelOp::Le,
        o => o,
    }
}

/// The shape environment: symbols, hints, ranges, replacements, guards.
///
/// ```
/// use c10_core::sym::{ShapeEnv, SymInt};
/// let env = ShapeEnv::new();
/// let n = env.create_symbol(12, "x.size(0)")?;
/// // Does 4 divide n? The hint says yes; the decision is a guard.
/// let divides = n.modulo(&SymInt::from(4))?.sym_eq(&SymInt::from(0))?;
/// assert!(divides.guard_bool()?);
/// assert_eq!(env.guards()[0].to_string(), "Eq(Mod(s0, 4), 0)");
/// // Would the trace still be valid for n = 20? for n = 10?
/// let sym = env.symbol_for_source("x.size(0)").unwrap();
/// assert!(env.evaluate_guards(&|s| (s == sym).then_some(20))?);
/// assert!(!env.evaluate_guards(&|s| (s == sym).then_some(10))?);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub struct ShapeEnv {
    config: ShapeEnvConfig,
    state: Mutex<EnvState>,
}

impl fmt::Debug for ShapeEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.state.lock();
        f.debug_struct("ShapeEnv")
            .field("config", &self.config)
            .field("symbols", &st.symbols)
            .field("guards", &st.guards)
            .finish()
    }
}

impl ShapeEnv {
    /// A fresh environment with PyTorch's defaults.
    ///
    /// ```
    /// let env = c10_core::sym::ShapeEnv::new();
    /// assert!(env.guards().is_empty());
    /// ```
    pub fn new() -> Arc<ShapeEnv> {
        ShapeEnv::with_config(ShapeEnvConfig::default())
    }

    /// A fresh environment with the given settings.
    ///
    /// ```
    /// use c10_core::sym::{ShapeEnv, ShapeEnvConfig};
    /// let env = ShapeEnv::with_config(ShapeEnvConfig { specialize_zero_one: false });
    /// assert!(env.create_symbol(1, "n")?.is_symbolic());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn with_config(config: ShapeEnvConfig) -> Arc<ShapeEnv> {
        Arc::new(ShapeEnv {
            config,
            state: Mutex::new(EnvState {
                positive: !config.specialize_zero_one,
                ..EnvState::default()
            }),
        })
    }

    /// The settings.
    ///
    /// ```
    /// assert!(c10_core::sym::ShapeEnv::new().config().specialize_zero_one);
    /// ```
    pub fn config(&self) -> ShapeEnvConfig {
        self.config
    }

    /// A fresh backed size symbol with hint `hint` (PyTorch's
    /// `create_symbol` with `DimDynamic.DYNAMIC`): hints 0 and 1 give
    /// plain ints under 0/1 specialisation.
    ///
    /// ```
    /// let env = c10_core::sym::ShapeEnv::new();
    /// assert!(env.create_symbol(5, "n")?.is_symbolic());
    /// assert_eq!(env.create_symbol(1, "m")?.maybe_as_int(), Some(1));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn create_symbol(self: &Arc<Self>, hint: i64, source: &str) -> Result<SymInt> {
        self.create_symbol_with(hint, source, DimDynamic::Dynamic)
    }

    /// [`create_symbol`](ShapeEnv::create_symbol) with a choice of
    /// [`DimDynamic`].
    ///
    /// ```
    /// use c10_core::sym::{DimDynamic, ShapeEnv};
    /// let env = ShapeEnv::new();
    /// let a = env.create_symbol_with(4, "x.size(0)", DimDynamic::Duck)?;
    /// let b = env.create_symbol_with(4, "x.size(1)", DimDynamic::Duck)?;
    /// assert_eq!(a, b);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn create_symbol_with(
        self: &Arc<Self>,
        hint: i64,
        source: &str,
        dynamic: DimDynamic,
    ) -> Result<SymInt> {
        if hint < 0 {
            return Err(TensorError::runtime(format!(
                "cannot create a size symbol from the negative value {hint}"
            )));
        }
        if dynamic == DimDynamic::Unbacked {
            return Ok(self.create_unbacked_symint(source));
        }
        if dynamic == DimDynamic::Static
            || (self.config.specialize_zero_one && (hint == 0 || hint == 1))
        {
            return Ok(SymInt::Int(hint));
        }
        let mut st = self.state.lock();
        if dynamic == DimDynamic::Duck {
            if let Some(&s) = st.val_to_var.get(&hint) {
                drop(st);
                return Ok(self.int_node(IntExpr::symbol(s)));
            }
        }
        let id = SymbolId::try_from(st.symbols.len())
            .map_err(|_| TensorError::runtime("too many symbols in one ShapeEnv"))?;
        st.symbols.push(SymbolInfo {
            id,
            source: source.to_string(),
            hint: Some(hint),
            lo: if self.config.specialize_zero_one {
                2
            } else {
                0
            },
            hi: None,
        });
        if dynamic == DimDynamic::Duck {
            st.val_to_var.insert(hint, id);
        }
        drop(st);
        Ok(self.int_node(IntExpr::symbol(id)))
    }

    /// A fresh unbacked, size-like symbol (no hint, range `[0, ∞)`), like
    /// PyTorch's `create_unbacked_symint` + `_constrain_range_for_size`.
    ///
    /// ```
    /// let env = c10_core::sym::ShapeEnv::new();
    /// let u = env.create_unbacked_symint("u");
    /// assert!(!u.has_hint());
    /// assert!(u.sym_eq(&5.into())?.guard_bool().is_err());
    /// assert!(!u.sym_eq(&5.into())?.guard_or_false()?);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn create_unbacked_symint(self: &Arc<Self>, source: &str) -> SymInt {
        let mut st = self.state.lock();
        let id = SymbolId::try_from(st.symbols.len()).unwrap_or(SymbolId::MAX);
        st.symbols.push(SymbolInfo {
            id,
            source: source.to_string(),
            hint: None,
            lo: 0,
            hi: None,
        });
        drop(st);
        self.int_node(IntExpr::symbol(id))
    }

    /// Symbolic sizes, strides and storage offset for a tensor with the
    /// given example layout (PyTorch's
    /// `create_symbolic_sizes_strides_storage_offset`): a symbol per size;
    /// strides, visited from the smallest, are expressed through sizes
    /// where they equal `size*stride` of a smaller dim (so a contiguous
    /// layout gets `(s1*s2, s2, 1)`), stay 0 or 1, or get a fresh
    /// symbol; the offset is a symbol unless it is 0 or 1.
    ///
    /// ```
    /// use c10_core::sym::{DimDynamic, ShapeEnv};
    /// let env = ShapeEnv::new();
    /// let (sizes, strides, offset) =
    ///     env.create_symbolic_sizes_strides_storage_offset(&[4, 6, 8], &[48, 8, 1], 0, "x", DimDynamic::Dynamic)?;
    /// let show = |v: &[c10_core::sym::SymInt]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ");
    /// assert_eq!(show(&sizes), "s0, s1, s2");
    /// assert_eq!(show(&strides), "s1*s2, s2, 1");
    /// assert_eq!(offset.maybe_as_int(), Some(0));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn create_symbolic_sizes_strides_storage_offset(
        self: &Arc<Self>,
        sizes: &[i64],
        strides: &[i64],
        offset: i64,
        source: &str,
        dynamic: DimDynamic,
    ) -> Result<(Vec<SymInt>, Vec<SymInt>, SymInt)> {
        if sizes.len() != strides.len() {
            return Err(TensorError::runtime(format!(
                "mismatch in length of strides and shape: {} vs {}",
                strides.len(),
                sizes.len()
            )));
        }
        let sym_sizes = sizes
            .iter()
            .enumerate()
            .map(|(i, &v)| self.create_symbol_with(v, &format!("{source}.size({i})"), dynamic))
            .collect::<Result<Vec<_>>>()?;
        let mut sym_strides: Vec<Option<SymInt>> = vec![None; strides.len()];
        let mut order: Vec<usize> = (0..strides.len()).collect();
        // Equal strides: the inner dim first, and a later candidate for
        // the same value wins, so a stride equal to `size[i+1]*stride[i+1]`
        // is expressed through the adjacent dim (what PyTorch gives when a
        // size-1 dim is a symbol: `(s1*s2*s3, s2*s3, s3, 1)`).
        order.sort_by_key(|&i| (strides[i], std::cmp::Reverse(i)));
        let mut candidates: HashMap<i64, SymInt> = HashMap::new();
        for &i in &order {
            let st = strides[i];
            let expr = if let Some(c) = candidates.get(&st) {
                c.clone()
            } else if st == 0 || st == 1 {
                SymInt::Int(st)
            } else {
                let d = if dynamic == DimDynamic::Static {
                    DimDynamic::Static
                } else {
                    DimDynamic::Duck
                };
                self.create_symbol_with(st, &format!("{source}.stride({i})"), d)?
            };
            candidates.insert(sizes[i].wrapping_mul(st), sym_sizes[i].mul(&expr)?);
            sym_strides[i] = Some(expr);
        }
        let sym_strides = sym_strides
            .into_iter()
            .map(|s| s.unwrap_or_default())
            .collect();
        // An unbacked input still has its example's offset (PyTorch's
        // `from_tensor` with `DimDynamic.UNBACKED` sizes: offset 0).
        let off_dynamic = if dynamic == DimDynamic::Unbacked {
            DimDynamic::Dynamic
        } else {
            dynamic
        };
        let off =
            self.create_symbol_with(offset, &format!("{source}.storage_offset()"), off_dynamic)?;
        Ok((sym_sizes, sym_strides, off))
    }

    /// Wraps an expression over this environment's symbols as a `SymInt`
    /// (a constant expression gives a plain int).
    ///
    /// ```
    /// use c10_core::sym::{expr::IntExpr, ShapeEnv};
    /// let env = ShapeEnv::new();
    /// assert_eq!(env.int_node(IntExpr::constant(3)).maybe_as_int(), Some(3));
    /// ```
    pub fn int_node(self: &Arc<Self>, e: IntExpr) -> SymInt {
        match e.as_const() {
            Some(v) => SymInt::Int(v),
            None => SymInt::Sym(SymNode::new(Arc::new(ExprNode {
                env: Arc::clone(self),
                value: Value::Int(e),
            }))),
        }
    }

    /// Wraps a boolean expression as a `SymBool`.
    ///
    /// ```
    /// use c10_core::sym::{expr::BoolExpr, ShapeEnv};
    /// let env = ShapeEnv::new();
    /// assert_eq!(env.bool_node(BoolExpr::Const(true)).maybe_as_bool(), Some(true));
    /// ```
    pub fn bool_node(self: &Arc<Self>, e: BoolExpr) -> SymBool {
        match e.as_const() {
            Some(b) => SymBool::Bool(b),
            None => SymBool::Sym(SymNode::new(Arc::new(ExprNode {
                env: Arc::clone(self),
                value: Value::Bool(e),
            }))),
        }
    }

    /// Every symbol, in creation order.
    ///
    /// ```
    /// let env = c10_core::sym::ShapeEnv::new();
    /// env.create_symbol(5, "x.size(0)")?;
    /// assert_eq!(env.symbols()[0].source, "x.size(0)");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn symbols(&self) -> Vec<SymbolInfo> {
        self.state.lock().symbols.clone()
    }

    /// The symbol created for `source`, if any.
    ///
    /// ```
    /// let env = c10_core::sym::ShapeEnv::new();
    /// env.create_symbol(5, "x.size(0)")?;
    /// assert_eq!(env.symbol_for_source("x.size(0)"), Some(0));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn symbol_for_source(&self, source: &str) -> Option<SymbolId> {
        self.state
            .lock()
            .symbols
            .iter()
            .find(|s| s.source == source)
            .map(|s| s.id)
    }

    /// The guards recorded so far, in order (duplicates are not
    /// recorded: a decision already implied by an earlier guard is
    /// static).
    ///
    /// ```
    /// let env = c10_core::sym::ShapeEnv::new();
    /// let s = env.create_symbol(5, "n")?;
    /// s.sym_gt(&3.into())?.guard_bool()?;
    /// assert_eq!(env.guards().len(), 1);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn guards(&self) -> Vec<Guard> {
        self.state.lock().guards.clone()
    }

    /// Conditions asserted on unbacked values, to be checked at run time
    /// (PyTorch's `deferred_runtime_asserts`).
    ///
    /// ```
    /// let env = c10_core::sym::ShapeEnv::new();
    /// let u = env.create_unbacked_symint("u");
    /// assert!(u.sym_ge(&3.into())?.expect_true()?);
    /// assert_eq!(env.deferred_runtime_asserts()[0].to_string(), "s0 >= 3");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn deferred_runtime_asserts(&self) -> Vec<BoolExpr> {
        self.state.lock().deferred.clone()
    }

    /// The replacements found from equality guards (`symbol → expr`).
    ///
    /// ```
    /// let env = c10_core::sym::ShapeEnv::new();
    /// let s = env.create_symbol(8, "n")?;
    /// s.guard_int()?;
    /// assert_eq!(env.replacements()[0].1.as_const(), Some(8));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn replacements(&self) -> Vec<(SymbolId, IntExpr)> {
        self.state
            .lock()
            .replacements
            .iter()
            .map(|(k, v)| (*k, v.clone()))
            .collect()
    }

    /// `e` with the replacements applied.
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// let env = ShapeEnv::new();
    /// let s = env.create_symbol(8, "n")?;
    /// let t = env.create_symbol(3, "m")?;
    /// let p = s.mul(&t)?;
    /// s.guard_int()?;
    /// assert_eq!(p.to_string(), "8*s1"); // printing simplifies
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn simplify(&self, e: &IntExpr) -> IntExpr {
        self.state.lock().simplify(e).into_owned()
    }

    /// `e` with the replacements applied.
    ///
    /// ```
    /// use c10_core::sym::{expr::*, ShapeEnv};
    /// let env = ShapeEnv::new();
    /// assert_eq!(env.simplify_bool(&BoolExpr::Const(true)), BoolExpr::Const(true));
    /// ```
    pub fn simplify_bool(&self, e: &BoolExpr) -> BoolExpr {
        self.state.lock().simplify_bool(e).into_owned()
    }

    /// The value of `e` under the hints, without guarding (`None` when an
    /// unbacked symbol is involved).
    ///
    /// ```
    /// use c10_core::sym::{expr::IntExpr, ShapeEnv};
    /// let env = ShapeEnv::new();
    /// env.create_symbol(8, "n")?;
    /// assert_eq!(env.size_hint(&IntExpr::symbol(0).mul(&IntExpr::constant(2))?), Some(16));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn size_hint(&self, e: &IntExpr) -> Option<i64> {
        let st = self.state.lock();
        st.simplify(e).eval(&|s| st.hint(s))
    }

    /// The value of `e` under the hints, without guarding.
    ///
    /// ```
    /// use c10_core::sym::{expr::BoolExpr, ShapeEnv};
    /// assert_eq!(ShapeEnv::new().bool_hint(&BoolExpr::Const(true)), Some(true));
    /// ```
    pub fn bool_hint(&self, e: &BoolExpr) -> Option<bool> {
        let st = self.state.lock();
        st.simplify_bool(e).eval(&|s| st.hint(s))
    }

    /// Decides a boolean expression (PyTorch's `_evaluate_expr`): static
    /// evaluation from ranges, replacements and earlier guards first (no
    /// guard); otherwise the hints decide and the outcome is recorded as
    /// a guard, or, for unbacked symbols, as [`Decision`] says.
    ///
    /// ```
    /// use c10_core::sym::{expr::*, Decision, ShapeEnv};
    /// let env = ShapeEnv::new();
    /// env.create_symbol(6, "n")?;
    /// let e = BoolExpr::rel(RelOp::Eq, &IntExpr::symbol(0), &IntExpr::constant(4));
    /// assert!(!env.evaluate_expr(&e, Decision::Guard)?);
    /// assert_eq!(env.guards()[0].to_string(), "Ne(s0, 4)");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn evaluate_expr(&self, e: &BoolExpr, how: Decision) -> Result<bool> {
        let mut st = self.state.lock();
        let e = st.simplify_bool(e).into_owned();
        let e = if st.positive { st.prune_positive(e) } else { e };
        if let Some(b) = e.as_const() {
            return Ok(b);
        }
        if let Some(b) = st.static_value(&e) {
            return Ok(b);
        }
        if how == Decision::StaticallyKnownTrue {
            return Ok(false);
        }
        if st.unhinted(&e.free_symbols()) {
            if how == Decision::SizeOblivious {
                // Size-oblivious: every unbacked symbol (all are size-like
                // here) is taken to be at least 2.
                let oblivious = |s: SymbolId| {
                    let r = st.range(s);
                    if st.hint(s).is_none() {
                        Interval {
                            lo: Some(r.lo.map_or(2, |l| l.max(2))),
                            hi: r.hi,
                        }
                    } else {
                        r
                    }
                };
                if let Some(b) = e.decide_static(&oblivious) {
                    return Ok(b);
                }
            }
            return match how {
                Decision::GuardOrFalse => Ok(false),
                Decision::GuardOrTrue => Ok(true),
                Decision::ExpectTrue => {
                    // A runtime assert is a fact for the rest of the trace
                    // too (PyTorch adds it to the axioms and solves it).
                    st.add_axioms(&e);
                    st.maybe_guard_rel(&e);
                    st.deferred.push(e);
                    Ok(true)
                }
                _ => Err(data_dependent(&e)),
            };
        }
        let value = e.eval(&|s| st.hint(s)).ok_or_else(|| {
            TensorError::runtime(format!(
                "cannot evaluate {e} from the hints (division by zero or integer overflow)"
            ))
        })?;
        st.record(if value { e } else { e.not()? });
        Ok(value)
    }

    /// The integer value of `e` under the hints, recording `Eq(e, value)`
    /// (PyTorch's `guard_int`, which specialises).
    ///
    /// ```
    /// use c10_core::sym::{expr::IntExpr, ShapeEnv};
    /// let env = ShapeEnv::new();
    /// env.create_symbol(6, "n")?;
    /// assert_eq!(env.evaluate_int(&IntExpr::symbol(0))?, 6);
    /// assert_eq!(env.symbols()[0].lo, 6);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn evaluate_int(&self, e: &IntExpr) -> Result<i64> {
        let mut st = self.state.lock();
        let e = st.simplify(e).into_owned();
        if let Some(v) = e.as_const() {
            return Ok(v);
        }
        if st.unhinted(&e.free_symbols()) {
            return Err(data_dependent(&e));
        }
        let v = e
            .eval(&|s| st.hint(s))
            .ok_or_else(|| TensorError::runtime(format!("cannot evaluate {e} from the hints")))?;
        st.record(BoolExpr::rel(RelOp::Eq, &e, &IntExpr::constant(v)));
        Ok(v)
    }

    /// Runs `f` without recording guards (PyTorch's `suppress_guards`):
    /// decisions still come from the hints.
    ///
    /// ```
    /// let env = c10_core::sym::ShapeEnv::new();
    /// let s = env.create_symbol(6, "n")?;
    /// let b = env.suppress_guards(|| s.sym_eq(&6.into())?.guard_bool())?;
    /// assert!(b && env.guards().is_empty());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn suppress_guards<R>(&self, f: impl FnOnce() -> R) -> R {
        self.state.lock().suppress += 1;
        let r = f();
        self.state.lock().suppress -= 1;
        r
    }

    /// The range conditions every backed symbol carries (`lo <= s`, and
    /// `s <= hi` when bounded): PyTorch's `produce_guards` includes them
    /// (`2 <= L['x'].size()[0]`).
    fn range_guards(st: &EnvState) -> Vec<BoolExpr> {
        let mut out = Vec::new();
        for info in &st.symbols {
            if st.replacements.contains_key(&info.id) || info.hint.is_none() {
                continue;
            }
            let s = IntExpr::symbol(info.id);
            out.push(BoolExpr::rel(RelOp::Le, &IntExpr::constant(info.lo), &s));
            if let Some(h) = info.hi {
                out.push(BoolExpr::rel(RelOp::Le, &s, &IntExpr::constant(h)));
            }
        }
        out
    }

    /// Whether the trace is valid for a new assignment of the symbols:
    /// every recorded guard, every deferred assert and every symbol's
    /// range holds. Symbols `value` leaves unassigned make it an error.
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// let env = ShapeEnv::new();
    /// let s = env.create_symbol(6, "n")?;
    /// s.sym_gt(&4.into())?.guard_bool()?;
    /// assert!(env.evaluate_guards(&|_| Some(5))?);
    /// assert!(!env.evaluate_guards(&|_| Some(4))?);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn evaluate_guards(&self, value: &dyn Fn(SymbolId) -> Option<i64>) -> Result<bool> {
        Ok(self.failing_guards(value)?.is_empty())
    }

    /// The guards (printed) that fail under an assignment.
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// let env = ShapeEnv::new();
    /// let s = env.create_symbol(6, "n")?;
    /// s.sym_gt(&4.into())?.guard_bool()?;
    /// assert_eq!(env.failing_guards(&|_| Some(3))?, vec!["s0 > 4", "5 <= s0"]); // the guard and the range it refined
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn failing_guards(&self, value: &dyn Fn(SymbolId) -> Option<i64>) -> Result<Vec<String>> {
        let st = self.state.lock();
        let mut all: Vec<BoolExpr> = st.guards.iter().map(|g| g.expr().clone()).collect();
        all.extend(st.deferred.iter().cloned());
        all.extend(Self::range_guards(&st));
        let mut failing = Vec::new();
        for g in all {
            if let Some(s) = g.free_symbols().into_iter().find(|s| value(*s).is_none()) {
                return Err(TensorError::runtime(format!(
                    "cannot evaluate guard {g}: symbol s{s} has no value"
                )));
            }
            // A guard without a value (a divisor that is 0 under this
            // assignment) does not hold.
            if g.eval(value) != Some(true) {
                failing.push(g.to_string());
            }
        }
        Ok(failing)
    }

    /// The guards over sources, as PyTorch's `produce_guards` lists them:
    /// range guards first, then the recorded guards, with each symbol
    /// printed as its source.
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// let env = ShapeEnv::new();
    /// let s = env.create_symbol(6, "x.size(0)")?;
    /// s.sym_gt(&4.into())?.guard_bool()?;
    /// assert_eq!(env.produce_guards(), vec!["5 <= x.size(0)", "x.size(0) > 4"]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn produce_guards(&self) -> Vec<String> {
        let st = self.state.lock();
        let mut all = Self::range_guards(&st);
        all.extend(st.guards.iter().map(|g| g.expr().clone()));
        all.iter()
            .map(|g| {
                rename_symbols(&g.to_string(), &|s| {
                    st.symbols.get(s as usize).map(|i| i.source.clone())
                })
            })
            .collect()
    }
}

impl ShapeEnv {
    /// The guards as PyTorch's `produce_guards` writes them: Python
    /// expressions over the sources, each fact once. First the
    /// replacements (`x.size(1) == 6`, `y.size(0) == x.size(0)`: where
    /// PyTorch relies on Dynamo's tensor-match guard for static sizes,
    /// they are spelled out here), then the recorded guards with the
    /// replacements applied (dropping those that became constant or that
    /// the symbols' ranges imply), then one range guard per remaining
    /// backed symbol (`2 <= x.size(0)`).
    ///
    /// ```
    /// use c10_core::sym::{ShapeEnv, SymInt};
    /// let env = ShapeEnv::new();
    /// let n = env.create_symbol(24, "x.size(0)")?;
    /// assert!(n.modulo(&SymInt::from(8))?.sym_eq(&SymInt::from(0))?.guard_bool()?);
    /// // `n >= 4` is recorded, and narrows the range: the range guard says it.
    /// assert!(n.sym_ge(&SymInt::from(4))?.guard_bool()?);
    /// assert_eq!(env.guards().len(), 2);
    /// assert_eq!(env.produce_guards_python(), ["(x.size(0) % 8) == 0", "4 <= x.size(0)"]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn produce_guards_python(&self) -> Vec<String> {
        let st = self.state.lock();
        let name = |text: String| {
            rename_symbols(&text, &|s| {
                st.symbols.get(s as usize).map(|i| i.source.clone())
            })
        };
        let mut out: Vec<String> = Vec::new();
        for (s, e) in &st.replacements {
            let lhs = IntExpr::symbol(*s);
            out.push(name(BoolExpr::Rel(RelOp::Eq, lhs, e.clone()).to_string()));
        }
        let mut seen: BTreeSet<BoolExpr> = BTreeSet::new();
        for g in st.guards.iter().map(Guard::expr).chain(st.deferred.iter()) {
            let e = st.simplify_bool(g).into_owned();
            if e.as_const().is_some() || e.decide_static(&|s| st.range(s)) == Some(true) {
                continue;
            }
            if seen.insert(e.canonical()) {
                out.push(name(e.to_string()));
            }
        }
        for g in Self::range_guards(&st) {
            out.push(name(g.to_string()));
        }
        out.into_iter().map(|t| python_guard_text(&t)).collect()
    }
}

/// `text` with every symbol `s<k>` (a whole token) printed as `name(k)`
/// (kept when `name` gives `None`).
fn rename_symbols(text: &str, name: &dyn Fn(SymbolId) -> Option<String>) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let starts_token = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if starts_token && b[i] == b's' {
            let mut j = i + 1;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let ends_token = j == b.len() || !(b[j].is_ascii_alphanumeric() || b[j] == b'_');
            if j > i + 1 && ends_token {
                if let Some(n) = text[i + 1..j].parse::<SymbolId>().ok().and_then(name) {
                    out.push_str(&n);
                    i = j;
                    continue;
                }
            }
        }
        let ch = text[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// The simplified integer expression of a built-in node (`None` for
/// another engine's node or a non-int node).
pub(crate) fn builtin_int_expr(node: &SymNode) -> Option<IntExpr> {
    let n = node.as_any().downcast_ref::<ExprNode>()?;
    match &n.value {
        Value::Int(e) => Some(n.env.simplify(e)),
        _ => None,
    }
}

/// The simplified boolean expression of a built-in node.
pub(crate) fn builtin_bool_expr(node: &SymNode) -> Option<BoolExpr> {
    let n = node.as_any().downcast_ref::<ExprNode>()?;
    match &n.value {
        Value::Bool(e) => Some(n.env.simplify_bool(e)),
        _ => None,
    }
}

/// What a built-in node holds.
#[derive(Clone, Debug)]
enum Value {
    Int(IntExpr),
    Bool(BoolExpr),
    /// `num / den` as a float.
    Float(IntExpr, IntExpr),
}

/// The built-in engine's node: an expression and its environment.
struct ExprNode {
    env: Arc<ShapeEnv>,
    value: Value,
}

impl fmt::Debug for ExprNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ExprNode({self})")
    }
}

impl fmt::Display for ExprNode {
    /// Prints with the environment's replacements applied (PyTorch's
    /// `SymNode.expr` does the same).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Value::Int(e) => write!(f, "{}", self.env.simplify(e)),
            Value::Bool(e) => write!(f, "{}", self.env.simplify_bool(e)),
            Value::Float(n, d) => {
                let (n, d) = (self.env.simplify(n), self.env.simplify(d));
                if d.as_const() == Some(1) {
                    write!(f, "{n}")
                } else {
                    // Parenthesised where Python's precedence needs it:
                    // `s0 + 1/s1` would read as s0 + (1/s1), `s0/2*s1` as
                    // (s0/2)*s1.
                    if n.prints_as_sum() {
                        write!(f, "({n})/")?;
                    } else {
                        write!(f, "{n}/")?;
                    }
                    if d.prints_bare() {
                        write!(f, "{d}")
                    } else {
                        write!(f, "({d})")
                    }
                }
            }
        }
    }
}

impl ExprNode {
    fn other<'a>(&self, other: &'a SymNode) -> Result<&'a ExprNode> {
        let o = other
            .as_any()
            .downcast_ref::<ExprNode>()
            .ok_or_else(|| TensorError::runtime("cannot combine SymNodes of different engines"))?;
        if !Arc::ptr_eq(&self.env, &o.env) {
            return Err(TensorError::runtime(
                "cannot combine SymNodes of different ShapeEnvs",
            ));
        }
        Ok(o)
    }

    fn node(&self, value: Value) -> SymNode {
        SymNode::new(Arc::new(ExprNode {
            env: Arc::clone(&self.env),
            value,
        }))
    }

    fn as_int(&self) -> Result<&IntExpr> {
        match &self.value {
            Value::Int(e) => Ok(e),
            _ => Err(TensorError::runtime(format!(
                "expected an int node, got {self}"
            ))),
        }
    }

    fn as_bool(&self) -> Result<&BoolExpr> {
        match &self.value {
            Value::Bool(e) => Ok(e),
            _ => Err(TensorError::runtime(format!(
                "expected a bool node, got {self}"
            ))),
        }
    }

    fn as_ratio(&self) -> Result<(IntExpr, IntExpr)> {
        match &self.value {
            Value::Int(e) => Ok((e.clone(), IntExpr::constant(1))),
            Value::Float(n, d) => Ok((n.clone(), d.clone())),
            Value::Bool(_) => Err(TensorError::runtime(format!(
                "expected a number, got {self}"
            ))),
        }
    }
}

impl SymNodeImpl for ExprNode {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn kind(&self) -> NodeKind {
        match self.value {
            Value::Int(_) => NodeKind::Int,
            Value::Bool(_) => NodeKind::Bool,
            Value::Float(..) => NodeKind::Float,
        }
    }

    fn maybe_as_int(&self) -> Option<i64> {
        match &self.value {
            Value::Int(e) => e
                .as_const()
                .or_else(|| self.env.state.lock().simplify(e).as_const()),
            _ => None,
        }
    }

    fn maybe_as_bool(&self) -> Option<bool> {
        match &self.value {
            Value::Bool(e) => e
                .as_const()
                .or_else(|| self.env.state.lock().simplify_bool(e).as_const()),
            _ => None,
        }
    }

    fn has_hint(&self) -> bool {
        let st = self.env.state.lock();
        let syms = match &self.value {
            Value::Int(e) => st.simplify(e).free_symbols(),
            Value::Bool(e) => st.simplify_bool(e).free_symbols(),
            Value::Float(n, d) => {
                let mut v = st.simplify(n).free_symbols();
                v.extend(st.simplify(d).free_symbols());
                v
            }
        };
        !st.unhinted(&syms)
    }

    fn hint_int(&self) -> Option<i64> {
        match &self.value {
            Value::Int(e) => self.env.size_hint(e),
            _ => None,
        }
    }

    fn hint_bool(&self) -> Option<bool> {
        match &self.value {
            Value::Bool(e) => self.env.bool_hint(e),
            _ => None,
        }
    }

    fn hint_float(&self) -> Option<f64> {
        let (n, d) = self.as_ratio().ok()?;
        Some(self.env.size_hint(&n)? as f64 / self.env.size_hint(&d)? as f64)
    }

    fn wrap_int(&self, v: i64) -> SymNode {
        self.node(Value::Int(IntExpr::constant(v)))
    }

    fn wrap_bool(&self, b: bool) -> SymNode {
        self.node(Value::Bool(BoolExpr::Const(b)))
    }

    fn wrap_float(&self, v: f64) -> Result<SymNode> {
        // Floats are kept as ratios of integer expressions; only
        // integral constants have an exact form.
        if v.fract() == 0.0 && v.abs() < 9.0e15 {
            Ok(self.node(Value::Float(
                IntExpr::constant(v as i64),
                IntExpr::constant(1),
            )))
        } else {
            Err(TensorError::NotImplemented(format!(
                "the built-in ShapeEnv has no symbolic form for the float {v}"
            )))
        }
    }

    fn binary(&self, op: BinOp, other: &SymNode) -> Result<SymNode> {
        let o = self.other(other)?;
        match op {
            BinOp::Add => Ok(self.node(Value::Int(self.as_int()?.add(o.as_int()?)?))),
            BinOp::Sub => Ok(self.node(Value::Int(self.as_int()?.sub(o.as_int()?)?))),
            BinOp::Mul => Ok(self.node(Value::Int(self.as_int()?.mul(o.as_int()?)?))),
            BinOp::FloorDiv => Ok(self.node(Value::Int(self.as_int()?.floordiv(o.as_int()?)?))),
            BinOp::Mod => Ok(self.node(Value::Int(self.as_int()?.modulo(o.as_int()?)?))),
            BinOp::Min | BinOp::Max => {
                let (a, b) = (self.as_int()?, o.as_int()?);
                // Decide statically from ranges where possible (sympy's
                // `Max(1, s0)` is `s0` for a size symbol `s0 >= 2`).
                let a_ge_b = {
                    let st = self.env.state.lock();
                    let ge = |x: &IntExpr, y: &IntExpr| {
                        st.static_value(&st.simplify_bool(&BoolExpr::rel(RelOp::Ge, x, y)))
                    };
                    // `b >= a` settles it too (`Max(1, s)` is `s` for a
                    // positive `s`).
                    ge(a, b).or_else(|| ge(b, a).filter(|&b_ge_a| b_ge_a).map(|_| false))
                };
                let e = match (op, a_ge_b) {
                    (BinOp::Min, Some(true)) | (BinOp::Max, Some(false)) => b.clone(),
                    (BinOp::Min, Some(false)) | (BinOp::Max, Some(true)) => a.clone(),
                    (BinOp::Min, None) => IntExpr::sym_min(a, b)?,
                    _ => IntExpr::sym_max(a, b)?,
                };
                Ok(self.node(Value::Int(e)))
            }
            BinOp::TrueDiv => {
                let (n1, d1) = self.as_ratio()?;
                let (n2, d2) = o.as_ratio()?;
                Ok(self.node(Value::Float(n1.mul(&d2)?, d1.mul(&n2)?)))
            }
            BinOp::Cmp(r) => {
                Ok(self.node(Value::Bool(BoolExpr::rel(r, self.as_int()?, o.as_int()?))))
            }
            BinOp::And => Ok(self.node(Value::Bool(self.as_bool()?.and(o.as_bool()?)?))),
            BinOp::Or => Ok(self.node(Value::Bool(self.as_bool()?.or(o.as_bool()?)?))),
        }
    }

    fn unary(&self, op: UnOp) -> Result<SymNode> {
        match op {
            UnOp::Neg => match &self.value {
                Value::Float(n, d) => Ok(self.node(Value::Float(n.neg(), d.clone()))),
                _ => Ok(self.node(Value::Int(self.as_int()?.neg()))),
            },
            UnOp::Not => Ok(self.node(Value::Bool(self.as_bool()?.not()?))),
            UnOp::ToFloat => {
                let (n, d) = self.as_ratio()?;
                Ok(self.node(Value::Float(n, d)))
            }
        }
    }

    fn decide(&self, how: Decision) -> Result<bool> {
        self.env.evaluate_expr(self.as_bool()?, how)
    }

    fn guard_int(&self) -> Result<i64> {
        self.env.evaluate_int(self.as_int()?)
    }

    fn guard_float(&self) -> Result<f64> {
        // Guarding a float specialises its integer parts.
        let (n, d) = self.as_ratio()?;
        let (n, d) = (self.env.evaluate_int(&n)?, self.env.evaluate_int(&d)?);
        Ok(n as f64 / d as f64)
    }
}

/// PyTorch's `GuardOnDataDependentSymNode` for `e`, as a structured error
/// ([`ShapeErrorKind::DataDependent`]) so that callers with a fallback can
/// tell it from other failures without reading the message.
#[cold]
fn data_dependent(e: &impl std::fmt::Display) -> TensorError {
    crate::error::ShapeError::new(
        crate::error::ShapeErrorKind::DataDependent,
        format!("Could not guard on data-dependent expression {e} (unhinted: {e})"),
    )
    .into()
}
