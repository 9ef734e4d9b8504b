//! `cargo xtask test`: the README's test command. Runs `cargo test`, then
//! the Python package's suite: creates (once) a virtual environment under
//! the target directory (`target/py-venv`), installs maturin, pytest, NumPy
//! and Hypothesis into it with pip (quietly), builds and installs
//! `crates/torchcore-py` into it (`maturin develop`, a debug build), and
//! runs pytest over `crates/torchcore-py/tests`. The side-by-side tests
//! against torch skip (saying so) unless torch is importable; to run them,
//! pass an interpreter that has torch: `--python /path/to/venv/bin/python`
//! (the package and pytest are put on its `PYTHONPATH`).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{cargo, root, run};

fn target_dir() -> PathBuf {
    match env::var_os("CARGO_TARGET_DIR") {
        Some(d) => PathBuf::from(d),
        None => root().join("target"),
    }
}

/// `cargo xtask test [--python-only] [--python PYTHON] [-- PYTEST_ARGS..]`.
pub(crate) fn test(args: &[String]) -> Result<(), String> {
    let (ours, pytest_args) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let python_only = ours.iter().any(|a| a == "--python-only");
    let other_python = ours
        .iter()
        .position(|a| a == "--python")
        .and_then(|i| ours.get(i + 1))
        .cloned();
    if !python_only {
        run("test", cargo().arg("test"))?;
    }
    python_tests(other_python.as_deref(), pytest_args)
}

/// Builds the extension into the venv and runs pytest.
pub(crate) fn python_tests(
    other_python: Option<&str>,
    pytest_args: &[String],
) -> Result<(), String> {
    let venv = target_dir().join("py-venv");
    let bin = venv.join("bin");
    let py = bin.join("python");
    if !py.exists() {
        let base = env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        run(
            "py-venv",
            Command::new(&base).args(["-m", "venv"]).arg(&venv),
        )?;
    }
    let stamp = venv.join(".torchcore-test-deps");
    if !stamp.exists() {
        run(
            "py-deps",
            Command::new(&py).args([
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "maturin>=1.5,<2",
                "pytest",
                "numpy",
                "hypothesis",
            ]),
        )?;
        std::fs::write(&stamp, "maturin pytest numpy hypothesis\n")
            .map_err(|e| format!("writing {}: {e}", stamp.display()))?;
    }
    let crate_dir = root().join("crates/torchcore-py");
    let path = format!("{}:{}", bin.display(), env::var("PATH").unwrap_or_default());
    // `run` works from the workspace root; `-m` names the crate (maturin
    // reads the `pyproject.toml` beside it).
    run(
        "py-build",
        Command::new(bin.join("maturin"))
            .args(["develop", "-q", "-m"])
            .arg(crate_dir.join("Cargo.toml"))
            .env("VIRTUAL_ENV", &venv)
            .env("PATH", &path)
            .env("CARGO_TARGET_DIR", target_dir()),
    )?;
    let tests = crate_dir.join("tests");
    match other_python {
        None => run(
            "pytest",
            Command::new(&py)
                .args(["-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider"])
                .arg(&tests)
                .args(pytest_args),
        ),
        Some(other) => {
            let site = site_packages(&py)?;
            let pythonpath = format!("{}:{}", crate_dir.join("python").display(), site);
            run(
                "pytest",
                Command::new(other)
                    .args(["-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider"])
                    .arg(&tests)
                    .args(pytest_args)
                    .env("PYTHONPATH", pythonpath),
            )
        }
    }
}

/// The venv's `site-packages` directory.
fn site_packages(py: &Path) -> Result<String, String> {
    let out = Command::new(py)
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .map_err(|e| format!("running {}: {e}", py.display()))?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
