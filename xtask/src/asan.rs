//! `cargo xtask asan`: the library crates' tests under AddressSanitizer
//! (nightly `-Zsanitizer=address`, leak detection on), then every test
//! binary of the library crates under `valgrind --leak-check=full
//! --error-exitcode=1`. Both must come out clean.
//!
//! * ASan builds into `target/asan` (its own directory, so the sanitizer
//!   flags never invalidate the normal build) with `--target` set, so build
//!   scripts and proc macros are built without the sanitizer. The standard
//!   library is not rebuilt (`-Zbuild-std` is slow on two cores; pass
//!   `--build-std` to use it): std's own code is then uninstrumented, but
//!   every heap allocation still goes through ASan's interposed allocator,
//!   so overflows into or out of heap buffers, use-after-free and leaks are
//!   all caught. Doc tests are skipped (rustdoc would need its own flags).
//! * valgrind runs the ordinary (debug) test binaries, listed with
//!   `cargo test --no-run --message-format=json`; proc macros and doc tests
//!   are skipped. Memcheck slows code ~50x, so the tests' randomized case
//!   counts are lowered through `PROPTEST_CASES` there.
//!
//! Options: `--asan-only`, `--valgrind-only`, `--build-std`,
//! `-p CRATE` (repeatable; default: every package under `crates/` but the
//! CUDA-only interop FFI crate).

use std::env;
use std::process::{Command, Stdio};

use crate::{cargo, cargo_json, root, run};

const TARGET: &str = "x86_64-unknown-linux-gnu";

/// Entry point for `cargo xtask asan`.
pub fn asan(args: &[String]) -> Result<(), String> {
    let mut asan_on = true;
    let mut valgrind_on = true;
    let mut build_std = false;
    let mut packages: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--asan-only" => valgrind_on = false,
            "--valgrind-only" => asan_on = false,
            "--build-std" => build_std = true,
            "-p" => packages.push(it.next().ok_or("-p needs a package name")?.clone()),
            other => return Err(format!("asan: unknown option `{other}`")),
        }
    }
    if packages.is_empty() {
        packages = library_packages()?;
    }
    eprintln!("==> asan: packages: {}", packages.join(", "));
    if asan_on {
        run_asan(&packages, build_std)?;
    }
    if valgrind_on {
        run_valgrind(&packages)?;
    }
    eprintln!("==> asan: clean");
    Ok(())
}

/// Every package directory under `crates/` except `interop-ffi` (a cdylib
/// for the PyTorch round trip, tested by `cargo xtask interop`).
fn library_packages() -> Result<Vec<String>, String> {
    let dir = root().join("crates");
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    let mut v: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "interop-ffi")
        .collect();
    v.sort();
    Ok(v)
}

fn run_asan(packages: &[String], build_std: bool) -> Result<(), String> {
    let mut cmd = Command::new("cargo");
    cmd.args([
        "+nightly",
        "test",
        "--target",
        TARGET,
        "--lib",
        "--tests",
        "--no-fail-fast",
    ]);
    if build_std {
        cmd.arg("-Zbuild-std");
    }
    for p in packages {
        cmd.args(["-p", p]);
    }
    let rustflags = match env::var("RUSTFLAGS") {
        Ok(f) if !f.is_empty() => format!("{f} -Zsanitizer=address"),
        _ => "-Zsanitizer=address".to_string(),
    };
    cmd.env("RUSTFLAGS", rustflags)
        .env("CARGO_TARGET_DIR", root().join("target").join("asan"))
        // Leak detection on; giant (but legitimate) requests from the
        // overflow tests must come back as null, not abort the process.
        .env(
            "ASAN_OPTIONS",
            env::var("ASAN_OPTIONS")
                .unwrap_or_else(|_| "detect_leaks=1:allocator_may_return_null=1".into()),
        );
    run("asan", &mut cmd)
}

/// The test executables `cargo test --no-run --message-format=json`
/// reports for `packages` (no proc macros, no doc tests).
fn test_binaries(packages: &[String]) -> Result<Vec<String>, String> {
    let mut cmd = cargo();
    cmd.args([
        "test",
        "--no-run",
        "--lib",
        "--tests",
        "--message-format=json",
    ]);
    for p in packages {
        cmd.args(["-p", p]);
    }
    eprintln!("==> valgrind: listing test binaries: {cmd:?}");
    let out = cmd
        .current_dir(root())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("could not run {cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building the test binaries failed ({})",
            out.status
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut bins: Vec<String> = cargo_json::artifacts(&text)
        .filter(|a| cargo_json::is_test_profile(a) && !cargo_json::target_kind_is(a, "proc-macro"))
        .filter_map(|a| cargo_json::executable(&a))
        .collect();
    bins.sort();
    bins.dedup();
    Ok(bins)
}

/// Test binaries (by name prefix) that valgrind does not run, and why.
const VALGRIND_SKIP: &[(&str, &str)] = &[(
    "copy_threads-",
    "its point is several threads copying 16 MiB+ tensors at once, which memcheck \
     serializes and slows ~50x (over 10 minutes); the same copy kernels run \
     single-threaded in the `copy` suite, and the threaded split runs under ASan",
)];

fn run_valgrind(packages: &[String]) -> Result<(), String> {
    let probe = Command::new("valgrind").arg("--version").output();
    if !matches!(probe, Ok(ref o) if o.status.success()) {
        return Err("valgrind is not installed (apt-get install valgrind)".into());
    }
    let bins = test_binaries(packages)?;
    if bins.is_empty() {
        return Err("no test binaries found".into());
    }
    let mut failed = Vec::new();
    let mut skipped = 0;
    for bin in &bins {
        let name = bin.rsplit('/').next().unwrap_or(bin);
        if let Some((_, why)) = VALGRIND_SKIP.iter().find(|(p, _)| name.starts_with(p)) {
            eprintln!("==> valgrind: skipping {name}: {why}");
            skipped += 1;
            continue;
        }
        let mut cmd = Command::new("valgrind");
        cmd.args([
            "--leak-check=full",
            // "Possibly lost" blocks are the test harness's and std's
            // thread-locals of threads still alive at exit, not ours.
            "--errors-for-leak-kinds=definite,indirect",
            "--show-leak-kinds=definite,indirect",
            "--error-exitcode=1",
            "--quiet",
            bin.as_str(),
            "--test-threads=2",
        ])
        .env(
            "PROPTEST_CASES",
            env::var("PROPTEST_CASES").unwrap_or_else(|_| "8".into()),
        )
        .env("TORCHCORE_UNDER_VALGRIND", "1");
        if run("valgrind", &mut cmd).is_err() {
            failed.push(bin.clone());
        }
    }
    eprintln!(
        "==> valgrind: {} test binaries, {} run, {} skipped, {} failed",
        bins.len(),
        bins.len() - skipped,
        skipped,
        failed.len()
    );
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("valgrind found errors in: {}", failed.join(", ")))
    }
}
