//! `cargo xtask test-cuda [--build-only DIR] [--debug] [-- ARGS]`: the GPU
//! test suite (see `docs/cuda.md`).
//!
//! Builds the test binaries of `alloc-cuda` and `torchcore` with their
//! `cuda` feature (release profile unless `--debug`, so the printed timings
//! mean something), finds them in cargo's `--message-format=json` output,
//! then either
//!
//! * runs them: first the probe (`alloc-cuda`'s `gpu_probe` test with
//!   `ALLOC_CUDA_PROBE_EXIT=1`), which ends the command with exit status
//!   [`NO_GPU_EXIT`] and "no CUDA driver/GPU found" where there is none;
//!   then every binary, the GPU suite single-threaded with its output shown
//!   (`ARGS` after `--` go to the GPU suite, e.g. a test name filter), and
//!   finally the `TIMING` lines again as a summary; or
//! * with `--build-only DIR`, copies them to `DIR/bin/` with a POSIX
//!   `DIR/run-all.sh` that does the same on a machine without a Rust
//!   toolchain (it needs only the CUDA driver; the binaries load `libcuda`
//!   and `libnvrtc` at run time), writing `results.txt` and `timings.txt`.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use crate::{cargo, cargo_json, root};

/// The exit status for "no CUDA driver/GPU found".
pub const NO_GPU_EXIT: u8 = 3;

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
        cmd.arg("--release");
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
            "xtask: the GPU suite cannot run here (exit status {NO_GPU_EXIT}); build it with `cargo xtask test-cuda --build-only DIR` and run DIR/run-all.sh on a GPU machine"
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

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The `run-all.sh` for a `--build-only` directory.
fn run_all_script(bins: &[TestBinary], extra: &[String]) -> String {
    let mut s = String::from(
        r#"#!/bin/sh
# The torchcore CUDA test suite, built by `cargo xtask test-cuda --build-only`.
# Needs no Rust toolchain: only the CUDA driver (libcuda.so.1) and, for the
# NVRTC strided-copy kernels, optionally libnvrtc (without it strided copies
# use host staging and the suite still passes).
# Exit status: 0 all passed, 1 some test failed, 3 no CUDA driver/GPU found.
# Output: results.txt (everything) and timings.txt (the TIMING lines).
set -u
cd "$(dirname "$0")" || exit 1
: > results.txt
ALLOC_CUDA_PROBE_EXIT=1 ./bin/alloc-cuda-gpu_probe --exact probe --nocapture --test-threads=1 > probe.out 2>&1
status=$?
cat probe.out; cat probe.out >> results.txt; rm -f probe.out
if [ "$status" -eq 3 ]; then
    echo "no CUDA driver/GPU found: the GPU suite cannot run on this machine" | tee -a results.txt
    exit 3
fi
if [ "$status" -ne 0 ]; then
    echo "the CUDA probe failed (status $status)" | tee -a results.txt
    exit 1
fi
failed=""
run() {
    name="$1"; shift
    echo "==> $name $*" | tee -a results.txt
    "./bin/$name" "$@" > run.out 2>&1
    s=$?
    cat run.out; cat run.out >> results.txt; rm -f run.out
    if [ "$s" -ne 0 ]; then
        failed="$failed $name"
        echo "FAILED: $name (status $s)" | tee -a results.txt
    fi
}
"#,
    );
    for b in bins {
        let args: Vec<String> = b.args(extra).iter().map(|a| shell_quote(a)).collect();
        let _ = writeln!(s, "run {} {}", shell_quote(&b.name), args.join(" "));
    }
    s.push_str(
        r#"grep '^TIMING' results.txt > timings.txt
echo "==> timings (timings.txt)"; cat timings.txt
if [ -n "$failed" ]; then
    echo "failed:$failed"
    exit 1
fi
echo "all test binaries passed"
exit 0
"#,
    );
    s
}

fn build_only(bins: &[TestBinary], dir: &Path, extra: &[String]) -> Result<(), String> {
    let bin_dir = dir.join("bin");
    std::fs::create_dir_all(&bin_dir)
        .map_err(|e| format!("creating {}: {e}", bin_dir.display()))?;
    for b in bins {
        let to = bin_dir.join(&b.name);
        std::fs::copy(&b.path, &to)
            .map_err(|e| format!("copying {} to {}: {e}", b.path.display(), to.display()))?;
    }
    let script = dir.join("run-all.sh");
    std::fs::write(&script, run_all_script(bins, extra))
        .map_err(|e| format!("writing {}: {e}", script.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("chmod {}: {e}", script.display()))?;
    }
    println!(
        "==> test-cuda: {} test binaries in {}; run {} on a GPU machine (exit 0 passed, 1 failed, {NO_GPU_EXIT} no GPU)",
        bins.len(),
        bin_dir.display(),
        script.display()
    );
    for b in bins {
        println!("    bin/{}", b.name);
    }
    Ok(())
}

/// The `test-cuda` command.
pub fn test_cuda(args: &[String]) -> ExitCode {
    let result = parse(args).and_then(|o| {
        let bins = build(o.release)?;
        match &o.build_only {
            Some(dir) => build_only(&bins, dir, &o.extra).map(|()| ExitCode::SUCCESS),
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
        let bins = vec![TestBinary {
            name: "alloc-cuda-gpu".into(),
            path: PathBuf::from("/x"),
        }];
        let s = run_all_script(&bins, &[]);
        assert!(s.starts_with("#!/bin/sh"));
        assert!(s.contains("run 'alloc-cuda-gpu' '--test-threads=1' '--nocapture'"));
        assert!(s.contains("exit 3"));
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
