//! `cargo xtask examples`: runs every example of the workspace and checks
//! that its output says what the example's documentation promises, and
//! `cargo xtask doc-paths`: no absolute machine paths in the user docs.
//! Both are steps of `cargo xtask ci`.
//!
//! Every `examples/*.rs` file under `crates/` must have an entry in
//! [`EXAMPLES`]: an example added without one fails the step, so no
//! example goes unchecked. The benchmark-style examples run with small
//! arguments or in debug mode, where their timings mean nothing: the check
//! is that they run to completion and print their table, not their numbers.

use std::path::Path;
use std::time::Instant;

use crate::{cargo, root};

/// One example: where it lives, how to run it, and lines its standard
/// output must contain.
struct Example {
    package: &'static str,
    name: &'static str,
    features: &'static [&'static str],
    args: &'static [&'static str],
    expect: &'static [&'static str],
}

const EXAMPLES: &[Example] = &[
    Example {
        package: "torchcore",
        name: "tour",
        features: &[],
        args: &[],
        expect: &[
            "let c = a.slice(0, Some(2), None, 1)?;   // Python: a[2:]",
            "a.get::<i64>(&[5])? = 99",
            "a.version()? = 1, b.version()? = 1, c.version()? = 1",
            "after c.fill_(7)?: a.version()? = 2, b.version()? = 2",
            "t.view(&[12]) fails, as in PyTorch:",
            "is_alias_of(&a) = true",
            "after w.set_requires_grad(true)?:  w.has_autograd_meta() = true",
            "row.expand(&[2, 3])? has strides [0, 1]",
            "a.view(&[5, 5]): shape '[5, 5]' is invalid for input of size 12",
            "src.get::<i32>(&[1, 2])? = 42 (no copy)",
            "(1 cudaMalloc call)",
            "(1 cudaMalloc call so far, same address: true)",
            "1 cudaFree call, reserved = 0",
            "inside the scope, Tensor::zeros(&[1024], ..) comes from mine? true",
            "5120 bytes live, peak 5120 bytes, 2 allocations",
            "after dropping both: 0 bytes live, peak 5120 bytes",
            "new tensors come from mine? false",
            "let y = x.view((-1, 8))?: sizes (((s0*s1*s2)//8), 8)",
            "records guard: 8 < s0*s1*s2",
            "let z = y.narrow(0, 1, 3)?: sizes (3, 8), strides (8, 1), offset 8",
            "x.fake_device() = Some(cpu), x.device() = meta",
            "let l = x.narrow(2, s2 - 3, 3)?: sizes (s0, s1, 3)",
            "let v = x.view_dtype(ScalarType::Long)?: sizes (s0, s1, ((s2)//2))",
            "records guard: Eq(Mod(s2, 2), 0)",
            "env.produce_guards_python() (what a compiler caches on):",
            "env.evaluate_guards(sizes [5, 7, 8]) = true",
            "env.evaluate_guards(sizes [1, 6, 8]) = false",
            "x.checked_sizes() fails: Cannot call sizes() on tensor with symbolic sizes/strides",
        ],
    },
    Example {
        package: "torchcore",
        name: "transpose_vs_memcpy",
        features: &[],
        args: &["--quick"],
        expect: &["256x256 f32: memcpy", "torchcore-allocated source"],
    },
    Example {
        package: "torchcore-interop",
        name: "dlpack",
        features: &[],
        args: &[],
        expect: &[
            "exported: device kDLCPU:0, dtype kDLFloat 32-bit, shape [4, 3], strides [1, 4]",
            "after the consumer's write: view[1, 2] = -1",
            "after dropping the last view: 1 deleter call",
            "versioned export flags: read-only = true",
            "importing it back: write -> cannot write to a read-only storage",
        ],
    },
    Example {
        package: "torchcore-interop",
        name: "ndarray",
        features: &["ndarray"],
        args: &[],
        expect: &[
            "view [3, 2] strides [1, 3]:",
            "column sums: [3, 12]",
            "base after squaring through the view: [0.0, 1.0, 4.0, 9.0, 16.0, 25.0]",
            "expanded, write: a mutable ndarray view cannot have two indices reaching the same element",
            "tensor [3, 2] from ndarray, same buffer: true",
        ],
    },
    Example {
        package: "torchcore-interop",
        name: "safetensors",
        features: &["safetensors"],
        args: &[],
        expect: &[
            "metadata: Some({\"format\": \"pt\"})",
            "w.t: torch.float32 [4, 3] (view of the file's storage: true) = [0.0, 4.0, 8.0,",
            "load: writable, w.t[0, 0] = 100.0",
            "load_mmap: w.t[0, 0] = 0.0",
            "load_mmap: writing fails: cannot write to a read-only storage (memory-mapped read-only from",
            "a clone is writable: 1.0",
        ],
    },
    Example {
        package: "c10-core",
        name: "symbolic_attacks",
        features: &[],
        args: &[],
        expect: &[
            "error at level 128: symbolic expression too deeply nested",
            "power_of_sum_k7\t",
            "power_of_sum_k13\t",
            "error at squaring 32: symbolic expression exponent overflows",
        ],
    },
    Example {
        package: "aten-shape",
        name: "concrete_views_count",
        features: &[],
        // Every op once: the example loops `N` times over op `OP`.
        args: &["18", "1"],
        expect: &[],
    },
    Example {
        package: "aten-shape",
        name: "sym_views_bench",
        features: &[],
        args: &["--quick"],
        expect: &[
            "symbolic (s0, s1, s2):",
            "guards recorded: ",
            "concrete meta (4, 6, 8), for scale:",
        ],
    },
    Example {
        package: "torchcore-pt",
        name: "checkpoint_roundtrip",
        features: &[],
        args: &[],
        expect: &[
            "loaded back: bits equal, parameter restored, evens is a view of numbers again",
            "memory-mapped load: 4 tensors",
            "numbers       int64    [9]     [1]     0       2        evens           72",
            "total: 4 tensors over 3 storages (1 shared by several tensors), 128 bytes of storage data",
        ],
    },
    Example {
        package: "torchcore-pt",
        name: "bench_checkpoint",
        features: &[],
        // 1 MiB instead of 256: the check is that every row is printed.
        args: &["1"],
        expect: &[
            "state dict: 64 float32 tensors, 1 MiB",
            "save (torchcore)",
            "load (torchcore, copying)",
            "load_mmap (torchcore)",
        ],
    },
    Example {
        package: "torchcore-memviz",
        name: "fragmentation",
        features: &[],
        args: &[],
        expect: &[
            "as expected, CUDA out of memory. Tried to allocate 30.00 MiB.",
            "snapshot (PyTorch's pickle): ",
            "picture: open file://",
        ],
    },
    Example {
        package: "torchcore-memviz",
        name: "history_overhead",
        features: &[],
        args: &["--quick"],
        expect: &["mode", "off", "trace, no stacks", "trace + all stacks"],
    },
];

/// `crates/<package>/examples/<name>.rs` for every example file on disk.
fn examples_on_disk() -> Result<Vec<(String, String)>, String> {
    let mut found = Vec::new();
    let crates = root().join("crates");
    let entries =
        std::fs::read_dir(&crates).map_err(|e| format!("reading {}: {e}", crates.display()))?;
    for entry in entries.flatten() {
        let dir = entry.path().join("examples");
        let Ok(files) = std::fs::read_dir(&dir) else {
            continue;
        };
        for file in files.flatten() {
            let path = file.path();
            if path.extension().is_some_and(|e| e == "rs")
                && let Some(stem) = path.file_stem()
            {
                found.push((
                    entry.file_name().to_string_lossy().into_owned(),
                    stem.to_string_lossy().into_owned(),
                ));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Runs every example and checks its output (see the module docs).
pub fn examples(_args: &[String]) -> Result<(), String> {
    for (package, name) in examples_on_disk()? {
        if !EXAMPLES
            .iter()
            .any(|e| e.package == package && e.name == name)
        {
            return Err(format!(
                "crates/{package}/examples/{name}.rs has no entry in xtask/src/examples.rs: \
                 add one with the lines its output must contain"
            ));
        }
    }
    let mut failures = Vec::new();
    for ex in EXAMPLES {
        let mut cmd = cargo();
        cmd.args(["run", "--quiet", "-p", ex.package, "--example", ex.name]);
        if !ex.features.is_empty() {
            cmd.args(["--features", &ex.features.join(",")]);
        }
        cmd.arg("--").args(ex.args);
        eprintln!("==> example {}/{}: {cmd:?}", ex.package, ex.name);
        let start = Instant::now();
        let out = cmd
            .current_dir(root())
            .output()
            .map_err(|e| format!("could not start {cmd:?}: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        eprintln!(
            "==> example {}/{}: {} in {:.1?}",
            ex.package,
            ex.name,
            out.status,
            start.elapsed()
        );
        if !out.status.success() {
            failures.push(format!(
                "{}/{} failed ({}):\n{}{}",
                ex.package,
                ex.name,
                out.status,
                stdout,
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        let missing: Vec<&str> = ex
            .expect
            .iter()
            .copied()
            .filter(|line| !stdout.contains(line))
            .collect();
        if !missing.is_empty() {
            failures.push(format!(
                "{}/{}: its output lacks {missing:?}; it printed:\n{stdout}",
                ex.package, ex.name
            ));
        }
    }
    if failures.is_empty() {
        eprintln!("==> examples: all {} passed", EXAMPLES.len());
        Ok(())
    } else {
        Err(failures.join("\n\n"))
    }
}

/// Prefixes of absolute paths that belong to one machine, not to the
/// project: a user reading the docs has none of them.
const MACHINE_PATHS: &[&str] = &[
    "/work/", "/tmp/", "/root/", "/home/", "/Users/", "/mnt/", "/var/",
];

/// Lines of `text` that contain an absolute machine path, as
/// `(line number, line)`.
fn machine_paths(text: &str) -> Vec<(usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| MACHINE_PATHS.iter().any(|p| line.contains(p)))
        .map(|(i, line)| (i + 1, line))
        .collect()
}

/// Fails on absolute machine paths in `README.md`, `CHANGELOG.md`, the
/// crates' READMEs and `docs/*.md`.
pub fn doc_paths(_args: &[String]) -> Result<(), String> {
    let root = root();
    // benches/NOTES.md becomes the notes of docs/benchmarks.md.
    let mut files = vec![
        root.join("README.md"),
        root.join("CHANGELOG.md"),
        root.join("benches/NOTES.md"),
    ];
    for dir in ["docs", "crates"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if dir == "docs" && path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            } else if dir == "crates" {
                files.push(path.join("README.md"));
            }
        }
    }
    files.retain(|f| f.is_file());
    files.sort();
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("reading {}: {e}", file.display()))?;
        for (n, line) in machine_paths(&text) {
            let rel = file.strip_prefix(&root).unwrap_or(Path::new(file));
            found.push(format!("{}:{n}: {}", rel.display(), line.trim()));
        }
    }
    if found.is_empty() {
        eprintln!("==> doc-paths: no machine paths in {} files", files.len());
        Ok(())
    } else {
        Err(format!(
            "absolute machine paths in the docs (use repository-relative paths or \
             placeholders such as <torch-venv>):\n{}",
            found.join("\n")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_machine_paths() {
        let text = "cargo test\nrun /work/main/target/x\nsee docs/cuda.md\nCARGO_TARGET_DIR=/tmp/t";
        let hits: Vec<usize> = machine_paths(text).iter().map(|(n, _)| *n).collect();
        assert_eq!(hits, vec![2, 4]);
        assert!(machine_paths("target/cuda-bundle and <torch-venv>/bin/python").is_empty());
    }

    #[test]
    fn every_example_on_disk_has_an_entry() {
        let on_disk = examples_on_disk().expect("the crates directory is readable");
        assert!(on_disk.iter().any(|(p, n)| p == "torchcore" && n == "tour"));
        for (package, name) in on_disk {
            assert!(
                EXAMPLES
                    .iter()
                    .any(|e| e.package == package && e.name == name),
                "{package}/{name} has no entry in EXAMPLES"
            );
        }
    }
}
