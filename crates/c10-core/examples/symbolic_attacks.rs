//! Times the symbolic engine on the attacks of issue #25 (deep nesting,
//! powers of sums, repeated squaring) and prints one line per attack:
//! `name<TAB>milliseconds<TAB>outcome`. `tools/symbolic_attacks_vs_torch.py`
//! runs the same attacks through PyTorch's `ShapeEnv` and prints both side
//! by side (`docs/reliability.md`).
//!
//! ```sh
//! cargo run --release -p c10-core --example symbolic_attacks
//! ```

use std::time::Instant;

use c10_core::sym::{ShapeEnv, ShapeEnvConfig, SymInt};
use c10_core::Result;

/// `e = e // b + a`, 100,000 times or until an error.
fn deep_nesting() -> Result<String> {
    let env = ShapeEnv::new();
    let (a, b) = (env.create_symbol(3, "a")?, env.create_symbol(2, "b")?);
    let mut e = env.create_symbol(5, "c")?;
    for level in 0..100_000 {
        match e.floordiv(&b).and_then(|q| q.add(&a)) {
            Ok(next) => e = next,
            Err(err) => return Ok(format!("error at level {level}: {err}")),
        }
    }
    Ok("built 100,000 levels".into())
}

/// `(a0 + ... + a7) ** k` by repeated multiplication, then one guard.
fn power_of_sum(k: u32) -> Result<String> {
    let env = ShapeEnv::new();
    let mut sum = SymInt::from(0);
    for i in 0..8 {
        sum = sum.add(&env.create_symbol(2 + i, &format!("a{i}"))?)?;
    }
    let mut e = sum.clone();
    for _ in 1..k {
        e = e.mul(&sum)?;
    }
    let is_zero = e.sym_eq(&SymInt::from(0))?.guard_bool()?;
    Ok(format!(
        "Eq(..., 0) = {is_zero}, {} guards",
        env.guards().len()
    ))
}

/// `s = s * s` 33 times, then a guard on the result.
fn squarings() -> Result<String> {
    let env = ShapeEnv::with_config(ShapeEnvConfig {
        specialize_zero_one: false,
    });
    let mut e = env.create_symbol(1, "s")?;
    for i in 0..33 {
        match e.mul(&e) {
            Ok(next) => e = next,
            Err(err) => return Ok(format!("error at squaring {}: {err}", i + 1)),
        }
    }
    Ok(format!("guard_int = {}", e.guard_int()?))
}

/// One timed attack: its name and what it does.
type Attack = (&'static str, Box<dyn Fn() -> Result<String>>);

/// `a0 + a1 + ...` over 100,000 fresh symbols, one addition at a time,
/// then one guard.
fn wide_sum() -> Result<String> {
    let env = ShapeEnv::new();
    let mut e = SymInt::from(0);
    for i in 0..100_000 {
        let s = env.create_symbol(2 + i, &format!("a{i}"))?;
        match e.add(&s) {
            Ok(next) => e = next,
            Err(err) => return Ok(format!("error at term {i}: {err}")),
        }
    }
    let big = e.sym_gt(&SymInt::from(1))?.guard_bool()?;
    Ok(format!("Gt(..., 1) = {big}, {} guards", env.guards().len()))
}

fn main() {
    let attacks: Vec<Attack> = vec![
        ("deep_nesting", Box::new(deep_nesting)),
        ("power_of_sum_k7", Box::new(|| power_of_sum(7))),
        ("power_of_sum_k13", Box::new(|| power_of_sum(13))),
        ("squarings_33", Box::new(squarings)),
        ("wide_sum", Box::new(wide_sum)),
    ];
    for (name, f) in attacks {
        let t = Instant::now();
        let out = match f() {
            Ok(s) => s,
            Err(e) => format!("error: {e}"),
        };
        println!("{name}\t{:.2}\t{out}", t.elapsed().as_secs_f64() * 1e3);
    }
}
