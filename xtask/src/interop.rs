//! `cargo xtask interop`: proves torchcore-interop against a real PyTorch.
//!
//! Builds the C-ABI test library `crates/interop-ffi` (a cdylib, not a
//! default member, so plain `cargo build`/`cargo test` never link it) and
//! runs `tools/interop_test.py` on it, which drives DLPack exchanges in both
//! directions and safetensors round trips through `torch`, `ctypes` and the
//! `safetensors` package. When PyTorch is not importable it prints a skip
//! message and succeeds. `PYTHON` overrides the interpreter (default
//! `python3`).

use std::env;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::{cargo, root, run};

pub fn interop(args: &[String]) -> Result<(), String> {
    if let Some(extra) = args.first() {
        return Err(format!("interop takes no arguments (got `{extra}`)"));
    }
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
        return Ok(());
    }
    let lib = build_ffi()?;
    run(
        "interop",
        Command::new(&python)
            .arg(root().join("tools").join("interop_test.py"))
            .arg(&lib),
    )
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
    for line in stdout.lines() {
        if !line.contains("\"compiler-artifact\"") || !line.contains("interop_ffi") {
            continue;
        }
        let Some(start) = line.find("\"filenames\":[") else {
            continue;
        };
        let rest = &line[start + "\"filenames\":[".len()..];
        let list = &rest[..rest.find(']').unwrap_or(rest.len())];
        for name in list.split('"') {
            if name.ends_with(suffix) {
                return Ok(PathBuf::from(name.replace("\\\\", "\\")));
            }
        }
    }
    Err(format!(
        "cargo built interop-ffi but reported no `*{suffix}` file"
    ))
}
