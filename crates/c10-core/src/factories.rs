//! Tensor factories: `empty`, `empty_strided`, `zeros`, `ones`, `full`,
//! `from_vec`, `from_slice`, `from_blob`, `scalar_tensor`.

use std::ffi::c_void;

use c10_storage::{get_allocator, AllocError, Allocator, DataPtr, Device, DeviceType, Storage};

use crate::error::{Result, ShapeError, ShapeErrorKind, TensorError};
use crate::geometry;
use crate::options::{MemoryFormat, TensorOptions};
use crate::scalar::Scalar;
use crate::scalar_type::{Element, ScalarType};
use crate::tensor::Tensor;
use crate::tensor_impl::TensorImpl;

/// The meta device's allocator (c10's `MetaAllocator`): no memory at all.
/// Meta tensors have sizes, strides and a storage size, but their data
/// pointer is null and host access is refused.
struct MetaAllocator;

// SAFETY: meta "memory" does not exist: the device is not host-accessible,
// so nothing ever dereferences these null pointers (point 1 of the contract
// is vacuous for a device without memory); there is nothing to free.
unsafe impl Allocator for MetaAllocator {
    fn allocate(&self, _nbytes: usize) -> Result<DataPtr, AllocError> {
        Ok(DataPtr::null(Device::META))
    }
    fn device_type(&self) -> DeviceType {
        DeviceType::Meta
    }
    unsafe fn copy_data(
        &self,
        _dst: *mut u8,
        _src: *const u8,
        _count: usize,
    ) -> Result<(), AllocError> {
        Ok(()) // no bytes exist to copy
    }
    fn name(&self) -> &str {
        "MetaAllocator"
    }
}

static META_ALLOCATOR: MetaAllocator = MetaAllocator;

/// The allocator factories use for `device`: the registry's, with the CPU
/// default from `alloc-cpu` and the meta allocator always available.
///
/// ```
/// use c10_core::{factories::allocator_for, Device};
/// assert_eq!(allocator_for(Device::CPU)?.name(), "CpuAllocator");
/// assert!(allocator_for(Device::META).is_ok()); // no memory, but an allocator
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[inline]
pub fn allocator_for(device: Device) -> Result<&'static dyn Allocator> {
    match device.device_type() {
        DeviceType::Cpu => Ok(alloc_cpu::cpu_allocator()),
        DeviceType::Meta => Ok(get_allocator(DeviceType::Meta).unwrap_or(&META_ALLOCATOR)),
        t => get_allocator(t).map_err(|e| match e {
            AllocError::NotRegistered(DeviceType::Cuda) => TensorError::runtime(
                "no allocator is registered for cuda: enable the `cuda` feature of the torchcore crate and call `torchcore::cuda::init()` (or register an allocator with c10_storage::set_allocator)",
            ),
            other => other.into(),
        }),
    }
}

/// `empty_strided`, whose storage bytes may start uninitialised when
/// `for_overwrite`.
///
/// # Safety
///
/// With `for_overwrite`, as [`Tensor::empty_strided_for_overwrite`].
unsafe fn empty_strided_impl(
    sizes: &[i64],
    strides: &[i64],
    o: TensorOptions,
    for_overwrite: bool,
) -> Result<Tensor> {
    geometry::check_non_negative(sizes)?;
    let nbytes = geometry::storage_nbytes(sizes, strides, o.dtype_or_default().itemsize(), 0)?;
    let storage = if for_overwrite {
        // SAFETY: forwarded to the caller.
        unsafe { new_storage_for_overwrite(nbytes, o.device) }?
    } else {
        new_storage(nbytes, o.device, Fill::Lazy)?
    };
    // Row-major strides take the in-place constructor `empty` uses.
    let mut t = if strides_are_row_major(sizes, strides) {
        TensorImpl::new_contiguous_tensor(storage, o.dtype_or_default(), sizes)?
    } else {
        let mut imp = TensorImpl::new(storage, o.dtype_or_default());
        imp.set_sizes_and_strides(sizes, strides, Some(0))?;
        Tensor::from_impl(imp)
    };
    if o.requires_grad {
        t.set_requires_grad(true)?;
    }
    Ok(t)
}

/// Whether `strides` are exactly the row-major strides of `sizes`.
fn strides_are_row_major(sizes: &[i64], strides: &[i64]) -> bool {
    if sizes.len() != strides.len() {
        return false;
    }
    let mut expected: i64 = 1;
    for (&size, &stride) in sizes.iter().zip(strides).rev() {
        if stride != expected {
            return false;
        }
        match expected.checked_mul(size.max(1)) {
            Some(e) => expected = e,
            None => return false,
        }
    }
    true
}

/// How a new storage's bytes start.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fill {
    /// Lazily initialised ([`Storage::new_uninit`]): no fill unless a byte
    /// is read before being written, as c10's `empty` touches nothing.
    Lazy,
    /// Whatever the allocator's `allocate` gives (zeros from the CPU
    /// allocator, which `calloc` makes free for fresh pages): for `zeros`.
    Allocator,
}

fn new_storage(nbytes: usize, device: Device, fill: Fill) -> Result<Storage> {
    let alloc = allocator_for(device)?;
    Ok(match fill {
        Fill::Lazy => Storage::new_uninit(nbytes, alloc, true)?,
        Fill::Allocator => Storage::new(nbytes, alloc, true)?,
    })
}

/// [`new_storage`] whose bytes may start uninitialised.
///
/// # Safety
///
/// As [`Storage::new_for_overwrite`].
unsafe fn new_storage_for_overwrite(nbytes: usize, device: Device) -> Result<Storage> {
    let alloc = allocator_for(device)?;
    // SAFETY: forwarded to the caller.
    Ok(unsafe { Storage::new_for_overwrite(nbytes, alloc, true) }?)
}

/// A factory's tensor of symbolic sizes: a meta (or fake) tensor, whose
/// fill would write nothing (PyTorch's fake `zeros`, `full`, ... on
/// `SymInt` sizes).
#[cold]
fn symbolic_factory(sizes: &[crate::sym::SymInt], o: TensorOptions) -> Result<Tensor> {
    let mut t = Tensor::empty_symint(sizes, o.requires_grad(false))?;
    if o.requires_grad {
        t.set_requires_grad(true)?;
    }
    Ok(t)
}

impl Tensor {
    /// An uninitialised tensor in PyTorch; here its storage is initialised
    /// lazily: creating it costs the allocation alone (no pass over the
    /// bytes, whatever the size), its elements read as zero until written,
    /// and a dense `copy_` or `fill_` of the whole tensor writes it without
    /// any zero fill (see `c10_storage::Storage`, "Lazy initialisation").
    ///
    /// Sizes may not be negative (`Trying to create tensor with negative
    /// dimension -3: [2, -3]`); the byte count is overflow-checked
    /// (`Storage size calculation overflowed with sizes=[...]`). The memory
    /// format picks row-major or channels-last strides.
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions, MemoryFormat};
    /// let t = Tensor::empty(&[2, 3, 4, 5], TensorOptions::new().memory_format(MemoryFormat::ChannelsLast))?;
    /// assert_eq!(t.strides(), &[60, 1, 15, 3]);
    /// assert!(Tensor::empty(&[2, -3], TensorOptions::new()).is_err());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    ///
    /// Sizes are any [`IntoShape`](crate::shape_arg::IntoShape) (`&[i64]`,
    /// `Vec<usize>`, `(2, 3)`, ...); symbolic sizes make the tensor of
    /// [`Tensor::empty_symint`].
    #[inline]
    pub fn empty(
        sizes: impl crate::shape_arg::IntoShape,
        options: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        match sizes.into_shape()? {
            crate::shape_arg::Shape::Ints(s) => {
                Tensor::empty_with(s.as_ref(), options.into(), Fill::Lazy)
            }
            crate::shape_arg::Shape::Sym(s) => Tensor::empty_symint(&s, options),
        }
    }

    /// [`Tensor::empty`] with the storage's bytes starting as `fill` says.
    fn empty_with(sizes: &[i64], o: TensorOptions, fill: Fill) -> Result<Tensor> {
        geometry::check_non_negative(sizes)?;
        let nbytes =
            geometry::storage_nbytes_contiguous(sizes, o.dtype_or_default().itemsize(), 0)?;
        let storage = new_storage(nbytes, o.device, fill)?;
        let mut t = if o.memory_format == MemoryFormat::Contiguous {
            TensorImpl::new_contiguous_tensor(storage, o.dtype_or_default(), sizes)?
        } else {
            let mut imp = TensorImpl::new(storage, o.dtype_or_default());
            imp.set_sizes_contiguous(sizes, o.memory_format)?;
            Tensor::from_impl(imp)
        };
        if o.requires_grad {
            t.set_requires_grad(true)?;
        }
        Ok(t)
    }

    /// `empty_strided(sizes, strides)`: storage of
    /// `(1 + Σ stride·(size−1)) · itemsize` bytes (0 if any size is 0),
    /// exactly these strides, offset 0.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::empty_strided(&[2, 3], &[1, 2], ScalarType::Float)?; // column-major
    /// assert_eq!((t.strides(), t.storage().nbytes()), (&[1i64, 2][..], 24));
    /// assert!(!t.is_contiguous());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    ///
    /// Sizes and strides are any [`IntoShape`](crate::shape_arg::IntoShape);
    /// with a symbolic one the tensor is a symbolic (meta or fake) one,
    /// [`Tensor::empty_strided_symint`] (PyTorch's `empty_strided` takes
    /// `SymInt`s).
    #[inline]
    pub fn empty_strided(
        sizes: impl crate::shape_arg::IntoShape,
        strides: impl crate::shape_arg::IntoShape,
        options: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        let (sizes, strides) = (sizes.into_shape()?, strides.into_shape()?);
        match (sizes.ints(), strides.ints()) {
            // SAFETY: `for_overwrite` is false: the storage is lazily
            // initialised (zeros unless written first), nothing to uphold.
            (Some(s), Some(st)) => unsafe { empty_strided_impl(s, st, options.into(), false) },
            _ => {
                Tensor::empty_strided_symint(&sizes.to_sym_ints(), &strides.to_sym_ints(), options)
            }
        }
    }

    /// [`Tensor::empty_strided`] without the allocator's zero fill, for a
    /// caller that writes every element before anything reads one (the
    /// destination of `clone` and `contiguous`: the CPU allocator then
    /// skips a `memset` of the whole block).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let src = Tensor::arange(0, 6, 1, ScalarType::Long)?;
    /// // SAFETY: the layout is dense, so the copy below writes every byte
    /// // of the storage before anything reads it.
    /// let dst = unsafe { Tensor::empty_strided_for_overwrite(&[6], &[1], ScalarType::Long)? };
    /// {
    ///     let s = src.storage().read()?;
    ///     let mut d = dst.storage().write()?;
    ///     // SAFETY: both guards are held; 48 bytes on each side.
    ///     unsafe { std::ptr::copy_nonoverlapping(s.as_ptr(), d.as_mut_ptr(), 48) };
    /// }
    /// assert_eq!(dst.to_vec::<i64>()?, vec![0, 1, 2, 3, 4, 5]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    ///
    /// # Safety
    ///
    /// As [`Storage::new_for_overwrite`] for the new tensor's storage: every
    /// byte of it (all of it is reachable through the tensor only when the
    /// layout is non-overlapping and dense) must be written through raw
    /// pointers before anything reads any of it, through this tensor or
    /// any other handle, view or storage clone.
    pub unsafe fn empty_strided_for_overwrite(
        sizes: &[i64],
        strides: &[i64],
        options: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        // SAFETY: forwarded to the caller.
        unsafe { empty_strided_impl(sizes, strides, options.into(), true) }
    }

    /// A tensor of zeros. Sizes may not be negative (`zeros: Dimension size
    /// must be non-negative.`).
    ///
    /// ```
    /// use c10_core::{Tensor, TensorOptions};
    /// let t = Tensor::zeros(&[2, 3], TensorOptions::new())?;
    /// assert_eq!(t.to_vec::<f32>()?, vec![0.0; 6]);
    /// assert_eq!(
    ///     Tensor::zeros(&[-1], TensorOptions::new()).unwrap_err().to_string(),
    ///     "zeros: Dimension size must be non-negative."
    /// );
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    ///
    /// Sizes are any [`IntoShape`](crate::shape_arg::IntoShape) with
    /// concrete values.
    #[inline]
    pub fn zeros(
        sizes: impl crate::shape_arg::IntoShape,
        options: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        match sizes.into_shape()? {
            crate::shape_arg::Shape::Ints(s) => Tensor::zeros_impl(s.as_ref(), options.into()),
            crate::shape_arg::Shape::Sym(s) => symbolic_factory(&s, options.into()),
        }
    }

    fn zeros_impl(sizes: &[i64], options: TensorOptions) -> Result<Tensor> {
        if sizes.iter().any(|&s| s < 0) {
            return Err(TensorError::runtime(
                "zeros: Dimension size must be non-negative.",
            ));
        }
        let o = options;
        // The allocator's own zeros when it has them (`calloc`: fresh pages
        // come zeroed from the kernel), else one fill below; a lazily
        // initialised storage would read as zeros too, but would pay a
        // `memset` at first touch where `calloc` pays nothing.
        let mut t = Tensor::empty_with(sizes, o.requires_grad(false), Fill::Allocator)?;
        // Ask the allocator that made this storage (not the registry again:
        // cheaper, and right even if a registration changed meanwhile).
        let zeroed = t.imp.storage.allocator().is_some_and(|a| a.zeroes_memory());
        if !zeroed && !t.device().is_meta() && t.numel() > 0 {
            t.fill_raw(Scalar::Int(0))?;
        }
        if o.requires_grad {
            t.set_requires_grad(true)?;
        }
        Ok(t)
    }

    /// A tensor of ones (`float32` unless a dtype is given).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor, TensorOptions};
    /// let t = Tensor::ones(&[3], TensorOptions::new())?;
    /// assert_eq!((t.dtype(), t.to_vec::<f32>()?), (ScalarType::Float, vec![1.0; 3]));
    /// assert_eq!(Tensor::ones(&[2], ScalarType::Bool)?.to_vec::<bool>()?, vec![true, true]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    ///
    /// Sizes are any [`IntoShape`](crate::shape_arg::IntoShape) with
    /// concrete values.
    pub fn ones(
        sizes: impl crate::shape_arg::IntoShape,
        options: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        let o = options.into();
        let o = o.dtype(o.dtype_or_default());
        match sizes.into_shape()? {
            crate::shape_arg::Shape::Ints(s) => Tensor::full(s.as_ref(), 1, o),
            crate::shape_arg::Shape::Sym(s) => symbolic_factory(&s, o),
        }
    }

    /// A tensor filled with `value` converted to the dtype. Without a
    /// dtype, the value's kind decides, as in PyTorch: `int64` for an
    /// integer, `bool` for a bool, `float32` for a float, `complex64` for a
    /// complex value. The value must fit the dtype ([`Scalar::check_fits`]:
    /// a complex value with a nonzero imaginary part fits only complex
    /// dtypes and `bool`).
    ///
    /// ```
    /// use c10_core::{Scalar, Tensor, ScalarType, TensorOptions};
    /// use c10_core::scalar_type::Complex64;
    /// let t = Tensor::full(&[2, 2], 7, ScalarType::Int)?;
    /// assert_eq!(t.to_vec::<i32>()?, vec![7, 7, 7, 7]);
    /// let z = Tensor::full(&[2], Scalar::Complex(1.0, 2.0), TensorOptions::new())?;
    /// assert_eq!(z.to_vec::<Complex64>()?, [Complex64::new(1.0, 2.0); 2]);
    /// assert!(Tensor::full(&[2], Scalar::Complex(1.0, 2.0), ScalarType::Float).is_err());
    /// assert_eq!(Tensor::full(&[2], 3, TensorOptions::new())?.dtype(), ScalarType::Long);
    /// assert_eq!(Tensor::full(&[2], 3.0, TensorOptions::new())?.dtype(), ScalarType::Float);
    /// assert!(Tensor::full(&[2], 300, ScalarType::Byte).is_err());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn full(
        sizes: impl crate::shape_arg::IntoShape,
        value: impl Into<Scalar>,
        options: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        let value = value.into();
        let o = options.into();
        let dtype = o.dtype.unwrap_or(match value {
            Scalar::Bool(_) => ScalarType::Bool,
            Scalar::Int(_) => ScalarType::Long,
            Scalar::Float(_) => ScalarType::Float,
            // The default complex dtype of the default float dtype.
            Scalar::Complex(..) => ScalarType::ComplexFloat,
        });
        let sizes = match sizes.into_shape()? {
            crate::shape_arg::Shape::Ints(s) => s,
            // Meta or fake: nothing to fill (PyTorch's meta kernel never
            // converts the value either).
            crate::shape_arg::Shape::Sym(s) => return symbolic_factory(&s, o.dtype(dtype)),
        };
        let sizes = sizes.as_ref();
        let mut t = Tensor::empty(sizes, o.dtype(dtype).requires_grad(false))?;
        // (On the meta device `fill_` only counts a version: PyTorch's meta
        // kernel never converts the value.)
        t.fill_raw(value)?;
        if o.requires_grad {
            t.set_requires_grad(true)?;
        }
        Ok(t)
    }

    /// Fills without bumping the version (a factory's own initialisation).
    fn fill_raw(&self, value: Scalar) -> Result<()> {
        self.fill_(value)?;
        crate::ranges::reset_version(self);
        Ok(())
    }

    /// A 0-dim tensor holding `value` (`scalar_tensor`); the dtype defaults
    /// to `float32` whatever the value (unlike [`Tensor::full`]).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor, TensorOptions};
    /// let t = Tensor::scalar_tensor(7, TensorOptions::new())?;
    /// assert_eq!((t.dim(), t.dtype(), t.item::<f32>()?), (0, ScalarType::Float, 7.0));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn scalar_tensor(
        value: impl Into<Scalar>,
        options: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        let o = options.into();
        Tensor::full(&[], value, o.dtype(o.dtype_or_default()))
    }

    /// Adopts a `Vec` as a CPU tensor without copying; `sizes` must hold
    /// `v.len()` elements. (The buffer keeps `Vec`'s alignment, which is
    /// `T`'s, so typed slices work.) The storage is resizable like one from
    /// the allocator: a growing `resize_` or `set_` reallocates through the
    /// registered CPU allocator and copies the elements over.
    ///
    /// ```
    /// use c10_core::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// assert_eq!(t.get::<f32>(&[1, 0])?, 3.0);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn from_vec<T: Element>(v: Vec<T>, sizes: &[i64]) -> Result<Tensor> {
        geometry::check_non_negative(sizes)?;
        let numel = geometry::compute_numel(sizes)?;
        if numel as usize != v.len() {
            let message = format!(
                "shape '{}' is invalid for input of size {}",
                geometry::fmt_list(sizes),
                v.len()
            );
            let mut e = ShapeError::new(ShapeErrorKind::NumelMismatch, message).with_sizes(sizes);
            if let Ok(n) = i64::try_from(v.len()) {
                e = e.with_numel(n);
            }
            return Err(e.into());
        }
        // Resizable like a storage from the allocator: growing it
        // reallocates through the CPU allocator (PyTorch copies user data
        // into such a storage; we adopt the `Vec` and copy only on growth).
        let storage = Storage::from_owner_resizable(ElementVec(v), allocator_for(Device::CPU)?)?;
        let strides = geometry::contiguous_strides(sizes)?;
        let mut imp = TensorImpl::new(storage, T::SCALAR_TYPE);
        imp.set_sizes_and_strides(sizes, &strides, Some(0))?;
        Ok(Tensor::from_impl(imp))
    }

    /// Copies a slice into a new CPU tensor of the given sizes.
    ///
    /// ```
    /// use c10_core::Tensor;
    /// let data = [1i32, 2, 3, 4, 5, 6];
    /// let t = Tensor::from_slice(&data, &[3, 2])?;
    /// assert_eq!(t.get::<i32>(&[2, 1])?, 6);
    /// assert!(Tensor::from_slice(&data, &[4, 2]).is_err()); // 8 elements wanted
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn from_slice<T: Element>(v: &[T], sizes: &[i64]) -> Result<Tensor> {
        Tensor::from_vec(v.to_vec(), sizes)
    }

    /// A 1-d tensor copied from a slice.
    ///
    /// ```
    /// use c10_core::Tensor;
    /// let t = Tensor::from_slice_1d(&[0.5f64, 1.5])?;
    /// assert_eq!((t.sizes(), t.to_vec::<f64>()?), (&[2i64][..], vec![0.5, 1.5]));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn from_slice_1d<T: Element>(v: &[T]) -> Result<Tensor> {
        Tensor::from_vec(v.to_vec(), &[v.len() as i64])
    }

    /// Wraps memory you own (c10's `from_blob`): no copy; `deleter` (if
    /// any) runs once when the last tensor viewing it is gone. `strides`
    /// default to row-major.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let mut buf = vec![1.0f32, 2.0, 3.0, 4.0];
    /// // SAFETY: `buf` holds the 4 initialised f32s of the layout, outlives `t`
    /// // (dropped first below), and is only accessed through `t` meanwhile.
    /// let t = unsafe {
    ///     Tensor::from_blob(buf.as_mut_ptr().cast(), &[2, 2], None, None, ScalarType::Float)?
    /// };
    /// t.set::<f32>(&[1, 1], 40.0)?;
    /// drop(t);
    /// assert_eq!(buf[3], 40.0);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    ///
    /// # Safety
    ///
    /// * `data` must point to memory of `options.device` holding every
    ///   element of the layout (`storage_nbytes(sizes, strides, itemsize)`
    ///   bytes), valid for reads and writes until `deleter` runs (or, with no
    ///   deleter, for as long as any tensor or storage made from it lives);
    /// * nothing else may access that memory meanwhile except through these
    ///   tensors;
    /// * on the CPU the bytes must be initialised;
    /// * `deleter` must be sound to call from any thread.
    pub unsafe fn from_blob(
        data: *mut u8,
        sizes: &[i64],
        strides: Option<&[i64]>,
        deleter: Option<Box<dyn FnOnce() + Send>>,
        options: impl Into<TensorOptions>,
    ) -> Result<Tensor> {
        let o = options.into();
        geometry::check_non_negative(sizes)?;
        let strides = match strides {
            Some(s) => geometry::DimVec::from_slice(s),
            None => geometry::contiguous_strides(sizes)?,
        };
        let nbytes = geometry::storage_nbytes(sizes, &strides, o.dtype_or_default().itemsize(), 0)?;
        let dp = match deleter {
            None => DataPtr::non_owning(data, o.device),
            Some(f) => {
                let ctx = Box::into_raw(Box::new(f));
                // SAFETY: `run_boxed_closure` consumes the box once; the
                // closure is `Send`, so it may run on any thread.
                unsafe { DataPtr::from_raw_parts(data, ctx.cast(), run_boxed_closure, o.device) }
            }
        };
        // SAFETY: forwarded to the caller (see this function's contract).
        let storage = unsafe { Storage::from_data_ptr(dp, nbytes, None, false) }?;
        let mut imp = TensorImpl::new(storage, o.dtype_or_default());
        imp.set_sizes_and_strides(sizes, &strides, Some(0))?;
        Ok(Tensor::from_impl(imp))
    }
}

/// Deleter for `from_blob`'s closure.
///
/// # Safety
///
/// `ctx` must come from `Box::<Box<dyn FnOnce() + Send>>::into_raw`.
unsafe fn run_boxed_closure(ctx: *mut c_void) {
    // SAFETY: guaranteed by the caller.
    let f = unsafe { Box::from_raw(ctx.cast::<Box<dyn FnOnce() + Send>>()) };
    f();
}

/// A `Vec<T>` seen as bytes, so a storage can adopt it.
struct ElementVec<T: Element>(Vec<T>);

impl<T: Element> AsMut<[u8]> for ElementVec<T> {
    fn as_mut(&mut self) -> &mut [u8] {
        let len = std::mem::size_of_val(self.0.as_slice());
        // SAFETY: `Element` guarantees `T` is plain data without padding, so
        // its bytes are initialised `u8`s; the slice covers exactly the
        // Vec's elements and borrows it mutably. Writing arbitrary bytes is
        // fine for every `T` whose bit patterns are all valid; `bool` bytes
        // are only ever read back through the normalising reader.
        unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast::<u8>(), len) }
    }
}

/// The `new_*` factories: a new tensor with this tensor's dtype and device
/// (its fake device, for a fake tensor), as PyTorch's `Tensor.new_empty`,
/// `new_zeros`, `new_ones`, `new_full`, `new_empty_strided`. Sizes may be
/// symbolic (a meta or fake tensor of those sizes, as on PyTorch's fake
/// path).
impl Tensor {
    fn new_options(&self) -> TensorOptions {
        TensorOptions::new()
            .dtype(self.dtype())
            .device(self.fake_device().unwrap_or(self.device()))
    }

    /// `new_empty(sizes)`.
    ///
    /// ```
    /// use c10_core::sym::ShapeEnv;
    /// use c10_core::{Device, ScalarType, Tensor, TensorOptions};
    /// let t = Tensor::zeros(&[2], ScalarType::Int)?;
    /// assert_eq!(t.new_empty((3, 4))?.dtype(), ScalarType::Int);
    /// let env = ShapeEnv::new();
    /// let n = env.create_symbol(5, "n")?;
    /// let x = Tensor::empty([n.clone()], TensorOptions::new().device(Device::META))?;
    /// assert_eq!(x.new_empty([n.clone(), 3.into()])?.sym_sizes()[0], n);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn new_empty(&self, sizes: impl crate::shape_arg::IntoShape) -> Result<Tensor> {
        Tensor::empty(sizes, self.new_options())
    }

    /// `new_zeros(sizes)`.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::ones(&[2], ScalarType::Long)?;
    /// assert_eq!(t.new_zeros(&[2])?.to_vec::<i64>()?, vec![0, 0]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn new_zeros(&self, sizes: impl crate::shape_arg::IntoShape) -> Result<Tensor> {
        Tensor::zeros(sizes, self.new_options())
    }

    /// `new_ones(sizes)`.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::zeros(&[2], ScalarType::Long)?;
    /// assert_eq!(t.new_ones(&[1])?.to_vec::<i64>()?, vec![1]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn new_ones(&self, sizes: impl crate::shape_arg::IntoShape) -> Result<Tensor> {
        Tensor::ones(sizes, self.new_options())
    }

    /// `new_full(sizes, value)`: this tensor's dtype, whatever the value's
    /// kind.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::zeros(&[2], ScalarType::Float)?;
    /// assert_eq!(t.new_full(&[2], 3)?.to_vec::<f32>()?, vec![3.0, 3.0]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn new_full(
        &self,
        sizes: impl crate::shape_arg::IntoShape,
        value: impl Into<Scalar>,
    ) -> Result<Tensor> {
        Tensor::full(sizes, value, self.new_options())
    }

    /// `new_empty_strided(sizes, strides)`.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::zeros(&[2], ScalarType::Float)?;
    /// assert_eq!(t.new_empty_strided(&[2, 3], &[1, 2])?.strides(), &[1, 2]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn new_empty_strided(
        &self,
        sizes: impl crate::shape_arg::IntoShape,
        strides: impl crate::shape_arg::IntoShape,
    ) -> Result<Tensor> {
        let (sizes, strides) = (sizes.into_shape()?, strides.into_shape()?);
        match (sizes.ints(), strides.ints()) {
            (Some(s), Some(st)) => Tensor::empty_strided(s, st, self.new_options()),
            _ => Tensor::empty_strided_symint(
                &sizes.to_sym_ints(),
                &strides.to_sym_ints(),
                self.new_options(),
            ),
        }
    }
}
