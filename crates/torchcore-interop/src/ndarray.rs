//! `ndarray` interop (feature `ndarray`): zero-copy views of tensors, and
//! tensors from arrays.
//!
//! * [`NdarrayExt::ndarray_read`] takes the storage's shared lock and gives
//!   an [`ArrayReadGuard`]; its [`view`](ArrayReadGuard::view) is an
//!   `ArrayViewD` over the tensor's memory, borrowed from the guard, so it
//!   cannot outlive the lock. Strides are converted exactly (elements, as
//!   in both libraries), including stride 0 and other overlapping layouts.
//! * [`NdarrayExt::ndarray_write`] takes the exclusive lock (and bumps the
//!   version counter, as every write access does) and gives an
//!   [`ArrayWriteGuard`] whose [`view_mut`](ArrayWriteGuard::view_mut) is
//!   an `ArrayViewMutD`. ndarray forbids two indices reaching one element
//!   of a mutable view, so overlapping layouts (`expand`, stride 0) are
//!   refused for writing.
//! * Either refuses data that is not aligned for the element type (a
//!   tensor over an odd byte offset of a file, say), `bool` tensors with
//!   bytes other than 0 and 1, device memory, and a dtype other than `T`'s.
//! * [`from_ndarray`] turns an owned `Array` into a tensor, adopting its
//!   buffer without a copy when its strides are non-negative (any such
//!   layout, standard or not: the tensor gets ndarray's strides and
//!   offset); otherwise (negative strides) the elements are copied into a
//!   row-major tensor. [`from_ndarray_view`] always copies.
//!
//! ```
//! use c10_core::{ScalarType, Tensor};
//! use torchcore_interop::ndarray::NdarrayExt;
//!
//! let t = Tensor::arange(0.0, 6.0, 1.0, ScalarType::Double)?;
//! let m = t.as_strided(&[2, 3], &[1, 2], None)?; // column-major 2x3
//! {
//!     let guard = m.ndarray_read::<f64>()?;
//!     let view = guard.view();
//!     assert_eq!(view.strides(), &[1, 2]);
//!     assert_eq!(view[[1, 2]], 5.0);
//! }
//! {
//!     let mut guard = m.ndarray_write::<f64>()?;
//!     guard.view_mut().map_inplace(|x| *x *= 10.0);
//! }
//! assert_eq!(t.get::<f64>(&[5])?, 50.0);
//! # Ok::<(), torchcore_interop::InteropError>(())
//! ```

use std::marker::PhantomData;
use std::ptr::NonNull;

use ::ndarray::{
    Array, ArrayBase, ArrayD, ArrayView1, ArrayViewD, ArrayViewMut1, ArrayViewMutD, Data,
    Dimension, IxDyn, ShapeBuilder,
};
use c10_core::access::element_offset_range;
use c10_core::geometry::fmt_list;
use c10_core::{Element, ScalarType, Tensor};
use c10_storage::{StorageReadGuard, StorageWriteGuard};

use crate::error::{InteropError, Result};

/// The `ndarray` crate this module is built against (0.17), re-exported so
/// that a program can name its types without a dependency of its own (or
/// a second, mismatched version of it).
///
/// ```
/// use torchcore_interop::ndarray::{ndarray::array, from_ndarray};
/// let t = from_ndarray(array![[1.0f32, 2.0], [3.0, 4.0]])?;
/// assert_eq!(t.sizes(), &[2, 2]);
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
pub use ::ndarray;

/// Zero-copy `ndarray` views of a tensor, under its storage's guards.
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::ndarray::NdarrayExt; // brings the methods into scope
/// let t = Tensor::arange(0, 6, 1, ScalarType::Int)?.as_strided(&[2, 3], &[3, 1], None)?;
/// assert_eq!(t.ndarray_read::<i32>()?.view().sum(), 15);
/// t.ndarray_write::<i32>()?.view_mut()[[0, 0]] = 100;
/// assert_eq!(t.to_ndarray::<i32>()?[[0, 0]], 100);
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
pub trait NdarrayExt {
    /// Takes the storage's shared lock and checks that the tensor can be
    /// seen as an `ArrayViewD<T>` (dtype, host memory, bounds, alignment,
    /// valid `bool` bytes).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// use torchcore_interop::ndarray::NdarrayExt;
    /// let t = Tensor::arange(0.0, 4.0, 1.0, ScalarType::Float)?;
    /// let guard = t.ndarray_read::<f32>()?; // the storage's shared lock
    /// assert_eq!(guard.view().as_slice(), Some(&[0.0, 1.0, 2.0, 3.0][..]));
    /// assert!(t.ndarray_read::<f64>().is_err()); // the dtype must match
    /// # Ok::<(), torchcore_interop::InteropError>(())
    /// ```
    fn ndarray_read<T: Element>(&self) -> Result<ArrayReadGuard<'_, T>>;

    /// Takes the storage's exclusive lock, bumps the version counter, and
    /// checks as [`NdarrayExt::ndarray_read`] does, and also that no two
    /// indices reach the same element (ndarray's rule for mutable views).
    /// Read-only storages refuse, with an error that says to clone first.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// use torchcore_interop::ndarray::NdarrayExt;
    /// let t = Tensor::arange(0, 3, 1, ScalarType::Long)?;
    /// t.ndarray_write::<i64>()?.view_mut().fill(7);
    /// assert_eq!(t.to_vec::<i64>()?, vec![7, 7, 7]);
    /// let broadcast = t.as_strided(&[2, 3], &[0, 1], None)?; // rows share memory
    /// assert!(broadcast.ndarray_write::<i64>().is_err());
    /// # Ok::<(), torchcore_interop::InteropError>(())
    /// ```
    fn ndarray_write<T: Element>(&self) -> Result<ArrayWriteGuard<'_, T>>;

    /// Copies the elements into an owned row-major `ArrayD` (any layout).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// use torchcore_interop::ndarray::NdarrayExt;
    /// let t = Tensor::arange(0, 6, 1, ScalarType::Long)?.as_strided(&[2, 3], &[1, 2], None)?;
    /// let a = t.to_ndarray::<i64>()?; // an owned, row-major copy
    /// assert_eq!(a, ndarray::array![[0, 2, 4], [1, 3, 5]].into_dyn());
    /// assert!(a.is_standard_layout());
    /// # Ok::<(), torchcore_interop::InteropError>(())
    /// ```
    fn to_ndarray<T: Element>(&self) -> Result<ArrayD<T>>;
}

/// Shared access to a tensor as an `ArrayViewD`; holds the storage's read
/// lock. See [`NdarrayExt::ndarray_read`].
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::ndarray::{ArrayReadGuard, NdarrayExt};
/// let t = Tensor::arange(0, 4, 1, ScalarType::Int)?;
/// let a: ArrayReadGuard<'_, i32> = t.ndarray_read()?;
/// let b = t.ndarray_read::<i32>()?; // readers share the lock
/// assert_eq!(a.view(), b.view());
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
pub struct ArrayReadGuard<'a, T: Element> {
    _guard: StorageReadGuard<'a>,
    layout: Layout,
    _t: PhantomData<&'a [T]>,
}

/// Exclusive access to a tensor as an `ArrayViewMutD`; holds the storage's
/// write lock. See [`NdarrayExt::ndarray_write`].
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::ndarray::{ArrayWriteGuard, NdarrayExt};
/// let t = Tensor::arange(0, 4, 1, ScalarType::Int)?;
/// let version = t.version()?;
/// let mut guard: ArrayWriteGuard<'_, i32> = t.ndarray_write()?;
/// guard.view_mut()[[3]] = -1;
/// drop(guard); // releases the lock
/// assert_eq!(t.get::<i32>(&[3])?, -1);
/// assert!(t.version()? > version); // the write was recorded
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
pub struct ArrayWriteGuard<'a, T: Element> {
    _guard: StorageWriteGuard<'a>,
    layout: Layout,
    _t: PhantomData<&'a mut [T]>,
}

/// A checked layout: the first element's address (aligned, in bounds;
/// `None` for a tensor without elements), sizes and strides as ndarray
/// wants them.
struct Layout {
    first: Option<NonNull<u8>>,
    shape: Vec<usize>,
    strides: Vec<usize>,
}

impl Layout {
    fn dims(&self) -> (IxDyn, IxDyn) {
        (IxDyn(&self.shape), IxDyn(&self.strides))
    }
}

/// Checks everything an ndarray view of `t` over a buffer at `base` of
/// `nbytes` bytes needs. `exclusive` adds the no-overlap rule.
fn check_layout<T: Element>(
    t: &Tensor,
    base: *const u8,
    nbytes: usize,
    exclusive: bool,
) -> Result<Layout> {
    if t.dtype() != T::SCALAR_TYPE {
        return Err(InteropError::Dtype(format!(
            "expected a tensor of dtype {} but this tensor has dtype {}",
            T::SCALAR_TYPE,
            t.dtype()
        )));
    }
    let (sizes, strides) = (t.sizes(), t.strides());
    // Sizes and strides are non-negative for every tensor (c10 refuses
    // negative strides), so these conversions cannot fail; check anyway.
    let to_usize = |v: &[i64]| -> Result<Vec<usize>> {
        v.iter()
            .map(|&x| usize::try_from(x))
            .collect::<Result<_, _>>()
            .map_err(|_| {
                InteropError::Layout(format!(
                    "sizes {} and strides {}: ndarray views need non-negative values",
                    fmt_list(sizes),
                    fmt_list(strides)
                ))
            })
    };
    let shape = to_usize(sizes)?;
    let nd_strides = to_usize(strides)?;
    let Some((lo, hi)) = element_offset_range(sizes, strides, t.storage_offset()) else {
        // No elements: nothing to point at; ndarray must still accept the
        // shape (the product of its non-zero sizes must fit in isize).
        if ArrayViewD::<T>::from_shape(IxDyn(&shape), &[]).is_err() {
            return Err(InteropError::Layout(format!(
                "ndarray cannot represent an array of sizes {}",
                fmt_list(sizes)
            )));
        }
        return Ok(Layout {
            first: None,
            shape,
            strides: nd_strides,
        });
    };
    let itemsize = std::mem::size_of::<T>() as i128;
    if lo < 0 || (hi + 1) * itemsize > nbytes as i128 {
        return Err(InteropError::Layout(format!(
            "tensor with sizes {}, strides {} and storage offset {} does not fit in its storage of {nbytes} bytes",
            fmt_list(sizes),
            fmt_list(strides),
            t.storage_offset()
        )));
    }
    if exclusive && overlaps(&shape, &nd_strides) {
        return Err(InteropError::Layout(format!(
            "a mutable ndarray view cannot have two indices reaching the same element, but sizes {} with strides {} overlap (stride 0 or an expanded/unfolded view); write through the tensor's own guard, or .contiguous() it first",
            fmt_list(sizes),
            fmt_list(strides)
        )));
    }
    let first = base.wrapping_add((lo * itemsize) as usize);
    if !(first as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Err(InteropError::Layout(format!(
            "the tensor's data at {first:p} is not aligned for {} (alignment {}); ndarray views need aligned data, so clone the tensor first",
            T::SCALAR_TYPE,
            std::mem::align_of::<T>()
        )));
    }
    if T::SCALAR_TYPE == ScalarType::Bool {
        let offsets = t.offsets();
        for off in offsets {
            // SAFETY: every offset of the layout lies inside the storage's
            // `nbytes` initialised bytes (checked above), which the caller's
            // guard keeps alive; bool elements are one byte.
            let byte = unsafe { base.add(off as usize).read() };
            if byte > 1 {
                return Err(InteropError::Layout(
                    "this bool tensor holds bytes other than 0 and 1, which are not valid Rust bools; convert it first".into(),
                ));
            }
        }
    }
    Ok(Layout {
        first: NonNull::new(first.cast_mut()),
        shape,
        strides: nd_strides,
    })
}

/// Whether two indices of the layout reach the same element (ndarray's
/// `dim_stride_overlap`): with dims sorted by stride, each stride must
/// exceed the span of the smaller ones. Layouts without elements never
/// overlap.
fn overlaps(shape: &[usize], strides: &[usize]) -> bool {
    if shape.contains(&0) {
        return false;
    }
    let mut dims: Vec<(usize, usize)> = shape
        .iter()
        .zip(strides)
        .filter(|&(&n, _)| n > 1)
        .map(|(&n, &s)| (s, n))
        .collect();
    dims.sort_unstable();
    let mut span: u128 = 0;
    for (s, n) in dims {
        if (s as u128) <= span {
            return true;
        }
        span += (s as u128) * (n as u128 - 1);
    }
    false
}

impl NdarrayExt for Tensor {
    fn ndarray_read<T: Element>(&self) -> Result<ArrayReadGuard<'_, T>> {
        let guard = self.storage().read()?;
        guard.bytes()?; // host memory; non-null unless empty
        let layout = check_layout::<T>(self, guard.as_ptr(), guard.nbytes(), false)?;
        Ok(ArrayReadGuard {
            _guard: guard,
            layout,
            _t: PhantomData,
        })
    }

    fn ndarray_write<T: Element>(&self) -> Result<ArrayWriteGuard<'_, T>> {
        let mut guard = self.storage().write()?;
        guard.bytes_mut()?;
        let layout = check_layout::<T>(self, guard.as_ptr(), guard.nbytes(), true)?;
        self.bump_version()?;
        Ok(ArrayWriteGuard {
            _guard: guard,
            layout,
            _t: PhantomData,
        })
    }

    fn to_ndarray<T: Element>(&self) -> Result<ArrayD<T>> {
        let sizes: Vec<usize> = self.sizes().iter().map(|&s| s as usize).collect();
        let data = self.to_vec::<T>()?;
        ArrayD::from_shape_vec(IxDyn(&sizes), data).map_err(|e| InteropError::Layout(e.to_string()))
    }
}

/// A read-only view over a checked layout.
///
/// # Safety
///
/// `layout` must come from `check_layout::<T>` on a buffer that stays alive
/// and free of writers for `'a`.
unsafe fn view_of<'a, T: Element>(layout: &Layout) -> ArrayViewD<'a, T> {
    let (shape, strides) = layout.dims();
    match layout.first {
        // SAFETY: `check_layout` proved: every element the shape and strides
        // reach lies inside the storage's bytes (one allocation, at most
        // isize::MAX bytes, as any Rust allocation); the first element is
        // the lowest address (strides are non-negative) and aligned for T;
        // the bytes are initialised and valid T values (all bit patterns for
        // T, checked 0/1 for bool). The caller guarantees liveness and the
        // absence of writers for 'a.
        Some(first) => unsafe {
            ArrayViewD::from_shape_ptr(shape.strides(strides), first.as_ptr().cast::<T>())
        },
        None => empty_view(&layout.shape),
    }
}

/// An empty view of a zero-element shape that `check_layout` accepted.
fn empty_view<'a, T>(shape: &[usize]) -> ArrayViewD<'a, T> {
    match ArrayViewD::from_shape(IxDyn(shape), &[]) {
        Ok(v) => v,
        // Unreachable: `check_layout` tried this very call.
        Err(_) => ArrayView1::from(&[][..]).into_dyn(),
    }
}

/// A mutable empty view of a zero-element shape that `check_layout`
/// accepted.
fn empty_view_mut<'a, T>(shape: &[usize]) -> ArrayViewMutD<'a, T> {
    match ArrayViewMutD::from_shape(IxDyn(shape), &mut []) {
        Ok(v) => v,
        // Unreachable: `check_layout` tried the same shape.
        Err(_) => ArrayViewMut1::from(&mut [][..]).into_dyn(),
    }
}

impl<T: Element> ArrayReadGuard<'_, T> {
    /// The tensor as an `ArrayViewD`, borrowed from the guard.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// use torchcore_interop::ndarray::NdarrayExt;
    /// let t = Tensor::arange(0, 6, 1, ScalarType::Long)?.as_strided(&[3], &[2], Some(1))?;
    /// let guard = t.ndarray_read::<i64>()?;
    /// assert_eq!(guard.view().iter().copied().collect::<Vec<_>>(), vec![1, 3, 5]);
    /// assert_eq!(guard.view().strides(), &[2]);
    /// # Ok::<(), torchcore_interop::InteropError>(())
    /// ```
    pub fn view(&self) -> ArrayViewD<'_, T> {
        // SAFETY: the layout was checked under this guard's read lock, which
        // lives as long as the borrow of `self` and excludes writers.
        unsafe { view_of(&self.layout) }
    }
}

impl<T: Element> ArrayWriteGuard<'_, T> {
    /// The tensor as an `ArrayViewD`, borrowed from the guard.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// use torchcore_interop::ndarray::NdarrayExt;
    /// let t = Tensor::arange(0, 3, 1, ScalarType::Long)?;
    /// let mut guard = t.ndarray_write::<i64>()?;
    /// guard.view_mut()[[0]] = 10;
    /// assert_eq!(guard.view().sum(), 13);
    /// # Ok::<(), torchcore_interop::InteropError>(())
    /// ```
    pub fn view(&self) -> ArrayViewD<'_, T> {
        // SAFETY: checked under this guard's write lock; the shared borrow of
        // `self` excludes `view_mut` for the view's lifetime.
        unsafe { view_of(&self.layout) }
    }

    /// The tensor as an `ArrayViewMutD`, borrowed mutably from the guard.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// use ndarray::s;
    /// use torchcore_interop::ndarray::NdarrayExt;
    /// let t = Tensor::arange(0.0, 4.0, 1.0, ScalarType::Double)?.as_strided(&[2, 2], &[2, 1], None)?;
    /// t.ndarray_write::<f64>()?.view_mut().slice_mut(s![1, ..]).fill(0.0);
    /// assert_eq!(t.to_vec::<f64>()?, vec![0.0, 1.0, 0.0, 0.0]);
    /// # Ok::<(), torchcore_interop::InteropError>(())
    /// ```
    pub fn view_mut(&mut self) -> ArrayViewMutD<'_, T> {
        let (shape, strides) = self.layout.dims();
        match self.layout.first {
            // SAFETY: as in `view_of`, plus: the write lock (held by this
            // guard, borrowed mutably for the view's lifetime) excludes every
            // other access; the storage is writable (checked when the guard
            // was made); no two indices reach one element (`check_layout`
            // with `exclusive`); writes of T values keep bool bytes 0/1.
            Some(first) => unsafe {
                ArrayViewMutD::from_shape_ptr(shape.strides(strides), first.as_ptr().cast::<T>())
            },
            None => empty_view_mut(&self.layout.shape),
        }
    }
}

/// Sizes of an ndarray shape as tensor sizes.
fn sizes_of(shape: &[usize]) -> Result<Vec<i64>> {
    shape
        .iter()
        .map(|&n| i64::try_from(n))
        .collect::<Result<_, _>>()
        .map_err(|_| InteropError::Layout(format!("shape {shape:?} does not fit in i64 sizes")))
}

/// A tensor from an owned array, adopting its buffer without a copy when
/// its strides are non-negative: the tensor views the array's `Vec` with
/// ndarray's strides and offset (so a transposed or sliced owned array
/// stays as it is; call `.contiguous()` for row-major). Arrays with a
/// negative stride are copied into a row-major tensor.
///
/// ```
/// use ndarray::{array, s};
/// use torchcore_interop::ndarray::from_ndarray;
/// let a = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
/// let t = from_ndarray(a)?; // no copy
/// assert_eq!((t.sizes(), t.strides()), (&[2i64, 3][..], &[3i64, 1][..]));
/// let f = from_ndarray(array![[1i64, 2], [3, 4]].reversed_axes())?; // no copy either
/// assert_eq!(f.strides(), &[1, 2]);
/// assert_eq!(f.to_vec::<i64>()?, vec![1, 3, 2, 4]);
/// let flipped = from_ndarray(array![1u8, 2, 3].slice_move(s![..;-1]))?; // copied
/// assert_eq!(flipped.to_vec::<u8>()?, vec![3, 2, 1]);
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
pub fn from_ndarray<A: Element, D: Dimension>(a: Array<A, D>) -> Result<Tensor> {
    let sizes = sizes_of(a.shape())?;
    let strides: Option<Vec<i64>> = a
        .strides()
        .iter()
        .map(|&s| i64::try_from(s).ok().filter(|&s| s >= 0))
        .collect();
    let Some(strides) = strides else {
        return from_ndarray_view(&a);
    };
    let (v, offset) = a.into_raw_vec_and_offset();
    let len = i64::try_from(v.len())
        .map_err(|_| InteropError::Layout("array too large for a tensor".into()))?;
    let offset = i64::try_from(offset.unwrap_or(0))
        .map_err(|_| InteropError::Layout("array offset too large for a tensor".into()))?;
    let buffer = Tensor::from_vec(v, &[len])?;
    Ok(buffer.as_strided(&sizes, &strides, Some(offset))?)
}

/// A row-major tensor holding a copy of any array or view's elements (in
/// logical order, whatever the strides).
///
/// ```
/// use ndarray::{array, s};
/// use torchcore_interop::ndarray::from_ndarray_view;
/// let a = array![[1i32, 2, 3], [4, 5, 6]];
/// let t = from_ndarray_view(&a.slice(s![.., 1..]))?; // a copy; `a` stays usable
/// assert_eq!((t.sizes(), t.to_vec::<i32>()?), (&[2i64, 2][..], vec![2, 3, 5, 6]));
/// assert_eq!(a[[0, 0]], 1);
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
pub fn from_ndarray_view<A: Element, S: Data<Elem = A>, D: Dimension>(
    a: &ArrayBase<S, D>,
) -> Result<Tensor> {
    let sizes = sizes_of(a.shape())?;
    // A broadcast view (stride 0) may have far more elements than memory:
    // reserve fallibly, so that is an out-of-memory error, not an abort.
    let mut data: Vec<A> =
        c10_core::access::try_vec_with_capacity(a.len() as u64, "from_ndarray_view")?;
    data.extend(a.iter().copied());
    Ok(Tensor::from_vec(data, &sizes)?)
}

#[cfg(test)]
mod tests;
