//! The probe `cargo xtask test-cuda` (and the `run.sh` of
//! `--build-only`) runs first: it prints what CUDA sees, and with
//! `ALLOC_CUDA_PROBE_EXIT=1` exits with status 3 when there is no usable
//! driver or GPU, so that the runner can say so and stop.

#![cfg(feature = "cuda")]

use alloc_cuda::cuda;

#[test]
#[cfg_attr(miri, ignore)]
fn probe() {
    match cuda::is_available() {
        Ok(n) => {
            println!("CUDA probe: {n}");
            for i in 0..n.get() {
                match cuda::CudaDevice::new(i as i8) {
                    Ok(d) => println!(
                        "  cuda:{i}: {}, sm_{}{}, {} MiB, VMM {}, memory pools {}",
                        d.name(),
                        d.compute_capability().0,
                        d.compute_capability().1,
                        d.total_memory() >> 20,
                        alloc_cuda::RawDevice::supports_vmm(&d),
                        d.supports_memory_pools()
                    ),
                    Err(e) => println!("  cuda:{i}: {e}"),
                }
            }
            match cuda::driver_version() {
                Ok(v) => println!(
                    "CUDA driver: {}.{} ({})",
                    v / 1000,
                    v % 1000 / 10,
                    cuda::driver_library()
                        .map_or("library path unknown".into(), |p| p.display().to_string())
                ),
                Err(e) => println!("CUDA driver version: {e}"),
            }
            match cuda::nvrtc_info() {
                Ok(info) => println!("{info}"),
                Err(e) => println!("{e}"),
            }
            println!(
                "NVRTC: {}",
                match cuda::compile_kernels() {
                    Ok(n) => format!("copy kernels compile ({n} bytes of PTX)"),
                    Err(e) => format!("unavailable, strided copies use host staging ({e})"),
                }
            );
        }
        Err(e) => {
            match cuda::nvrtc_info() {
                Ok(info) => println!("{info}"),
                Err(e) => println!("{e}"),
            }
            println!("no CUDA driver/GPU found: {e}");
            if std::env::var("ALLOC_CUDA_PROBE_EXIT").is_ok_and(|v| v == "1") {
                std::process::exit(3);
            }
        }
    }
}
