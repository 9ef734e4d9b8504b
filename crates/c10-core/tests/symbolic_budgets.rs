//! The symbolic engine's work is bounded by what the caller wrote, through
//! the public `SymInt` API (issue #25's attacks, as a class): deep nesting
//! is an error, never a stack overflow; products of sums stay factored, so
//! a guard on `(a0 + ... + a7)**k` costs what it costs in PyTorch; powers
//! are computed by squaring and an exponent past `u32` is an error.
//!
//! Each attack runs on a thread with a 2 MiB stack, the default for spawned
//! threads, so that an unbounded recursion would abort the test binary.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use c10_core::sym::expr::{MAX_DEPTH, MAX_SIZE};
use c10_core::sym::{ShapeEnv, SymInt};
use c10_core::{ErrorKind, Result};

fn on_small_stack(f: impl FnOnce() -> Result<()> + Send + 'static) {
    let h = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("spawn test thread");
    match h.join() {
        Ok(r) => r.expect("the attack returned an unexpected error"),
        Err(_) => panic!("the attack panicked"),
    }
}

#[test]
#[cfg_attr(miri, ignore = "safe code only, and slow under the interpreter")]
fn a_hundred_thousand_levels_of_floordiv_are_an_error() {
    on_small_stack(|| {
        let env = ShapeEnv::new();
        let a = env.create_symbol(3, "a")?;
        let b = env.create_symbol(2, "b")?;
        let mut e = env.create_symbol(5, "c")?;
        let mut stopped = None;
        for level in 0..100_000 {
            match e.floordiv(&b).and_then(|q| q.add(&a)) {
                Ok(next) => e = next,
                Err(err) => {
                    stopped = Some((level, err));
                    break;
                }
            }
        }
        let (level, err) = stopped.expect("the depth budget stops the loop");
        assert_eq!(level, MAX_DEPTH as usize);
        assert_eq!(err.kind(), ErrorKind::Runtime);
        assert!(err.to_string().contains("RecursionError"), "{err}");
        // The deepest expression allowed works everywhere: hint, guard,
        // printing, comparison, clone and drop.
        let hint = e.hint().expect("hinted");
        assert_eq!(e.guard_int()?, hint);
        assert!(e.to_string().len() > MAX_DEPTH as usize);
        let copy = e.clone();
        assert!(copy.sym_ge(&SymInt::from(3))?.guard_bool()?);
        assert!(!env.guards().is_empty());
        drop((e, copy));
        Ok(())
    });
}

#[test]
#[cfg_attr(miri, ignore = "safe code only, and slow under the interpreter")]
fn min_max_and_mod_chains_are_bounded_too() {
    on_small_stack(|| {
        let env = ShapeEnv::with_config(c10_core::sym::ShapeEnvConfig {
            specialize_zero_one: false,
        });
        let a = env.create_symbol(7, "a")?;
        let b = env.create_symbol(9, "b")?;
        let mut e = a.clone();
        let mut failed = None;
        for level in 0..100_000 {
            let next = e
                .max(&b)
                .and_then(|m| m.modulo(&a))
                .and_then(|m| m.min(&b))
                .and_then(|m| m.add(&e));
            match next {
                Ok(n) => e = n,
                Err(err) => {
                    failed = Some((level, err));
                    break;
                }
            }
        }
        let (level, err) = failed.expect("a budget stops the loop");
        assert!(level <= MAX_DEPTH as usize, "{level}");
        assert_eq!(err.kind(), ErrorKind::Runtime);
        e.guard_int()?;
        Ok(())
    });
}

#[test]
#[cfg_attr(miri, ignore = "safe code only, and slow under the interpreter")]
fn a_guard_on_a_power_of_a_sum_of_eight_symbols_is_cheap() {
    on_small_stack(|| {
        for k in [7u32, 13, 40, 1000] {
            let env = ShapeEnv::new();
            let syms = (0..8)
                .map(|i| env.create_symbol(2 + i, &format!("a{i}")))
                .collect::<Result<Vec<_>>>()?;
            let mut sum = SymInt::from(0);
            for s in &syms {
                sum = sum.add(s)?;
            }
            let mut e = sum.clone();
            for _ in 1..k {
                e = e.mul(&sum)?;
            }
            assert!(e.expr().expect("symbolic").size() <= MAX_SIZE);
            // Ranges settle it (every symbol >= 2): no guard recorded.
            assert!(!e.sym_eq(&SymInt::from(0))?.guard_bool()?);
            assert!(e.sym_gt(&SymInt::from(1))?.guard_bool()?);
            assert!(env.guards().is_empty(), "k = {k}: {:?}", env.guards());
            // A guard that needs the hint is recorded (where the value
            // fits an i64 at the hints: 44**7 does, 44**13 does not, and
            // an overflowing hint is an error, not a wrong answer).
            let s0_big = syms[0].mul(&SymInt::from(1_000_000_000_000))?;
            match e.sym_lt(&s0_big)?.guard_bool() {
                Ok(decided) => {
                    assert_eq!(k, 7);
                    assert!(decided, "44**7 (3.2e11) < 2e12");
                    assert_eq!(env.guards().len(), 1);
                }
                Err(err) => {
                    assert!(k > 7);
                    assert!(err.to_string().contains("overflow"), "{err}");
                }
            }
        }
        Ok(())
    });
}

#[test]
#[cfg_attr(miri, ignore = "safe code only, and slow under the interpreter")]
fn repeated_squaring_stops_at_the_exponent_budget() {
    on_small_stack(|| {
        let env = ShapeEnv::with_config(c10_core::sym::ShapeEnvConfig {
            specialize_zero_one: false,
        });
        let s = env.create_symbol(1, "s")?;
        let mut e = s.clone();
        let mut squarings = 0;
        loop {
            match e.mul(&e) {
                Ok(n) => {
                    e = n;
                    squarings += 1;
                }
                Err(err) => {
                    assert!(err.to_string().contains("exponent"), "{err}");
                    break;
                }
            }
            assert!(squarings <= 32, "the exponent never overflowed");
        }
        assert_eq!(squarings, 31);
        // s**(2**31) at the hint 1 is 1; guarding it specialises s.
        assert_eq!(e.hint(), Some(1));
        assert_eq!(e.guard_int()?, 1);
        // The guard is not linear, so (as in PyTorch) it stays a guard;
        // evaluating it is O(log p) per assignment.
        let guards = env.guards();
        assert_eq!(guards.len(), 1);
        assert_eq!(guards[0].evaluate(&|_| Some(1)), Some(true));
        assert_eq!(guards[0].evaluate(&|_| Some(-1)), Some(true));
        assert_eq!(guards[0].evaluate(&|_| Some(0)), Some(false));
        assert_eq!(
            guards[0].evaluate(&|_| Some(2)),
            None,
            "2**(2**31) overflows"
        );
        Ok(())
    });
}

#[test]
#[cfg_attr(miri, ignore = "safe code only, and slow under the interpreter")]
fn a_sum_of_a_hundred_thousand_symbols_stops_at_the_size_budget() {
    on_small_stack(|| {
        let env = ShapeEnv::new();
        let mut e = SymInt::from(0);
        let mut stopped = None;
        for i in 0..100_000 {
            let s = env.create_symbol(2 + i, &format!("a{i}"))?;
            match e.add(&s) {
                Ok(next) => e = next,
                Err(err) => {
                    stopped = Some((i, err));
                    break;
                }
            }
        }
        let (terms, err) = stopped.expect("the size budget stops the sum");
        // Each term is a monomial and its symbol: two nodes.
        assert_eq!(terms as u64, MAX_SIZE / 2);
        assert!(err.to_string().contains("too large"), "{err}");
        assert!(e.sym_gt(&SymInt::from(1))?.guard_bool()?);
        Ok(())
    });
}

/// The budgets leave room for real shapes: the storage extent of a
/// contiguous tensor with 64 symbolic dims, `1 + sum((size_i - 1) *
/// stride_i)` with each stride a product of the later sizes.
#[test]
#[cfg_attr(miri, ignore = "safe code only, and slow under the interpreter")]
fn sixty_four_symbolic_dims_fit_the_budgets() {
    on_small_stack(|| {
        let env = ShapeEnv::new();
        let sizes = (0..64)
            .map(|i| env.create_symbol(2 + i, &format!("x.size({i})")))
            .collect::<Result<Vec<_>>>()?;
        let mut strides = vec![SymInt::from(1); 64];
        for i in (0..63).rev() {
            strides[i] = strides[i + 1].mul(&sizes[i + 1])?;
        }
        let mut extent = SymInt::from(1);
        for (size, stride) in sizes.iter().zip(&strides) {
            extent = extent.add(&size.sub(&SymInt::from(1))?.mul(stride)?)?;
        }
        let numel = strides[0].mul(&sizes[0])?;
        // extent == numel for a contiguous tensor; decided without a guard.
        assert!(extent.sym_eq(&numel)?.guard_bool()?);
        assert!(env.guards().is_empty());
        Ok(())
    });
}
