//! Feature `cuda`: storages tagged `cuda:N` load onto their CUDA device
//! (torch.load's default), checked against `alloc-cuda`'s fake CUDA driver
//! (`crates/alloc-cuda/tests/gpu_suite/fake_cuda.c`, compiled here with the
//! system C compiler into `libcuda.so.1`; this binary re-runs its tests in
//! a child process that finds it through `LD_LIBRARY_PATH`). Without a C
//! compiler, or off Linux, it prints SKIPPED. The fake driver runs device
//! copies on the host; it says nothing about real GPUs.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(feature = "cuda")]

mod common;

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::Command;

use alloc_cuda::cuda::to_device;
use c10_core::{Device, ScalarType, Tensor};
use torchcore_pt::{
    load, load_from_reader, load_with, save_legacy_to_writer, LoadOptions, MapLocation, PtError,
    Value,
};

const SOURCE: &str = include_str!("../../alloc-cuda/tests/gpu_suite/fake_cuda.c");
/// Set in the child processes.
const CHILD: &str = "TORCHCORE_PT_FAKE_CUDA_CHILD";

fn compile(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let src = dir.join("fake_cuda.c");
    std::fs::write(&src, SOURCE).map_err(|e| e.to_string())?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(dir.join("libcuda.so.1"))
        .arg(&src)
        .output()
        .map_err(|e| format!("{cc}: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    std::fs::copy(dir.join("libcuda.so.1"), dir.join("libcuda.so")).map_err(|e| e.to_string())?;
    Ok(())
}

/// Runs test `name` of this binary in a child, with the fake driver in
/// `dir` (or, with `no_driver`, with the driver forced off).
fn run_child(name: &str, dir: &Path, no_driver: bool) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([name, "--exact", "--test-threads=1", "--nocapture"])
        .env(CHILD, "1")
        .env("LD_LIBRARY_PATH", dir)
        .env_remove(alloc_cuda::cuda::NVRTC_ENV)
        .env_remove("PYTORCH_CUDA_ALLOC_CONF")
        .env_remove("PYTORCH_ALLOC_CONF");
    if no_driver {
        cmd.env(alloc_cuda::cuda::FORCE_NO_DRIVER_ENV, "1");
    } else {
        cmd.env_remove(alloc_cuda::cuda::FORCE_NO_DRIVER_ENV);
    }
    let out = cmd.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "child {name}:\n{text}"
    );
}

fn parent(name: &str, no_driver: bool) {
    if !cfg!(target_os = "linux") {
        println!("SKIPPED: the fake driver is built for Linux");
        return;
    }
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "torchcore-pt-fake-cuda-{}-{name}",
        std::process::id()
    ));
    if let Err(e) = compile(&dir) {
        println!("SKIPPED: cannot build the fake driver ({e})");
        return;
    }
    run_child(name, &dir, no_driver);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `[numbers, numbers[1::2]]` in the legacy format with both storages
/// tagged `cuda:0` (the legacy format has no offsets or CRCs, so the tag
/// can be rewritten in place).
fn shared_on_cuda0() -> Vec<u8> {
    let numbers = Tensor::arange(1, 10, 1, ScalarType::Long).unwrap();
    let evens = numbers.as_strided(&[4], &[2], Some(1)).unwrap();
    let v = Value::List(vec![Value::Tensor(numbers), Value::Tensor(evens)]);
    let bytes = save_legacy_to_writer(&v, Vec::new()).unwrap();
    let (from, to): (&[u8], &[u8]) = (b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0");
    let at = bytes.windows(from.len()).position(|w| w == from).unwrap();
    [&bytes[..at], to, &bytes[at + from.len()..]].concat()
}

fn cpu(t: &Tensor) -> Tensor {
    to_device(t, Device::CPU).unwrap()
}

#[test]
#[cfg_attr(miri, ignore)]
fn cuda_tags_load_onto_the_device() {
    if std::env::var_os(CHILD).is_none() {
        return parent("cuda_tags_load_onto_the_device", false);
    }
    // A file torch 2.15 wrote with a cuda:0 storage.
    let v = load(common::fixtures().join("cuda_tag.pt")).unwrap();
    let w = v.dict_items().unwrap()[0].1.as_tensor().unwrap().clone();
    assert_eq!(w.device(), Device::cuda(0));
    assert_eq!(cpu(&w).to_vec::<f32>().unwrap(), [0.0, 1.0, 2.0]);
    // Two tensors over one cuda:0 storage: one device storage, shared.
    let Value::List(xs) = load_from_reader(Cursor::new(shared_on_cuda0())).unwrap() else {
        panic!()
    };
    let (n, e) = (xs[0].as_tensor().unwrap(), xs[1].as_tensor().unwrap());
    assert_eq!((n.device(), e.device()), (Device::cuda(0), Device::cuda(0)));
    assert!(n.storage().is_alias_of(e.storage()));
    assert_eq!((e.storage_offset(), e.strides()), (1, &[2][..]));
    assert_eq!(cpu(e).to_vec::<i64>().unwrap(), [2, 4, 6, 8]);
    assert_eq!(cpu(n).to_vec::<i64>().unwrap(), (1..10).collect::<Vec<_>>());
    // map_location='cpu' keeps them on the CPU.
    let opts = LoadOptions::default().map_location(MapLocation::Cpu);
    let w = load_with(common::fixtures().join("cuda_tag.pt"), &opts).unwrap();
    assert_eq!(
        w.dict_items().unwrap()[0].1.as_tensor().unwrap().device(),
        Device::CPU
    );
}

#[test]
#[cfg_attr(miri, ignore)]
fn without_a_driver_cuda_tags_need_map_location() {
    if std::env::var_os(CHILD).is_none() {
        return parent("without_a_driver_cuda_tags_need_map_location", true);
    }
    let err = load(common::fixtures().join("cuda_tag.pt")).unwrap_err();
    assert!(
        matches!(&err, PtError::Location { location, .. } if location == "cuda:0"),
        "{err}"
    );
}
