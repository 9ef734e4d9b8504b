//! The GPU test suite: every test starts with `gpu!()`, which initialises
//! CUDA or prints `SKIPPED: no CUDA device (reason)` and returns.
//!
//! It runs against the real driver from `tests/gpu.rs`, and against the
//! fake driver in `fake_cuda.c` from `tests/gpu_fake_driver.rs` (in a child
//! process). Tests hold one lock, so they never run concurrently (the
//! out-of-memory test takes the whole device). Timings are printed as
//! `TIMING <name> <value> <unit>` lines (run with `--nocapture`).
//!
//! Values are compared byte for byte against the CPU: every test tensor is
//! filled with a byte pattern, so one comparison covers all element sizes
//! (1, 2, 4, 8 and 16 bytes) whatever the dtype means.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(dead_code)]

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use alloc_cuda::cuda::{
    self, AllocatorBackend, AsyncPoolAllocator, CudaAllocator, CudaDevice, CudaDeviceOps,
    CudaRuntime, CudaStream, DeviceGuard, InitOptions, PinnedHostAllocator, RawCudaAllocator,
};
use alloc_cuda::{
    CachingAllocator, CachingAllocatorConfig, CachingDeviceAllocator, RawDevice, StreamId,
};
use aten_shape::prelude::*;
use c10_core::{DeviceOps, ScalarType, StridedOffsets, TensorOptions};
use c10_storage::testing::{check_allocator, KitOptions};
use c10_storage::{Allocator, Device, Storage};

const MIB: usize = 1 << 20;

/// Whether this process runs on the fake driver.
pub fn fake() -> bool {
    std::env::var_os("ALLOC_CUDA_FAKE_DRIVER").is_some()
}

static LOCK: Mutex<()> = Mutex::new(());

/// What `gpu!()` hands a test: the runtime and the suite lock.
pub struct Gpu {
    pub rt: &'static CudaRuntime,
    _lock: MutexGuard<'static, ()>,
}

/// The runtime, or `None` (with the SKIPPED line printed).
pub fn gpu() -> Option<Gpu> {
    if super::FAKE_DRIVER_HOST && !fake() {
        println!("SKIPPED: this binary runs the GPU suite in a child process on the fake driver");
        return None;
    }
    let lock = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let kernels = std::env::var("ALLOC_CUDA_SUITE_KERNELS").map_or(true, |v| v != "0");
    let options = InitOptions {
        kernels,
        ..InitOptions::default()
    };
    match cuda::init_with(options) {
        Ok(rt) => Some(Gpu { rt, _lock: lock }),
        Err(e) if e.is_unavailable() => {
            println!("SKIPPED: no CUDA device ({e})");
            None
        }
        Err(e) => panic!("CUDA is present but initialising it failed: {e}"),
    }
}

macro_rules! gpu {
    () => {
        match $crate::gpu_suite::gpu() {
            Some(g) => g,
            None => return,
        }
    };
}

fn cuda0() -> Device {
    Device::cuda(0)
}

/// A CPU tensor whose bytes follow a pattern derived from `seed`.
fn host(sizes: &[i64], dtype: ScalarType, seed: u8) -> Tensor {
    let t = Tensor::empty(sizes, TensorOptions::new().dtype(dtype)).expect("cpu tensor");
    {
        let mut g = t.storage().write().expect("write");
        for (i, b) in g.bytes_mut().expect("bytes").iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37).wrapping_add(seed) ^ ((i >> 8) as u8);
        }
    }
    t
}

/// The bytes of a CPU tensor's elements in logical order.
fn logical_bytes(t: &Tensor) -> Vec<u8> {
    assert!(t.device().is_cpu(), "logical_bytes needs a CPU tensor");
    let e = t.element_size();
    let g = t.storage().read().unwrap();
    let bytes = g.bytes().expect("host bytes");
    let mut out = Vec::with_capacity(t.numel() as usize * e);
    for off in StridedOffsets::new(t.sizes(), t.strides(), t.storage_offset()).unwrap() {
        let o = off as usize * e;
        out.extend_from_slice(&bytes[o..o + e]);
    }
    out
}

/// A device tensor's elements in logical order (through `to_device`).
fn device_bytes(t: &Tensor) -> Vec<u8> {
    let h = cuda::to_device(t, Device::CPU).expect("to cpu");
    logical_bytes(&h)
}

fn dtypes() -> [ScalarType; 5] {
    [
        ScalarType::Byte,
        ScalarType::Short,
        ScalarType::Float,
        ScalarType::Double,
        ScalarType::ComplexDouble,
    ]
}

/// Views of a `[4, 6, 10]` tensor, by name.
fn views(t: &Tensor) -> Vec<(&'static str, Tensor)> {
    vec![
        ("identity", t.clone()),
        ("transpose(0,2)", t.transpose(0, 2).expect("transpose")),
        ("permute(2,0,1)", t.permute(&[2, 0, 1]).expect("permute")),
        (
            "slice(2,1,9,3)",
            t.slice(2, Some(1), Some(9), 3).expect("slice"),
        ),
        ("slice(0,::2)", t.slice(0, None, None, 2).expect("slice")),
        ("narrow(1,2,3)", t.narrow(1, 2, 3).expect("narrow")),
        ("select(1,4)", t.select(1, 4).expect("select")),
        (
            "expand([4,6,1]->[4,6,10])",
            t.narrow(2, 3, 1)
                .expect("narrow")
                .expand(&[4, 6, 10])
                .expect("expand"),
        ),
        (
            "expand([1,1,10]->[4,6,10])",
            t.narrow(0, 1, 1)
                .and_then(|v| v.narrow(1, 2, 1))
                .expect("narrow")
                .expand(&[4, 6, 10])
                .expect("expand"),
        ),
        (
            "transpose+slice",
            t.transpose(1, 2)
                .and_then(|v| v.slice(1, Some(0), None, 2))
                .expect("view"),
        ),
        ("diagonal(0,1,2)", t.diagonal(0, 1, 2).expect("diagonal")),
        ("unfold(2,4,3)", t.unfold(2, 4, 3).expect("unfold")),
    ]
}

#[test]
#[cfg_attr(miri, ignore)]
fn probe_and_devices() {
    let g = gpu!();
    let n = cuda::device_count().expect("count");
    assert!(n >= 1);
    assert_eq!(g.rt.device_count(), n);
    for i in 0..n {
        let d = CudaDevice::new(i as i8).expect("device");
        let (free, total) = d.mem_get_info().expect("mem info");
        println!(
            "cuda:{i}: {} (sm_{}{}), {} MiB total, {} MiB free, VMM {}, memory pools {}",
            d.name(),
            d.compute_capability().0,
            d.compute_capability().1,
            total >> 20,
            free >> 20,
            d.supports_vmm(),
            d.supports_memory_pools()
        );
        assert!(total > 0 && free <= total);
        assert_eq!(d.total_memory(), total);
    }
    println!("NVRTC available: {}", cuda::nvrtc_available());
}

#[test]
#[cfg_attr(miri, ignore)]
fn native_alloc_free_reuse() {
    let _g = gpu!();
    let dev = Arc::new(CudaDevice::new(0).expect("device"));
    let a = CachingAllocator::new(dev.clone(), 0, CachingAllocatorConfig::default());
    let (m0, f0) = dev.driver_alloc_counts();
    let s = StreamId::DEFAULT;
    let p = a.malloc(1000, s).expect("malloc");
    assert_eq!(p.addr() % 512, 0);
    let st = a.stats().to_flat_map();
    assert_eq!(st["segment.all.current"], 1);
    assert_eq!(st["reserved_bytes.all.current"], 2 << 20);
    assert_eq!(st["allocated_bytes.all.current"], 1024);
    // SAFETY: `p` is not used.
    unsafe { a.free(p).expect("free") };
    let q = a.malloc(1000, s).expect("malloc again");
    assert_eq!(q, p, "a freed block is reused");
    // 1.5 MiB: a 20 MiB large-pool segment (PyTorch's rule).
    let big = a.malloc(3 << 19, s).expect("malloc 1.5 MiB");
    assert_eq!(
        a.stats().to_flat_map()["reserved_bytes.all.current"],
        (2 << 20) + (20 << 20)
    );
    let (m1, _) = dev.driver_alloc_counts();
    assert_eq!(m1 - m0, 2, "two cuMemAlloc calls for two segments");
    // SAFETY: not used.
    unsafe {
        a.free(q).expect("free");
        a.free(big).expect("free");
    }
    a.validate().expect("invariants");
    a.empty_cache().expect("empty_cache");
    let (m2, f2) = dev.driver_alloc_counts();
    assert_eq!((m2 - m0, f2 - f0), (2, 2));
    assert_eq!(a.memory_reserved(), 0);
}

#[test]
#[cfg_attr(miri, ignore)]
fn stats_through_the_registered_allocator() {
    let g = gpu!();
    let alloc = g.rt.allocator().device(0).expect("device 0");
    if alloc.backend() != AllocatorBackend::Native {
        println!(
            "SKIPPED: the runtime uses the {:?} backend",
            alloc.backend()
        );
        return;
    }
    alloc.empty_cache().expect("empty");
    alloc.reset_peak_stats();
    let before = alloc.memory_allocated();
    let a = Tensor::empty(&[1000], ScalarType::Byte.into_options(cuda0())).expect("a");
    let b = Tensor::empty(&[3 << 18], ScalarType::Float.into_options(cuda0())).expect("b");
    assert_eq!(alloc.memory_allocated() - before, 1024 + (3 << 20));
    drop(a);
    assert_eq!(alloc.memory_allocated() - before, 3 << 20);
    let stats = cuda::memory_stats(0).expect("stats").expect("native stats");
    let m = stats.to_flat_map();
    assert!(m["allocated_bytes.all.peak"] >= (1024 + (3 << 20)) as i64);
    assert!(cuda::memory_reserved(0).expect("reserved") >= 3 << 20);
    drop(b);
    assert_eq!(alloc.memory_allocated(), before);
}

trait IntoOptions {
    fn into_options(self, d: Device) -> TensorOptions;
}

impl IntoOptions for ScalarType {
    fn into_options(self, d: Device) -> TensorOptions {
        TensorOptions::new().dtype(self).device(d)
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn streams_and_record_stream() {
    let _g = gpu!();
    let s1 = CudaStream::new(0).expect("stream");
    let s2 = CudaStream::new(0).expect("stream");
    assert_ne!(s1.id(), s2.id());
    let dev = Arc::new(CudaDevice::new(0).expect("device"));
    let a = CachingAllocator::new(dev, 0, CachingAllocatorConfig::default());
    let p0 = a.malloc(1 << 20, StreamId::DEFAULT).expect("malloc");
    let p1 = a.malloc(1 << 20, s1.id()).expect("malloc on s1");
    assert_eq!(
        a.stats().to_flat_map()["segment.all.current"],
        2,
        "pools are per stream"
    );
    a.record_stream(p0, s1.id()).expect("record_stream");
    // SAFETY: neither is used by queued work we care about.
    unsafe {
        a.free(p0).expect("free");
        a.free(p1).expect("free");
    }
    s1.synchronize().expect("sync");
    assert!(s1.query().expect("query"));
    s2.wait_stream(s1).expect("wait_stream");
    let again = a.malloc(1 << 20, StreamId::DEFAULT).expect("malloc");
    assert_eq!(again, p0, "reused once the event on s1 completed");
    // SAFETY: not used.
    unsafe { a.free(again).expect("free") };
    a.validate().expect("invariants");

    // The registered allocator allocates on the current stream.
    let t = {
        let _cur = s1.make_current();
        assert_eq!(CudaStream::current(0).expect("current").id(), s1.id());
        let t = cuda::to_device(&host(&[64], ScalarType::Float, 1), cuda0()).expect("h2d");
        cuda::record_stream(&t, s2).expect("record_stream");
        t
    };
    assert_eq!(
        device_bytes(&t),
        logical_bytes(&host(&[64], ScalarType::Float, 1))
    );
    drop(t);
    cuda::synchronize(0).expect("device sync");
    // A made-up stream id is an error, not a crash.
    let old = alloc_cuda::set_current_stream(0, StreamId(0x1234_5678));
    let r = Tensor::empty(&[16], ScalarType::Float.into_options(cuda0()));
    alloc_cuda::set_current_stream(0, old);
    let e = r.expect_err("unknown stream");
    assert!(e.to_string().contains("not a stream created by"), "{e}");
}

#[test]
#[cfg_attr(miri, ignore)]
fn copies_both_ways_for_every_element_size() {
    let _g = gpu!();
    for dt in dtypes() {
        for n in [1i64, 7, 4096, 100_003] {
            let h = host(&[n], dt, n as u8);
            let d = cuda::to_device(&h, cuda0()).expect("h2d");
            assert_eq!(d.device(), cuda0());
            assert_eq!(
                (d.sizes(), d.strides(), d.dtype()),
                (h.sizes(), h.strides(), dt)
            );
            assert_eq!(device_bytes(&d), logical_bytes(&h), "{dt} x {n}");
        }
        // Pinned host memory on both sides.
        let pinned = cuda::pinned_allocator().expect("pinned");
        let n = 1000i64;
        let bytes = n as usize * dt.itemsize();
        let st = Storage::new(bytes, Box::leak(Box::new(pinned.clone())), false).expect("pinned");
        let hp = Tensor::from_storage(st, dt, &[n], &[1], 0).expect("pinned tensor");
        hp.copy_(&host(&[n], dt, 9)).expect("fill pinned");
        let d = cuda::to_device(&hp, cuda0()).expect("h2d from pinned");
        let st2 = Storage::new(bytes, Box::leak(Box::new(pinned.clone())), false).expect("pinned");
        let back = Tensor::from_storage(st2, dt, &[n], &[1], 0).expect("pinned tensor");
        back.copy_(&d).expect("d2h into pinned");
        assert_eq!(logical_bytes(&back), logical_bytes(&hp));
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn strided_copies_match_the_cpu() {
    let _g = gpu!();
    for dt in dtypes() {
        let base = host(&[4, 6, 10], dt, 3);
        let dbase = cuda::to_device(&base, cuda0()).expect("h2d");
        for ((name, hv), (_, dv)) in views(&base).into_iter().zip(views(&dbase)) {
            let want = logical_bytes(&hv);
            // contiguous() on the device, then back.
            let c = dv.contiguous().expect("contiguous");
            assert!(c.is_contiguous());
            assert_eq!(device_bytes(&c), want, "{dt} {name}: contiguous");
            // Straight to the host from the strided view.
            assert_eq!(device_bytes(&dv), want, "{dt} {name}: d2h");
            // clone keeps a dense layout's strides.
            let k = dv.clone_in(MemoryFormat::Preserve).expect("clone");
            if hv.is_non_overlapping_and_dense() {
                assert_eq!(k.strides(), dv.strides(), "{dt} {name}: clone strides");
            }
            assert_eq!(device_bytes(&k), want, "{dt} {name}: clone");
            if name.starts_with("expand") || name.starts_with("unfold") {
                continue; // overlapping destinations are refused
            }
            // Host → strided device destination, and device → strided device.
            let src = host(hv.sizes(), dt, 77);
            let cpu_dst = host(&[4, 6, 10], dt, 5);
            let gpu_dst = cuda::to_device(&cpu_dst, cuda0()).expect("h2d");
            views(&cpu_dst)
                .into_iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.copy_(&src))
                .expect("view")
                .expect("cpu copy_");
            let gv = views(&gpu_dst)
                .into_iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v)
                .expect("view");
            gv.copy_(&src).expect("h2d copy_ into a strided view");
            assert_eq!(
                device_bytes(&gpu_dst),
                logical_bytes(&cpu_dst),
                "{dt} {name}: h2d strided"
            );
            let gpu_dst2 = cuda::to_device(&host(&[4, 6, 10], dt, 5), cuda0()).expect("h2d");
            let gv2 = views(&gpu_dst2)
                .into_iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v)
                .expect("view");
            let dsrc = cuda::to_device(&src, cuda0())
                .expect("h2d")
                .transpose(0, src.dim() as i64 - 1)
                .and_then(|t| t.contiguous())
                .and_then(|t| t.transpose(0, src.dim() as i64 - 1))
                .expect("a column-major source");
            gv2.copy_(&dsrc).expect("d2d strided copy_");
            assert_eq!(
                device_bytes(&gpu_dst2),
                logical_bytes(&cpu_dst),
                "{dt} {name}: d2d strided"
            );
        }
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn contiguous_clone_copy_on_device() {
    let _g = gpu!();
    let h = Tensor::arange(0, 40, 1, ScalarType::Float)
        .and_then(|t| t.view(&[4, 10]))
        .expect("arange");
    let d = cuda::to_device(&h, cuda0()).expect("h2d");
    assert!(d.contiguous().expect("contiguous").is_same(&d));
    // Broadcast copy_ from a device row and from a host row.
    let row_h = Tensor::arange(100, 110, 1, ScalarType::Float).expect("row");
    let row_d = cuda::to_device(&row_h, cuda0()).expect("row");
    let dst = Tensor::zeros(&[4, 10], ScalarType::Float.into_options(cuda0())).expect("zeros");
    dst.copy_(&row_d).expect("d2d broadcast");
    let want: Vec<f32> = (0..4).flat_map(|_| (100..110).map(|v| v as f32)).collect();
    let got = cuda::to_device(&dst, Device::CPU).expect("d2h");
    assert_eq!(got.to_vec::<f32>().expect("vec"), want);
    assert_eq!(dst.version().expect("version"), 1);
    dst.fill_(0.0).expect("fill");
    dst.copy_(&row_h).expect("h2d broadcast");
    let got = cuda::to_device(&dst, Device::CPU).expect("d2h");
    assert_eq!(got.to_vec::<f32>().expect("vec"), want);
    // dtype conversion (staged through the CPU by aten-shape).
    let longs = Tensor::zeros(&[4, 10], ScalarType::Long.into_options(cuda0())).expect("zeros");
    longs.copy_(&d).expect("float -> long");
    let got = cuda::to_device(&longs, Device::CPU).expect("d2h");
    assert_eq!(
        got.to_vec::<i64>().expect("vec"),
        (0..40).collect::<Vec<i64>>()
    );
    // Overlapping, non-dense views of one storage (allowed by PyTorch).
    let line_h = Tensor::arange(0, 20, 1, ScalarType::Int).expect("line");
    let line_d = cuda::to_device(&line_h, cuda0()).expect("h2d");
    let f = |t: &Tensor| -> (Tensor, Tensor) {
        (
            t.slice(0, Some(0), Some(16), 2).expect("even"),
            t.slice(0, Some(1), Some(17), 2).expect("odd"),
        )
    };
    let (de, dodd) = f(&line_d);
    de.copy_(&dodd).expect("overlapping ranges");
    let (he, hodd) = f(&line_h);
    he.copy_(&hodd).expect("cpu");
    assert_eq!(
        cuda::to_device(&line_d, Device::CPU)
            .expect("d2h")
            .to_vec::<i32>()
            .expect("vec"),
        line_h.to_vec::<i32>().expect("vec")
    );
    // Two views of one device storage, same layout: nothing to do.
    d.copy_(&d.view(&[4, 10]).expect("view"))
        .expect("self copy");
}

#[test]
#[cfg_attr(miri, ignore)]
fn fills_and_factories() {
    let _g = gpu!();
    let o = |dt: ScalarType| dt.into_options(cuda0());
    let z = Tensor::zeros(&[3, 5], o(ScalarType::Double)).expect("zeros");
    assert_eq!(
        cuda::to_device(&z, Device::CPU)
            .expect("d2h")
            .to_vec::<f64>()
            .expect("v"),
        vec![0.0; 15]
    );
    for (dt, v) in [
        (ScalarType::Byte, 7.0),
        (ScalarType::Short, -3.0),
        (ScalarType::Float, 1.5),
        (ScalarType::Double, 1.5),
        (ScalarType::Long, 123456789.0),
        (ScalarType::ComplexDouble, 2.0),
    ] {
        let d = Tensor::full(&[4, 10], v, o(dt)).expect("full");
        let h = Tensor::full(&[4, 10], v, TensorOptions::new().dtype(dt)).expect("full");
        assert_eq!(device_bytes(&d), logical_bytes(&h), "full {dt}");
        // fill_ on a strided view.
        let dv = d.slice(1, Some(1), None, 3).expect("view");
        let hv = h.slice(1, Some(1), None, 3).expect("view");
        dv.fill_(9.0).expect("fill_");
        hv.fill_(9.0).expect("fill_");
        assert_eq!(device_bytes(&d), logical_bytes(&h), "strided fill {dt}");
    }
    let ones = Tensor::ones(&[2, 3], o(ScalarType::Half)).expect("ones");
    let h = Tensor::ones(&[2, 3], TensorOptions::new().dtype(ScalarType::Half)).expect("ones");
    assert_eq!(device_bytes(&ones), logical_bytes(&h));
}

#[test]
#[cfg_attr(miri, ignore)]
fn host_staging_paths_without_kernels() {
    let _g = gpu!();
    let ops = CudaDeviceOps::new(false).expect("ops");
    assert!(!ops.uses_kernels());
    for dt in dtypes() {
        let base = host(&[4, 6, 10], dt, 11);
        let dbase = cuda::to_device(&base, cuda0()).expect("h2d");
        for ((name, hv), (_, dv)) in views(&base).into_iter().zip(views(&dbase)) {
            let out = Tensor::empty(hv.sizes(), dt.into_options(cuda0())).expect("empty");
            ops.copy(&out, &dv).expect("d2d via host");
            assert_eq!(device_bytes(&out), logical_bytes(&hv), "{dt} {name}: d2d");
            let h = Tensor::empty(hv.sizes(), TensorOptions::new().dtype(dt)).expect("empty");
            ops.copy(&h, &dv).expect("d2h");
            assert_eq!(logical_bytes(&h), logical_bytes(&hv), "{dt} {name}: d2h");
        }
        // Strided destination (read-modify-write) and a strided fill.
        let dst = cuda::to_device(&host(&[4, 6, 10], dt, 1), cuda0()).expect("h2d");
        let cpu = host(&[4, 6, 10], dt, 1);
        let src = host(&[4, 3, 10], dt, 2);
        ops.copy(&dst.slice(1, None, None, 2).expect("view"), &src)
            .expect("h2d rmw");
        cpu.slice(1, None, None, 2)
            .expect("view")
            .copy_(&src)
            .expect("cpu");
        assert_eq!(device_bytes(&dst), logical_bytes(&cpu), "{dt}: h2d rmw");
        let value = vec![0x5Au8; dt.itemsize()];
        let mut value = value;
        value[0] = 1;
        ops.fill(&dst.slice(2, None, None, 3).expect("view"), &value)
            .expect("fill rmw");
        {
            let v = cpu.slice(2, None, None, 3).expect("view");
            let e = dt.itemsize();
            let mut g = cpu.storage().write().expect("w");
            let b = g.bytes_mut().expect("bytes");
            for off in StridedOffsets::new(v.sizes(), v.strides(), v.storage_offset()).unwrap() {
                b[off as usize * e..off as usize * e + e].copy_from_slice(&value);
            }
        }
        assert_eq!(device_bytes(&dst), logical_bytes(&cpu), "{dt}: fill rmw");
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn thirteen_dims_fall_back_to_host_staging() {
    let _g = gpu!();
    let sizes = [2i64; 13];
    let h = host(&sizes, ScalarType::Short, 4);
    let d = cuda::to_device(&h, cuda0()).expect("h2d");
    let rev: Vec<i64> = (0..13).rev().collect();
    let (hp, dp) = (
        h.permute(&rev).expect("permute"),
        d.permute(&rev).expect("permute"),
    );
    let c = dp.contiguous().expect("contiguous");
    assert_eq!(device_bytes(&c), logical_bytes(&hp));
}

#[test]
#[cfg_attr(miri, ignore)]
fn oom_recovery_native() {
    let _g = gpu!();
    cuda::empty_cache().expect("release the runtime's cache first");
    let dev = Arc::new(CudaDevice::new(0).expect("device"));
    let (_, total) = dev.mem_get_info().expect("info");
    let a = CachingAllocator::new(dev, 0, CachingAllocatorConfig::default());
    // One request larger than the device.
    let e = a
        .malloc(total + (1 << 30), StreamId::DEFAULT)
        .expect_err("larger than the device");
    assert!(e.is_out_of_memory(), "{e}");
    let msg = e.to_string();
    assert!(
        msg.starts_with("CUDA out of memory. Tried to allocate "),
        "{msg}"
    );
    assert!(msg.contains("GPU 0 has a total capacity of"), "{msg}");
    // Fill the device, hit the limit, free, continue.
    let chunk = ((total / 8) >> 21).max(1) << 21;
    let mut held = Vec::new();
    let err = loop {
        match a.malloc(chunk, StreamId::DEFAULT) {
            Ok(p) => held.push(p),
            Err(e) => break e,
        }
        assert!(held.len() < 64, "never ran out of memory");
    };
    println!("OOM after {} x {} MiB: {err}", held.len(), chunk >> 20);
    assert!(err.is_out_of_memory());
    assert!(err
        .to_string()
        .contains("is reserved by PyTorch but unallocated"));
    assert!(a.stats().to_flat_map()["num_ooms"] >= 2);
    for p in held.drain(..) {
        // SAFETY: nothing uses these blocks.
        unsafe { a.free(p).expect("free") };
    }
    let p = a
        .malloc(chunk, StreamId::DEFAULT)
        .expect("allocating works again");
    // SAFETY: not used.
    unsafe { a.free(p).expect("free") };
    a.validate().expect("invariants");
    a.empty_cache().expect("empty");
}

#[test]
#[cfg_attr(miri, ignore)]
fn oom_raw_and_async_backends() {
    let _g = gpu!();
    let dev = Arc::new(CudaDevice::new(0).expect("device"));
    let total = dev.total_memory() as usize;
    let raw = RawCudaAllocator::new(dev.clone());
    let e = raw.allocate(total + (1 << 30)).expect_err("too large");
    assert!(
        e.is_out_of_memory() && e.to_string().starts_with("CUDA out of memory."),
        "{e}"
    );
    let p = raw.allocate(MIB).expect("raw works again");
    assert_eq!(raw.memory_allocated(), MIB as u64);
    drop(p);
    assert_eq!(raw.memory_allocated(), 0);
    if !dev.supports_memory_pools() {
        println!("SKIPPED (part): no memory pools on this device");
        return;
    }
    let pool = AsyncPoolAllocator::new(dev).expect("pool");
    let e = pool
        .allocate_on_stream(total + (1 << 30), StreamId::DEFAULT)
        .expect_err("too large");
    assert!(e.is_out_of_memory(), "{e}");
    let p = pool
        .allocate_on_stream(4 * MIB, StreamId::DEFAULT)
        .expect("pool works again");
    assert!(pool.owns(p.get().addr() as u64));
    drop(p);
    assert!(
        pool.memory_reserved().expect("reserved") >= 4 * MIB as u64,
        "kept in the pool"
    );
    pool.empty_cache().expect("trim");
    assert_eq!(pool.memory_allocated(), 0);
}

#[test]
#[cfg_attr(miri, ignore)]
fn every_backend_allocates_and_copies() {
    let _g = gpu!();
    for backend in [
        AllocatorBackend::Native,
        AllocatorBackend::Raw,
        AllocatorBackend::CudaMallocAsync,
    ] {
        let alloc: &'static CudaAllocator =
            match CudaAllocator::new(backend, CachingAllocatorConfig::default()) {
                Ok(a) => Box::leak(Box::new(a)),
                Err(e) => panic!("{backend:?}: {e}"),
            };
        if let Err(e) = alloc.device(0) {
            println!("SKIPPED (part): {backend:?}: {e}");
            continue;
        }
        let s = CudaStream::new(0).expect("stream");
        let st = Storage::new(256 * 4, alloc, false).expect("storage");
        let t = Tensor::from_storage(st, ScalarType::Float, &[16, 16], &[16, 1], 0).expect("t");
        let h = host(&[16, 16], ScalarType::Float, 42);
        t.copy_(&h).expect("h2d");
        assert_eq!(
            device_bytes(&t.t().expect("t")),
            logical_bytes(&h.t().expect("t"))
        );
        alloc
            .record_stream(
                0,
                t.storage().read().unwrap().as_ptr().addr() as u64,
                s.id(),
            )
            .expect("record_stream");
        let stats = alloc.stats().expect("stats");
        assert_eq!(stats.allocations, 1, "{backend:?}");
        assert_eq!(stats.current_bytes, 1024, "{backend:?}");
        drop(t);
        s.synchronize().expect("sync");
        // Processes the pending stream events (the native backend counts a
        // block freed with stream uses until they complete).
        alloc.empty_cache().expect("empty");
        let stats = alloc.stats().expect("stats");
        assert_eq!((stats.frees, stats.current_bytes), (1, 0), "{backend:?}");
        println!("{backend:?}: ok ({})", alloc.name());
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn conformance_kit_on_the_device_allocators() {
    let _g = gpu!();
    for (backend, alignment) in [
        (AllocatorBackend::Native, 512),
        (AllocatorBackend::Raw, 256),
        (AllocatorBackend::CudaMallocAsync, 256),
    ] {
        let Ok(a) = CudaAllocator::new(backend, CachingAllocatorConfig::default()) else {
            continue;
        };
        if a.device(0).is_err() {
            println!("SKIPPED (part): {backend:?} unavailable");
            continue;
        }
        let opts = KitOptions {
            alignment,
            threads: 4,
            iterations: if backend == AllocatorBackend::Raw {
                20
            } else {
                200
            },
            ..KitOptions::default()
        };
        let report = check_allocator(&a, &opts);
        println!("{report}");
        report.assert_ok();
        a.empty_cache().expect("empty");
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn pinned_allocator_conformance_and_caching() {
    let _g = gpu!();
    let p = PinnedHostAllocator::new().expect("pinned");
    let report = check_allocator(
        &p,
        &KitOptions {
            alignment: 4096,
            ..KitOptions::default()
        },
    );
    println!("{report}");
    report.assert_ok();
    p.empty_cache().expect("empty");
    assert_eq!(p.pinned_stats().segments, 0);

    let hits = p.pinned_stats().cache_hits;
    let a = p.allocate(5000).expect("alloc");
    let addr = a.get().addr();
    drop(a);
    let b = p.allocate(6000).expect("same size class");
    assert_eq!(b.get().addr(), addr, "reused");
    assert_eq!(p.pinned_stats().cache_hits, hits + 1);
    // An event keeps a block out of the free list until it completes.
    p.record_event(b.get(), 0, StreamId::DEFAULT)
        .expect("record_event");
    drop(b);
    cuda::synchronize(0).expect("sync");
    let c = p.allocate(8192).expect("alloc");
    assert_eq!(c.get().addr(), addr, "reused after the event completed");
    drop(c);
    // Large blocks round to 2 MiB multiples.
    let big = p.allocate(5 * MIB + 1).expect("big");
    assert_eq!(p.pinned_stats().reserved_bytes, 8192 + 6 * MIB as u64);
    // SAFETY: the block has at least 5 MiB + 1 bytes.
    unsafe { big.get().add(5 * MIB).write(1) };
    drop(big);
    let again = p.allocate(6 * MIB).expect("same 6 MiB block");
    assert_eq!(p.pinned_stats().segments, 2);
    drop(again);
    p.empty_cache().expect("empty");
    let s = p.pinned_stats();
    assert_eq!((s.segments, s.reserved_bytes, s.cached_bytes), (0, 0, 0));
    assert_eq!(s.host_alloc_calls, s.host_free_calls);
}

#[test]
#[cfg_attr(miri, ignore)]
fn expandable_segments() {
    let _g = gpu!();
    let dev = CudaDevice::new(0).expect("device");
    if !dev.supports_vmm() {
        println!("SKIPPED: cuda:0 has no virtual memory management");
        return;
    }
    let config = CachingAllocatorConfig::parse("expandable_segments:True").expect("config");
    let a = CachingAllocator::new(dev, 0, config);
    assert!(a.expandable_segments());
    let alloc: &'static CachingDeviceAllocator<CudaDevice> =
        Box::leak(Box::new(CachingDeviceAllocator::new(a)));
    let mut tensors = Vec::new();
    for (k, n) in [3 * MIB, 5 * MIB, 30 * MIB, 1000].into_iter().enumerate() {
        let st = Storage::new(n, alloc, false).expect("storage");
        let t = Tensor::from_storage(st, ScalarType::Byte, &[n as i64], &[1], 0).expect("t");
        let h = host(&[n as i64], ScalarType::Byte, k as u8);
        t.copy_(&h).expect("h2d");
        assert_eq!(device_bytes(&t), logical_bytes(&h));
        tensors.push(t);
    }
    let snap = alloc.inner().snapshot();
    assert!(snap.iter().any(|s| s.is_expandable), "{snap:?}");
    alloc.inner().validate().expect("invariants");
    drop(tensors);
    alloc.inner().empty_cache().expect("unmap");
    assert_eq!(alloc.inner().memory_reserved(), 0);
    alloc.inner().validate().expect("invariants");
}

#[test]
#[cfg_attr(miri, ignore)]
fn multiple_devices() {
    let _g = gpu!();
    let n = cuda::device_count().expect("count");
    if n < 2 {
        println!("SKIPPED: one device");
        return;
    }
    let h = host(&[8, 16], ScalarType::Double, 8);
    let d0 = cuda::to_device(&h, cuda0()).expect("cuda:0");
    let d1 = cuda::to_device(&d0.t().expect("t"), Device::cuda(1)).expect("cuda:1");
    assert_eq!(d1.device(), Device::cuda(1));
    assert_eq!(device_bytes(&d1), logical_bytes(&h.t().expect("t")));
    let e = {
        let _g = DeviceGuard::new(1).expect("guard");
        assert_eq!(cuda::current_device(), 1);
        Tensor::empty(&[4], ScalarType::Float.into_options(Device::cuda(1))).expect("empty")
    };
    assert_eq!(e.device(), Device::cuda(1));
    assert_eq!(cuda::current_device(), 0);
}

#[test]
#[cfg_attr(miri, ignore)]
fn errors_are_reported_not_panics() {
    let _g = gpu!();
    let n = cuda::device_count().expect("count") as i8;
    assert!(CudaDevice::new(n).is_err());
    assert!(DeviceGuard::new(n).is_err());
    assert!(CudaStream::new(-1).is_err());
    let meta = Tensor::empty(&[2], TensorOptions::new().device(Device::META)).expect("meta");
    assert!(cuda::to_device(&meta, cuda0()).is_err());
    let dev = CudaDevice::new(0).expect("device");
    assert!(dev.query_event(alloc_cuda::EventId(0xdead_beef)).is_err());
    assert!(dev.synchronize_stream(StreamId(0xdead_beef)).is_err());
}

#[test]
#[cfg_attr(miri, ignore)]
fn indices_past_2_pow_31() {
    let _g = gpu!();
    if fake() {
        println!("SKIPPED: needs 3 GiB of device memory");
        return;
    }
    if cuda::load_kernels(0).is_err() {
        println!("SKIPPED: no NVRTC kernels");
        return;
    }
    let h = Tensor::arange(0, 3, 1, ScalarType::Byte).expect("row");
    let d = cuda::to_device(&h, cuda0()).expect("h2d");
    let rows = (1i64 << 30) + 5;
    let e = d
        .view(&[1, 3])
        .and_then(|v| v.expand(&[rows, 3]))
        .expect("expand");
    let c = e.contiguous().expect("3 GiB contiguous");
    let tail = c.narrow(0, rows - 2, 2).expect("tail");
    assert_eq!(device_bytes(&tail), vec![0, 1, 2, 0, 1, 2]);
}

fn gbps(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e9
}

#[test]
#[cfg_attr(miri, ignore)]
fn timings() {
    let g = gpu!();
    if fake() {
        println!("SKIPPED: timings on the fake driver mean nothing");
        return;
    }
    let dev = Arc::new(CudaDevice::new(0).expect("device"));
    println!("TIMING device {} -", dev.name().replace(' ', "_"));
    // Cached alloc+free against raw cuMemAlloc/cuMemFree (`CudaDevice::free`
    // synchronizes the device first, as `cudaFree` does).
    let a = CachingAllocator::new(dev.clone(), 0, CachingAllocatorConfig::default());
    for size in [512usize, MIB, 64 * MIB] {
        let p = a.malloc(size as u64, StreamId::DEFAULT).expect("warm");
        // SAFETY: unused.
        unsafe { a.free(p).expect("free") };
        let n = 20_000;
        let t0 = Instant::now();
        for _ in 0..n {
            let p = a.malloc(size as u64, StreamId::DEFAULT).expect("malloc");
            // SAFETY: unused.
            unsafe { a.free(p).expect("free") };
        }
        let cached = t0.elapsed().as_nanos() as f64 / n as f64;
        let n = 200;
        let t0 = Instant::now();
        for _ in 0..n {
            let p = dev.malloc(size as u64).expect("cuMemAlloc");
            // SAFETY: unused.
            unsafe { dev.free(p).expect("cuMemFree") };
        }
        let raw = t0.elapsed().as_nanos() as f64 / n as f64;
        println!("TIMING alloc_free_cached_{size}B {cached:.0} ns");
        println!("TIMING alloc_free_raw_cuMemAlloc_cuMemFree_{size}B {raw:.0} ns");
        println!(
            "TIMING alloc_free_cached_speedup_{size}B {:.0} x (target: at least 50)",
            raw / cached.max(1.0)
        );
        if dev.supports_memory_pools() {
            let pool = AsyncPoolAllocator::new(dev.clone()).expect("pool");
            drop(
                pool.allocate_on_stream(size, StreamId::DEFAULT)
                    .expect("warm"),
            );
            let n = 20_000;
            let t0 = Instant::now();
            for _ in 0..n {
                drop(
                    pool.allocate_on_stream(size, StreamId::DEFAULT)
                        .expect("alloc"),
                );
            }
            let asy = t0.elapsed().as_nanos() as f64 / n as f64;
            println!("TIMING alloc_free_cudaMallocAsync_{size}B {asy:.0} ns");
        }
    }
    a.empty_cache().expect("empty");
    // Copy bandwidths, 256 MiB.
    let bytes = 256 * MIB;
    let n = bytes as i64 / 4;
    let pageable = host(&[n], ScalarType::Float, 1);
    let pinned = cuda::pinned_allocator().expect("pinned");
    let pst = Storage::new(bytes, Box::leak(Box::new(pinned.clone())), false).expect("pinned");
    let pinned_t = Tensor::from_storage(pst, ScalarType::Float, &[n], &[1], 0).expect("t");
    pinned_t.copy_(&pageable).expect("fill");
    let d = Tensor::empty(&[n], ScalarType::Float.into_options(cuda0())).expect("d");
    let d2 = Tensor::empty(&[n], ScalarType::Float.into_options(cuda0())).expect("d2");
    let time = |f: &dyn Fn()| {
        f();
        cuda::synchronize(0).expect("sync");
        let reps = 5;
        let t0 = Instant::now();
        for _ in 0..reps {
            f();
        }
        cuda::synchronize(0).expect("sync");
        t0.elapsed().as_secs_f64() / reps as f64
    };
    let s = time(&|| d.copy_(&pageable).expect("h2d"));
    println!("TIMING h2d_pageable_256MiB {:.1} GB/s", gbps(bytes, s));
    let s = time(&|| d.copy_(&pinned_t).expect("h2d"));
    println!("TIMING h2d_pinned_256MiB {:.1} GB/s", gbps(bytes, s));
    let s = time(&|| pageable.copy_(&d).expect("d2h"));
    println!("TIMING d2h_pageable_256MiB {:.1} GB/s", gbps(bytes, s));
    let s = time(&|| pinned_t.copy_(&d).expect("d2h"));
    println!("TIMING d2h_pinned_256MiB {:.1} GB/s", gbps(bytes, s));
    let s = time(&|| d2.copy_(&d).expect("d2d"));
    println!(
        "TIMING d2d_256MiB {:.1} GB/s (read+write: {:.1})",
        gbps(bytes, s),
        gbps(2 * bytes, s)
    );
    // Strided copy: transpose of a 8192x8192 f32 matrix (256 MiB).
    let m = d.view(&[8192, 8192]).expect("view").t().expect("t");
    let out = Tensor::empty(&[8192, 8192], ScalarType::Float.into_options(cuda0())).expect("out");
    let kernels = g.rt.ops().uses_kernels() && cuda::load_kernels(0).is_ok();
    let s = time(&|| out.copy_(&m).expect("strided"));
    println!(
        "TIMING strided_transpose_copy_256MiB {:.1} GB/s (read+write: {:.1}; {})",
        gbps(bytes, s),
        gbps(2 * bytes, s),
        if kernels {
            "NVRTC kernel"
        } else {
            "host staging"
        }
    );
    // `contiguous()` of a transposed square f32 matrix, the same operation
    // torch_check.py times with `x.t().contiguous()` (output allocated
    // from the cache each time, as in torch).
    for side in [4096i64, 8192] {
        let x = Tensor::empty(&[side, side], ScalarType::Float.into_options(cuda0())).expect("x");
        let xt = x.t().expect("t");
        for _ in 0..3 {
            drop(xt.contiguous().expect("warm"));
        }
        cuda::synchronize(0).expect("sync");
        let reps = 50;
        let t0 = Instant::now();
        for _ in 0..reps {
            drop(xt.contiguous().expect("contiguous"));
        }
        cuda::synchronize(0).expect("sync");
        let us = t0.elapsed().as_secs_f64() / f64::from(reps) * 1e6;
        println!("TIMING contiguous_transpose_{side}x{side}_f32 {us:.1} us");
    }
    println!(
        "TIMING host_staging_fallbacks {} count",
        cuda::host_staging_fallbacks()
    );
    let sliced = d
        .view(&[8192, 8192])
        .expect("view")
        .slice(1, None, None, 2)
        .expect("slice");
    let out2 = Tensor::empty(&[8192, 4096], ScalarType::Float.into_options(cuda0())).expect("out");
    let s = time(&|| out2.copy_(&sliced).expect("strided"));
    println!(
        "TIMING strided_slice_copy_128MiB {:.1} GB/s",
        gbps(bytes / 2, s)
    );
}
