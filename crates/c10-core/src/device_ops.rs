//! Operations on device memory, registered per device type, so that layers
//! above (`aten-shape`'s `contiguous`, `clone`, `copy_`) work on tensors of
//! any device without naming a backend crate.
//!
//! A backend (for example `alloc-cuda`) implements [`DeviceOps`] and calls
//! [`register_device_ops`] once. Without a registration, operations on that
//! device's tensors fail with an error that says how to get a backend (for
//! CUDA: the `cuda` feature of `torchcore` and `torchcore::cuda::init()`).

use std::sync::atomic::{AtomicPtr, Ordering};

use c10_storage::{DeviceType, COMPILE_TIME_MAX_DEVICE_TYPES};
use parking_lot::Mutex;

use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

/// Copies and fills for one device type.
///
/// ```
/// use c10_core::{device_ops, register_device_ops, DeviceOps, DeviceType, Result, Tensor};
///
/// struct Noop;
/// impl DeviceOps for Noop {
///     fn device_type(&self) -> DeviceType { DeviceType::PrivateUse1 }
///     fn copy(&self, _dst: &Tensor, _src: &Tensor) -> Result<()> { Ok(()) }
///     fn fill(&self, _dst: &Tensor, _value: &[u8]) -> Result<()> { Ok(()) }
/// }
/// static NOOP: Noop = Noop;
/// register_device_ops(&NOOP);
/// assert_eq!(device_ops(DeviceType::PrivateUse1)?.device_type(), DeviceType::PrivateUse1);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub trait DeviceOps: Send + Sync {
    /// The device type served.
    ///
    /// ```
    /// # use c10_core::{DeviceOps, DeviceType, Result, Tensor};
    /// struct Ops;
    /// impl DeviceOps for Ops {
    ///     fn device_type(&self) -> DeviceType { DeviceType::PrivateUse1 }
    ///     # fn copy(&self, _: &Tensor, _: &Tensor) -> Result<()> { Ok(()) }
    ///     # fn fill(&self, _: &Tensor, _: &[u8]) -> Result<()> { Ok(()) }
    /// }
    /// assert_eq!(Ops.device_type(), DeviceType::PrivateUse1);
    /// ```
    fn device_type(&self) -> DeviceType;

    /// Elementwise `dst[i] = src[i]` in logical order, for any two layouts of
    /// equal sizes and dtype, where at least one side is on this device and
    /// the other is on this device or the CPU (host-to-device,
    /// device-to-host, device-to-device). `dst` has no internal overlap
    /// (the caller checked).
    ///
    /// ```
    /// use c10_core::{DeviceOps, DeviceType, Result, Tensor, TensorOptions};
    /// struct Host;
    /// impl DeviceOps for Host {
    ///     # fn device_type(&self) -> DeviceType { DeviceType::Cpu }
    ///     # fn fill(&self, _: &Tensor, _: &[u8]) -> Result<()> { Ok(()) }
    ///     fn copy(&self, dst: &Tensor, src: &Tensor) -> Result<()> {
    ///         // Logical order, whatever the layouts (1-d `f32` only, for brevity).
    ///         for (i, v) in src.to_vec::<f32>()?.into_iter().enumerate() {
    ///             dst.set(&[i as i64], v)?;
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// let src = Tensor::from_slice_1d(&[1.0f32, 2.0])?;
    /// let dst = Tensor::zeros(&[2], TensorOptions::new())?;
    /// Host.copy(&dst, &src)?;
    /// assert_eq!(dst.to_vec::<f32>()?, [1.0, 2.0]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    fn copy(&self, dst: &Tensor, src: &Tensor) -> Result<()>;

    /// Writes `value` (the bytes of one element of `dst`'s dtype) to every
    /// element of `dst`.
    ///
    /// ```
    /// use c10_core::{DeviceOps, DeviceType, Result, Tensor, TensorOptions};
    /// struct Host;
    /// impl DeviceOps for Host {
    ///     # fn device_type(&self) -> DeviceType { DeviceType::Cpu }
    ///     # fn copy(&self, _: &Tensor, _: &Tensor) -> Result<()> { Ok(()) }
    ///     fn fill(&self, dst: &Tensor, value: &[u8]) -> Result<()> {
    ///         // `value` holds one element of `dst`'s dtype (`f32` here).
    ///         let v = f32::from_ne_bytes(value.try_into().unwrap());
    ///         dst.write::<f32>()?.fill(v);
    ///         Ok(())
    ///     }
    /// }
    /// let t = Tensor::zeros(&[3], TensorOptions::new())?;
    /// Host.fill(&t, &2.5f32.to_ne_bytes())?;
    /// assert_eq!(t.to_vec::<f32>()?, [2.5; 3]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    fn fill(&self, dst: &Tensor, value: &[u8]) -> Result<()>;
}

#[allow(clippy::declare_interior_mutable_const)] // Used only to initialise the array below.
const EMPTY: AtomicPtr<&'static dyn DeviceOps> = AtomicPtr::new(std::ptr::null_mut());
static OPS: [AtomicPtr<&'static dyn DeviceOps>; COMPILE_TIME_MAX_DEVICE_TYPES] =
    [EMPTY; COMPILE_TIME_MAX_DEVICE_TYPES];
/// Replaced entries are kept (a reader may still hold one) and stay
/// reachable for leak checkers.
static KEPT: Mutex<Vec<&'static &'static dyn DeviceOps>> = Mutex::new(Vec::new());

/// Registers `ops` for its device type (the latest registration wins).
///
/// ```
/// use c10_core::{device_ops, register_device_ops, DeviceOps, DeviceType, Result, Tensor};
/// struct Ops(u8);
/// impl DeviceOps for Ops {
///     fn device_type(&self) -> DeviceType { DeviceType::PrivateUse1 }
///     # fn copy(&self, _: &Tensor, _: &Tensor) -> Result<()> { Ok(()) }
///     # fn fill(&self, _: &Tensor, _: &[u8]) -> Result<()> { Ok(()) }
/// }
/// static FIRST: Ops = Ops(1);
/// static SECOND: Ops = Ops(2);
/// register_device_ops(&FIRST);
/// register_device_ops(&SECOND); // the latest registration wins
/// let ops = device_ops(DeviceType::PrivateUse1)?;
/// assert!(std::ptr::addr_eq(ops, &SECOND as &dyn DeviceOps));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn register_device_ops(ops: &'static dyn DeviceOps) {
    // Asked before the lock is taken: `device_type` is the implementor's
    // code, and one that registered again from inside it must not wait for
    // this thread's own lock.
    let device_type = ops.device_type();
    let boxed: &'static &'static dyn DeviceOps = Box::leak(Box::new(ops));
    let mut kept = KEPT.lock();
    kept.push(boxed);
    OPS[device_type as usize].store(std::ptr::from_ref(boxed).cast_mut(), Ordering::Release);
}

/// The operations registered for `device_type`, or an error naming the
/// feature to enable.
///
/// ```
/// use c10_core::{device_ops, DeviceType};
/// let err = device_ops(DeviceType::PrivateUse1).err().unwrap(); // nothing registered
/// assert!(err.to_string().contains("register them with c10_core::register_device_ops"));
/// let cuda = device_ops(DeviceType::Cuda).err().unwrap();
/// assert!(cuda.to_string().contains("torchcore::cuda::init()"));
/// ```
pub fn device_ops(device_type: DeviceType) -> Result<&'static dyn DeviceOps> {
    let p = OPS[device_type as usize].load(Ordering::Acquire);
    if p.is_null() {
        let advice = if device_type == DeviceType::Cuda {
            "enable the `cuda` feature of the torchcore crate and call `torchcore::cuda::init()` (or register operations with c10_core::register_device_ops)"
        } else {
            "register them with c10_core::register_device_ops"
        };
        return Err(TensorError::runtime(format!(
            "no device operations are registered for {device_type} tensors: {advice}"
        )));
    }
    // SAFETY: non-null entries come from `Box::leak` in `register_device_ops`
    // and are never freed.
    Ok(unsafe { *p })
}
