//! Without a CUDA driver, every public entry point of `alloc_cuda::cuda`
//! returns `CUDA is not available: ...`; nothing panics or aborts.
//!
//! On a machine without `libcuda` this checks the genuine path (the probe
//! finds no library and touches no other cudarc function); where a driver
//! exists, the probe is switched off with `ALLOC_CUDA_FORCE_NO_DRIVER`
//! first. One test, because the probe's answer is cached per process and
//! the variable must be set before anything probes.

#![cfg(feature = "cuda")]

use alloc_cuda::cuda::{
    self, AllocatorBackend, CudaAllocator, CudaDevice, CudaDeviceOps, CudaError, CudaStream,
    CudaUnavailable, DeviceGuard, InitOptions, PinnedHostAllocator,
};
use alloc_cuda::CachingAllocatorConfig;
use c10_core::{Device, DeviceType, ScalarType, Tensor, TensorOptions};

#[test]
#[cfg_attr(miri, ignore)]
fn every_entry_point_reports_unavailable() {
    // SAFETY: only tries to dlopen the candidate library names.
    let genuine = !unsafe { cudarc::driver::sys::is_culib_present() };
    if !genuine {
        // SAFETY: this is the only test in the binary and it has started
        // no thread yet, so no other thread reads or writes the environment.
        unsafe { std::env::set_var(cuda::FORCE_NO_DRIVER_ENV, "1") };
    }
    let check = |what: &str, e: CudaError| {
        assert!(e.is_unavailable(), "{what}: {e:?}");
        let msg = e.to_string();
        if genuine {
            assert_eq!(
                msg, "CUDA is not available: no driver library found",
                "{what}"
            );
        } else {
            assert!(
                msg.starts_with("CUDA is not available: no driver library found"),
                "{what}: {msg}"
            );
        }
    };

    let e = cuda::is_available().expect_err("no driver");
    assert!(matches!(e, CudaUnavailable::NoDriver { .. }), "{e:?}");
    check("is_available", CudaError::from(e));
    check(
        "device_count",
        cuda::device_count().expect_err("no driver").into(),
    );
    check("init", cuda::init().expect_err("no driver"));
    for backend in [
        AllocatorBackend::Native,
        AllocatorBackend::Raw,
        AllocatorBackend::CudaMallocAsync,
    ] {
        let options = InitOptions {
            backend: Some(backend),
            ..InitOptions::default()
        };
        check(
            "init_with",
            cuda::init_with(options).expect_err("no driver"),
        );
        check(
            "CudaAllocator::new",
            CudaAllocator::new(backend, CachingAllocatorConfig::default()).expect_err("no driver"),
        );
    }
    check("runtime", cuda::runtime().expect_err("no driver"));
    check(
        "pinned_allocator",
        cuda::pinned_allocator().expect_err("no driver"),
    );
    check(
        "PinnedHostAllocator::new",
        PinnedHostAllocator::new().expect_err("no driver"),
    );
    check(
        "CudaDevice::new",
        CudaDevice::new(0).expect_err("no driver"),
    );
    check(
        "CudaStream::new",
        CudaStream::new(0).expect_err("no driver"),
    );
    check(
        "CudaStream::default_stream",
        CudaStream::default_stream(0).expect_err("no driver"),
    );
    check(
        "CudaStream::current",
        CudaStream::current(0).expect_err("no driver"),
    );
    check("synchronize", cuda::synchronize(0).expect_err("no driver"));
    check("set_device", cuda::set_device(0).expect_err("no driver"));
    check(
        "DeviceGuard::new",
        DeviceGuard::new(0).expect_err("no driver"),
    );
    assert_eq!(cuda::current_device(), 0);
    check(
        "CudaDeviceOps::new",
        CudaDeviceOps::new(true).expect_err("no driver"),
    );
    check(
        "CudaDeviceOps::new",
        CudaDeviceOps::new(false).expect_err("no driver"),
    );
    check("empty_cache", cuda::empty_cache().expect_err("no driver"));
    check(
        "memory_allocated",
        cuda::memory_allocated(0).expect_err("no driver"),
    );
    check(
        "memory_reserved",
        cuda::memory_reserved(0).expect_err("no driver"),
    );
    check(
        "memory_stats",
        cuda::memory_stats(0).expect_err("no driver"),
    );
    check(
        "load_kernels",
        cuda::load_kernels(0).expect_err("no driver"),
    );
    // NVRTC does not need the driver: compiling works where libnvrtc exists
    // and is an NVRTC error (not a panic) where it does not.
    match cuda::compile_kernels() {
        Ok(n) => assert!(n > 0),
        Err(e) => assert!(matches!(e, CudaError::Nvrtc(_)), "{e:?}"),
    }
    let _ = cuda::nvrtc_available();
    // `record_stream` needs a `CudaStream`, and `RawCudaAllocator::new`,
    // `AsyncPoolAllocator::new` and `DeviceAllocator::new` a `CudaDevice`:
    // none can be made without a driver (checked above).

    // Tensors: CUDA is reported, CPU-only calls still work.
    let t = Tensor::arange(0, 4, 1, ScalarType::Float).expect("cpu");
    let e = cuda::to_device(&t, Device::cuda(0)).expect_err("no driver");
    assert!(e.to_string().starts_with("CUDA is not available"), "{e}");
    assert!(cuda::to_device(&t, Device::CPU)
        .expect("same device")
        .is_same(&t));

    // Nothing was registered, and c10 says how to get a CUDA backend.
    assert!(c10_storage::get_allocator(DeviceType::Cuda).is_err());
    let e = Tensor::empty(&[2], TensorOptions::new().device(Device::cuda(0)))
        .expect_err("no CUDA allocator");
    let msg = e.to_string();
    assert!(msg.contains("no allocator is registered for cuda"), "{msg}");
    assert!(
        msg.contains("`cuda` feature of the torchcore crate"),
        "{msg}"
    );
    assert!(msg.contains("torchcore::cuda::init()"), "{msg}");
    let msg = c10_core::device_ops(DeviceType::Cuda)
        .err()
        .expect("no CUDA device ops")
        .to_string();
    assert!(
        msg.contains("no device operations are registered for cuda"),
        "{msg}"
    );
    assert!(msg.contains("torchcore::cuda::init()"), "{msg}");

    // Pure helpers need no driver.
    assert_eq!(cuda::pinned_round_size(3), Some(cuda::PINNED_MIN_BLOCK));
    assert_eq!(
        AllocatorBackend::select(&CachingAllocatorConfig::default(), false),
        AllocatorBackend::Native
    );
}
