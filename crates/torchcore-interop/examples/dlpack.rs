//! DLPack in both directions, without Python: export a tensor the way a
//! consumer (PyTorch, JAX, CuPy) receives it, read the `DLTensor` a
//! consumer would read, and import a "foreign" tensor whose producer
//! deleter runs when the last view of it is gone.
//!
//! Run: `cargo run -p torchcore-interop --example dlpack`
//! (the same exchange with a real PyTorch: `cargo xtask interop`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

use aten_shape::prelude::*;
use c10_core::{ScalarType, Tensor};
use torchcore_interop::dlpack::{
    from_dlpack, from_dlpack_versioned, to_dlpack, to_dlpack_versioned, DLDataType, DLDataTypeCode,
    DLDevice, DLDeviceType, DLManagedTensor, DLTensor, DLPACK_FLAG_BITMASK_READ_ONLY,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. Export: what `torch.from_dlpack` would receive.
    let base = Tensor::arange(0.0, 12.0, 1.0, ScalarType::Float)?.view(&[3, 4])?;
    let view = base.t()?; // non-contiguous: strides [1, 4]
    let managed = to_dlpack(&view)?;
    // SAFETY: `managed` is a live export until its deleter runs below.
    let dl = unsafe { (*managed).dl_tensor };
    // SAFETY: an export owns `ndim` sizes and strides.
    let (shape, strides) = unsafe {
        (
            std::slice::from_raw_parts(dl.shape, dl.ndim as usize),
            std::slice::from_raw_parts(dl.strides, dl.ndim as usize),
        )
    };
    println!(
        "exported: device {}, dtype {}, shape {shape:?}, strides {strides:?}, byte_offset {}",
        dl.device, dl.dtype, dl.byte_offset
    );
    // A consumer writes through the pointer; we see it.
    // SAFETY: element [1, 2] of the view is at 1*1 + 2*4 floats from
    // `data`, inside the buffer the export keeps alive; nothing else
    // accesses the tensor meanwhile.
    unsafe { *dl.data.cast::<f32>().add(1 + 2 * 4) = -1.0 };
    println!(
        "after the consumer's write: view[1, 2] = {}",
        view.get::<f32>(&[1, 2])?
    );
    // The consumer is done: it calls the deleter exactly once.
    // SAFETY: live export, deleted once.
    unsafe {
        if let Some(delete) = (*managed).deleter {
            delete(managed);
        }
    }

    // 2. Import a producer's tensor: the deleter runs with the last view.
    static FREED: AtomicUsize = AtomicUsize::new(0);
    let imported = unsafe_import_demo(&FREED)?;
    let row = imported.select(0, 1)?;
    drop(imported);
    println!(
        "imported row 1: {:?} (producer deleter calls so far: {})",
        row.to_vec::<i32>()?,
        FREED.load(Ordering::SeqCst)
    );
    drop(row);
    println!(
        "after dropping the last view: {} deleter call",
        FREED.load(Ordering::SeqCst)
    );

    // 3. Versioned export; read-only storages carry the read-only flag.
    static TABLE: [u8; 4] = [1, 2, 3, 4];
    let storage = c10_storage::Storage::from_read_only_owner(&TABLE[..], "a static table");
    let ro = Tensor::from_storage(storage, ScalarType::Byte, &[4], &[1], 0)?;
    println!(
        "classic export of a read-only tensor: {}",
        to_dlpack(&ro).unwrap_err()
    );
    let v = to_dlpack_versioned(&ro)?;
    // SAFETY: live export.
    let flags = unsafe { (*v).flags };
    println!(
        "versioned export flags: read-only = {}",
        flags & DLPACK_FLAG_BITMASK_READ_ONLY != 0
    );
    // SAFETY: live export handed over once.
    let back = unsafe { from_dlpack_versioned(v) }?;
    println!(
        "importing it back: write -> {}",
        back.set::<u8>(&[0], 9).unwrap_err()
    );
    Ok(())
}

/// The producer side: a 2x3 int32 buffer in a box, and a C deleter.
fn unsafe_import_demo(freed: &'static AtomicUsize) -> Result<Tensor, Box<dyn std::error::Error>> {
    struct Producer {
        data: [i32; 6],
        shape: [i64; 2],
        freed: &'static AtomicUsize,
    }
    /// The producer's deleter.
    ///
    /// # Safety
    ///
    /// `m` must be the managed tensor built below, deleted once.
    unsafe extern "C" fn deleter(m: *mut DLManagedTensor) {
        // SAFETY: `m` and its context were boxed below and are freed once.
        let m = unsafe { Box::from_raw(m) };
        // SAFETY: as above.
        let p = unsafe { Box::from_raw(m.manager_ctx.cast::<Producer>()) };
        p.freed.fetch_add(1, Ordering::SeqCst);
    }
    let p = Box::into_raw(Box::new(Producer {
        data: [10, 11, 12, 20, 21, 22],
        shape: [2, 3],
        freed,
    }));
    // SAFETY: `p` is a fresh box; its arrays stay put until the deleter.
    let (data, shape) = unsafe { ((*p).data.as_mut_ptr(), (*p).shape.as_mut_ptr()) };
    let m = Box::into_raw(Box::new(DLManagedTensor {
        dl_tensor: DLTensor {
            data: data.cast::<c_void>(),
            device: DLDevice {
                device_type: DLDeviceType::CPU,
                device_id: 0,
            },
            ndim: 2,
            dtype: DLDataType {
                code: DLDataTypeCode::INT,
                bits: 32,
                lanes: 1,
            },
            shape,
            strides: ptr::null_mut(), // row-major
            byte_offset: 0,
        },
        manager_ctx: p.cast(),
        deleter: Some(deleter),
    }));
    // SAFETY: a valid managed tensor whose memory lives until its deleter
    // runs, handed over once; the deleter may run on any thread.
    Ok(unsafe { from_dlpack(m) }?)
}
