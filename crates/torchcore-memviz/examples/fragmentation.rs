//! Fragments the CUDA caching allocator (on the fake device), records its
//! history, runs into an out-of-memory error, and writes the snapshot as
//! PyTorch's pickle and as an HTML picture.
//!
//! ```text
//! cargo run -p torchcore-memviz --example fragmentation [OUT_DIR]
//! ```

use std::path::PathBuf;

use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, DevicePtr, FakeDevice, StreamId};
use c10_storage::history::HistoryConfig;
use torchcore_memviz::{cuda_snapshot, dump_snapshot, render_html, HtmlOptions};

type Alloc = CachingAllocator<FakeDevice>;

/// Six-MiB "activations": three fit in each 20 MiB segment.
fn forward(alloc: &Alloc, layers: usize) -> Result<Vec<DevicePtr>, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for _ in 0..layers {
        out.push(alloc.malloc(6 << 20, StreamId::DEFAULT)?);
    }
    Ok(out)
}

/// Frees every other activation: 72 MiB free, but in 6-8 MiB holes.
fn drop_odd(
    alloc: &Alloc,
    acts: Vec<DevicePtr>,
) -> Result<Vec<DevicePtr>, Box<dyn std::error::Error>> {
    let mut kept = Vec::new();
    for (i, p) in acts.into_iter().enumerate() {
        if i % 2 == 1 {
            // SAFETY: nothing uses the odd activations any more.
            unsafe { alloc.free(p)? };
        } else {
            kept.push(p);
        }
    }
    Ok(kept)
}

/// A 30 MiB buffer: no hole is large enough and no segment can be released.
fn big_buffer(alloc: &Alloc) -> Result<DevicePtr, alloc_cuda::CachingAllocatorError> {
    alloc.malloc(30 << 20, StreamId::DEFAULT)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out_dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("torchcore-memviz"));
    std::fs::create_dir_all(&out_dir)?;

    // A 160 MiB device: room for exactly eight 20 MiB segments.
    let alloc = CachingAllocator::new(
        FakeDevice::new(160 << 20),
        0,
        CachingAllocatorConfig::default(),
    );
    alloc.record_memory_history(Some(HistoryConfig::default()));

    let acts = forward(&alloc, 24)?;
    let kept = drop_odd(&alloc, acts)?;
    match big_buffer(&alloc) {
        Ok(_) => println!("unexpected: the 30 MiB buffer fit"),
        Err(e) => println!("as expected, {e}"),
    }

    let snap = cuda_snapshot(&[alloc.memory_snapshot()]);
    let pickle = out_dir.join("fragmentation.pickle");
    let html = out_dir.join("fragmentation.html");
    dump_snapshot(&snap, &pickle)?;
    let page = render_html(
        &snap,
        &HtmlOptions {
            title: "Fragmentation on the fake device: 72 MiB free, a 30 MiB request fails".into(),
            ..HtmlOptions::default()
        },
    );
    std::fs::write(&html, page)?;
    println!("snapshot (PyTorch's pickle): {}", pickle.display());
    println!(
        "  python -m torch.cuda._memory_viz stats {}",
        pickle.display()
    );
    println!(
        "picture: open file://{}",
        std::fs::canonicalize(&html)?.display()
    );

    for p in kept {
        // SAFETY: the example is done with every buffer.
        unsafe { alloc.free(p)? };
    }
    Ok(())
}
