use super::*;
use aten_shape::prelude::*;
use c10_core::scalar_type::Complex64;
use c10_storage::StorageError;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Reads the shape or strides array of an exported tensor.
fn dims(p: *const i64, n: i32) -> Vec<i64> {
    // SAFETY: test helper: `p` points to `n` i64s owned by a live export.
    unsafe { std::slice::from_raw_parts(p, n as usize) }.to_vec()
}

/// Calls a classic managed tensor's deleter.
fn delete(m: *mut DLManagedTensor) {
    // SAFETY: `m` is a live export, deleted once here.
    unsafe {
        if let Some(d) = (*m).deleter {
            d(m)
        }
    }
}

/// Calls a versioned managed tensor's deleter.
fn delete_v(m: *mut DLManagedTensorVersioned) {
    // SAFETY: `m` is a live export, deleted once here.
    unsafe {
        if let Some(d) = (*m).deleter {
            d(m)
        }
    }
}

#[test]
fn export_describes_the_tensor() {
    let t = Tensor::arange(0.0, 6.0, 1.0, ScalarType::Float).unwrap();
    let uses = t.use_count();
    let m = to_dlpack(&t).unwrap();
    assert_eq!(t.use_count(), uses + 1, "the export holds a clone");
    // SAFETY: `m` is live until `delete` below.
    let dl = unsafe { (*m).dl_tensor };
    assert_eq!(dl.ndim, 1);
    assert_eq!(dims(dl.shape, 1), [6]);
    assert_eq!(dims(dl.strides, 1), [1]);
    assert_eq!(dl.byte_offset, 0);
    assert_eq!(dl.device.device_type, DLDeviceType::CPU);
    assert_eq!(dl.device.device_id, 0);
    assert_eq!(dl.dtype, DLDataType::new(DLDataTypeCode::FLOAT, 32));
    assert_eq!(
        dl.data.cast::<u8>().cast_const(),
        t.storage().read().unwrap().as_ptr()
    );
    // SAFETY: `m` is live; manager_ctx is our holder.
    assert_eq!(unsafe { (*m).manager_ctx }, m.cast());
    delete(m);
    assert_eq!(t.use_count(), uses, "the deleter dropped the clone");
}

#[test]
fn export_of_a_strided_view_points_at_its_first_element() {
    let base = Tensor::arange(0, 24, 1, ScalarType::Long).unwrap();
    let v = base.as_strided(&[3, 2], &[1, 6], Some(5)).unwrap();
    let m = to_dlpack(&v).unwrap();
    // SAFETY: live until deleted below.
    let dl = unsafe { (*m).dl_tensor };
    assert_eq!(dims(dl.shape, 2), [3, 2]);
    assert_eq!(dims(dl.strides, 2), [1, 6]);
    assert_eq!(dl.byte_offset, 0);
    let base_ptr = base.storage().read().unwrap().as_ptr();
    assert_eq!(
        dl.data.cast::<u8>().cast_const(),
        base_ptr.wrapping_add(5 * 8)
    );
    // Round trip: same elements, and writes go to the same memory.
    // SAFETY: `m` is a live export handed over once.
    let back = unsafe { from_dlpack(m) }.unwrap();
    assert_eq!(back.sizes(), &[3, 2]);
    assert_eq!(back.strides(), &[1, 6]);
    assert_eq!(back.storage_offset(), 0);
    assert_eq!(back.to_vec::<i64>().unwrap(), v.to_vec::<i64>().unwrap());
    // The storage spans exactly the reachable bytes: (1 + 2*1 + 1*6) * 8.
    assert_eq!(back.storage().nbytes(), 9 * 8);
    back.set::<i64>(&[2, 1], -1).unwrap();
    assert_eq!(base.get::<i64>(&[5 + 2 + 6]).unwrap(), -1);
    assert_eq!(v.use_count(), 2, "the export holds a clone of the view");
    drop(back);
    assert_eq!(v.use_count(), 1, "the import released the export once");
}

/// Soundness review, class 2: once exported, no safe call may free or move
/// the buffer the consumer holds: `resize_` (also after `set_resizable`),
/// `Storage::resize`, `Storage::reset` and a growing `set_` all refuse,
/// until the consumer releases the export.
#[test]
fn export_pins_the_buffer_until_released() {
    let mut t = Tensor::arange(0, 4, 1, ScalarType::Int).unwrap();
    let m = to_dlpack(&t).unwrap();
    let m2 = to_dlpack_versioned(&t).unwrap();
    assert_eq!(t.storage().pin_count(), 2);
    // SAFETY: `m` is a live export; its data pointer is the buffer.
    let consumer_ptr = unsafe { (*m).dl_tensor.data }.cast::<i32>();
    // The attack of the review: undo the guarantee, then grow.
    t.storage().set_resizable(true).unwrap();
    let err = t.resize_(&[1000], MemoryFormat::Contiguous).unwrap_err();
    assert!(err.to_string().contains("export(s)"), "{err}");
    assert!(matches!(
        t.storage().resize(4096),
        Err(StorageError::Pinned { pins: 2 })
    ));
    assert!(matches!(
        t.storage().reset(),
        Err(StorageError::Pinned { .. })
    ));
    let other = Tensor::arange(0, 64, 1, ScalarType::Int).unwrap();
    let mut u = other.clone();
    let err = u.set_(t.storage(), 0, &[32], &[1]).unwrap_err();
    assert!(err.to_string().contains("export(s)"), "{err}");
    // The consumer's pointer still reads the tensor's memory.
    t.set::<i32>(&[2], 77).unwrap();
    // SAFETY: the buffer is pinned, so the pointer is still valid.
    assert_eq!(unsafe { consumer_ptr.add(2).read() }, 77);
    delete(m);
    assert_eq!(t.storage().pin_count(), 1);
    assert!(t.storage().resize(64).is_err(), "one export is still alive");
    delete_v(m2);
    assert_eq!(t.storage().pin_count(), 0);
    t.resize_(&[1000], MemoryFormat::Contiguous).unwrap();
    assert_eq!(t.get::<i32>(&[2]).unwrap(), 77);
}

#[test]
fn export_rechecks_bounds_against_a_shrunk_storage() {
    let t = Tensor::arange(0, 8, 1, ScalarType::Long).unwrap();
    let tail = t.narrow(0, 4, 4).unwrap();
    t.storage().resize(16).unwrap(); // another handle shrinks the storage
    let err = to_dlpack(&tail).unwrap_err().to_string();
    assert!(err.contains("was the storage shrunk?"), "{err}");
    assert_eq!(t.storage().pin_count(), 0, "a failed export pins nothing");
}

#[test]
fn versioned_export_and_flags() {
    let t = Tensor::from_vec(vec![1u8, 2, 3], &[3]).unwrap();
    let m = to_dlpack_versioned(&t).unwrap();
    // SAFETY: live until deleted.
    let (version, flags, dl) = unsafe { ((*m).version, (*m).flags, (*m).dl_tensor) };
    assert_eq!(version, DLPackVersion { major: 1, minor: 1 });
    assert_eq!(flags, 0);
    assert_eq!(dl.dtype, DLDataType::new(DLDataTypeCode::UINT, 8));
    delete_v(m);

    static BYTES: [u8; 4] = [9, 8, 7, 6];
    let ro = Storage::from_read_only_owner(&BYTES[..], "a static table");
    let t = Tensor::from_storage(ro, ScalarType::Byte, &[4], &[1], 0).unwrap();
    let err = to_dlpack(&t).unwrap_err().to_string();
    assert!(err.contains("to_dlpack_versioned"), "{err}");
    let m = to_dlpack_versioned(&t).unwrap();
    // SAFETY: live.
    assert_eq!(unsafe { (*m).flags } & DLPACK_FLAG_BITMASK_READ_ONLY, 1);
    // Importing it back gives a read-only tensor.
    // SAFETY: live export handed over once.
    let back = unsafe { from_dlpack_versioned(m) }.unwrap();
    assert!(back.storage().is_read_only());
    assert_eq!(back.to_vec::<u8>().unwrap(), [9, 8, 7, 6]);
    let err = back.set::<u8>(&[0], 1).unwrap_err().to_string();
    assert!(err.contains("clone the tensor"), "{err}");
}

#[test]
fn dtypes_round_trip_through_their_codes() {
    let mut mapped = 0;
    for st in ScalarType::ALL {
        match dtype_to_dlpack(st) {
            Ok(dl) => {
                mapped += 1;
                assert_eq!(dtype_from_dlpack(dl).unwrap(), st);
                assert_eq!(usize::from(dl.bits) / 8, st.itemsize(), "{st}");
            }
            Err(e) => assert!(e.to_string().contains("no type code"), "{e}"),
        }
    }
    assert_eq!(mapped, 21);
    for code in [3u8, 7, 8, 9, 15, 16, 17, 99] {
        let e = dtype_from_dlpack(DLDataType::new(DLDataTypeCode(code), 8)).unwrap_err();
        assert!(e.to_string().contains("unsupported DLPack dtype"), "{e}");
    }
    let e = dtype_from_dlpack(DLDataType::new(DLDataTypeCode::INT, 12)).unwrap_err();
    assert!(e.to_string().contains("kDLInt with 12 bits"), "{e}");
}

#[test]
fn devices_map_both_ways() {
    for dev in [
        Device::CPU,
        Device::cuda(0),
        Device::cuda(7),
        Device::new(DeviceType::Hip, 1),
        Device::new(DeviceType::Xpu, 0),
        Device::new(DeviceType::Mps, 0),
        Device::new(DeviceType::PrivateUse1, 2),
    ] {
        let dl = device_to_dlpack(dev).unwrap();
        assert_eq!(device_from_dlpack(dl).unwrap(), dev);
    }
    let cuda = device_to_dlpack(Device::cuda(5)).unwrap();
    assert_eq!(cuda.device_type, DLDeviceType::CUDA);
    assert_eq!(cuda.device_id, 5);
    let pinned = DLDevice {
        device_type: DLDeviceType::CUDA_HOST,
        device_id: 0,
    };
    assert_eq!(device_from_dlpack(pinned).unwrap(), Device::CPU);
    assert!(device_to_dlpack(Device::META).is_err());
    let big = DLDevice {
        device_type: DLDeviceType::CUDA,
        device_id: 300,
    };
    assert!(device_from_dlpack(big)
        .unwrap_err()
        .to_string()
        .contains("300"));
    let managed = DLDevice {
        device_type: DLDeviceType::CUDA_MANAGED,
        device_id: 0,
    };
    let e = device_from_dlpack(managed).unwrap_err().to_string();
    assert!(e.contains("kDLCUDAManaged"), "{e}");
}

/// A CUDA tensor cannot be allocated here, but one can be described: a
/// storage tagged `cuda:1` whose pointer nobody dereferences.
#[test]
fn cuda_tensors_export_and_import_with_their_device() {
    let mut fake = vec![0u8; 64];
    let p = fake.as_mut_ptr();
    // SAFETY: the storage never dereferences device memory (guards refuse
    // host access to it), and `fake` outlives every tensor built here.
    let storage =
        unsafe { Storage::from_data_ptr(DataPtr::non_owning(p, Device::cuda(1)), 64, None, false) }
            .unwrap();
    let t = Tensor::from_storage(storage, ScalarType::Float, &[2, 3], &[3, 1], 1).unwrap();
    let m = to_dlpack(&t).unwrap();
    // SAFETY: live until imported below.
    let dl = unsafe { (*m).dl_tensor };
    assert_eq!(dl.device.device_type, DLDeviceType::CUDA);
    assert_eq!(dl.device.device_id, 1);
    assert_eq!(dl.data.cast::<u8>(), p.wrapping_add(4));
    // SAFETY: live export handed over once.
    let back = unsafe { from_dlpack(m) }.unwrap();
    assert_eq!(back.device(), Device::cuda(1));
    let e = back.get::<f32>(&[0, 0]).unwrap_err().to_string();
    assert!(e.contains("copy the tensor to the CPU"), "{e}");
    drop((back, t));
    drop(fake);
}

#[test]
fn scalars_empties_and_odd_dtypes_round_trip() {
    let s = Tensor::scalar_tensor(2.5, ScalarType::Double).unwrap();
    let e = Tensor::empty(&[0, 3], ScalarType::Float).unwrap();
    let b = Tensor::from_vec(vec![true, false, true], &[3]).unwrap();
    let c = Tensor::from_vec(
        vec![Complex64::new(1.0, -1.0), Complex64::new(0.5, 2.0)],
        &[2],
    )
    .unwrap();
    let h = Tensor::arange(0.0, 4.0, 1.0, ScalarType::Half).unwrap();
    for t in [&s, &e, &b, &c, &h] {
        let m = to_dlpack(t).unwrap();
        // SAFETY: live export handed over once.
        let back = unsafe { from_dlpack(m) }.unwrap();
        assert_eq!(back.dtype(), t.dtype());
        assert_eq!(back.sizes(), t.sizes());
        assert_eq!(back.to_f64_vec().unwrap(), t.to_f64_vec().unwrap());
    }
    let m = to_dlpack(&c).unwrap();
    // SAFETY: as above.
    let back = unsafe { from_dlpack(m) }.unwrap();
    assert_eq!(
        back.to_vec::<Complex64>().unwrap(),
        [Complex64::new(1.0, -1.0), Complex64::new(0.5, 2.0)]
    );
}

// --- foreign producers -----------------------------------------------------

/// A producer's tensor: data, shape and strides owned by the context.
struct Foreign {
    data: Vec<f64>,
    shape: Vec<i64>,
    strides: Vec<i64>,
    counter: &'static AtomicUsize,
}

/// Builds a classic managed tensor over a boxed `Foreign`.
fn foreign(
    data: Vec<f64>,
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
    counter: &'static AtomicUsize,
) -> *mut DLManagedTensor {
    let has_strides = strides.is_some();
    let f = Box::into_raw(Box::new(Foreign {
        data,
        shape,
        strides: strides.unwrap_or_default(),
        counter,
    }));
    // SAFETY: `f` is a fresh box; the vectors are not touched again until
    // `drop_foreign` frees them.
    let (data, shape, strides, ndim) = unsafe {
        (
            (*f).data.as_mut_ptr(),
            (*f).shape.as_mut_ptr(),
            (*f).strides.as_mut_ptr(),
            (*f).shape.len() as i32,
        )
    };
    Box::into_raw(Box::new(DLManagedTensor {
        dl_tensor: DLTensor {
            data: data.cast(),
            device: DLDevice {
                device_type: DLDeviceType::CPU,
                device_id: 0,
            },
            ndim,
            dtype: DLDataType::new(DLDataTypeCode::FLOAT, 64),
            shape,
            strides: if has_strides {
                strides
            } else {
                ptr::null_mut()
            },
            byte_offset: 0,
        },
        manager_ctx: f.cast(),
        deleter: Some(drop_foreign),
    }))
}

/// The producer's deleter: frees the context and the struct, counts.
///
/// # Safety
///
/// `m` must come from `foreign` and not be freed yet.
unsafe extern "C" fn drop_foreign(m: *mut DLManagedTensor) {
    // SAFETY: both boxes come from `foreign`.
    let m = unsafe { Box::from_raw(m) };
    // SAFETY: as above.
    let f = unsafe { Box::from_raw(m.manager_ctx.cast::<Foreign>()) };
    f.counter.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn import_calls_the_producers_deleter_once_when_the_last_view_goes() {
    static N: AtomicUsize = AtomicUsize::new(0);
    let m = foreign((0..6).map(f64::from).collect(), vec![2, 3], None, &N);
    // SAFETY: a valid managed tensor handed over once.
    let t = unsafe { from_dlpack(m) }.unwrap();
    assert_eq!(t.strides(), &[3, 1], "null strides are row-major");
    assert_eq!(t.get::<f64>(&[1, 2]).unwrap(), 5.0);
    assert!(!t.storage().resizable());
    let view = t.t().unwrap();
    drop(t);
    assert_eq!(
        N.load(Ordering::SeqCst),
        0,
        "a view still holds the storage"
    );
    view.set::<f64>(&[2, 1], 50.0).unwrap();
    let clone = view.clone();
    std::thread::spawn(move || drop(clone)).join().unwrap();
    drop(view);
    assert_eq!(N.load(Ordering::SeqCst), 1);
}

#[test]
fn import_honours_strides_and_byte_offset() {
    static N: AtomicUsize = AtomicUsize::new(0);
    let m = foreign(
        (0..12).map(f64::from).collect(),
        vec![3, 2],
        Some(vec![1, 4]),
        &N,
    );
    // Skip the first element through byte_offset.
    // SAFETY: `m` is valid; 8 + (2 + 4) * 8 bytes stay inside the 96-byte data.
    unsafe { (*m).dl_tensor.byte_offset = 8 };
    // SAFETY: handed over once.
    let t = unsafe { from_dlpack(m) }.unwrap();
    assert_eq!(t.strides(), &[1, 4]);
    assert_eq!(t.to_vec::<f64>().unwrap(), [1.0, 5.0, 2.0, 6.0, 3.0, 7.0]);
    assert_eq!(t.storage().nbytes(), 7 * 8);
    drop(t);
    assert_eq!(N.load(Ordering::SeqCst), 1);
}

#[test]
fn import_errors_leave_ownership_with_the_caller() {
    static N: AtomicUsize = AtomicUsize::new(0);
    type Corrupt = fn(&mut DLTensor);
    let cases: [(Corrupt, &str); 7] = [
        (|d| d.dtype.lanes = 4, "lanes"),
        (
            |d| d.dtype.code = DLDataTypeCode::OPAQUE_HANDLE,
            "kDLOpaqueHandle",
        ),
        (|d| d.device.device_type = DLDeviceType::VULKAN, "kDLVulkan"),
        (|d| d.ndim = -1, "negative ndim"),
        (|d| d.shape = ptr::null_mut(), "null shape"),
        (|d| d.data = ptr::null_mut(), "null data"),
        (
            // SAFETY: the strides array has 2 entries.
            |d| unsafe { *d.strides = -1 },
            "negative strides",
        ),
    ];
    for (i, (corrupt, expected)) in cases.into_iter().enumerate() {
        let m = foreign(vec![0.0; 4], vec![2, 2], Some(vec![2, 1]), &N);
        // SAFETY: `m` is valid and exclusively ours.
        corrupt(unsafe { &mut (*m).dl_tensor });
        // SAFETY: shape/strides/data are valid or null as corrupted above.
        let err = unsafe { from_dlpack(m) }.unwrap_err().to_string();
        assert!(err.contains(expected), "case {i}: {err}");
        assert_eq!(
            N.load(Ordering::SeqCst),
            i,
            "case {i}: deleter must not run"
        );
        // Still ours: release it as a consumer would after a failed import.
        // SAFETY: `m` is valid; freed once (its pointers were not freed).
        unsafe {
            (*m).dl_tensor.shape = (*(*m).manager_ctx.cast::<Foreign>()).shape.as_mut_ptr();
            drop_foreign(m);
        }
        assert_eq!(N.load(Ordering::SeqCst), i + 1);
    }
    // SAFETY: null is accepted and refused.
    assert!(unsafe { from_dlpack(ptr::null_mut()) }.is_err());
}

#[test]
fn versioned_import_checks_the_major_version_and_read_only_flag() {
    let t = Tensor::arange(0, 3, 1, ScalarType::Int).unwrap();
    let m = to_dlpack_versioned(&t).unwrap();
    // SAFETY: live export.
    unsafe { (*m).version.major = 2 };
    // SAFETY: handed over; refused before anything else is read.
    let err = unsafe { from_dlpack_versioned(m) }.unwrap_err().to_string();
    assert!(err.contains("unsupported DLPack version 2.1"), "{err}");
    // SAFETY: still live (an error leaves ownership with us).
    unsafe {
        (*m).version.major = 1;
        (*m).flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
    }
    // SAFETY: handed over once.
    let ro = unsafe { from_dlpack_versioned(m) }.unwrap();
    assert!(ro.storage().is_read_only());
    assert!(
        !t.storage().is_read_only(),
        "the flag affects the import only"
    );
    assert!(ro.set::<i32>(&[0], 5).is_err());
    assert_eq!(ro.to_vec::<i32>().unwrap(), [0, 1, 2]);
    // SAFETY: null is refused.
    assert!(unsafe { from_dlpack_versioned(ptr::null_mut()) }.is_err());
}

#[test]
fn a_null_deleter_is_allowed() {
    let mut data = [1i32, 2, 3];
    let mut shape = [3i64];
    let mut m = DLManagedTensor {
        dl_tensor: DLTensor {
            data: data.as_mut_ptr().cast(),
            device: DLDevice {
                device_type: DLDeviceType::CPU,
                device_id: 0,
            },
            ndim: 1,
            dtype: DLDataType::new(DLDataTypeCode::INT, 32),
            shape: shape.as_mut_ptr(),
            strides: ptr::null_mut(),
            byte_offset: 0,
        },
        manager_ctx: ptr::null_mut(),
        deleter: None,
    };
    // SAFETY: `data` outlives the tensor, which is dropped below.
    let t = unsafe { from_dlpack(&mut m) }.unwrap();
    t.set::<i32>(&[1], 20).unwrap();
    drop(t);
    assert_eq!(data, [1, 20, 3]);
}

#[test]
fn import_refuses_byte_offsets_and_extents_that_wrap() {
    // Issue #20: `byte_offset = u64::MAX` wrapped `data + byte_offset` to one
    // byte before the buffer, passed the fit check, and the import read out
    // of bounds. Every boundary of the checked span `data + byte_offset +
    // extent` (here 32 bytes) is refused, and ownership stays ours.
    static N: AtomicUsize = AtomicUsize::new(0);
    let probe = foreign(vec![0.0; 4], vec![2, 2], Some(vec![2, 1]), &N);
    // SAFETY: `probe` is valid; only its data address is read.
    let base = unsafe { (*probe).dl_tensor.data }.addr() as u64;
    // SAFETY: from `foreign`, freed once.
    unsafe { drop_foreign(probe) };
    let top = usize::MAX as u64;
    let imax = isize::MAX as u64;
    // (byte_offset, strides): offsets past the end of the address space
    // (the last one ends exactly one byte past it), past isize::MAX from
    // `data`, and an extent that is fine alone but not with the offset.
    let cases: [(u64, [i64; 2]); 8] = [
        (u64::MAX, [2, 1]),
        (u64::MAX - 7, [2, 1]),
        (top - base, [2, 1]),
        (top - base - 31, [2, 1]),
        (imax, [2, 1]),
        (imax - 31, [2, 1]),
        (1 << 63, [2, 1]),
        (1 << 62, [1 << 59, 1]),
    ];
    for (i, (byte_offset, strides)) in cases.into_iter().enumerate() {
        let m = foreign(vec![0.0; 4], vec![2, 2], Some(strides.to_vec()), &N);
        // SAFETY: `m` is valid and exclusively ours.
        unsafe { (*m).dl_tensor.byte_offset = byte_offset };
        // SAFETY: shape and strides are valid; the span check refuses the
        // offset before anything is read.
        let err = unsafe { from_dlpack(m) }.unwrap_err().to_string();
        assert!(
            err.contains("overflows the address space"),
            "case {i} (byte_offset {byte_offset}): {err}"
        );
        assert_eq!(N.load(Ordering::SeqCst), i + 1, "case {i}: deleter ran");
        // SAFETY: still ours after the failed import; freed once.
        unsafe { drop_foreign(m) };
    }
    // The largest in-bounds offset for this buffer still imports.
    let m = foreign(
        vec![0.0, 1.0, 2.0, 3.0, 4.0],
        vec![2, 2],
        Some(vec![2, 1]),
        &N,
    );
    // SAFETY: 8 + 32 bytes lie inside the 40-byte buffer.
    unsafe { (*m).dl_tensor.byte_offset = 8 };
    // SAFETY: valid, handed over once.
    let t = unsafe { from_dlpack(m) }.unwrap();
    assert_eq!(t.to_vec::<f64>().unwrap(), [1.0, 2.0, 3.0, 4.0]);
}

/// Lazy initialisation (issue #13): exporting an `empty` tensor hands the
/// consumer initialised bytes (zeros), never what the allocator left.
#[test]
fn export_of_an_empty_tensor_initialises_it_first() {
    let t = Tensor::empty(&[16], ScalarType::Long).unwrap();
    let m = to_dlpack(&t).unwrap();
    // SAFETY: a live export of 16 i64 elements.
    let data = unsafe { (*m).dl_tensor.data }.cast::<i64>();
    for i in 0..16 {
        // SAFETY: in bounds of the pinned, initialised buffer.
        assert_eq!(unsafe { data.add(i).read() }, 0);
    }
    delete(m);
}

#[test]
fn a_lazy_conjugate_is_refused_as_pytorch_does() {
    use aten_shape::views;
    let c = Tensor::from_slice_1d(&[Complex64::new(1.0, 2.0)]).unwrap();
    let cc = views::conj(&c).unwrap();
    for err in [
        to_dlpack(&cc).unwrap_err(),
        to_dlpack_versioned(&cc).unwrap_err(),
    ] {
        assert!(matches!(&err, InteropError::Layout(_)));
        assert_eq!(
            err.to_string(),
            "Can't export tensors with the conjugate bit set"
        );
    }
    // Resolved, it exports (values conjugated); a negative view exports its
    // stored values, as PyTorch 2.15 does.
    let m = to_dlpack_versioned(&views::resolve_conj(&cc).unwrap()).unwrap();
    delete_v(m);
    let n = views::neg_view(&Tensor::from_slice_1d(&[1.0f32]).unwrap()).unwrap();
    let m = to_dlpack(&n).unwrap();
    delete(m);
}
