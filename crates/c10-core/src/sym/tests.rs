//! Unit tests of the symbolic-shape machinery against PyTorch's
//! observed behaviour (docs: symbolic-shapes reference, §4 and §8).

use super::expr::{BoolExpr, IntExpr, RelOp};
use super::rules::is_contiguous;
use super::*;

fn sym3(env: &std::sync::Arc<ShapeEnv>) -> (SymInt, SymInt, SymInt) {
    (
        env.create_symbol(4, "x.size(0)").unwrap(),
        env.create_symbol(6, "x.size(1)").unwrap(),
        env.create_symbol(8, "x.size(2)").unwrap(),
    )
}

fn guards(env: &ShapeEnv) -> Vec<String> {
    env.guards().iter().map(|g| g.to_string()).collect()
}

#[test]
fn sizes_of_values() {
    assert_eq!(std::mem::size_of::<SymInt>(), 16);
    assert_eq!(std::mem::size_of::<SymNode>(), 16);
}

#[test]
fn zero_one_specialisation_and_ranges() {
    let env = ShapeEnv::new();
    assert_eq!(env.create_symbol(0, "a").unwrap().maybe_as_int(), Some(0));
    assert_eq!(env.create_symbol(1, "b").unwrap().maybe_as_int(), Some(1));
    let s = env.create_symbol(5, "c").unwrap();
    assert_eq!(env.symbols()[0].lo, 2);
    // Eq(s, 1) is statically false; no guard.
    assert!(!s.sym_eq(&1.into()).unwrap().guard_bool().unwrap());
    assert!(env.guards().is_empty());
    let env = ShapeEnv::with_config(ShapeEnvConfig {
        specialize_zero_one: false,
    });
    let s = env.create_symbol(1, "a").unwrap();
    assert!(s.is_symbolic());
    assert!(s.sym_eq(&1.into()).unwrap().guard_bool().unwrap());
    assert_eq!(guards(&env), ["Eq(s0, 1)"]);
    // The replacement makes s a constant.
    assert_eq!(s.maybe_as_int(), Some(1));
}

#[test]
fn strided_slice_contiguity_guards_ne() {
    let env = ShapeEnv::new();
    let (a, b, c) = sym3(&env);
    let sizes = [a.clone(), b.clone(), SymInt::from(4)];
    let strides = [b.mul(&c).unwrap(), c.clone(), SymInt::from(1)];
    assert!(!is_contiguous(&sizes, &strides).unwrap());
    assert_eq!(guards(&env), ["Ne(s2, 4)"]);
}

#[test]
fn guard_int_specialises_and_simplifies() {
    let env = ShapeEnv::new();
    let (a, b, c) = sym3(&env);
    let q = a
        .mul(&b)
        .unwrap()
        .mul(&c)
        .unwrap()
        .floordiv(&8.into())
        .unwrap();
    assert_eq!(c.guard_int().unwrap(), 8);
    assert_eq!(q.to_string(), "s0*s1");
    assert_eq!(c.maybe_as_int(), Some(8));
    assert_eq!(env.symbols()[2].lo, 8);
    assert_eq!(env.symbols()[2].hi, Some(8));
}

#[test]
fn equal_symbols_are_unified() {
    let env = ShapeEnv::new();
    let a = env.create_symbol(8, "x.size(2)").unwrap();
    let b = env.create_symbol(8, "y.size(0)").unwrap();
    assert!(a.sym_eq(&b).unwrap().guard_bool().unwrap());
    assert_eq!(guards(&env), ["Eq(s0, s1)"]);
    assert_eq!(b.to_string(), "s0");
    // A later identical question is static.
    assert!(b.sym_eq(&a).unwrap().guard_bool().unwrap());
    assert_eq!(env.guards().len(), 1);
}

#[test]
fn inequalities_refine_ranges() {
    let env = ShapeEnv::new();
    let s = env.create_symbol(6, "n").unwrap();
    assert!(s.sym_ge(&4.into()).unwrap().guard_bool().unwrap());
    assert_eq!(env.symbols()[0].lo, 4);
    // Now s > 3 is static.
    assert!(s.sym_gt(&3.into()).unwrap().guard_bool().unwrap());
    assert_eq!(env.guards().len(), 1);
    assert!(s.sym_lt(&10.into()).unwrap().guard_bool().unwrap());
    assert_eq!(env.symbols()[0].hi, Some(9));
}

#[test]
fn unbacked_decisions() {
    let env = ShapeEnv::new();
    let u = env.create_unbacked_symint("u0");
    let e = u.sym_eq(&5.into()).unwrap();
    assert!(e.guard_bool().is_err());
    assert!(!e.guard_or_false().unwrap());
    assert!(e.guard_or_true().unwrap());
    assert!(e.expect_true().unwrap());
    assert_eq!(env.deferred_runtime_asserts().len(), 1);
    assert!(env.guards().is_empty());
    // Statically known: u >= 0.
    assert!(u
        .sym_ge(&0.into())
        .unwrap()
        .statically_known_true()
        .unwrap());
}

#[test]
fn engines_and_envs_do_not_mix() {
    let e1 = ShapeEnv::new();
    let e2 = ShapeEnv::new();
    let a = e1.create_symbol(4, "a").unwrap();
    let b = e2.create_symbol(4, "b").unwrap();
    assert!(a.add(&b).is_err());
}

#[test]
fn threads_share_one_env() {
    let env = ShapeEnv::new();
    let s = env.create_symbol(6, "n").unwrap();
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let s = s.clone();
            std::thread::spawn(move || s.sym_gt(&SymInt::from(i)).unwrap().guard_bool().unwrap())
        })
        .collect();
    for h in handles {
        assert!(h.join().unwrap());
    }
    // i = 0, 1 are static (s >= 2), 2 and 3 guard (maybe implied by the other).
    assert!(env.guards().len() <= 2);
}

#[test]
fn produce_and_evaluate_guards() {
    let env = ShapeEnv::new();
    let (a, _b, c) = sym3(&env);
    let numel = a.mul(&c).unwrap();
    let d = numel.modulo(&16.into()).unwrap().sym_eq(&0.into()).unwrap();
    assert!(d.guard_bool().unwrap());
    let g = env.produce_guards();
    assert_eq!(g.last().unwrap(), "Eq(Mod(x.size(0)*x.size(2), 16), 0)");
    assert!(g.contains(&"2 <= x.size(1)".to_string()));
    assert!(!env
        .evaluate_guards(&|s| Some([3, 7, 5][s as usize]))
        .unwrap());
    assert!(env
        .evaluate_guards(&|s| Some([2, 7, 8][s as usize]))
        .unwrap());
    assert!(env.evaluate_guards(&|_| None).is_err());
}

#[test]
fn expression_static_facts() {
    let r = |_| expr::Interval::at_least(2);
    let s = IntExpr::symbol(0);
    let h = s
        .add(&IntExpr::constant(1))
        .and_then(|e| e.floordiv(&IntExpr::constant(2)))
        .unwrap();
    // (s+1)//2 < s for s >= 2
    assert_eq!(BoolExpr::rel(RelOp::Lt, &h, &s).decide_static(&r), None);
    assert_eq!(
        BoolExpr::rel(RelOp::Ge, &h, &IntExpr::constant(1)).decide_static(&r),
        Some(true)
    );
}

fn guard_texts(env: &ShapeEnv) -> Vec<String> {
    env.guards().iter().map(|g| g.to_string()).collect()
}

#[test]
fn product_equal_to_zero_solves_for_the_one_factor_that_can_be_zero() {
    // PyTorch: Eq(s0*s1*s2*(s3 - 2), 0) gives the replacement s3 = 2
    // (the other factors are positive size symbols).
    let env = ShapeEnv::new();
    let s: Vec<SymInt> = [4, 6, 8, 2]
        .iter()
        .enumerate()
        .map(|(i, &h)| env.create_symbol(h, &format!("x.size({i})")).unwrap())
        .collect();
    let last = s[3].sub(&2.into()).unwrap();
    let numel = s[0]
        .mul(&s[1])
        .unwrap()
        .mul(&s[2])
        .unwrap()
        .mul(&last)
        .unwrap();
    assert!(numel.sym_eq(&0.into()).unwrap().expect_true().unwrap());
    assert_eq!(env.replacements().len(), 1);
    assert_eq!(env.replacements()[0].0, 3);
    assert_eq!(env.replacements()[0].1.as_const(), Some(2));
    // Every later expression uses it: the element count is 0.
    assert_eq!(numel.maybe_as_int(), Some(0));
    assert_eq!(s[3].mul(&s[0]).unwrap().to_string(), "2*s0");
    assert_eq!(env.symbols()[3].lo, 2);
    assert_eq!(env.symbols()[3].hi, Some(2));
}

#[test]
fn linear_equalities_become_replacements_as_in_pytorch() {
    // Eq(2*s0 + 1, 17): s0 = 8.
    let env = ShapeEnv::new();
    let a = env.create_symbol(8, "a").unwrap();
    let two_a = a.mul(&2.into()).unwrap().add(&1.into()).unwrap();
    assert!(two_a.sym_eq(&17.into()).unwrap().guard_bool().unwrap());
    assert_eq!(a.maybe_as_int(), Some(8));
    // Eq(s0, 2*s1): the symbol with the larger hint is replaced, and its
    // range narrows to the target's bounds ([4, oo)).
    let env = ShapeEnv::new();
    let (a, b) = (
        env.create_symbol(6, "a").unwrap(),
        env.create_symbol(3, "b").unwrap(),
    );
    let twice = b.mul(&2.into()).unwrap();
    assert!(a.sym_eq(&twice).unwrap().guard_bool().unwrap());
    assert_eq!(a.to_string(), "2*s1");
    assert_eq!(env.symbols()[0].lo, 4);
    // Eq(s0*(s1 + s2 - 13), 0): 13 - s2 does not fit s1's range: no
    // replacement (PyTorch's `_set_replacement`), only the guard.
    let env = ShapeEnv::new();
    let (a, b, c) = (
        env.create_symbol(3, "a").unwrap(),
        env.create_symbol(8, "b").unwrap(),
        env.create_symbol(5, "c").unwrap(),
    );
    let e = a.mul(&b.add(&c).unwrap().sub(&13.into()).unwrap()).unwrap();
    assert!(e.sym_eq(&0.into()).unwrap().guard_bool().unwrap());
    assert!(env.replacements().is_empty());
    // Ne teaches nothing; a bound on one symbol narrows its range.
    let env = ShapeEnv::new();
    let a = env.create_symbol(8, "a").unwrap();
    assert!(a.sym_ne(&3.into()).unwrap().guard_bool().unwrap());
    assert!(a.sym_ge(&5.into()).unwrap().guard_bool().unwrap());
    assert!(env.replacements().is_empty());
    assert_eq!(env.symbols()[0].lo, 5);
}

#[test]
fn the_same_fact_in_another_spelling_records_no_second_guard() {
    // narrow's `1 <= n - 3`, then the slice clamp's `n < 4`: PyTorch
    // records only the first.
    let env = ShapeEnv::new();
    let n = env.create_symbol(48, "n").unwrap();
    let q = n.floordiv(&8.into()).unwrap();
    let rest = q.sub(&3.into()).unwrap();
    assert!(SymInt::from(1)
        .sym_le(&rest)
        .unwrap()
        .expect_true()
        .unwrap());
    assert!(!q.sym_lt(&4.into()).unwrap().guard_bool().unwrap());
    assert!(q.sym_ge(&4.into()).unwrap().guard_bool().unwrap());
    assert!(q.sym_gt(&2.into()).unwrap().guard_bool().unwrap());
    assert_eq!(guard_texts(&env), ["1 <= ((s0)//8) - 3"]);
}

#[test]
fn size_oblivious_decisions_assume_unbacked_sizes_of_at_least_two() {
    let env = ShapeEnv::new();
    let (u, v) = (
        env.create_unbacked_symint("u"),
        env.create_unbacked_symint("v"),
    );
    let n = u.mul(&v).unwrap();
    assert!(!n.sym_eq(&0.into()).unwrap().guard_size_oblivious().unwrap());
    assert!(!u.sym_eq(&1.into()).unwrap().guard_size_oblivious().unwrap());
    assert!(n.sym_eq(&8.into()).unwrap().guard_size_oblivious().is_err());
    // guard_or_false is not size-oblivious (PyTorch 2.15).
    assert!(!n.sym_gt(&1.into()).unwrap().guard_or_false().unwrap());
    assert!(env.guards().is_empty());
    // Backed symbols guard as with guard_bool.
    let b = env.create_symbol(5, "b").unwrap();
    assert!(!b.sym_eq(&4.into()).unwrap().guard_size_oblivious().unwrap());
    assert_eq!(guard_texts(&env), ["Ne(s2, 4)"]);
}

#[test]
fn runtime_asserts_are_facts_for_later_decisions() {
    let env = ShapeEnv::new();
    let u = env.create_unbacked_symint("u");
    let m = u.modulo(&8.into()).unwrap().sym_eq(&0.into()).unwrap();
    assert!(m.expect_true().unwrap());
    assert!(m.statically_known_true().unwrap());
    assert_eq!(env.deferred_runtime_asserts().len(), 1);
}

#[test]
fn produce_guards_python_uses_python_syntax_over_sources() {
    let env = ShapeEnv::new();
    let (a, b) = (
        env.create_symbol(4, "L['x'].size()[0]").unwrap(),
        env.create_symbol(6, "L['x'].size()[1]").unwrap(),
    );
    let n = a.mul(&b).unwrap();
    let ok = n
        .modulo(&8.into())
        .unwrap()
        .sym_eq(&0.into())
        .unwrap()
        .sym_or(&n.sym_eq(&8.into()).unwrap())
        .unwrap();
    assert!(ok.expect_true().unwrap());
    assert!(!b.sym_eq(&4.into()).unwrap().guard_bool().unwrap());
    assert!(b.sym_ge(&3.into()).unwrap().guard_bool().unwrap());
    assert_eq!(
        env.produce_guards_python(),
        [
            "((L['x'].size()[0]*L['x'].size()[1]) % 8) == 0 or (L['x'].size()[0]*L['x'].size()[1]) == 8",
            "L['x'].size()[1] != 4",
            "2 <= L['x'].size()[0]",
            "3 <= L['x'].size()[1]",
        ]
    );
}
