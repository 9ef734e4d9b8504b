//! `copy_`, `clone` and `contiguous` on tensors that are not in host
//! memory go through the device's registered `DeviceOps`. A fake device
//! (`privateuseone`, backed by host memory the storage treats as device
//! memory) checks the delegation: same-dtype copies go to the device
//! operations directly, dtype conversions are staged through the CPU, and
//! a device without operations reports an error.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(clippy::unimplemented)]

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

use aten_shape::copy::{clone, contiguous, copy_};
use c10_core::{
    register_device_ops, DeviceOps, MemoryFormat, Result, ScalarType, StridedOffsets, Tensor,
    TensorOptions,
};
use c10_storage::{set_allocator, AllocError, Allocator, DataPtr, Device, DeviceType};

const FAKE: Device = Device::new(DeviceType::PrivateUse1, 0);
const NO_OPS: Device = Device::new(DeviceType::Fpga, 0);

/// Host memory handed out as memory of another device type.
struct HostBacked(DeviceType);

/// Frees a `Box<Box<[u8]>>` context.
///
/// # Safety
///
/// `ctx` must come from `Box::into_raw(Box::new(Box<[u8]>))` and be freed
/// once.
unsafe fn free_boxed_bytes(ctx: *mut c_void) {
    // SAFETY: guaranteed by the caller.
    drop(unsafe { Box::from_raw(ctx.cast::<Box<[u8]>>()) });
}

// SAFETY: every allocation is a fresh, zeroed, exclusively owned heap block
// of `n` bytes (valid for reads and writes until its deleter runs, which
// frees it exactly once from any thread), tagged with this allocator's
// device type.
unsafe impl Allocator for HostBacked {
    fn allocate(&self, n: usize) -> std::result::Result<DataPtr, AllocError> {
        let device = Device::new(self.0, 0);
        if n == 0 {
            return Ok(DataPtr::null(device));
        }
        let ctx = Box::into_raw(Box::new(vec![0u8; n].into_boxed_slice()));
        // SAFETY: `ctx` is valid (just made); the bytes live until the
        // deleter frees the context.
        let data = unsafe { (*ctx).as_mut_ptr() };
        // SAFETY: `free_boxed_bytes` frees exactly this context.
        Ok(unsafe { DataPtr::from_raw_parts(data, ctx.cast(), free_boxed_bytes, device) })
    }
    fn device_type(&self) -> DeviceType {
        self.0
    }
    unsafe fn copy_data(
        &self,
        dst: *mut u8,
        src: *const u8,
        count: usize,
    ) -> Result<(), c10_storage::AllocError> {
        // SAFETY: forwarded contract (valid, non-overlapping).
        unsafe { std::ptr::copy_nonoverlapping(src, dst, count) };
        Ok(())
    }
}

static FAKE_ALLOC: HostBacked = HostBacked(DeviceType::PrivateUse1);
static NO_OPS_ALLOC: HostBacked = HostBacked(DeviceType::Fpga);

/// Device operations for the fake device: element-by-element byte copies
/// in logical order, counting calls.
struct FakeOps;

static COPIES: AtomicUsize = AtomicUsize::new(0);

impl DeviceOps for FakeOps {
    fn device_type(&self) -> DeviceType {
        DeviceType::PrivateUse1
    }

    fn copy(&self, dst: &Tensor, src: &Tensor) -> Result<()> {
        COPIES.fetch_add(1, Ordering::SeqCst);
        assert_eq!(dst.sizes(), src.sizes(), "DeviceOps::copy gets equal sizes");
        assert_eq!(
            dst.dtype(),
            src.dtype(),
            "DeviceOps::copy gets equal dtypes"
        );
        let e = dst.element_size();
        let mut g = c10_core::Storage::lock_write_read(dst.storage(), src.storage())?;
        let (d, s) = (g.dst_ptr(), g.src_ptr());
        let dsto = StridedOffsets::new(dst.sizes(), dst.strides(), dst.storage_offset()).unwrap();
        let srco = StridedOffsets::new(src.sizes(), src.strides(), src.storage_offset()).unwrap();
        for (od, os) in dsto.zip(srco) {
            // SAFETY: both tensors were made by the factories over fresh
            // host-backed storages (or are views inside them), so every
            // element offset lies inside its buffer; the guards are held;
            // the test never copies between overlapping elements.
            unsafe { std::ptr::copy(s.add(os as usize * e), d.add(od as usize * e), e) };
        }
        Ok(())
    }

    fn fill(&self, _dst: &Tensor, _value: &[u8]) -> Result<()> {
        unimplemented!("not used by these tests")
    }
}

static FAKE_OPS: FakeOps = FakeOps;

fn setup() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        set_allocator(DeviceType::PrivateUse1, &FAKE_ALLOC, 0).unwrap();
        set_allocator(DeviceType::Fpga, &NO_OPS_ALLOC, 0).unwrap();
        register_device_ops(&FAKE_OPS);
    });
}

fn on(device: Device, dtype: ScalarType) -> TensorOptions {
    TensorOptions::new().dtype(dtype).device(device)
}

/// A device tensor holding `values` (row-major, `sizes`).
fn to_fake(values: &[f32], sizes: &[i64]) -> Tensor {
    let t = Tensor::empty(sizes, on(FAKE, ScalarType::Float)).unwrap();
    copy_(&t, &Tensor::from_vec(values.to_vec(), sizes).unwrap()).unwrap();
    t
}

/// The values of a device tensor, through a copy to the CPU.
fn fake_values<T: c10_core::Element>(t: &Tensor) -> Vec<T> {
    let host = Tensor::empty(t.sizes(), TensorOptions::new().dtype(t.dtype())).unwrap();
    copy_(&host, t).unwrap();
    host.to_vec::<T>().unwrap()
}

#[test]
fn same_dtype_copies_use_the_device_ops() {
    setup();
    let before = COPIES.load(Ordering::SeqCst);
    let t = to_fake(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    assert_eq!(t.device(), FAKE);
    assert_eq!(fake_values::<f32>(&t), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    // Transposed view on the device: contiguous/clone stay on the device.
    let tt = t.as_strided(&[3, 2], &[1, 3], None).unwrap();
    let c = contiguous(&tt, MemoryFormat::Contiguous).unwrap();
    assert_eq!((c.device(), c.strides()), (FAKE, &[2i64, 1][..]));
    assert_eq!(fake_values::<f32>(&c), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    let p = clone(&tt, MemoryFormat::Preserve).unwrap();
    assert_eq!(p.strides(), &[1, 3]);
    assert_eq!(fake_values::<f32>(&p), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    // Broadcasting reaches the device ops as an expanded view.
    let row = to_fake(&[7.0, 8.0, 9.0], &[3]);
    copy_(&t, &row).unwrap();
    assert_eq!(fake_values::<f32>(&t), vec![7.0, 8.0, 9.0, 7.0, 8.0, 9.0]);
    assert_eq!(t.version().unwrap(), 2);
    assert!(COPIES.load(Ordering::SeqCst) - before >= 8);
}

#[test]
fn dtype_conversions_are_staged_on_the_cpu() {
    setup();
    // CPU double -> device float.
    let t = Tensor::empty(&[3], on(FAKE, ScalarType::Float)).unwrap();
    copy_(&t, &Tensor::from_slice_1d(&[1.5f64, -2.25, 1e40]).unwrap()).unwrap();
    assert_eq!(fake_values::<f32>(&t), vec![1.5, -2.25, f32::INFINITY]);
    // Device float -> CPU long.
    let l = Tensor::zeros(&[3], TensorOptions::new().dtype(ScalarType::Long)).unwrap();
    copy_(&l, &t.as_strided(&[3], &[1], None).unwrap()).unwrap();
    assert_eq!(l.to_vec::<i64>().unwrap(), vec![1, -2, i64::MIN]);
    // Device float -> device int, broadcast.
    let i = Tensor::empty(&[2, 3], on(FAKE, ScalarType::Int)).unwrap();
    copy_(&i, &t).unwrap();
    assert_eq!(
        fake_values::<i32>(&i),
        vec![1, -2, i32::MIN, 1, -2, i32::MIN]
    );
}

#[test]
fn a_device_without_operations_reports_it() {
    setup();
    let t = Tensor::empty(&[2], on(NO_OPS, ScalarType::Float)).unwrap();
    let e = copy_(&t, &Tensor::ones(&[2], TensorOptions::new()).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("no device operations are registered for"), "{e}");
    // Shape and overlap errors come first, as for the CPU.
    let e = copy_(&t, &Tensor::ones(&[3], TensorOptions::new()).unwrap())
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"
    );
}
