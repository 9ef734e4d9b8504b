//! Times view ops on a symbolic meta tensor (sizes `(s0, s1, s2)`, hints
//! 4, 6, 8), one environment reused after a warm-up, like
//! `tools/bench_symbolic.py` does for PyTorch's fake tensors; and the
//! same ops on a concrete meta tensor for scale. Results in
//! `docs/benchmarks.md` ("Symbolic view ops").
//!
//!     cargo run --release -p aten-shape --example sym_views_bench
//!
//! `-- --quick` runs each op once, untimed in any useful sense: a smoke
//! test (`cargo xtask examples` runs it so in debug mode).

use std::time::Instant;

use aten_shape::views::ViewOps;
use c10_core::sym::{ShapeEnv, SymInt};
use c10_core::{Device, Result, Tensor, TensorOptions};

fn time(name: &str, mut f: impl FnMut() -> Result<()>) -> Result<()> {
    let quick = std::env::args().any(|a| a == "--quick");
    let (warm_up, runs, n) = if quick { (0, 1, 1) } else { (200, 15, 2000) };
    for _ in 0..warm_up {
        f()?;
    }
    let mut samples = Vec::new();
    for _ in 0..runs {
        let t0 = Instant::now();
        for _ in 0..n {
            f()?;
        }
        samples.push(t0.elapsed().as_nanos() as f64 / n as f64);
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    println!("{name:<48} {:>9.0} ns", samples[samples.len() / 2]);
    Ok(())
}

fn main() -> Result<()> {
    let env = ShapeEnv::new();
    let sizes = [
        env.create_symbol(4, "x.size(0)")?,
        env.create_symbol(6, "x.size(1)")?,
        env.create_symbol(8, "x.size(2)")?,
    ];
    let meta = TensorOptions::new().device(Device::META);
    let x = Tensor::empty_symint(&sizes, meta)?;
    // The ordinary view ops: on a symbolic tensor they take the symbolic
    // path themselves.
    let xt = x.transpose(0, 1)?;
    let three = SymInt::from(3);
    println!("symbolic (s0, s1, s2):");
    time("transpose(0, 1)", || x.transpose(0, 1).map(drop))?;
    time("view(-1)", || x.view(-1).map(drop))?;
    time("view(-1, 8)", || x.view((-1, 8)).map(drop))?;
    time("narrow(1, 1, 3)", || x.narrow(1, 1, &three).map(drop))?;
    time("select(1, 2)", || x.select(1, 2).map(drop))?;
    time("narrow -> transpose -> unsqueeze -> expand", || {
        let g = x.narrow(1, 1, 3)?.transpose(0, 2)?.unsqueeze(0)?;
        let mut target = g.sym_sizes();
        target[0] = SymInt::from(5);
        g.expand(target).map(drop)
    })?;
    time("transpose(0, 1).reshape(-1) (copy)", || {
        xt.reshape(-1).map(drop)
    })?;
    time("is_contiguous() of x.transpose(0, 1)", || {
        xt.guard_is_contiguous().map(drop)
    })?;
    println!("guards recorded: {}", env.guards().len());

    let c = Tensor::empty(&[4, 6, 8], meta)?;
    println!("concrete meta (4, 6, 8), for scale:");
    time("transpose(0, 1)", || c.transpose(0, 1).map(drop))?;
    time("view(-1, 8)", || c.view(&[-1, 8]).map(drop))?;
    time("narrow(1, 1, 3)", || c.narrow(1, 1, 3).map(drop))?;
    Ok(())
}
