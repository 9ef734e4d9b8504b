//! Typed element access through the storage's guards.
//!
//! Every access locks the storage (shared for reading, exclusive for
//! writing), checks that the tensor's layout lies inside the storage *now*
//! (another handle may have shrunk the storage since the tensor was made),
//! and checks the element type. Single elements are read and written with
//! unaligned loads and stores, so any layout is fine; slices are handed out
//! only for contiguous tensors whose data is aligned for `T`.

use std::marker::PhantomData;

use c10_storage::{AllocError, StorageError, StorageReadGuard, StorageWriteGuard};

use crate::error::{Result, TensorError};
use crate::geometry::fmt_list;
use crate::scalar::Scalar;
use crate::scalar_type::{Element, ScalarType};
use crate::tensor::Tensor;

/// Element offsets (relative to the storage, in elements) of a layout, in
/// logical row-major order: the strided-index odometer every kernel needs.
///
/// ```
/// use c10_core::StridedOffsets;
/// let offs: Vec<i64> = StridedOffsets::new(&[2, 3], &[1, 2], 10)?.collect();
/// assert_eq!(offs, vec![10, 12, 14, 11, 13, 15]);
/// assert!(StridedOffsets::new(&[2, 3], &[1], 0).is_err()); // ranks differ
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Clone, Debug)]
pub struct StridedOffsets<'a> {
    sizes: &'a [i64],
    strides: &'a [i64],
    index: smallvec::SmallVec<[i64; 8]>,
    offset: i64,
    remaining: u64,
}

impl<'a> StridedOffsets<'a> {
    /// Offsets of every element of the layout, starting at `storage_offset`.
    /// Errors if `sizes` and `strides` differ in length.
    ///
    /// ```
    /// use c10_core::StridedOffsets;
    /// let mut it = StridedOffsets::new(&[2, 2], &[2, 1], 0)?;
    /// assert_eq!(it.next(), Some(0));
    /// assert_eq!(it.collect::<Vec<_>>(), [1, 2, 3]);
    /// let broadcast: Vec<i64> = StridedOffsets::new(&[3], &[0], 5)?.collect();
    /// assert_eq!(broadcast, [5, 5, 5]); // stride 0 repeats one element
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn new(
        sizes: &'a [i64],
        strides: &'a [i64],
        storage_offset: i64,
    ) -> Result<StridedOffsets<'a>> {
        crate::geometry::check_same_rank(sizes, strides)?;
        Ok(StridedOffsets::same_rank(sizes, strides, storage_offset))
    }

    /// [`new`](Self::new) for a layout known to have one stride per size.
    pub(crate) fn same_rank(
        sizes: &'a [i64],
        strides: &'a [i64],
        storage_offset: i64,
    ) -> StridedOffsets<'a> {
        let numel = sizes
            .iter()
            .try_fold(1u64, |acc, &s| acc.checked_mul(s.max(0) as u64));
        StridedOffsets {
            sizes,
            strides,
            index: smallvec::smallvec![0; sizes.len()],
            offset: storage_offset,
            remaining: numel.unwrap_or(0),
        }
    }
}

impl Iterator for StridedOffsets<'_> {
    type Item = i64;

    fn next(&mut self) -> Option<i64> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let current = self.offset;
        // Advance the odometer from the last dim.
        for d in (0..self.sizes.len()).rev() {
            self.index[d] += 1;
            self.offset = self.offset.wrapping_add(self.strides[d]);
            if self.index[d] < self.sizes[d] {
                break;
            }
            self.offset = self
                .offset
                .wrapping_sub(self.strides[d].wrapping_mul(self.sizes[d]));
            self.index[d] = 0;
        }
        Some(current)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.remaining).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

/// An empty vector with room for `len` values of `T`, reserved fallibly.
///
/// Every public call that materialises a result sized by a tensor (whose
/// logical size may be astronomically larger than its storage: a stride-0
/// `expand` of one element to `[2^30, 2^30]`) reserves through this, so that
/// a request the system cannot meet is an out-of-memory error naming the
/// byte count and the caller (`what`), in the CPU allocator's wording,
/// instead of the global allocator's abort or a "capacity overflow" panic.
///
/// ```
/// use c10_core::access::try_vec_with_capacity;
/// let v = try_vec_with_capacity::<f32>(4, "example")?;
/// assert!(v.capacity() >= 4 && v.is_empty());
/// let e = try_vec_with_capacity::<f64>(1 << 62, "example").unwrap_err();
/// assert_eq!(
///     e.to_string(),
///     "example: can't allocate memory: you tried to allocate 36893488147419103232 bytes. \
///      Error code 12 (Cannot allocate memory)"
/// );
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn try_vec_with_capacity<T>(len: u64, what: &str) -> Result<Vec<T>> {
    // In u128 so that the count in the message is exact even when it does
    // not fit in the address space.
    let nbytes = u128::from(len) * std::mem::size_of::<T>() as u128;
    let mut v = Vec::new();
    let reserved = usize::try_from(len)
        .ok()
        .filter(|_| nbytes <= isize::MAX as u128)
        .is_some_and(|n| v.try_reserve_exact(n).is_ok());
    if reserved {
        return Ok(v);
    }
    Err(AllocError::OutOfMemory {
        nbytes: usize::try_from(nbytes).unwrap_or(usize::MAX),
        message: format!(
            "{what}: can't allocate memory: you tried to allocate {nbytes} bytes. \
             Error code 12 (Cannot allocate memory)"
        ),
    }
    .into())
}

/// The layout of the distinct memory locations a layout reaches, for
/// writes of one value (`fill_`): dims of stride 0 (a broadcast reaches the
/// same locations for every index) and of size 1 are dropped, and the rest
/// are ordered by stride and coalesced. Writing every element of the
/// result writes every location of the input, so the work follows the
/// storage touched rather than the logical size (`[2^30, 2^30]` of stride
/// 0 is one write). The caller handles empty layouts (a size of 0).
fn distinct_locations(sizes: &[i64], strides: &[i64]) -> (DimVec, DimVec) {
    let mut dims: smallvec::SmallVec<[(i64, i64); 8]> = sizes
        .iter()
        .zip(strides)
        .filter(|&(&n, &s)| n != 1 && s != 0)
        .map(|(&n, &s)| (n, s))
        .collect();
    // Largest stride outermost; then merge an outer dim into the inner one
    // when it steps exactly over the inner dim's whole extent.
    dims.sort_unstable_by_key(|&(_, s)| std::cmp::Reverse(s.unsigned_abs()));
    let (mut out_sizes, mut out_strides) = (DimVec::new(), DimVec::new());
    for (n, s) in dims {
        if let Some(k) = out_sizes.len().checked_sub(1) {
            // Offsets `i * (s * n) + j * s` are `(i * n + j) * s`.
            let merged = out_sizes[k].checked_mul(n);
            if let (Some(merged), true) = (merged, s.checked_mul(n) == Some(out_strides[k])) {
                out_sizes[k] = merged;
                out_strides[k] = s;
                continue;
            }
        }
        out_sizes.push(n);
        out_strides.push(s);
    }
    (out_sizes, out_strides)
}

/// Sizes or strides of a reduced layout (up to 8 dims on the stack).
use crate::geometry::DimVec;

/// The smallest and largest element offset a layout reaches, or `None` if
/// it has no elements.
///
/// ```
/// use c10_core::access::element_offset_range;
/// assert_eq!(element_offset_range(&[2, 3], &[3, 1], 4), Some((4, 9)));
/// assert_eq!(element_offset_range(&[3], &[-1], 2), Some((0, 2))); // a reversed view
/// assert_eq!(element_offset_range(&[0, 3], &[3, 1], 0), None);
/// ```
pub fn element_offset_range(
    sizes: &[i64],
    strides: &[i64],
    storage_offset: i64,
) -> Option<(i128, i128)> {
    if sizes.contains(&0) {
        return None;
    }
    let (mut lo, mut hi) = (i128::from(storage_offset), i128::from(storage_offset));
    for (&n, &s) in sizes.iter().zip(strides) {
        let span = i128::from(s) * (i128::from(n) - 1);
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
    }
    Some((lo, hi))
}

impl Tensor {
    fn check_dtype<T: Element>(&self) -> Result<()> {
        if T::SCALAR_TYPE != self.dtype() {
            return Err(TensorError::DtypeMismatch {
                expected: T::SCALAR_TYPE,
                actual: self.dtype(),
            });
        }
        Ok(())
    }

    /// Checks that every element lies inside `nbytes` bytes.
    fn check_layout_in(&self, nbytes: usize) -> Result<()> {
        let Some((lo, hi)) =
            element_offset_range(self.sizes(), self.strides(), self.storage_offset())
        else {
            return Ok(());
        };
        let itemsize = self.element_size() as i128;
        if lo < 0 || (hi + 1) * itemsize > nbytes as i128 {
            return Err(TensorError::runtime(format!(
                "tensor with sizes {}, strides {} and storage offset {} does not fit in its storage of {} bytes (was the storage shrunk?)",
                fmt_list(self.sizes()),
                fmt_list(self.strides()),
                self.storage_offset(),
                nbytes
            )));
        }
        Ok(())
    }

    /// The storage offset (in elements) of the element at `index`, with
    /// negative indices counted from the end (PyTorch's indexing errors).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], ScalarType::Float)?;
    /// assert_eq!(t.element_offset(&[1, 2])?, 5);
    /// assert_eq!(t.element_offset(&[-1, 0])?, 3);
    /// assert!(t.element_offset(&[2, 0]).is_err());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn element_offset(&self, index: &[i64]) -> Result<i64> {
        if index.len() != self.dim() {
            return Err(TensorError::index(format!(
                "expected {} indices for a tensor of size {}, got {}",
                self.dim(),
                fmt_list(self.sizes()),
                index.len()
            )));
        }
        let mut off = self.storage_offset();
        for (d, ((&i, &n), &s)) in index
            .iter()
            .zip(self.sizes())
            .zip(self.strides())
            .enumerate()
        {
            if i < -n || i >= n {
                return Err(TensorError::index(format!(
                    "index {i} is out of bounds for dimension {d} with size {n}"
                )));
            }
            let i = if i < 0 { i + n } else { i };
            off += i * s;
        }
        Ok(off)
    }

    /// A shared, typed view of the elements; holds the storage's read lock.
    ///
    /// ```
    /// use c10_core::Tensor;
    /// let t = Tensor::from_slice(&[1i32, 2, 3, 4], &[2, 2])?;
    /// assert!(t.read::<f32>().is_err()); // the element type must match
    /// let g = t.read::<i32>()?;
    /// assert_eq!(g.get(&[1, 0])?, 3);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn read<T: Element>(&self) -> Result<TensorReadGuard<'_, T>> {
        self.check_dtype::<T>()?;
        let guard = self.storage().read()?;
        guard.bytes()?; // host memory, non-null unless empty
        self.check_layout_in(guard.nbytes())?;
        Ok(TensorReadGuard {
            tensor: self,
            guard,
            _t: PhantomData,
        })
    }

    /// [`Tensor::read`] that gives up instead of waiting (`Ok(None)`) when
    /// another thread holds the storage's write guard (see
    /// [`c10_storage::Storage::try_read`]).
    ///
    /// ```
    /// use c10_core::Tensor;
    /// let t = Tensor::from_slice(&[1i32, 2, 3, 4], &[2, 2])?;
    /// if let Some(g) = t.try_read::<i32>()? {
    ///     assert_eq!(g.get(&[1, 1])?, 4); // nobody else writes: always here
    /// }
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn try_read<T: Element>(&self) -> Result<Option<TensorReadGuard<'_, T>>> {
        self.check_dtype::<T>()?;
        let Some(guard) = self.storage().try_read()? else {
            return Ok(None);
        };
        guard.bytes()?; // host memory, non-null unless empty
        self.check_layout_in(guard.nbytes())?;
        Ok(Some(TensorReadGuard {
            tensor: self,
            guard,
            _t: PhantomData,
        }))
    }

    /// An exclusive, typed view for writing; holds the storage's write lock
    /// and bumps the version counter once (every write is an in-place op).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::zeros(&[3], ScalarType::Long)?;
    /// let before = t.version()?;
    /// {
    ///     let mut g = t.write::<i64>()?;
    ///     g.set(&[0], 7)?;
    ///     g.set(&[2], 9)?;
    /// }
    /// assert_eq!(t.to_vec::<i64>()?, [7, 0, 9]);
    /// assert_eq!(t.version()?, before + 1); // one bump per guard
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn write<T: Element>(&self) -> Result<TensorWriteGuard<'_, T>> {
        self.check_dtype::<T>()?;
        let mut guard = self.storage().write()?;
        guard.bytes_mut()?;
        self.check_layout_in(guard.nbytes())?;
        self.bump_version()?;
        Ok(TensorWriteGuard {
            tensor: self,
            guard,
            _t: PhantomData,
        })
    }

    /// [`write`](Self::write) for a caller that overwrites every element:
    /// when they are every byte of the storage, a lazily initialised
    /// storage is not zero-filled first, and `whole` is `true` (the caller
    /// then marks the bytes initialised after writing them).
    fn write_all<T: Element>(&self) -> Result<(TensorWriteGuard<'_, T>, bool)> {
        self.check_dtype::<T>()?;
        let storage = self.storage();
        if !self.is_dense_over(storage.nbytes()) {
            return Ok((self.write::<T>()?, false));
        }
        let guard = storage.write_uninit()?;
        // Decide again under the lock (another handle may have resized).
        let whole = self.is_dense_over(guard.nbytes());
        if !whole {
            guard.initialize();
        }
        if !guard.device().device_type().is_host_accessible() {
            return Err(StorageError::NotHostAccessible(guard.device()).into());
        }
        if guard.nbytes() > 0 && guard.as_ptr().is_null() {
            return Err(StorageError::NullData(guard.nbytes()).into());
        }
        self.check_layout_in(guard.nbytes())?;
        self.bump_version()?;
        Ok((
            TensorWriteGuard {
                tensor: self,
                guard,
                _t: PhantomData,
            },
            whole,
        ))
    }

    /// Whether this tensor's elements are exactly the bytes of a storage of
    /// `nbytes` bytes: storage offset 0, non-overlapping and dense, and
    /// `numel · itemsize == nbytes`. Such a tensor, written in full, writes
    /// every byte of its storage (which is what lets copies and fills of a
    /// lazily initialised storage skip its zero fill).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::empty(&[2, 3], ScalarType::Float)?;
    /// assert!(t.is_dense_over(t.storage().nbytes()));
    /// let tail = t.as_strided(&[3], &[1], Some(3))?; // half of the bytes
    /// assert!(!tail.is_dense_over(t.storage().nbytes()));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn is_dense_over(&self, nbytes: usize) -> bool {
        self.storage_offset() == 0
            && self.is_non_overlapping_and_dense()
            && usize::try_from(self.numel())
                .ok()
                .and_then(|n| n.checked_mul(self.element_size()))
                == Some(nbytes)
    }

    /// One element (negative indices count from the end).
    ///
    /// ```
    /// use c10_core::{Tensor, ScalarType};
    /// let t = Tensor::arange(0, 6, 1, ScalarType::Long)?.as_strided(&[2, 3], &[3, 1], None)?;
    /// assert_eq!(t.get::<i64>(&[1, -1])?, 5);
    /// assert!(t.get::<i64>(&[2, 0]).is_err());
    /// assert!(t.get::<f32>(&[0, 0]).is_err()); // wrong element type
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn get<T: Element>(&self, index: &[i64]) -> Result<T> {
        self.read::<T>()?.get(index)
    }

    /// Writes one element; visible through every view of the storage.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::zeros(&[2, 2], ScalarType::Float)?;
    /// let row = t.as_strided(&[2], &[1], Some(2))?; // the second row
    /// row.set(&[0], 5.0f32)?;
    /// assert_eq!(t.get::<f32>(&[1, 0])?, 5.0);
    /// // A refused write (index out of range, wrong type) bumps no version.
    /// let v = t.version()?;
    /// assert!(row.set(&[2], 1.0f32).is_err());
    /// assert!(row.set(&[0], 1i64).is_err());
    /// assert_eq!(t.version()?, v);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn set<T: Element>(&self, index: &[i64], value: T) -> Result<()> {
        // Check the element type and the index before taking the write
        // guard: a refused write changes nothing, the version included.
        self.check_dtype::<T>()?;
        self.element_offset(index)?;
        self.write::<T>()?.set(index, value)
    }

    /// The only element of a one-element tensor (`item()`).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::from_slice(&[42i64], &[])?;
    /// assert_eq!(t.item::<i64>()?, 42);
    /// assert!(Tensor::zeros(&[2], ScalarType::Long)?.item::<i64>().is_err());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn item<T: Element>(&self) -> Result<T> {
        if self.numel() != 1 {
            return Err(TensorError::runtime(format!(
                "a Tensor with {} elements cannot be converted to Scalar",
                self.numel()
            )));
        }
        let g = self.read::<T>()?;
        let off = self.storage_offset();
        Ok(g.read_at(off))
    }

    /// Every element in logical (row-major) order, whatever the layout.
    ///
    /// The vector is reserved fallibly first: a tensor whose logical size
    /// does not fit in memory (a stride-0 broadcast of one element to 2^60)
    /// is an out-of-memory error naming the byte count, never an abort.
    ///
    /// ```
    /// use c10_core::Tensor;
    /// let t = Tensor::from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3])?;
    /// let t = t.as_strided(&[3, 2], &[1, 3], None)?; // the transpose
    /// assert_eq!(t.to_vec::<i32>()?, [1, 4, 2, 5, 3, 6]); // logical order of the transpose
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        let guard = self.read::<T>()?;
        let mut out = try_vec_with_capacity(self.numel().max(0) as u64, "to_vec")?;
        // A contiguous tensor is one slice (a `memcpy`); the strided walk
        // costs several times more per element.
        match guard.as_slice() {
            Ok(s) => out.extend_from_slice(s),
            Err(_) => out.extend(guard.iter()),
        }
        Ok(out)
    }

    /// Every element as `f64`, whatever the dtype (for printing and tests).
    /// Reserved fallibly as in [`Tensor::to_vec`].
    ///
    /// ```
    /// use c10_core::Tensor;
    /// assert_eq!(Tensor::from_slice_1d(&[true, false])?.to_f64_vec()?, [1.0, 0.0]);
    /// let h = Tensor::from_slice_1d(&[half::f16::from_f32(0.5)])?;
    /// assert_eq!(h.to_f64_vec()?, [0.5]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        crate::dispatch_dtype!(self.dtype(), T => {
            let guard = self.read::<T>()?;
            let mut out = try_vec_with_capacity(self.numel().max(0) as u64, "to_f64_vec")?;
            out.extend(guard.iter().map(Element::to_f64));
            Ok(out)
        }, {
            Err(TensorError::runtime(format!("cannot read elements of dtype {}", self.dtype())))
        })
    }

    /// Fills every element with `value`, converted to the dtype (`fill_`).
    /// Overlapping layouts (stride 0) are fine: writes go by value.
    ///
    /// The value must fit the dtype by c10's rule ([`Scalar::check_fits`]:
    /// `value cannot be converted to type uint8_t without overflow`), and
    /// the in-place rules for tensors that require grad apply
    /// ([`Tensor::check_inplace`]); a refused fill changes nothing, the
    /// version included.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::zeros(&[2, 2], ScalarType::Int)?;
    /// t.fill_(7i64)?;
    /// assert_eq!(t.to_vec::<i32>()?, [7; 4]);
    /// let bytes = Tensor::zeros(&[1], ScalarType::Byte)?;
    /// assert!(bytes.fill_(300i64).is_err()); // does not fit in uint8
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn fill_(&self, value: impl Into<Scalar>) -> Result<()> {
        let value = value.into();
        self.check_inplace()?;
        if self.device().is_meta() {
            // No data, and PyTorch's meta kernel never converts the value.
            return self.bump_version();
        }
        // PyTorch fills a one-element 16-bit float tensor through a scalar
        // path that converts without the range check (1e5 becomes inf).
        let unchecked =
            self.numel() == 1 && matches!(self.dtype(), ScalarType::Half | ScalarType::BFloat16);
        if !unchecked {
            value.check_fits(self.dtype())?;
        }
        let device_type = self.device().device_type();
        if !device_type.is_host_accessible() {
            let bytes = value.to_bytes(self.dtype())?;
            self.bump_version()?;
            return crate::device_ops::device_ops(device_type)?.fill(self, &bytes);
        }
        crate::dispatch_dtype!(self.dtype(), T => {
            let (mut guard, whole) = self.write_all::<T>()?;
            guard.fill(value.to_element::<T>());
            if whole {
                // SAFETY: the tensor's elements are every byte of the
                // storage (`write_all`, checked under the lock), and `fill`
                // wrote each of them.
                unsafe { guard.guard.assume_init() };
            }
            Ok(())
        }, {
            Err(TensorError::runtime(format!("fill_ is not supported for dtype {}", self.dtype())))
        })
    }

    /// Fills with zeros (`zero_`); bumps the version.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::arange(1, 4, 1, ScalarType::Long)?;
    /// t.zero_()?;
    /// assert_eq!(t.to_vec::<i64>()?, vec![0, 0, 0]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn zero_(&self) -> Result<()> {
        self.fill_(Scalar::Int(0))
    }

    /// Storage offsets of every element, in logical order.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], ScalarType::Float)?;
    /// let t = t.as_strided(&[3, 2], &[1, 3], None)?; // the transpose
    /// assert_eq!(t.offsets().collect::<Vec<_>>(), [0, 3, 1, 4, 2, 5]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn offsets(&self) -> StridedOffsets<'_> {
        StridedOffsets::same_rank(self.sizes(), self.strides(), self.storage_offset())
    }
}

/// Calls `f(first, len, stride)` for every run of the innermost dim of the
/// layout (`sizes`, `strides`, `offset`), in logical order: the element
/// offsets `first + k * stride`, `k < len`, over all calls, are exactly
/// [`StridedOffsets`]' for that layout. A 0-dim layout is one run of 1; an
/// empty one none.
fn for_each_inner_run(
    sizes: &[i64],
    strides: &[i64],
    offset: i64,
    mut f: impl FnMut(i64, i64, i64),
) {
    if sizes.contains(&0) {
        return;
    }
    if sizes.is_empty() {
        f(offset, 1, 1);
        return;
    }
    let n = sizes.len();
    let (len, stride) = (sizes[n - 1], strides[n - 1]);
    let mut index: smallvec::SmallVec<[i64; 8]> = smallvec::smallvec![0; n - 1];
    let mut off = offset;
    loop {
        f(off, len, stride);
        // Advance the odometer over the outer dims, last first.
        let mut d = n - 1;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            off = off.wrapping_add(strides[d]);
            if index[d] < sizes[d] {
                break;
            }
            off = off.wrapping_sub(strides[d].wrapping_mul(sizes[d]));
            index[d] = 0;
        }
    }
}

/// Byte address of element offset `off` in a host buffer.
fn elem_ptr(base: *const u8, off: i64, itemsize: usize) -> *const u8 {
    base.wrapping_add(off as usize * itemsize)
}

/// Reads one `T` at `p`.
///
/// # Safety
///
/// `p` must be valid for reads of `size_of::<T>()` bytes of initialised
/// memory, and `T` must be the element type the bytes were written as (for
/// `bool`, any byte is accepted and mapped to `!= 0`).
unsafe fn read_elem<T: Element>(p: *const u8) -> T {
    if T::ALL_BIT_PATTERNS_VALID {
        // SAFETY: valid for reads (caller); every bit pattern is a valid T.
        unsafe { p.cast::<T>().read_unaligned() }
    } else {
        // Only `bool` has invalid bit patterns: read the byte and normalise.
        // SAFETY: valid for a one-byte read (caller).
        let b = unsafe { p.read() } != 0;
        // SAFETY: `T` is `bool` here (the only Element without
        // ALL_BIT_PATTERNS_VALID), so this is an identity copy.
        unsafe { std::mem::transmute_copy::<bool, T>(&b) }
    }
}

/// `stored` as `t` shows it, through its conjugate and negative bits
/// (PyTorch's lazy `conj()` and `_neg_view()`); both are involutions, so
/// the same call turns a value to write into the one to store.
#[inline(always)]
fn shown<T: Element>(t: &Tensor, stored: T) -> T {
    let (conj, neg) = (t.is_conj(), t.is_neg());
    if conj || neg {
        stored.through_bits(conj, neg)
    } else {
        stored
    }
}

/// Shared access to a tensor's elements; see [`Tensor::read`].
///
/// ```
/// use c10_core::Tensor;
/// let t = Tensor::from_slice_1d(&[1.5f64, 2.5])?;
/// let g = t.read::<f64>()?;
/// assert_eq!(g.iter().sum::<f64>(), 4.0);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub struct TensorReadGuard<'a, T: Element> {
    tensor: &'a Tensor,
    guard: StorageReadGuard<'a>,
    _t: PhantomData<T>,
}

impl<T: Element> TensorReadGuard<'_, T> {
    pub(crate) fn read_at(&self, off: i64) -> T {
        // SAFETY: `off` is an element offset of this tensor's layout, which
        // `Tensor::read` checked lies inside the host storage (initialised
        // bytes, held by our read guard); the dtype matches `T`.
        let v = unsafe {
            read_elem::<T>(elem_ptr(
                self.guard.as_ptr(),
                off,
                T::SCALAR_TYPE.itemsize(),
            ))
        };
        shown(self.tensor, v)
    }

    /// One element.
    ///
    /// ```
    /// use c10_core::Tensor;
    /// let t = Tensor::from_slice(&[1u8, 2, 3, 4], &[2, 2])?;
    /// let g = t.read::<u8>()?;
    /// assert_eq!(g.get(&[0, 1])?, 2);
    /// assert!(g.get(&[0]).is_err()); // one index per dimension
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn get(&self, index: &[i64]) -> Result<T> {
        let off = self.tensor.element_offset(index)?;
        Ok(self.read_at(off))
    }

    /// Elements in logical order.
    ///
    /// ```
    /// use c10_core::Tensor;
    /// let t = Tensor::from_slice(&[1i64, 2, 3, 4], &[2, 2])?;
    /// let t = t.as_strided(&[2, 2], &[1, 2], None)?; // the transpose
    /// let g = t.read::<i64>()?;
    /// assert_eq!(g.iter().collect::<Vec<_>>(), [1, 3, 2, 4]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.tensor.offsets().map(move |off| self.read_at(off))
    }

    /// The elements as a slice, if the tensor is contiguous and its data is
    /// aligned for `T` (and, for `bool`, every byte is 0 or 1).
    ///
    /// ```
    /// use c10_core::Tensor;
    /// let t = Tensor::from_slice_1d(&[1.0f32, 2.0, 3.0])?;
    /// assert_eq!(t.read::<f32>()?.as_slice()?, &[1.0, 2.0, 3.0]);
    /// let m = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let m = m.as_strided(&[2, 2], &[1, 2], None)?; // the transpose
    /// assert!(m.read::<f32>()?.as_slice().is_err()); // not contiguous
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn as_slice(&self) -> Result<&[T]> {
        slice_parts::<T>(self.tensor, self.guard.as_ptr()).map(|(p, n)| {
            // SAFETY: `slice_parts` checked contiguity, bounds (at guard
            // creation), alignment and validity; the read guard keeps the
            // bytes alive and free of writers for the borrow.
            unsafe { std::slice::from_raw_parts(p.cast::<T>(), n) }
        })
    }
}

/// Exclusive access to a tensor's elements; see [`Tensor::write`].
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// let t = Tensor::zeros(&[3], ScalarType::Float)?;
/// let mut g = t.write::<f32>()?;
/// g.set(&[1], 2.0)?;
/// g.map_inplace(|x| x + 1.0);
/// drop(g); // releases the storage's write lock
/// assert_eq!(t.to_vec::<f32>()?, [1.0, 3.0, 1.0]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub struct TensorWriteGuard<'a, T: Element> {
    tensor: &'a Tensor,
    guard: StorageWriteGuard<'a>,
    _t: PhantomData<T>,
}

impl<T: Element> TensorWriteGuard<'_, T> {
    fn ptr_at(&mut self, off: i64) -> *mut u8 {
        elem_ptr(self.guard.as_mut_ptr(), off, T::SCALAR_TYPE.itemsize()).cast_mut()
    }

    /// One element.
    ///
    /// ```
    /// use c10_core::Tensor;
    /// let t = Tensor::from_slice_1d(&[10i32, 20])?;
    /// let mut g = t.write::<i32>()?;
    /// let old = g.get(&[1])?;
    /// g.set(&[1], old * 2)?;
    /// assert_eq!(g.get(&[1])?, 40);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn get(&self, index: &[i64]) -> Result<T> {
        let off = self.tensor.element_offset(index)?;
        // SAFETY: as in `TensorReadGuard::read_at`; the write guard excludes
        // other access.
        let v = unsafe {
            read_elem::<T>(elem_ptr(
                self.guard.as_ptr(),
                off,
                T::SCALAR_TYPE.itemsize(),
            ))
        };
        Ok(shown(self.tensor, v))
    }

    /// Writes one element.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::zeros(&[2, 2], ScalarType::Long)?;
    /// let mut g = t.write::<i64>()?;
    /// g.set(&[-1, -1], 9)?; // negative indices count from the end
    /// assert!(g.set(&[2, 0], 1).is_err());
    /// drop(g);
    /// assert_eq!(t.to_vec::<i64>()?, [0, 0, 0, 9]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn set(&mut self, index: &[i64], value: T) -> Result<()> {
        let off = self.tensor.element_offset(index)?;
        let p = self.ptr_at(off);
        let value = shown(self.tensor, value); // the bits are involutions
                                               // SAFETY: `off` is inside the checked layout; the write guard gives
                                               // exclusive access to the host bytes; unaligned store.
        unsafe { p.cast::<T>().write_unaligned(value) };
        Ok(())
    }

    /// Writes `value` to every element (any layout). Stride-0 dims are
    /// skipped and the rest coalesced, so each memory location is written
    /// about once and the work follows the storage touched, not the logical
    /// size: filling a `[2^30, 2^30]` broadcast of one element is one write
    /// (PyTorch writes 2^60 times). Overlap without stride 0 (`as_strided`
    /// with strides `[1, 1]`) still writes such locations more than once.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], ScalarType::Double)?;
    /// t.write::<f64>()?.fill(0.25);
    /// assert_eq!(t.to_vec::<f64>()?, [0.25; 6]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn fill(&mut self, value: T) {
        let value = shown(self.tensor, value);
        let base = self.guard.as_mut_ptr();
        let itemsize = T::SCALAR_TYPE.itemsize();
        let t = self.tensor;
        if t.numel() == 0 {
            return;
        }
        let (sizes, strides) = distinct_locations(t.sizes(), t.strides());
        // Row by row rather than element by element: the odometer moves
        // once per run of the innermost dim (a contiguous tensor is one run).
        for_each_inner_run(
            &sizes,
            &strides,
            t.storage_offset(),
            |start, len, stride| {
                let mut off = start;
                for _ in 0..len {
                    // SAFETY: the offsets `start + k * stride`, `k < len`, over
                    // all runs, are the offsets of the reduced layout (see
                    // `for_each_inner_run`), which reaches exactly the
                    // locations of the checked layout (`distinct_locations`
                    // drops only dims that add no new location and merges
                    // only dims whose offsets it reproduces), all inside the
                    // storage; exclusive access through the write guard.
                    unsafe {
                        elem_ptr(base, off, itemsize)
                            .cast_mut()
                            .cast::<T>()
                            .write_unaligned(value)
                    };
                    off = off.wrapping_add(stride);
                }
            },
        );
    }

    /// Applies `f` to every element in logical order, writing the result
    /// back (an element reached twice through stride 0 is updated twice).
    ///
    /// ```
    /// use c10_core::Tensor;
    /// let t = Tensor::from_slice_1d(&[1i32, 2, 3])?;
    /// t.write::<i32>()?.map_inplace(|x| x * x);
    /// assert_eq!(t.to_vec::<i32>()?, [1, 4, 9]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn map_inplace(&mut self, mut f: impl FnMut(T) -> T) {
        let base = self.guard.as_mut_ptr();
        let itemsize = T::SCALAR_TYPE.itemsize();
        for off in self.tensor.offsets() {
            let p = elem_ptr(base, off, itemsize).cast_mut();
            // SAFETY: as in `fill`; the value read is a valid T (dtype checked).
            unsafe {
                let v = shown(self.tensor, read_elem::<T>(p));
                p.cast::<T>().write_unaligned(shown(self.tensor, f(v)));
            }
        }
    }

    /// Elements in logical order.
    ///
    /// ```
    /// use c10_core::Tensor;
    /// let t = Tensor::from_slice_1d(&[3u8, 1, 2])?;
    /// let g = t.write::<u8>()?;
    /// assert_eq!(g.iter().max(), Some(3));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        let base = self.guard.as_ptr();
        let itemsize = T::SCALAR_TYPE.itemsize();
        let t = self.tensor;
        // SAFETY: as in `TensorReadGuard::read_at`.
        t.offsets()
            .map(move |off| shown(t, unsafe { read_elem::<T>(elem_ptr(base, off, itemsize)) }))
    }

    /// The elements as a mutable slice, if the tensor is contiguous (hence
    /// without overlap) and aligned for `T`.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::zeros(&[4], ScalarType::Int)?;
    /// {
    ///     let mut g = t.write::<i32>()?;
    ///     let s = g.as_mut_slice()?;
    ///     s.copy_from_slice(&[4, 3, 2, 1]);
    ///     s.sort();
    /// }
    /// assert_eq!(t.to_vec::<i32>()?, [1, 2, 3, 4]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        let (p, n) = slice_parts::<T>(self.tensor, self.guard.as_ptr())?;
        // SAFETY: as in `as_slice`; contiguous layouts do not overlap, and the
        // write guard (borrowed mutably) gives exclusive access.
        Ok(unsafe { std::slice::from_raw_parts_mut(p.cast::<T>().cast_mut(), n) })
    }
}

/// Start and length of the slice of a contiguous tensor, after checking
/// contiguity, alignment and (for `bool`) that every byte is 0 or 1.
fn slice_parts<T: Element>(t: &Tensor, base: *const u8) -> Result<(*const u8, usize)> {
    if t.is_conj() || t.is_neg() {
        // The stored values are not the ones the tensor shows.
        return Err(TensorError::runtime(format!(
            "a slice needs the stored values, but this tensor has its {} bit set; use get/iter, or resolve_conj()/resolve_neg() first",
            if t.is_conj() { "conjugate" } else { "negative" }
        )));
    }
    if !t.is_contiguous() {
        return Err(TensorError::runtime(format!(
            "a slice needs a contiguous tensor, but this one has sizes {} and strides {}; call .contiguous() first or use get/iter",
            fmt_list(t.sizes()),
            fmt_list(t.strides())
        )));
    }
    let n = t.numel() as usize;
    if n == 0 {
        return Ok((
            std::ptr::NonNull::<T>::dangling()
                .as_ptr()
                .cast::<u8>()
                .cast_const(),
            0,
        ));
    }
    let p = elem_ptr(base, t.storage_offset(), T::SCALAR_TYPE.itemsize());
    if !(p as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Err(TensorError::runtime(format!(
            "the tensor's data at {p:p} is not aligned for {} (alignment {}); use get/iter or clone it",
            T::SCALAR_TYPE,
            std::mem::align_of::<T>()
        )));
    }
    if T::SCALAR_TYPE == ScalarType::Bool {
        // SAFETY: the contiguous layout of `n` one-byte elements starting at
        // `p` lies inside the checked storage.
        let bytes = unsafe { std::slice::from_raw_parts(p, n) };
        if bytes.iter().any(|&b| b > 1) {
            return Err(TensorError::runtime(
                "this bool tensor holds bytes other than 0 and 1, which are not valid Rust bools; read it with get/iter",
            ));
        }
    }
    Ok((p, n))
}
