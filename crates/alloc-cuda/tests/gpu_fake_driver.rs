//! Runs the GPU suite (`gpu_suite/mod.rs`) against a fake CUDA driver, so
//! that the backend's host-side logic (probe, contexts, the three allocator
//! backends, pinned memory, expandable segments on real `mmap` mappings,
//! every copy and fill path including the kernel launches' by-value
//! arguments, out-of-memory recovery) is tested on machines without a GPU.
//!
//! `gpu_suite/fake_cuda.c` is compiled with the system C compiler (`$CC` or
//! `cc`) into `libcuda.so.1` and `libnvrtc.so`; this binary then re-runs
//! itself with `LD_LIBRARY_PATH` pointing at them, twice: with the
//! (fake-compiled, host-executed) strided kernels and without them (the
//! host-staging paths). Without a C compiler, or off Linux, it prints
//! SKIPPED. Set `ALLOC_CUDA_TEST_NVRTC_DIR` to a directory with a real
//! `libnvrtc.so*` to also compile the real kernel source in a third run.
//!
//! The fake driver says nothing about real GPUs (asynchrony, timing, PTX
//! loading); `tests/gpu.rs` on a GPU machine does.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(feature = "cuda")]

use std::path::{Path, PathBuf};
use std::process::Command;

/// In this binary the suite runs only in the child processes.
const FAKE_DRIVER_HOST: bool = true;

mod gpu_suite;

const SOURCE: &str = include_str!("gpu_suite/fake_cuda.c");

fn compile(dir: &Path, nvrtc: bool) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let src = dir.join("fake_cuda.c");
    std::fs::write(&src, SOURCE).map_err(|e| e.to_string())?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut outputs = vec![("libcuda.so.1", false)];
    if nvrtc {
        outputs.push(("libnvrtc.so", true));
    }
    for (name, is_nvrtc) in outputs {
        let mut cmd = Command::new(&cc);
        cmd.args(["-shared", "-fPIC", "-O1", "-o"])
            .arg(dir.join(name))
            .arg(&src);
        if is_nvrtc {
            cmd.arg("-DFAKE_NVRTC");
        }
        let out = cmd.output().map_err(|e| format!("{cc}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{cc} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    let link = dir.join("libcuda.so");
    let _ = std::fs::remove_file(&link);
    std::fs::copy(dir.join("libcuda.so.1"), &link).map_err(|e| e.to_string())?;
    Ok(())
}

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("alloc-cuda-fake-{}-{name}", std::process::id()))
}

/// Runs this binary with `filter` on the fake driver in `dirs`.
fn child(filter: &str, dirs: &[&Path], env: &[(&str, &str)]) -> String {
    let exe = std::env::current_exe().expect("current_exe");
    let path = std::env::join_paths(dirs).expect("join_paths");
    let mut cmd = Command::new(exe);
    cmd.args([filter, "--test-threads=1", "--nocapture"])
        .env("LD_LIBRARY_PATH", path)
        .env("ALLOC_CUDA_FAKE_DRIVER", "1")
        .env_remove(alloc_cuda::cuda::FORCE_NO_DRIVER_ENV)
        .env_remove("PYTORCH_ALLOC_CONF")
        .env_remove("PYTORCH_CUDA_ALLOC_CONF")
        .env_remove("PYTORCH_NO_CUDA_MEMORY_CACHING")
        // NVRTC comes from `dirs` (or the override the caller sets), not
        // from a CUDA install or Python wheel of this machine.
        .env_remove(alloc_cuda::cuda::NVRTC_ENV)
        .env_remove("CUDA_HOME")
        .env_remove("CUDA_PATH");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run the child");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    println!("---- child {filter} {env:?} ----\n{stdout}\n{stderr}");
    assert!(out.status.success(), "the child run failed: {}", out.status);
    stdout
}

/// Removes the scratch directories when dropped (also when a test fails).
struct Scratch(Vec<PathBuf>);

impl Drop for Scratch {
    fn drop(&mut self) {
        for d in &self.0 {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Builds the fake libraries into two fresh directories (one with the
/// fake NVRTC, one without), named after `tag` so tests do not share them.
fn setup(tag: &str) -> Option<(PathBuf, PathBuf)> {
    if !cfg!(target_os = "linux") {
        println!("SKIPPED: the fake driver is built for Linux");
        return None;
    }
    let with_nvrtc = scratch(&format!("{tag}-with-nvrtc"));
    let without = scratch(&format!("{tag}-driver-only"));
    if let Err(e) = compile(&with_nvrtc, true).and_then(|()| compile(&without, false)) {
        println!("SKIPPED: cannot build the fake driver ({e})");
        return None;
    }
    Some((with_nvrtc, without))
}

#[test]
#[cfg_attr(miri, ignore)]
fn gpu_suite_on_the_fake_driver() {
    if gpu_suite::fake() {
        return;
    }
    let Some((with_nvrtc, without)) = setup("suite") else {
        return;
    };
    let _cleanup = Scratch(vec![with_nvrtc.clone(), without.clone()]);
    // The fake NVRTC through the `TORCHCORE_NVRTC` override.
    let fake_nvrtc = with_nvrtc.join("libnvrtc.so");
    let fake_nvrtc = fake_nvrtc.to_str().expect("utf-8 path");
    let out = child(
        "gpu_suite::",
        &[&with_nvrtc],
        &[
            ("ALLOC_CUDA_SUITE_KERNELS", "1"),
            (alloc_cuda::cuda::NVRTC_ENV, fake_nvrtc),
        ],
    );
    assert!(out.contains("test result: ok"), "{out}");
    assert!(!out.contains("SKIPPED: no CUDA device"), "{out}");
    assert!(out.contains("NVRTC available: true"), "{out}");
    let out = child(
        "gpu_suite::",
        &[&without],
        &[
            ("ALLOC_CUDA_SUITE_KERNELS", "0"),
            (alloc_cuda::cuda::NVRTC_ENV, "none"),
        ],
    );
    assert!(out.contains("test result: ok"), "{out}");
    if let Ok(real) = std::env::var("ALLOC_CUDA_TEST_NVRTC_DIR") {
        let out = child(
            "gpu_suite::",
            &[&without, Path::new(&real)],
            &[("ALLOC_CUDA_SUITE_KERNELS", "1")],
        );
        assert!(out.contains("test result: ok"), "{out}");
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_driver_without_devices_reports_no_device() {
    if gpu_suite::fake() {
        if std::env::var("FAKE_CUDA_DEVICES").is_ok_and(|v| v == "0") {
            let e = alloc_cuda::cuda::is_available().expect_err("no device");
            assert_eq!(e.to_string(), "CUDA is not available: no CUDA device");
            let e = alloc_cuda::cuda::init().expect_err("no device");
            assert_eq!(e.to_string(), "CUDA is not available: no CUDA device");
            assert!(alloc_cuda::cuda::CudaDevice::new(0).is_err());
        }
        return;
    }
    let Some((with_nvrtc, without)) = setup("no-device") else {
        return;
    };
    let _cleanup = Scratch(vec![with_nvrtc, without.clone()]);
    let out = child(
        "a_driver_without_devices_reports_no_device",
        &[&without],
        &[("FAKE_CUDA_DEVICES", "0")],
    );
    assert!(out.contains("1 passed"), "{out}");
}

#[test]
#[cfg_attr(miri, ignore)]
fn the_kernel_source_compiles_with_a_real_nvrtc() {
    if gpu_suite::fake() {
        return;
    }
    if !alloc_cuda::cuda::nvrtc_available() {
        println!("SKIPPED: no libnvrtc on this machine");
        return;
    }
    let n = alloc_cuda::cuda::compile_kernels().expect("NVRTC compiles KERNEL_SOURCE");
    println!("{n} bytes of PTX");
    assert!(n > 1000);
}

/// A strided copy that wanted the kernels but had none is counted and
/// warned about, never silent; with the kernels nothing is counted.
#[test]
#[cfg_attr(miri, ignore)]
fn host_staging_fallbacks_are_counted() {
    if gpu_suite::fake() {
        if let Ok(expect) = std::env::var("EXPECT_FALLBACK") {
            use aten_shape::prelude::*;
            use c10_core::ScalarType;
            let rt = alloc_cuda::cuda::init().expect("init on the fake driver");
            assert!(rt.ops().uses_kernels());
            let x = Tensor::arange(0, 12, 1, ScalarType::Float)
                .and_then(|t| t.view(&[3, 4]))
                .expect("x");
            let g = alloc_cuda::cuda::to_device(&x, c10_storage::Device::cuda(0)).expect("h2d");
            let t = g.t().and_then(|t| t.contiguous()).expect("strided copy");
            let back = alloc_cuda::cuda::to_device(&t, c10_storage::Device::CPU).expect("d2h");
            assert_eq!(
                back.to_vec::<f32>().expect("values"),
                x.t()
                    .and_then(|t| t.contiguous())
                    .and_then(|t| t.to_vec::<f32>())
                    .expect("cpu")
            );
            let n = alloc_cuda::cuda::host_staging_fallbacks();
            println!("FALLBACKS {n}");
            if expect == "1" {
                assert!(n > 0, "the fallback was not counted");
            } else {
                assert_eq!(n, 0);
            }
        }
        return;
    }
    let Some((with_nvrtc, without)) = setup("fallback") else {
        return;
    };
    let _cleanup = Scratch(vec![with_nvrtc.clone(), without.clone()]);
    let fake_nvrtc = with_nvrtc.join("libnvrtc.so");
    let fake_nvrtc = fake_nvrtc.to_str().expect("utf-8 path");
    let out = child(
        "host_staging_fallbacks_are_counted",
        &[&without],
        &[
            ("EXPECT_FALLBACK", "1"),
            (alloc_cuda::cuda::NVRTC_ENV, "none"),
        ],
    );
    assert!(out.contains("1 passed"), "{out}");
    let out = child(
        "host_staging_fallbacks_are_counted",
        &[&with_nvrtc],
        &[
            ("EXPECT_FALLBACK", "0"),
            (alloc_cuda::cuda::NVRTC_ENV, fake_nvrtc),
        ],
    );
    assert!(out.contains("FALLBACKS 0"), "{out}");
}

/// The pinned allocator reuses a block whose event query failed with
/// anything but `CUDA_ERROR_NOT_READY` never: the error surfaces
/// (issue #18, item 5); `NOT_READY` keeps the block waiting and the
/// allocation gets a new block.
#[test]
#[cfg_attr(miri, ignore)]
fn pinned_event_query_errors_surface() {
    if gpu_suite::fake() {
        let Ok(mode) = std::env::var("FAKE_CUDA_EVENT_QUERY") else {
            return;
        };
        let p = alloc_cuda::cuda::PinnedHostAllocator::new().expect("pinned allocator");
        let b = p.allocate_pinned(1000).expect("first block");
        p.record_event(b.get(), 0, alloc_cuda::StreamId::DEFAULT)
            .expect("record_event");
        drop(b);
        let hits = p.pinned_stats().cache_hits;
        match mode.as_str() {
            "600" => {
                let b2 = p.allocate_pinned(1000).expect("a new block");
                assert_eq!(
                    p.pinned_stats().cache_hits,
                    hits,
                    "the waiting block was reused"
                );
                assert_eq!(p.pinned_stats().segments, 2);
                drop(b2);
                println!("NOT_READY: kept waiting");
            }
            "700" => {
                let e = p
                    .allocate_pinned(1000)
                    .expect_err("the query error surfaces");
                assert!(e.to_string().contains("cuEventQuery"), "{e}");
                assert_eq!(p.pinned_stats().cache_hits, hits);
                let e = p.empty_cache().expect_err("and from empty_cache");
                assert!(e.to_string().contains("cuEventQuery"), "{e}");
                println!("ERROR surfaced: {e}");
            }
            "0" => {
                let b2 = p.allocate_pinned(1000).expect("reuse");
                assert_eq!(p.pinned_stats().cache_hits, hits + 1);
                drop(b2);
                println!("SUCCESS: reused");
            }
            other => panic!("unknown mode {other}"),
        }
        return;
    }
    let Some((with_nvrtc, without)) = setup("pinned-events") else {
        return;
    };
    let _cleanup = Scratch(vec![with_nvrtc, without.clone()]);
    for (mode, says) in [
        ("0", "SUCCESS: reused"),
        ("600", "NOT_READY: kept waiting"),
        ("700", "ERROR surfaced"),
    ] {
        let out = child(
            "pinned_event_query_errors_surface",
            &[&without],
            &[("FAKE_CUDA_EVENT_QUERY", mode)],
        );
        assert!(out.contains(says), "{out}");
    }
}

/// On the real-driver backend, `empty_cache` over several cached segments
/// synchronizes the device once (`cuCtxSynchronize`), not before every
/// `cuMemFree` (issue #18, item 5), counted from the fake driver's trace.
#[test]
#[cfg_attr(miri, ignore)]
fn empty_cache_synchronizes_the_device_once() {
    if gpu_suite::fake() {
        if std::env::var_os("FAKE_CUDA_TRACE").is_none() {
            return;
        }
        use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, StreamId};
        let dev = std::sync::Arc::new(alloc_cuda::cuda::CudaDevice::new(0).expect("fake device"));
        let a = CachingAllocator::new(dev, 0, CachingAllocatorConfig::default());
        let ps: Vec<_> = (0..3)
            .map(|_| a.malloc(30 << 20, StreamId::DEFAULT).expect("malloc"))
            .collect();
        for p in ps {
            // SAFETY: unused.
            unsafe { a.free(p).expect("free") };
        }
        eprintln!("MARK begin");
        a.empty_cache().expect("empty_cache");
        eprintln!("MARK end");
        return;
    }
    let Some((with_nvrtc, without)) = setup("release-sync") else {
        return;
    };
    let _cleanup = Scratch(vec![with_nvrtc, without.clone()]);
    let exe = std::env::current_exe().expect("current_exe");
    let out = Command::new(exe)
        .args([
            "empty_cache_synchronizes_the_device_once",
            "--test-threads=1",
            "--nocapture",
        ])
        .env("LD_LIBRARY_PATH", &without)
        .env("ALLOC_CUDA_FAKE_DRIVER", "1")
        .env("FAKE_CUDA_TRACE", "1")
        .env(alloc_cuda::cuda::NVRTC_ENV, "none")
        .output()
        .expect("run the child");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let between: Vec<&str> = stderr
        .lines()
        .skip_while(|l| *l != "MARK begin")
        .take_while(|l| *l != "MARK end")
        .collect();
    assert!(!between.is_empty(), "{stderr}");
    let frees = between.iter().filter(|l| **l == "fake cuMemFree").count();
    let syncs = between
        .iter()
        .filter(|l| **l == "fake cuCtxSynchronize")
        .count();
    assert_eq!(frees, 3, "{stderr}");
    assert_eq!(syncs, 1, "one synchronization for three frees: {stderr}");
}
