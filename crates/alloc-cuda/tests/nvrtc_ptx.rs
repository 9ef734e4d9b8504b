//! The copy kernels compiled to PTX by a real NVRTC, on any machine: NVRTC
//! needs no driver and no GPU.
//!
//! Every NVRTC library found is used: the process's own search
//! (`TORCHCORE_NVRTC`, `CUDA_HOME`, the library path, the Python wheels of
//! the `python3` on `PATH`, ...) and the `nvidia` wheels of each Python
//! prefix (a virtualenv) listed in `ALLOC_CUDA_TEST_VENVS` (paths joined
//! like `PATH`), e.g. one with `pip install nvidia-cuda-nvrtc-cu12` and
//! one with PyTorch for CUDA 13. Each distinct NVRTC version compiles the
//! kernel source for its default architecture and for every architecture
//! it supports from `compute_75` up, and the PTX must contain every kernel
//! (`tc_copy_N`, `tc_fill_N` for the element sizes of every dtype) for the
//! right target. Without any NVRTC the tests print `SKIPPED` and pass.
//!
//! With a GPU, `compile_kernels()` compiles for the device's compute
//! capability (`--gpu-architecture=compute_XY`).

#![cfg(feature = "cuda")]

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

use alloc_cuda::cuda::{
    kernel_names, nvrtc_candidates, nvrtc_candidates_with, Nvrtc, NvrtcSource, KERNEL_SOURCE,
};
use c10_core::ScalarType;

/// Whether this process runs on the fake driver (`run.sh --fake-driver`),
/// whose fake NVRTC makes no real PTX.
fn on_fake_driver() -> bool {
    if std::env::var_os("ALLOC_CUDA_FAKE_DRIVER").is_some() {
        println!("SKIPPED: on the fake driver (its NVRTC makes no real PTX)");
        return true;
    }
    false
}

/// The NVRTC libraries to test, one per version: (version, (path, source,
/// the opened library)). Kept open: a bare name may resolve only while
/// another test holds the library loaded.
fn libraries() -> BTreeMap<(i32, i32), (PathBuf, NvrtcSource, Nvrtc)> {
    let mut cands = nvrtc_candidates().unwrap_or_default();
    if let Some(venvs) = std::env::var_os("ALLOC_CUDA_TEST_VENVS") {
        for v in std::env::split_paths(&venvs) {
            let env = |k: &str| (k == "VIRTUAL_ENV").then(|| OsString::from(&v));
            cands.extend(
                nvrtc_candidates_with(&env)
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|c| c.source == NvrtcSource::PythonWheel),
            );
        }
    }
    let mut found = BTreeMap::new();
    for c in cands {
        if let Ok(nv) = Nvrtc::open(&c.path) {
            found.entry(nv.version()).or_insert((c.path, c.source, nv));
        }
    }
    found
}

fn check_ptx(ptx: &[u8], target: Option<i32>) {
    let text = String::from_utf8_lossy(ptx);
    for k in kernel_names() {
        assert!(
            text.contains(&format!(".entry {k}(")),
            "the PTX has no kernel {k}"
        );
    }
    if let Some(a) = target {
        assert!(
            text.contains(&format!(".target sm_{a}")),
            "the PTX is not for sm_{a}"
        );
    }
    assert_eq!(ptx.last(), Some(&0), "PTX images are NUL-terminated");
}

#[test]
fn every_dtype_has_a_kernel() {
    let names = kernel_names();
    for t in ScalarType::ALL {
        let n = t.itemsize();
        if n == 0 {
            continue;
        }
        assert!(
            names.contains(&format!("tc_copy_{n}")) && names.contains(&format!("tc_fill_{n}")),
            "no kernel for {t:?} ({n} bytes)"
        );
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn kernels_compile_to_ptx_with_every_nvrtc_found() {
    if on_fake_driver() {
        return;
    }
    let libs = libraries();
    if libs.is_empty() {
        println!(
            "SKIPPED: no libnvrtc found (install one with `pip install nvidia-cuda-nvrtc`, or set TORCHCORE_NVRTC=/path/libnvrtc.so.N)"
        );
        return;
    }
    for ((major, minor), (path, source, nv)) in &libs {
        let ptx = nv
            .compile_ptx(KERNEL_SOURCE, "k.cu", None)
            .unwrap_or_else(|e| panic!("NVRTC {major}.{minor} ({}): {e}", path.display()));
        check_ptx(&ptx, None);
        let archs: Vec<i32> = nv
            .supported_archs()
            .into_iter()
            .filter(|&a| a >= 75)
            .collect();
        for &a in &archs {
            let ptx = nv
                .compile_ptx(KERNEL_SOURCE, "k.cu", Some(a))
                .unwrap_or_else(|e| panic!("NVRTC {major}.{minor} for compute_{a}: {e}"));
            check_ptx(&ptx, Some(a));
        }
        println!(
            "NVRTC {major}.{minor} from {} (via {source}): {} kernels compiled to PTX for the default architecture and {archs:?}",
            path.display(),
            kernel_names().len()
        );
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn compile_kernels_uses_the_process_nvrtc() {
    if on_fake_driver() {
        return;
    }
    match alloc_cuda::cuda::nvrtc_info() {
        Err(e) => {
            println!("SKIPPED: {e}");
            assert!(!alloc_cuda::cuda::nvrtc_available());
            assert!(alloc_cuda::cuda::compile_kernels().is_err());
        }
        Ok(info) => {
            println!("{info}");
            let n = alloc_cuda::cuda::compile_kernels().expect("compiles");
            assert!(n > 1000);
            if let Ok(cc) = alloc_cuda::cuda::CudaDevice::new(0).map(|d| d.compute_capability()) {
                println!("device 0: compute capability {}.{}", cc.0, cc.1);
            }
        }
    }
}

/// `TORCHCORE_NVRTC` picks the library (checked in a child process, as the
/// choice is made once per process), and a bad path is an error naming it.
#[test]
#[cfg_attr(miri, ignore)]
fn the_override_picks_the_library() {
    if std::env::var_os("ALLOC_CUDA_NVRTC_CHILD").is_some() {
        match alloc_cuda::cuda::nvrtc_info() {
            Ok(info) => println!(
                "CHILD-NVRTC {}.{} {:?} {}",
                info.version.0,
                info.version.1,
                info.source,
                info.path.display()
            ),
            Err(e) => println!("CHILD-ERROR {e}"),
        }
        return;
    }
    if on_fake_driver() {
        return;
    }
    let child = |value: &OsString| {
        let exe = std::env::current_exe().expect("current_exe");
        let out = Command::new(exe)
            .args(["--exact", "the_override_picks_the_library", "--nocapture"])
            .env("ALLOC_CUDA_NVRTC_CHILD", "1")
            .env("TORCHCORE_NVRTC", value)
            .output()
            .expect("run the child");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let out = child(&OsString::from("/nonexistent/libnvrtc.so.13"));
    assert!(
        out.contains("CHILD-ERROR NVRTC: TORCHCORE_NVRTC=/nonexistent/libnvrtc.so.13: cannot load"),
        "{out}"
    );
    let out = child(&OsString::from("none"));
    assert!(out.contains("disabled by TORCHCORE_NVRTC"), "{out}");
    let libs = libraries();
    if libs.is_empty() {
        println!("SKIPPED (real libraries): no libnvrtc found");
    }
    for ((major, minor), (path, _, _)) in libs {
        if path.components().count() < 2 {
            continue; // a bare name: not an override test
        }
        let out = child(&path.clone().into_os_string());
        assert!(
            out.contains(&format!(
                "CHILD-NVRTC {major}.{minor} Override {}",
                path.display()
            )),
            "{out}"
        );
        println!(
            "TORCHCORE_NVRTC={} loads NVRTC {major}.{minor}",
            path.display()
        );
    }
}
