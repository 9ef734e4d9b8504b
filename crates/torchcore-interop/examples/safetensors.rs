//! Save tensors of any layout to a `.safetensors` file and load it back
//! twice: with `load` (the file read once into one writable storage, every
//! tensor a view of it) and with `unsafe load_mmap` (one read-only memory
//! mapping, nothing copied, writes refused).
//!
//! Run: `cargo run -p torchcore-interop --example safetensors --features safetensors`

use std::collections::HashMap;

use aten_shape::prelude::*;
use c10_core::{MemoryFormat, ScalarType, Tensor};
use torchcore_interop::safetensors::{load, load_mmap, save};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("model.safetensors");

    let w = Tensor::arange(0.0, 12.0, 1.0, ScalarType::Float)?.view(&[3, 4])?;
    let b = Tensor::arange(0.0, 2.0, 0.5, ScalarType::BFloat16)?;
    let ids = Tensor::arange(0, 10, 1, ScalarType::Long)?.slice(0, Some(0), None, 3)?;
    let meta = HashMap::from([("format".to_string(), "pt".to_string())]);
    // `w.t()` and `ids` are not contiguous: they are made so on the way.
    save(
        [("w.t", &w.t()?), ("b", &b), ("ids", &ids)],
        Some(meta),
        &path,
    )?;
    println!(
        "saved {} bytes to {}",
        std::fs::metadata(&path)?.len(),
        path.display()
    );

    let file = load(&path)?;
    println!("metadata: {:?}", file.metadata());
    for (name, t) in file.tensors() {
        println!(
            "{name}: {} {:?} (view of the file's storage: {}) = {:?}",
            t.dtype(),
            t.sizes(),
            t.storage().is_alias_of(file.storage()),
            t.to_f64_vec()?
        );
    }

    // `load` copied the file into memory: its tensors are writable.
    let wt = file.get("w.t").ok_or("missing w.t")?;
    wt.set::<f32>(&[0, 0], 100.0)?;
    println!("load: writable, w.t[0, 0] = {:?}", wt.get::<f32>(&[0, 0])?);

    // SAFETY: the file lives in this example's private temporary directory;
    // nothing writes to or truncates it while `mapped` is alive.
    let mapped = unsafe { load_mmap(&path)? };
    let wm = mapped.get("w.t").ok_or("missing w.t")?;
    println!("load_mmap: w.t[0, 0] = {:?}", wm.get::<f32>(&[0, 0])?);
    match wm.set::<f32>(&[0, 0], 1.0) {
        Err(e) => println!("load_mmap: writing fails: {e}"),
        Ok(()) => println!("unexpected: the write to the read-only mapping succeeded"),
    }
    let mine = wm.clone_in(MemoryFormat::Contiguous)?;
    mine.set::<f32>(&[0, 0], 1.0)?;
    println!("a clone is writable: {:?}", mine.get::<f32>(&[0, 0])?);
    Ok(())
}
