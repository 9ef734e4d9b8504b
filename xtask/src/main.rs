//! Project automation, run as `cargo xtask <command>` (the alias lives in
//! `.cargo/config.toml`). Plain Rust whose one dependency is `serde_json`
//! (for cargo's and criterion's JSON), so it builds in seconds.
//!
//! Commands:
//!
//! * `ci`: what `.ci/run` runs: rustfmt check, no machine paths in the
//!   docs (`doc-paths`), clippy with `-D warnings`, the README's test
//!   command (`test` below), every example with its output checked
//!   (`examples`), alloc-cuda's clippy and tests with all its features (the
//!   CUDA backend), and the docs with warnings denied. `--miri` adds Miri.
//! * `examples`: runs every example under `crates/*/examples/` and checks
//!   lines of its output (`examples.rs`; an example without an entry there
//!   fails the step).
//! * `doc-paths`: fails on absolute machine paths (`/work/`, `/tmp/`,
//!   `/root/`, ...) in `README.md`, `CHANGELOG.md`, the crates' READMEs,
//!   `docs/*.md` and `benches/NOTES.md` (the notes of `docs/benchmarks.md`).
//! * `test [--python-only] [--python PY] [-- PYTEST_ARGS]`: the README's
//!   test command: `cargo test`, then the Python package's suite (see
//!   `pytest.rs`).
//! * `miri`: `cargo miri test` (nightly) over every crate that contains
//!   `unsafe` (unit and integration tests), with strict provenance except
//!   where `parking_lot`'s contended path needs permissive provenance.
//! * `conformance [FILE ...]`: runs PyTorch-generated shape-op cases (default:
//!   the project's copy of the corpus) and prints `N passed, M failed`.
//! * `bench [--vs-torch] [--no-run | --notes-only] [--force]`: the benchmark
//!   suite in `benches/` (torchcore against candle and ndarray, and
//!   libtorch's C++ API with `--vs-torch`), then regenerates
//!   `docs/benchmarks.md`, whose notes are `benches/NOTES.md` (edit them
//!   there; `--notes-only` copies them in without a run). It refuses to
//!   overwrite hand edits of `docs/benchmarks.md` unless `--force`.
//! * `interop`: builds `crates/interop-ffi` and runs `tools/interop_test.py`,
//!   the DLPack and safetensors round trips against a real PyTorch. Skipped
//!   checks (PyTorch or the `safetensors` package not importable) are
//!   reported as `PARTIAL` with the counts, never as a full pass;
//!   `--strict` makes them an error.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

mod asan;
mod bench;
mod cargo_json;
mod examples;
mod interop;
mod pytest;
mod test_cuda;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(&args[1..]),
        Some("test") => pytest::test(&args[1..]),
        Some("miri") => miri(&args[1..]),
        Some("conformance") => conformance(&args[1..]),
        Some("interop") => interop::interop(&args[1..]),
        Some("test-cuda") => return test_cuda::test_cuda(&args[1..]),
        Some("asan") => asan::asan(&args[1..]),
        Some("bench") => bench::bench(&args[1..]),
        Some("examples") => examples::examples(&args[1..]),
        Some("doc-paths") => examples::doc_paths(&args[1..]),
        Some("help") | Some("--help") | Some("-h") | None => {
            print_help();
            Ok(())
        }
        Some(other) => Err(format!("unknown command `{other}`; run `cargo xtask help`")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn print_help() {
    println!(
        "cargo xtask <command>

commands:
  ci [--miri]     fmt check, doc-paths, clippy -D warnings, tests, examples, docs
                  (-D warnings); --miri adds Miri
  examples        run every example and check lines of its output
  doc-paths       fail on absolute machine paths in README.md, docs/*.md, benches/NOTES.md
  test [--python-only] [--python PY] [-- PYTEST_ARGS..]
                  cargo test, then build crates/torchcore-py into target/py-venv
                  (maturin develop) and run its pytest suite (with PY: under that
                  interpreter, e.g. one with torch for the side-by-side tests)
  miri [CRATE..]  cargo +nightly miri test over the crates that contain `unsafe`
                  (or the named ones), lib and integration tests, strict provenance
                  where the code allows it
  conformance [FILE..]
                  run shape-op conformance cases (default: the project's corpus copy)
  bench [--vs-torch] [--no-run | --notes-only] [--force] [-- CRITERION_ARGS..]
                  criterion benches vs candle/ndarray (and libtorch with --vs-torch),
                  then regenerate docs/benchmarks.md; its notes are benches/NOTES.md
                  (--notes-only: copy them in, no run); refuses to overwrite hand
                  edits of docs/benchmarks.md unless --force
  asan [--asan-only|--valgrind-only] [--build-std] [-p CRATE..]
                  library tests under AddressSanitizer (nightly), then valgrind
                  --leak-check=full over their test binaries; both must be clean
  interop [--strict]
                  build crates/interop-ffi and run tools/interop_test.py: DLPack and
                  safetensors round trips against a real PyTorch; skipped checks (no
                  torch, no safetensors) end in `PARTIAL`, an error with --strict
  test-cuda [--build-only DIR] [--debug] [-- ARGS]
                  build and run the GPU test suite (exit 3: no CUDA driver/GPU); with
                  --build-only, make DIR the bundle (bin/, run.sh; docs/cuda.md)"
    );
}

/// The workspace root (the parent of this crate's directory).
fn root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

/// Runs one step, printing its command line and duration.
fn run(step: &str, cmd: &mut Command) -> Result<(), String> {
    eprintln!("==> {step}: {cmd:?}");
    let start = Instant::now();
    let status = cmd
        .current_dir(root())
        .status()
        .map_err(|e| format!("{step}: could not start {cmd:?}: {e}"))?;
    eprintln!("==> {step}: {status} in {:.1?}", start.elapsed());
    if status.success() {
        Ok(())
    } else {
        Err(format!("{step} failed ({status})"))
    }
}

fn cargo() -> Command {
    Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn ci(args: &[String]) -> Result<(), String> {
    let with_miri = args.iter().any(|a| a == "--miri");
    run("fmt", cargo().args(["fmt", "--all", "--", "--check"]))?;
    examples::doc_paths(&[])?;
    run(
        "clippy",
        cargo().args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]),
    )?;
    // The README's test command: `cargo test`, then the Python suite.
    pytest::test(&[])?;
    examples::examples(&[])?;
    // The CUDA backend is behind a feature the plain workspace commands
    // leave off: lint and test it too (no GPU needed: the fake driver, the
    // no-driver paths, and the PTX compile where an NVRTC is installed).
    run(
        "cuda-clippy",
        cargo().args([
            "clippy",
            "-p",
            "alloc-cuda",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
        ]),
    )?;
    run(
        "cuda-tests",
        cargo().args([
            "test",
            "-p",
            "alloc-cuda",
            "--all-features",
            "--lib",
            "--tests",
        ]),
    )?;
    // Only the `cuda` module's doctests: the others ran in `test` above.
    run(
        "cuda-doctests",
        cargo().args([
            "test",
            "-p",
            "alloc-cuda",
            "--all-features",
            "--doc",
            "--",
            "src/cuda/",
        ]),
    )?;
    // The snippet of docs/cuda.md needs the `cuda` feature to compile.
    run(
        "cuda-doc-snippets",
        cargo().args(["test", "-p", "torchcore", "--features", "cuda", "--doc"]),
    )?;
    run(
        "doc",
        cargo()
            .args(["doc", "--workspace", "--no-deps", "--all-features"])
            .env("RUSTDOCFLAGS", "-D warnings"),
    )?;
    if with_miri {
        miri(&[])?;
    }
    eprintln!("==> ci: all steps passed");
    Ok(())
}

/// Packages under `crates/` and `examples/` whose sources contain the
/// `unsafe` keyword (each package's directory is named after it).
fn crates_with_unsafe() -> Result<Vec<String>, String> {
    let mut found = Vec::new();
    for top in ["crates", "examples"] {
        let dir = root().join(top);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let src = entry.path().join("src");
            // torchcore-py is a PyO3 extension module: it needs libpython
            // and cannot run under Miri (its unsafe is FFI into CPython);
            // its soundness rests on c10-core's binding slot, which Miri
            // covers, and on the Python suite.
            if entry.file_name() == "torchcore-py" {
                continue;
            }
            if src.is_dir() && tree_contains(&src, "unsafe ")? {
                found.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    Ok(found)
}

fn tree_contains(dir: &Path, needle: &str) -> Result<bool, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if tree_contains(&path, needle)? {
                return Ok(true);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("reading {}: {e}", path.display()))?;
            if text
                .lines()
                .any(|l| !l.trim_start().starts_with("//") && l.contains(needle))
            {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

fn miri(args: &[String]) -> Result<(), String> {
    let crates: Vec<String> = if args.is_empty() {
        crates_with_unsafe()?
    } else {
        args.to_vec()
    };
    if crates.is_empty() {
        eprintln!("==> miri: no crate contains `unsafe`");
        return Ok(());
    }
    let probe = Command::new("cargo")
        .args(["+nightly", "miri", "--version"])
        .current_dir(root())
        .output();
    if !matches!(probe, Ok(ref o) if o.status.success()) {
        return Err("Miri is not installed. Install it with: rustup toolchain install nightly --component miri rust-src".into());
    }
    eprintln!("==> miri: crates with `unsafe`: {}", crates.join(", "));
    // Isolation is disabled so tests may read the clock and temporary
    // files. Strict provenance wherever the code allows it; see
    // `PERMISSIVE_PROVENANCE` for where it does not. `MIRIFLAGS` overrides
    // both (one run over every crate).
    let isolation = "-Zmiri-disable-isolation";
    let groups: Vec<(String, Vec<&String>)> = match env::var("MIRIFLAGS") {
        Ok(flags) => vec![(flags, crates.iter().collect())],
        Err(_) => {
            let (permissive, strict): (Vec<&String>, Vec<&String>) = crates
                .iter()
                .partition(|c| PERMISSIVE_PROVENANCE.contains(&c.as_str()));
            vec![
                (format!("-Zmiri-strict-provenance {isolation}"), strict),
                (
                    format!("-Zmiri-permissive-provenance {isolation}"),
                    permissive,
                ),
            ]
        }
    };
    for (flags, group) in groups {
        if group.is_empty() {
            continue;
        }
        let mut cmd = Command::new("cargo");
        // Unit and integration tests only: doctests are examples of safe
        // API use, run natively by `cargo test`, and under Miri each one
        // costs a separate interpreted compile-and-run (minutes in all on
        // 2 cores). MIRIFLAGS are interpreter flags, so the second group
        // reuses the first group's build.
        cmd.args(["+nightly", "miri", "test", "--lib", "--tests"]);
        for c in group {
            cmd.args(["-p", c]);
        }
        cmd.env("MIRIFLAGS", flags);
        run("miri", &mut cmd)?;
    }
    Ok(())
}

/// Crates whose Miri runs use permissive provenance: their tests contend
/// on storage locks, and `parking_lot_core`'s contended path keeps parked
/// threads' queue pointers in integers, which `-Zmiri-strict-provenance`
/// refuses (as unsupported, not as undefined behaviour) whenever threads
/// happen to contend. Their own code makes pointers from integers nowhere
/// on the host. `torchcore`'s integration tests (concurrency, fault
/// injection) run the same locks from several threads.
const PERMISSIVE_PROVENANCE: &[&str] = &["aten-shape", "c10-core", "c10-storage", "torchcore"];

fn conformance(files: &[String]) -> Result<(), String> {
    // Relative paths are the caller's, not the workspace root's.
    let cwd = env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    let files: Vec<String> = files
        .iter()
        .map(|f| cwd.join(f).to_string_lossy().into_owned())
        .collect();
    let mut cmd = cargo();
    cmd.args([
        "run",
        "--quiet",
        "--release",
        "-p",
        "shape-conformance",
        "--",
    ])
    .args(&files);
    run("conformance", &mut cmd)
}
