//! `cargo xtask bench [--vs-torch] [--no-run | --notes-only] [--force]
//! [-- CRITERION_ARGS..]`: runs
//! the benchmark suite (`benches/`), optionally the libtorch harness
//! (`benches/torch/bench.cpp`), and regenerates `docs/benchmarks.md` from
//! the results.
//!
//! * Criterion's medians are read back from
//!   `target/criterion/**/new/{benchmark,estimates}.json` with
//!   `serde_json` (`full_id`, `throughput.Bytes`, `median.point_estimate`).
//! * The C++ harness prints `torch <case> <normal|inference> <median ns>
//!   <bytes>` lines; they are kept in `target/torch-bench/results.txt`.
//! * Only results written by this run are used (ratios are taken within one
//!   run), unless `--no-run` asks to regenerate the report from the results
//!   on disk (with the commands and load of the last run, kept in
//!   `target/bench-last-run.txt`), e.g. after editing the notes.
//! * `benches/NOTES.md`, when present, is appended verbatim as the
//!   hand-written notes section: it is the only place to write them.
//!   `--notes-only` replaces just that section (no results needed, the
//!   tables kept byte for byte), after editing the notes.
//! * Before writing, the existing `docs/benchmarks.md` is checked for hand
//!   edits (`notes.rs`): the command refuses to delete them unless
//!   `--force` is given.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use crate::{cargo, root, run};

mod notes;
mod report;
use self::notes::{check_overwrite, splice_notes, NOTES_SOURCE, REPORT};
use self::report::{render, Report};

/// Metadata-only cases: the per-op and geometric-mean targets apply.
const META: &[(&str, &str)] = &[
    ("view", "`view` [64,1024] -> [64,32,32] (B5)"),
    ("reshape", "`reshape`, view case (B5)"),
    (
        "reshape_nc",
        "`reshape` of a transposed [8,16,64], viewable (B6)",
    ),
    ("narrow", "`narrow(0,16,512)` of M (B2)"),
    ("select", "`select(0,5)` of M"),
    ("transpose", "`transpose(0,1)` of M (B1)"),
    ("permute", "`permute(0,2,1,3)` of P4 (B3)"),
    ("expand", "`expand` [1,64] -> [512,64] (B4)"),
    ("unsqueeze", "`unsqueeze(0)` of M"),
    ("as_strided", "`as_strided` M as its transpose"),
    ("chain4", "narrow -> transpose -> unsqueeze -> expand (B13)"),
];

/// Other ns/op cases.
const OTHER_NS: &[(&str, &str)] = &[
    ("clone", "handle clone (B10)"),
    ("empty_small", "`empty([3,4])`"),
    ("zeros_small", "`zeros([3,4])`"),
    ("empty_large", "`empty([1024,1024])`"),
    ("zeros_large", "`zeros([1024,1024])` (B11)"),
    ("fill_view", "`narrow(1,1,2).fill_(0)` of M (B9)"),
    (
        "floor",
        "reference: `Arc::new` of 144 bytes + one refcount inc/dec, dropped",
    ),
    (
        "floor_empty",
        "reference: the three allocations `empty([3,4])` needs (tensor, storage, zeroed data), freed",
    ),
];

/// Copy cases (GB/s of output bytes).
const COPIES: &[(&str, &str)] = &[
    ("contig_t4096", "`contiguous()` of a transposed 4096x4096"),
    ("contig_t1024", "`contiguous()` of a transposed M (B7)"),
    ("contig_perm4d", "`contiguous()` of P4 permuted (0,2,1,3)"),
    (
        "contig_kv",
        "`contiguous()` of [8,528,64] narrowed to 512 (B8)",
    ),
    ("clone_64mib", "`clone()` of a contiguous 64 MiB tensor"),
    ("memcpy_64mib", "`memcpy` of the same 64 MiB (preallocated)"),
];

/// Functions of a group, in table order, with their column titles.
const PEERS: &[(&str, &str)] = &[
    ("candle", "candle"),
    ("ndarray_arc", "ndarray ArcArray"),
    ("ndarray_view", "ndarray view"),
];

/// One criterion result.
#[derive(Clone, Copy, Debug)]
struct Est {
    /// Median time per iteration, ns.
    ns: f64,
    /// Bytes per iteration, for throughput cases.
    bytes: Option<u64>,
}

impl Est {
    fn gbps(&self) -> Option<f64> {
        self.bytes.map(|b| b as f64 / self.ns)
    }
}

/// libtorch results: (case, mode) -> ns, bytes.
type TorchResults = BTreeMap<(String, String), Est>;

struct Options {
    vs_torch: bool,
    no_run: bool,
    notes_only: bool,
    force: bool,
    criterion_args: Vec<String>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        vs_torch: false,
        no_run: false,
        notes_only: false,
        force: false,
        criterion_args: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--vs-torch" => o.vs_torch = true,
            "--no-run" => o.no_run = true,
            "--notes-only" => o.notes_only = true,
            "--force" => o.force = true,
            "--" => o.criterion_args.extend(it.by_ref().cloned()),
            other => return Err(format!("bench: unknown argument `{other}`")),
        }
    }
    Ok(o)
}

/// The notes source (`None` when there is none) and the current report
/// (empty when there is none), after checking that writing a new report
/// loses no hand edit (unless `force`).
fn notes_and_report(force: bool) -> Result<(Option<String>, String), String> {
    let notes = fs::read_to_string(root().join(NOTES_SOURCE)).ok();
    let existing = fs::read_to_string(root().join(REPORT)).unwrap_or_default();
    if !force {
        check_overwrite(&existing, notes.as_deref().unwrap_or(""))?;
    }
    Ok((notes, existing))
}

fn write_report(text: &str) -> Result<(), String> {
    let out = root().join(REPORT);
    fs::write(&out, text).map_err(|e| format!("writing {}: {e}", out.display()))?;
    eprintln!("==> bench: wrote {}", out.display());
    Ok(())
}

/// Entry point of `cargo xtask bench`.
pub fn bench(args: &[String]) -> Result<(), String> {
    let o = parse(args)?;
    // Refuse before a long run, not after it.
    let (notes, existing) = notes_and_report(o.force)?;
    if o.notes_only {
        if existing.is_empty() {
            return Err(format!(
                "--notes-only: no {REPORT} to update; run `cargo xtask bench` first"
            ));
        }
        return write_report(&splice_notes(&existing, notes.as_deref()));
    }
    let started = SystemTime::now();
    let load_before = load_average();
    let mut commands = Vec::new();
    let torch = if o.vs_torch {
        Some(find_torch()?)
    } else {
        None
    };
    if !o.no_run {
        let mut cmd = cargo();
        cmd.args(["bench", "-p", "benches", "--bench", "shape"])
            .env("RAYON_NUM_THREADS", "1");
        if !o.criterion_args.is_empty() {
            cmd.arg("--").args(&o.criterion_args);
        }
        commands.push(format!(
            "RAYON_NUM_THREADS=1 cargo bench -p benches --bench shape{}",
            if o.criterion_args.is_empty() {
                String::new()
            } else {
                format!(" -- {}", o.criterion_args.join(" "))
            }
        ));
        run("bench", &mut cmd)?;
    }
    if let Some(t) = &torch
        && !o.no_run
    {
        build_and_run_torch(t, &mut commands)?;
    }
    let since = if o.no_run { None } else { Some(started) };
    let ours = read_criterion(&root().join("target/criterion"), since)?;
    if ours.is_empty() {
        return Err("no criterion results found under target/criterion".into());
    }
    let torch_results = if o.vs_torch {
        read_torch(&torch_results_path())?
    } else {
        TorchResults::new()
    };
    let mut load = (load_before, load_average());
    // The run's commands and load, so that `--no-run` (say, after editing
    // benches/NOTES.md) reproduces the report of the run it reads.
    let run_file = root().join("target/bench-last-run.txt");
    if o.no_run {
        if let Ok(text) = fs::read_to_string(&run_file) {
            let mut lines = text.lines();
            let before = lines.next().map(str::to_string);
            let after = lines.next().map(str::to_string);
            load = (
                before.filter(|l| !l.is_empty()),
                after.filter(|l| !l.is_empty()),
            );
            commands = lines.map(str::to_string).collect();
        }
    } else {
        let mut text = format!(
            "{}\n{}\n",
            load.0.as_deref().unwrap_or(""),
            load.1.as_deref().unwrap_or("")
        );
        for c in &commands {
            text.push_str(c);
            text.push('\n');
        }
        fs::write(&run_file, text).map_err(|e| format!("{}: {e}", run_file.display()))?;
    }
    // Read again: the notes may have been edited during the run.
    let (notes, _) = notes_and_report(o.force)?;
    let report = render(&Report {
        ours: &ours,
        torch: &torch_results,
        torch_info: torch.as_ref(),
        commands: &commands,
        load,
        notes: notes.as_deref(),
    });
    write_report(&report)
}

// ---------------------------------------------------------------------------
// libtorch
// ---------------------------------------------------------------------------

/// A pip-installed PyTorch.
struct Torch {
    dir: PathBuf,
    version: String,
    cxx11_abi: bool,
}

fn find_torch() -> Result<Torch, String> {
    let probe = Command::new("python3")
        .args([
            "-c",
            "import os, torch; print(os.path.dirname(torch.__file__)); \
             print(torch.__version__); print(int(torch._C._GLIBCXX_USE_CXX11_ABI))",
        ])
        .output();
    let out = match probe {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        _ => {
            return Err(
                "--vs-torch needs PyTorch's C++ headers and libraries, from a \
                 pip-installed PyTorch that `python3 -c 'import torch'` can import. \
                 Install it with `pip install torch` (the CPU wheel is enough: \
                 `pip install torch --index-url https://download.pytorch.org/whl/cpu`), \
                 then rerun `cargo xtask bench --vs-torch`."
                    .into(),
            )
        }
    };
    let mut lines = out.lines().map(str::trim).filter(|l| !l.is_empty());
    let (Some(dir), Some(version), Some(abi)) = (lines.next(), lines.next(), lines.next()) else {
        return Err(format!("unexpected answer from the PyTorch probe: {out:?}"));
    };
    let dir = PathBuf::from(dir);
    if !dir.join("include/ATen/ATen.h").is_file() {
        return Err(format!(
            "PyTorch at {} has no C++ headers (include/ATen/ATen.h)",
            dir.display()
        ));
    }
    Ok(Torch {
        dir,
        version: version.to_string(),
        cxx11_abi: abi == "1",
    })
}

fn torch_results_path() -> PathBuf {
    root().join("target/torch-bench/results.txt")
}

fn build_and_run_torch(t: &Torch, commands: &mut Vec<String>) -> Result<(), String> {
    let out_dir = root().join("target/torch-bench");
    fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let exe = out_dir.join("bench");
    let inc = t.dir.join("include");
    let lib = t.dir.join("lib");
    let args: Vec<String> = vec![
        "-O2".into(),
        // torch 2.15's headers require C++20.
        "-std=c++20".into(),
        format!("-D_GLIBCXX_USE_CXX11_ABI={}", u8::from(t.cxx11_abi)),
        format!("-I{}", inc.display()),
        format!("-I{}", inc.join("torch/csrc/api/include").display()),
        "benches/torch/bench.cpp".into(),
        "-o".into(),
        exe.display().to_string(),
        format!("-L{}", lib.display()),
        "-ltorch".into(),
        "-ltorch_cpu".into(),
        "-lc10".into(),
        format!("-Wl,-rpath,{}", lib.display()),
    ];
    commands.push(format!("g++ {}", args.join(" ")));
    run("torch build", Command::new("g++").args(&args))?;
    let seconds = std::env::var("TORCH_BENCH_SECONDS").unwrap_or_else(|_| "1".into());
    commands.push(format!(
        "{} {seconds} > {}",
        exe.display(),
        torch_results_path().display()
    ));
    eprintln!("==> torch run: {} {seconds}", exe.display());
    let output = Command::new(&exe)
        .arg(&seconds)
        .current_dir(root())
        .env("OMP_NUM_THREADS", "1")
        .output()
        .map_err(|e| format!("running {}: {e}", exe.display()))?;
    if !output.status.success() {
        return Err(format!(
            "the libtorch harness failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    fs::write(torch_results_path(), &output.stdout)
        .map_err(|e| format!("writing {}: {e}", torch_results_path().display()))?;
    Ok(())
}

fn read_torch(path: &Path) -> Result<TorchResults, String> {
    let text = fs::read_to_string(path).map_err(|e| {
        format!(
            "{}: {e} (run `cargo xtask bench --vs-torch` without --no-run first)",
            path.display()
        )
    })?;
    let mut out = TorchResults::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 5 && f[0] == "torch" {
            let ns: f64 = f[3].parse().map_err(|_| format!("bad line {line:?}"))?;
            let bytes: u64 = f[4].parse().map_err(|_| format!("bad line {line:?}"))?;
            out.insert(
                (f[1].to_string(), f[2].to_string()),
                Est {
                    ns,
                    bytes: (bytes > 0).then_some(bytes),
                },
            );
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// Criterion output
// ---------------------------------------------------------------------------

/// `full_id` (`group/function[/value]`) -> estimate, for every result in
/// `dir` written at or after `since`.
fn read_criterion(dir: &Path, since: Option<SystemTime>) -> Result<BTreeMap<String, Est>, String> {
    let mut out = BTreeMap::new();
    visit(dir, &mut |d| {
        let (b, e) = (d.join("new/benchmark.json"), d.join("new/estimates.json"));
        if !(b.is_file() && e.is_file()) {
            return;
        }
        if let Some(since) = since {
            let fresh = fs::metadata(&e)
                .and_then(|m| m.modified())
                .is_ok_and(|m| m >= since);
            if !fresh {
                return;
            }
        }
        let (Ok(bj), Ok(ej)) = (fs::read_to_string(&b), fs::read_to_string(&e)) else {
            return;
        };
        let (Some(id), Some(ns)) = (full_id(&bj), median(&ej)) else {
            return;
        };
        let bytes = throughput_bytes(&bj);
        out.insert(id, Est { ns, bytes });
    });
    Ok(out)
}

fn visit(dir: &Path, f: &mut dyn FnMut(&Path)) {
    f(dir);
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() && p.file_name().is_some_and(|n| n != "new" && n != "base") {
            visit(&p, f);
        }
    }
}

/// The `full_id` of a criterion `benchmark.json`.
fn full_id(benchmark_json: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(benchmark_json).ok()?;
    v["full_id"].as_str().map(str::to_owned)
}

/// The `throughput.Bytes` of a criterion `benchmark.json`, if any.
fn throughput_bytes(benchmark_json: &str) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_str(benchmark_json).ok()?;
    v["throughput"]["Bytes"].as_u64()
}

/// The median's point estimate in an `estimates.json`.
fn median(estimates_json: &str) -> Option<f64> {
    let v: serde_json::Value = serde_json::from_str(estimates_json).ok()?;
    v["median"]["point_estimate"].as_f64()
}

// ---------------------------------------------------------------------------
// Machine
// ---------------------------------------------------------------------------

fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let o = Command::new(program).args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn cpu_model() -> String {
    command_output("lscpu", &[])
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("Model name:"))
                .map(|l| l["Model name:".len()..].trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn load_average() -> Option<String> {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}

/// The locked version of a crate, from `Cargo.lock`.
fn locked_version(name: &str) -> String {
    let lock = fs::read_to_string(root().join("Cargo.lock")).unwrap_or_default();
    let pat = format!("name = \"{name}\"\nversion = \"");
    lock.find(&pat)
        .and_then(|i| {
            let rest = &lock[i + pat.len()..];
            rest.find('"').map(|j| rest[..j].to_string())
        })
        .unwrap_or_else(|| "?".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_criterion_json() {
        let e = r#"{"mean":{"confidence_interval":{"confidence_level":0.95,"lower_bound":1.0,"upper_bound":3.0},"point_estimate":2.5,"standard_error":0.1},"median":{"confidence_interval":{"confidence_level":0.95,"lower_bound":1.0,"upper_bound":3.0},"point_estimate":2.25e1,"standard_error":0.1}}"#;
        assert_eq!(median(e), Some(22.5));
        let b = r#"{"group_id":"copy","function_id":"ours","value_str":null,"throughput":{"Bytes":4096},"full_id":"copy/ours"}"#;
        assert_eq!(full_id(b).as_deref(), Some("copy/ours"));
        assert_eq!(throughput_bytes(b), Some(4096));
        assert_eq!(
            throughput_bytes(r#"{"full_id":"x","throughput":null}"#),
            None
        );
        assert_eq!(median("not json"), None);
    }

    /// The report ends with the notes part that `--notes-only` writes, so
    /// the generator's output passes its own guard.
    #[test]
    fn render_ends_with_the_notes_part() {
        let (ours, torch) = (BTreeMap::new(), TorchResults::new());
        let notes = "## A note\n\nText.\n";
        let doc = render(&Report {
            ours: &ours,
            torch: &torch,
            torch_info: None,
            commands: &[],
            load: (None, None),
            notes: Some(notes),
        });
        let top = format!("# Benchmarks\n\n{}\n## Machine", report::header(false));
        assert!(doc.starts_with(&top), "{doc}");
        assert!(doc.ends_with("\n\n## A note\n\nText.\n"), "{doc}");
        assert_eq!(splice_notes(&doc, Some(notes)), doc);
        assert_eq!(check_overwrite(&doc, "## Edited since\n"), Ok(()));
        let edited = doc.replace("Text.", "Text, by hand.");
        assert!(check_overwrite(&edited, notes).is_err());
    }

    #[test]
    fn reads_torch_lines() {
        let dir = std::env::temp_dir().join(format!("xtask-bench-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("r.txt");
        fs::write(&p, "torch-version 2.15.0\ntorch view inference 74.5 0\ntorch contig_kv normal 2e4 1048576\n").unwrap();
        let t = read_torch(&p).unwrap();
        assert_eq!(t[&("view".into(), "inference".into())].ns, 74.5);
        assert_eq!(
            t[&("contig_kv".into(), "normal".into())].bytes,
            Some(1 << 20)
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
