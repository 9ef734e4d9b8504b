//! The GPU test suite (`gpu_suite/mod.rs`) on the real CUDA driver.
//!
//! Every test prints `SKIPPED: no CUDA device (reason)` and passes where
//! there is no driver or GPU. `cargo xtask test-cuda` builds and runs it
//! (single-threaded, with output); see `docs/cuda.md`.

#![cfg(feature = "cuda")]

/// This binary runs the suite in-process.
const FAKE_DRIVER_HOST: bool = false;

mod gpu_suite;
