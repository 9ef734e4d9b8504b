//! `cargo xtask test-cuda [--build-only DIR] [--debug] [-- ARGS]`: the GPU
//! test suite (see `docs/cuda.md`).
//!
//! Builds the test binaries of `alloc-cuda` and `torchcore` with their
//! `cuda` feature (the `cuda-bundle` profile: optimised like release, no
//! debuginfo, stripped, so the printed timings mean something and the
//! bundle is small; the debug profile with `--debug`), finds them in
//! cargo's `--message-format=json` output, then either
//!
//! * runs them: first the probe (`alloc-cuda`'s `gpu_probe` test with
//!   `ALLOC_CUDA_PROBE_EXIT=1`), which ends the command with exit status
//!   [`NO_GPU_EXIT`] and "no CUDA driver/GPU found" where there is none;
//!   then every binary, the GPU suite single-threaded with its output shown
//!   (`ARGS` after `--` go to the GPU suite, e.g. a test name filter), and
//!   finally the `TIMING` lines again as a summary; or
//! * with `--build-only DIR`, makes DIR the bundle for a GPU machine without
//!   a Rust toolchain: the binaries in `DIR/bin/`, the entry script
//!   `DIR/run.sh` and `DIR/torch_check.py` (from `tools/cuda-bundle/`), and
//!   a fake CUDA driver in `DIR/fake-driver/` (when a C compiler exists) for
//!   `run.sh --fake-driver`. It fails if the bundle exceeds
//!   [`BUNDLE_LIMIT`].

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use crate::{cargo, cargo_json, root};

/// The exit status for "no CUDA driver/GPU found".
pub const NO_GPU_EXIT: u8 = 3;

/// The most a GPU machine receives: the bundle must stay below it.
pub const BUNDLE_LIMIT: u64 = 64 << 20;

/// The cargo profile of the bundle (workspace `Cargo.toml`).
const BUNDLE_PROFILE: &str = "cuda-bundle";

/// One test binary.
#[derive(Debug, Clone)]
struct TestBinary {
    /// `<package dir>-<target>` (`alloc-cuda-gpu`, `torchcore-lib`).
    name: String,
    path: PathBuf,
}

impl TestBinary {
    /// Whether this is the GPU suite itself (run single-threaded, output
    /// shown, extra arguments passed).
    fn is_gpu_suite(&self) -> bool {
        self.name == "alloc-cuda-gpu"
    }

    fn is_probe(&self) -> bool {
        self.name == "alloc-cuda-gpu_probe"
    }

    fn args(&self, extra: &[String]) -> Vec<String> {
        let mut v = Vec::new();
        if self.is_gpu_suite() {
            v.extend(extra.iter().cloned());
            v.push("--test-threads=1".into());
            v.push("--nocapture".into());
        }
        v
    }
}

struct Options {
    build_only: Option<PathBuf>,
    release: bool,
    extra: Vec<String>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        build_only: None,
        release: true,
        extra: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--build-only" => {
                let dir = it
                    .next()
                    .ok_or("--build-only needs a directory: cargo xtask test-cuda --build-only DIR")?;
                // Relative to the caller's directory, not the workspace.
                let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
                o.build_only = Some(cwd.join(dir));
            }
            "--debug" => o.release = false,
            "--" => {
                o.extra = it.by_ref().cloned().collect();
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}`; usage: cargo xtask test-cuda [--build-only DIR] [--debug] [-- TEST ARGS]"
                ))
            }
        }
    }
    Ok(o)
}

/// The test binaries named in cargo's JSON messages.
fn binaries_from_json(stdout: &str) -> Vec<TestBinary> {
    let mut found: Vec<TestBinary> = Vec::new();
    for a in cargo_json::artifacts(stdout) {
        // Examples are built too, but only test harnesses are wanted.
        if !cargo_json::is_test_profile(&a) {
            continue;
        }
        let Some(exe) = cargo_json::executable(&a) else {
            continue;
        };
        let package = a["manifest_path"]
            .as_str()
            .and_then(|m| {
                Path::new(m)
                    .parent()
                    .and_then(Path::file_name)
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .unwrap_or_else(|| "unknown".into());
        let target = if cargo_json::target_kind_is(&a, "lib") {
            "lib".to_owned()
        } else {
            a["target"]["name"].as_str().unwrap_or("test").to_owned()
        };
        let name = format!("{package}-{target}");
        if !found.iter().any(|b| b.name == name) {
            found.push(TestBinary {
                name,
                path: PathBuf::from(exe),
            });
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

fn build(release: bool) -> Result<Vec<TestBinary>, String> {
    let mut cmd = cargo();
    cmd.args([
        "test",
        "-p",
        "alloc-cuda",
        "-p",
        "torchcore",
        "--features",
        "cuda",
        "--no-run",
        "--message-format=json",
    ]);
    if release {
        cmd.args(["--profile", BUNDLE_PROFILE]);
    }
    eprintln!("==> test-cuda: building: {cmd:?}");
    let out = cmd
        .current_dir(root())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("building the CUDA tests failed ({})", out.status));
    }
    let bins = binaries_from_json(&String::from_utf8_lossy(&out.stdout));
    if !bins.iter().any(TestBinary::is_probe) || !bins.iter().any(TestBinary::is_gpu_suite) {
        return Err("cargo built no alloc-cuda gpu / gpu_probe test binaries".into());
    }
    Ok(bins)
}

/// Runs `bin` with `args`, echoing its output and collecting `TIMING`
/// lines; returns whether it succeeded.
fn run_binary(
    bin: &TestBinary,
    args: &[String],
    timings: &mut Vec<String>,
) -> Result<bool, String> {
    eprintln!("==> test-cuda: {} {}", bin.name, args.join(" "));
    let mut child = Command::new(&bin.path)
        .args(args)
        .current_dir(root())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", bin.path.display()))?;
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            println!("{line}");
            if line.starts_with("TIMING ") {
                timings.push(line);
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for {}: {e}", bin.name))?;
    Ok(status.success())
}

fn probe(bins: &[TestBinary]) -> Result<Option<String>, String> {
    let probe = bins
        .iter()
        .find(|b| b.is_probe())
        .ok_or("no probe binary")?;
    let out = Command::new(&probe.path)
        .args(["--exact", "probe", "--nocapture", "--test-threads=1"])
        .env("ALLOC_CUDA_PROBE_EXIT", "1")
        .output()
        .map_err(|e| format!("could not run the probe: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    print!("{text}");
    match out.status.code() {
        Some(c) if c == i32::from(NO_GPU_EXIT) => Ok(Some(
            text.lines()
                .find_map(|l| l.find("no CUDA driver/GPU found").map(|i| &l[i..]))
                .unwrap_or("no CUDA driver/GPU found")
                .to_owned(),
        )),
        _ if out.status.success() => Ok(None),
        _ => Err(format!(
            "the CUDA probe failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

fn run_all(bins: &[TestBinary], extra: &[String]) -> Result<ExitCode, String> {
    if let Some(reason) = probe(bins)? {
        eprintln!("xtask: {reason}");
        eprintln!(
            "xtask: the GPU suite cannot run here (exit status {NO_GPU_EXIT}); build it with `cargo xtask test-cuda --build-only DIR` and run DIR/run.sh on a GPU machine"
        );
        return Ok(ExitCode::from(NO_GPU_EXIT));
    }
    let mut timings = Vec::new();
    let mut failed = Vec::new();
    for b in bins {
        if !run_binary(b, &b.args(extra), &mut timings)? {
            failed.push(b.name.clone());
        }
    }
    if !timings.is_empty() {
        println!("==> test-cuda: timings");
        for t in &timings {
            println!("{t}");
        }
    }
    if failed.is_empty() {
        eprintln!("==> test-cuda: all {} test binaries passed", bins.len());
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("xtask: error: failed: {}", failed.join(", "));
        Ok(ExitCode::FAILURE)
    }
}

/// The bundle's scripts, copied from `tools/cuda-bundle/`.
const SCRIPTS: [&str; 2] = ["run.sh", "torch_check.py"];

fn set_executable(path: &Path) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("chmod {}: {e}", path.display()))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Compiles the fake driver (`libcuda.so.1`, `libcuda.so`) and fake NVRTC
/// (`libnvrtc.so`) into `dir`; `Err` with the reason when there is no C
/// compiler.
fn fake_driver(dir: &Path) -> Result<(), String> {
    let src = root().join("crates/alloc-cuda/tests/gpu_suite/fake_cuda.c");
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    for (name, nvrtc) in [("libcuda.so.1", false), ("libnvrtc.so", true)] {
        let mut cmd = Command::new(&cc);
        cmd.args(["-shared", "-fPIC", "-O1", "-o"])
            .arg(dir.join(name))
            .arg(&src);
        if nvrtc {
            cmd.arg("-DFAKE_NVRTC");
        }
        let out = cmd.output().map_err(|e| format!("{cc}: {e}"))?;
        if !out.status.success() {
            return Err(format!("{cc}: {}", String::from_utf8_lossy(&out.stderr)));
        }
    }
    std::fs::copy(dir.join("libcuda.so.1"), dir.join("libcuda.so"))
        .map_err(|e| format!("copying the fake driver: {e}"))?;
    Ok(())
}

/// The total size of the files under `dir`.
fn tree_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => tree_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

fn build_only(bins: &[TestBinary], dir: &Path) -> Result<(), String> {
    let bin_dir = dir.join("bin");
    // A fresh bundle: stale binaries of an earlier build would run too.
    let _ = std::fs::remove_dir_all(&bin_dir);
    std::fs::create_dir_all(&bin_dir)
        .map_err(|e| format!("creating {}: {e}", bin_dir.display()))?;
    for b in bins {
        let to = bin_dir.join(&b.name);
        std::fs::copy(&b.path, &to)
            .map_err(|e| format!("copying {} to {}: {e}", b.path.display(), to.display()))?;
    }
    for name in SCRIPTS {
        let from = root().join("tools/cuda-bundle").join(name);
        let to = dir.join(name);
        std::fs::copy(&from, &to)
            .map_err(|e| format!("copying {} to {}: {e}", from.display(), to.display()))?;
        set_executable(&to)?;
    }
    let _ = std::fs::remove_file(dir.join("run-all.sh"));
    match fake_driver(&dir.join("fake-driver")) {
        Ok(()) => {}
        Err(e) => eprintln!(
            "xtask: no fake driver in the bundle (run.sh --fake-driver will not work): {e}"
        ),
    }
    let size = tree_size(dir);
    println!(
        "==> test-cuda: bundle {} ({} test binaries, {:.1} MiB); on a GPU machine run {}/run.sh (exit 0 passed, 1 failed, {NO_GPU_EXIT} no GPU)",
        dir.display(),
        bins.len(),
        size as f64 / (1u64 << 20) as f64,
        dir.display()
    );
    for b in bins {
        println!("    bin/{}", b.name);
    }
    if size > BUNDLE_LIMIT {
        return Err(format!(
            "the bundle is {size} bytes, over the {BUNDLE_LIMIT}-byte limit a GPU machine receives"
        ));
    }
    Ok(())
}

/// The `test-cuda` command.
pub fn test_cuda(args: &[String]) -> ExitCode {
    let result = parse(args).and_then(|o| {
        let bins = build(o.release)?;
        match &o.build_only {
            Some(dir) => build_only(&bins, dir).map(|()| ExitCode::SUCCESS),
            None => run_all(&bins, &o.extra),
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_test_executables_in_cargo_json() {
        let json = concat!(
            r#"{"reason":"compiler-artifact","package_id":"path+file:///w/crates/alloc-cuda#0.1.0","manifest_path":"/w/crates/alloc-cuda/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"alloc_cuda","src_path":"/w/crates/alloc-cuda/src/lib.rs","test":true},"profile":{"test":true},"features":["cuda"],"filenames":["/w/target/release/deps/alloc_cuda-1"],"executable":"/w/target/release/deps/alloc_cuda-1","fresh":true}"#,
            "\n",
            r#"{"reason":"compiler-artifact","package_id":"path+file:///w/crates/alloc-cuda#0.1.0","manifest_path":"/w/crates/alloc-cuda/Cargo.toml","target":{"kind":["test"],"crate_types":["bin"],"name":"gpu","src_path":"/w/crates/alloc-cuda/tests/gpu.rs","test":true},"profile":{"test":true},"features":["cuda"],"filenames":["/w/target/release/deps/gpu-2"],"executable":"/w/target/release/deps/gpu-2","fresh":false}"#,
            "\n",
            r#"{"reason":"compiler-artifact","package_id":"registry+https://x#cudarc@0.19.10","manifest_path":"/r/cudarc/Cargo.toml","target":{"kind":["lib"],"name":"cudarc"},"executable":null,"fresh":true}"#,
            "\n",
            r#"{"reason":"compiler-artifact","manifest_path":"/w/crates/torchcore/Cargo.toml","target":{"kind":["example"],"name":"tour","test":false},"profile":{"opt_level":"3","test":false},"executable":"/w/target/release/examples/tour","fresh":true}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
        );
        let bins = binaries_from_json(json);
        let names: Vec<&str> = bins.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["alloc-cuda-gpu", "alloc-cuda-lib"]);
        assert_eq!(bins[0].path, PathBuf::from("/w/target/release/deps/gpu-2"));
        assert!(bins[0].is_gpu_suite());
        assert_eq!(
            bins[0].args(&["oom".into()]),
            ["oom", "--test-threads=1", "--nocapture"]
        );
        assert!(bins[1].args(&["oom".into()]).is_empty());
    }

    #[test]
    fn options_and_script() {
        let o = parse(&[
            "--build-only".into(),
            "out".into(),
            "--debug".into(),
            "--".into(),
            "x".into(),
        ])
        .expect("parse");
        assert!(o.build_only.is_some_and(|d| d.ends_with("out")));
        assert!(!o.release);
        assert_eq!(o.extra, ["x"]);
        assert!(parse(&["--what".into()]).is_err());
        for name in SCRIPTS {
            assert!(
                root().join("tools/cuda-bundle").join(name).is_file(),
                "{name}"
            );
        }
        let run = std::fs::read_to_string(root().join("tools/cuda-bundle/run.sh")).expect("run.sh");
        assert!(run.starts_with("#!/bin/sh"));
        assert!(run.contains("nvidia-smi"));
        assert!(run.contains("passed, $FAILED failed"));
    }
}
