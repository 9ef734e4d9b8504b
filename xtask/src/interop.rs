//! `cargo xtask interop`: proves torchcore-interop against a real PyTorch.
//!
//! Builds the C-ABI test library `crates/interop-ffi` (a cdylib, not a
//! default member, so plain `cargo build`/`cargo test` never link it) and
//! runs `tools/interop_test.py` on it, which drives DLPack exchanges in both
//! directions and safetensors round trips through `torch`, `ctypes` and the
//! `safetensors` package. `PYTHON` overrides the interpreter (default
//! `python3`).
//!
//! Skips are reported as skips, never as a full pass: when PyTorch is not
//! importable nothing runs, and when the `safetensors` package is missing
//! its group of checks does not run; the script then ends with `interop: N
//! checks passed, M groups of checks skipped (...)` and exit status 75, and
//! this command ends with `interop: PARTIAL: ...`. That still succeeds
//! unless `--strict` is given, which makes any skip an error.

use std::env;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::{cargo, cargo_json, root};

/// Exit status of `tools/interop_test.py` when the checks that ran passed
/// but some were skipped.
const EXIT_PARTIAL: i32 = 75;

pub fn interop(args: &[String]) -> Result<(), String> {
    let mut strict = false;
    for a in args {
        match a.as_str() {
            "--strict" => strict = true,
            other => {
                return Err(format!(
                    "unknown argument `{other}`; usage: cargo xtask interop [--strict]"
                ))
            }
        }
    }
    let partial = |what: &str| {
        let msg = format!("interop: PARTIAL: {what}; this is not a full pass");
        if strict {
            Err(format!("{msg} (--strict)"))
        } else {
            println!("{msg}");
            Ok(())
        }
    };
    let python = env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python)
        .args(["-c", "import torch"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !matches!(probe, Ok(s) if s.success()) {
        println!(
            "interop: SKIP: PyTorch is not importable with `{python}` (pip install torch safetensors, or set PYTHON); the real-PyTorch interop checks were not run"
        );
        return partial("0 checks passed, every check skipped");
    }
    let lib = build_ffi()?;
    let mut cmd = Command::new(&python);
    cmd.arg(root().join("tools").join("interop_test.py"))
        .arg(&lib)
        .current_dir(root());
    eprintln!("==> interop: {cmd:?}");
    let status = cmd
        .status()
        .map_err(|e| format!("interop: could not start {cmd:?}: {e}"))?;
    match status.code() {
        Some(0) => Ok(()),
        Some(EXIT_PARTIAL) => partial("some checks were skipped (see the line above)"),
        _ => Err(format!("interop failed ({status})")),
    }
}

/// Builds `interop-ffi` and returns the path of its shared library, read
/// from cargo's JSON messages (so a custom target directory works).
fn build_ffi() -> Result<PathBuf, String> {
    eprintln!("==> interop: building crates/interop-ffi (cdylib)");
    let out = cargo()
        .args([
            "build",
            "--package",
            "interop-ffi",
            "--message-format=json-render-diagnostics",
        ])
        .current_dir(root())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("could not start cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("building interop-ffi failed ({})", out.status));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let suffix = env::consts::DLL_SUFFIX;
    for artifact in cargo_json::artifacts(&stdout) {
        if artifact["target"]["name"] != "interop_ffi" {
            continue;
        }
        let names = artifact["filenames"].as_array().into_iter().flatten();
        if let Some(name) = names
            .filter_map(|n| n.as_str())
            .find(|n| n.ends_with(suffix))
        {
            return Ok(PathBuf::from(name));
        }
    }
    Err(format!(
        "cargo built interop-ffi but reported no `*{suffix}` file"
    ))
}
