//! Sizes and strides of a tensor with small-size optimisation (c10
//! `impl::SizesAndStrides`).
//!
//! c10 keeps up to five dimensions inline in an 88-byte object and only
//! touches the heap for tensors of six or more dimensions. This port keeps
//! those guarantees, and c10's inline layout (five sizes, then five
//! strides), without `unsafe`: an enum of an inline `[i64; 10]` with its
//! dimension count, or an exact heap block `[sizes..., strides...]`, also
//! exactly 88 bytes. Inline values are copied with fixed-size moves, so
//! building a view's geometry calls no `memcpy`.
//!
//! ```
//! use c10_core::sizes_and_strides::SizesAndStrides;
//!
//! let mut ss = SizesAndStrides::default();
//! assert_eq!((ss.sizes(), ss.strides()), (&[0][..], &[1][..])); // a 1-d empty tensor
//!
//! ss.set_sizes(&[2, 3, 4]);
//! assert_eq!(ss.strides(), &[1, 0, 0]); // surviving stride kept, new ones zero
//! ss.set_strides(&[12, 4, 1]).unwrap();
//! assert!(ss.is_inline());
//!
//! ss.resize(6); // six dims spill to the heap
//! assert!(!ss.is_inline());
//! assert_eq!(ss.sizes(), &[2, 3, 4, 0, 0, 0]);
//! assert_eq!(ss.strides(), &[12, 4, 1, 0, 0, 0]);
//!
//! ss.resize(2); // and come back inline
//! assert!(ss.is_inline());
//! assert_eq!((ss.sizes(), ss.strides()), (&[2, 3][..], &[12, 4][..]));
//! ```

use std::fmt;
use std::hash::{Hash, Hasher};

/// Largest number of dimensions stored without a heap allocation (c10
/// `C10_SIZES_AND_STRIDES_MAX_INLINE_SIZE`).
pub const MAX_INLINE_SIZE: usize = 5;

/// Errors from [`SizesAndStrides`] setters given slices of different lengths.
///
/// ```
/// use c10_core::sizes_and_strides::{SizesAndStrides, SizesAndStridesError};
/// let err = SizesAndStrides::from_sizes_strides(&[2, 3], &[1]).unwrap_err();
/// assert_eq!(err, SizesAndStridesError::LengthMismatch { sizes: 2, strides: 1 });
/// assert_eq!(err.to_string(), "mismatch in length of strides and shape: 2 sizes but 1 strides");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizesAndStridesError {
    /// `set_strides` was given a different number of strides than there are
    /// dimensions.
    #[error("expected {ndim} strides (one per dimension) but got {strides}")]
    StridesLengthMismatch {
        /// Current number of dimensions.
        ndim: usize,
        /// Number of strides supplied.
        strides: usize,
    },
    /// Sizes and strides of different lengths were supplied together.
    #[error("mismatch in length of strides and shape: {sizes} sizes but {strides} strides")]
    LengthMismatch {
        /// Number of sizes supplied.
        sizes: usize,
        /// Number of strides supplied.
        strides: usize,
    },
    /// The heap block for this many dimensions (16 bytes each) could not
    /// be allocated.
    #[error("cannot allocate sizes and strides for {ndim} dimensions: out of memory (16 bytes per dimension)")]
    TooManyDims {
        /// The number of dimensions asked for.
        ndim: usize,
    },
    /// A dimension index out of range for [`SizesAndStrides::insert_dim`] or
    /// [`SizesAndStrides::remove_dim`].
    #[error("dimension {dim} out of range for {ndim} dimensions")]
    DimOutOfRange {
        /// The index given.
        dim: usize,
        /// The current number of dimensions.
        ndim: usize,
    },
}

/// A zero-filled heap block for `ndim` dimensions (`2 * ndim` values), or
/// an error if it cannot be allocated: the number of dimensions may come
/// from a caller, so an impossible request must not abort the process.
fn heap_block(ndim: usize) -> Result<Box<[i64]>, SizesAndStridesError> {
    let too_many = SizesAndStridesError::TooManyDims { ndim };
    let len = ndim.checked_mul(2).ok_or(too_many.clone())?;
    let mut v: Vec<i64> = Vec::new();
    v.try_reserve_exact(len).map_err(|_| too_many)?;
    v.resize(len, 0);
    Ok(v.into_boxed_slice())
}

/// The number of dims of an inline value, as a full 8-byte word: its
/// unused values are the niche that tells [`Repr::Heap`] apart, so the enum
/// stays 88 bytes, and every part of it is copied as whole aligned words
/// (no partial-word moves that defeat store forwarding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
enum InlineDims {
    D0 = 0,
    D1 = 1,
    D2 = 2,
    D3 = 3,
    D4 = 4,
    D5 = 5,
}

impl InlineDims {
    /// `n` dims; `n <= MAX_INLINE_SIZE`.
    #[inline]
    #[allow(
        clippy::unreachable,
        reason = "every caller checks `n <= MAX_INLINE_SIZE` first"
    )]
    fn new(n: usize) -> InlineDims {
        match n {
            0 => InlineDims::D0,
            1 => InlineDims::D1,
            2 => InlineDims::D2,
            3 => InlineDims::D3,
            4 => InlineDims::D4,
            5 => InlineDims::D5,
            // Callers check `n <= MAX_INLINE_SIZE` first.
            _ => unreachable!("{n} dims do not fit inline"), // cannot fire: every caller checks `n <= MAX_INLINE_SIZE` first
        }
    }

    #[inline]
    fn get(self) -> usize {
        self as usize
    }
}

/// Where the values live.
#[derive(Clone)]
enum Repr {
    /// Up to [`MAX_INLINE_SIZE`] dims, c10's inline layout: sizes in
    /// `buf[..5]`, strides in `buf[5..]`. Slots at or past `ndim` are not
    /// part of the value (they may hold stale numbers; growing zeroes them).
    Inline {
        ndim: InlineDims,
        buf: [i64; 2 * MAX_INLINE_SIZE],
    },
    /// More dims: `[sizes..., strides...]`, exactly `2 * ndim` long (one
    /// exact allocation, like c10's `malloc(n * 16)`).
    Heap(Box<[i64]>),
}

/// The sizes and strides of a tensor (c10 `impl::SizesAndStrides`).
///
/// * Up to [`MAX_INLINE_SIZE`] (5) dimensions are stored inline with no heap
///   allocation; more spill to a heap block, and shrinking back to five or
///   fewer dimensions frees that block and returns to inline storage.
/// * The default value is one-dimensional with size `[0]` and stride `[1]`
///   (the metadata of a freshly constructed `TensorImpl`).
/// * Growing (via [`resize`](Self::resize) or [`set_sizes`](Self::set_sizes))
///   keeps the sizes and strides of surviving dimensions and zero-fills the
///   new ones.
/// * `size_of::<SizesAndStrides>()` is 88 bytes, like c10's, and the inline
///   layout is c10's (five sizes, then five strides), so copying an inline
///   value is a fixed 88-byte copy.
///
/// Equality compares the number of dimensions and the live sizes and strides.
/// c10's `operator==` also compares the stale inline slots beyond `size()`
/// (it `memcmp`s all ten inline words), so two c10 objects with the same
/// visible metadata can compare unequal depending on their history. Here
/// stale slots are never observable (growing zero-fills), so comparing the
/// live values is the only meaningful definition and matches c10 whenever
/// c10's answer does not depend on garbage.
///
/// C++ move construction leaves the source with `size() == 0`; Rust moves do
/// not leave a source behind, but [`take`](Self::take) reproduces that
/// behaviour explicitly.
///
/// ```
/// use c10_core::sizes_and_strides::SizesAndStrides;
/// let ss = SizesAndStrides::from_sizes_strides(&[2, 3], &[3, 1])?;
/// assert_eq!(ss.sizes(), &[2, 3]);
/// assert_eq!(ss.strides(), &[3, 1]);
/// assert!(ss.is_inline());
/// # Ok::<(), c10_core::sizes_and_strides::SizesAndStridesError>(())
/// ```
#[derive(Clone)]
pub struct SizesAndStrides {
    repr: Repr,
}

// c10 static-asserts sizeof(SizesAndStrides) == 88 on 64-bit; TensorImpl's
// layout budget relies on it.
const _: () = assert!(std::mem::size_of::<SizesAndStrides>() <= 88);

const INLINE: usize = MAX_INLINE_SIZE;

impl Default for SizesAndStrides {
    fn default() -> SizesAndStrides {
        let mut buf = [0; 2 * INLINE];
        buf[INLINE] = 1;
        SizesAndStrides {
            repr: Repr::Inline {
                ndim: InlineDims::D1,
                buf,
            },
        }
    }
}

impl SizesAndStrides {
    /// The default: one dimension, size `[0]`, stride `[1]`.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let ss = SizesAndStrides::new();
    /// assert_eq!((ss.sizes(), ss.strides()), (&[0][..], &[1][..]));
    /// assert_eq!(ss, SizesAndStrides::default());
    /// ```
    pub fn new() -> SizesAndStrides {
        SizesAndStrides::default()
    }

    /// A zero-dimensional value (sizes `[]`, strides `[]`), the state c10
    /// leaves a moved-from object in.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let ss = SizesAndStrides::new_zero_dim();
    /// assert!(ss.is_empty());
    /// assert_eq!(ss.sizes(), &[] as &[i64]);
    /// ```
    pub fn new_zero_dim() -> SizesAndStrides {
        SizesAndStrides {
            repr: Repr::Inline {
                ndim: InlineDims::D0,
                buf: [0; 2 * INLINE],
            },
        }
    }

    /// Builds from explicit sizes and strides.
    ///
    /// # Errors
    ///
    /// [`SizesAndStridesError::LengthMismatch`] if the slices differ in
    /// length.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let ss = SizesAndStrides::from_sizes_strides(&[2, 3], &[3, 1]).unwrap();
    /// assert_eq!(ss.len(), 2);
    /// assert!(SizesAndStrides::from_sizes_strides(&[2, 3], &[1]).is_err());
    /// ```
    pub fn from_sizes_strides(
        sizes: &[i64],
        strides: &[i64],
    ) -> Result<SizesAndStrides, SizesAndStridesError> {
        check_same_length(sizes, strides)?;
        SizesAndStrides::from_fn(sizes.len(), |s, st| {
            s.copy_from_slice(sizes);
            st.copy_from_slice(strides);
        })
    }

    /// Builds `ndim` dimensions in place: `fill` gets the sizes and the
    /// strides (both zero-filled) and writes them. Up to
    /// [`MAX_INLINE_SIZE`] dimensions this touches no heap and copies no
    /// intermediate buffer, which is what the view ops use to build a
    /// view's geometry directly in its final container; more dimensions
    /// make one exact heap allocation, and fail with
    /// [`SizesAndStridesError::TooManyDims`] if it cannot be made.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::{SizesAndStrides, SizesAndStridesError};
    /// let ss = SizesAndStrides::from_fn(3, |sizes, strides| {
    ///     sizes.copy_from_slice(&[2, 3, 4]);
    ///     strides.copy_from_slice(&[12, 4, 1]);
    /// })?;
    /// assert_eq!((ss.sizes(), ss.strides()), (&[2, 3, 4][..], &[12, 4, 1][..]));
    /// assert!(ss.is_inline());
    /// assert!(!SizesAndStrides::from_fn(6, |_, _| {})?.is_inline());
    /// assert!(matches!(
    ///     SizesAndStrides::from_fn(usize::MAX, |_, _| {}),
    ///     Err(SizesAndStridesError::TooManyDims { .. })
    /// ));
    /// # Ok::<(), SizesAndStridesError>(())
    /// ```
    #[inline]
    pub fn from_fn(
        ndim: usize,
        fill: impl FnOnce(&mut [i64], &mut [i64]),
    ) -> Result<SizesAndStrides, SizesAndStridesError> {
        if ndim <= INLINE {
            let mut buf = [0i64; 2 * INLINE];
            let (sizes, strides) = buf.split_at_mut(INLINE);
            fill(&mut sizes[..ndim], &mut strides[..ndim]);
            Ok(SizesAndStrides {
                repr: Repr::Inline {
                    ndim: InlineDims::new(ndim),
                    buf,
                },
            })
        } else {
            let mut data = heap_block(ndim)?;
            let (sizes, strides) = data.split_at_mut(ndim);
            fill(sizes, strides);
            Ok(SizesAndStrides {
                repr: Repr::Heap(data),
            })
        }
    }

    /// Makes this `ndim` dimensions of size 0 and stride 0, in place: the
    /// inline buffer (up to [`MAX_INLINE_SIZE`] dims) or a heap block of
    /// the right size is reused; otherwise this is one exact allocation
    /// (and the old block, if any, is freed). Fails (leaving `self`
    /// unchanged) as [`from_fn`](Self::from_fn) does.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let mut ss = SizesAndStrides::from_sizes_strides(&[2, 3], &[3, 1]).unwrap();
    /// ss.reset_to_zeros(3).unwrap();
    /// assert_eq!((ss.sizes(), ss.strides()), (&[0, 0, 0][..], &[0, 0, 0][..]));
    /// assert!(ss.reset_to_zeros(usize::MAX).is_err());
    /// ```
    #[inline(always)]
    pub fn reset_to_zeros(&mut self, ndim: usize) -> Result<(), SizesAndStridesError> {
        match &mut self.repr {
            Repr::Inline { ndim: n, buf } if ndim <= INLINE => {
                *n = InlineDims::new(ndim);
                *buf = [0; 2 * INLINE];
            }
            Repr::Heap(data) if data.len() / 2 == ndim => data.fill(0),
            _ => *self = SizesAndStrides::from_fn(ndim, |_, _| {})?,
        }
        Ok(())
    }

    /// Number of dimensions (c10 `size()`).
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let ss = SizesAndStrides::from_sizes_strides(&[4, 5, 6], &[30, 6, 1])?;
    /// assert_eq!(ss.size(), 3);
    /// # Ok::<(), c10_core::sizes_and_strides::SizesAndStridesError>(())
    /// ```
    #[inline]
    pub fn size(&self) -> usize {
        match &self.repr {
            Repr::Inline { ndim, .. } => ndim.get(),
            Repr::Heap(data) => data.len() / 2,
        }
    }

    /// Number of dimensions; same as [`size`](Self::size).
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// assert_eq!(SizesAndStrides::new().len(), 1);
    /// assert_eq!(SizesAndStrides::new_zero_dim().len(), 0);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.size()
    }

    /// Whether there are zero dimensions (a scalar tensor's metadata).
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// assert!(SizesAndStrides::new_zero_dim().is_empty());
    /// assert!(!SizesAndStrides::new().is_empty()); // one dim of size 0 is not "empty"
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.size() == 0
    }

    /// Whether the values are stored inline (c10 `isInline()`, i.e.
    /// `size() <= 5`); no heap block is held in that case.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let mut ss = SizesAndStrides::new();
    /// ss.resize(5)?;
    /// assert!(ss.is_inline());
    /// ss.resize(6)?;
    /// assert!(!ss.is_inline());
    /// # Ok::<(), c10_core::sizes_and_strides::SizesAndStridesError>(())
    /// ```
    #[inline]
    pub fn is_inline(&self) -> bool {
        matches!(self.repr, Repr::Inline { .. })
    }

    /// The sizes, one per dimension.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let ss = SizesAndStrides::from_sizes_strides(&[2, 7], &[7, 1])?;
    /// assert_eq!(ss.sizes(), &[2, 7]);
    /// assert_eq!(ss.sizes().iter().product::<i64>(), 14);
    /// # Ok::<(), c10_core::sizes_and_strides::SizesAndStridesError>(())
    /// ```
    #[inline]
    pub fn sizes(&self) -> &[i64] {
        match &self.repr {
            Repr::Inline { ndim, buf } => &buf[..ndim.get()],
            Repr::Heap(data) => &data[..data.len() / 2],
        }
    }

    /// The strides, one per dimension.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let ss = SizesAndStrides::from_sizes_strides(&[3, 2], &[1, 3])?; // column-major
    /// assert_eq!(ss.strides(), &[1, 3]);
    /// # Ok::<(), c10_core::sizes_and_strides::SizesAndStridesError>(())
    /// ```
    #[inline]
    pub fn strides(&self) -> &[i64] {
        match &self.repr {
            Repr::Inline { ndim, buf } => &buf[INLINE..INLINE + ndim.get()],
            Repr::Heap(data) => &data[data.len() / 2..],
        }
    }

    /// Mutable access to the sizes.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let mut ss = SizesAndStrides::new();
    /// ss.sizes_mut()[0] = 8;
    /// assert_eq!(ss.sizes(), &[8]);
    /// ```
    #[inline]
    pub fn sizes_mut(&mut self) -> &mut [i64] {
        self.sizes_and_strides_mut().0
    }

    /// Mutable access to the strides.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let mut ss = SizesAndStrides::new();
    /// ss.strides_mut()[0] = 0; // a broadcast (expanded) dimension
    /// assert_eq!(ss.strides(), &[0]);
    /// ```
    #[inline]
    pub fn strides_mut(&mut self) -> &mut [i64] {
        self.sizes_and_strides_mut().1
    }

    /// Mutable access to sizes and strides at the same time.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let mut ss = SizesAndStrides::from_sizes_strides(&[2, 3], &[3, 1])?;
    /// let (sizes, strides) = ss.sizes_and_strides_mut();
    /// sizes.swap(0, 1);
    /// strides.swap(0, 1); // a transpose
    /// assert_eq!((ss.sizes(), ss.strides()), (&[3, 2][..], &[1, 3][..]));
    /// # Ok::<(), c10_core::sizes_and_strides::SizesAndStridesError>(())
    /// ```
    #[inline]
    pub fn sizes_and_strides_mut(&mut self) -> (&mut [i64], &mut [i64]) {
        match &mut self.repr {
            Repr::Inline { ndim, buf } => {
                let n = ndim.get();
                let (sizes, strides) = buf.split_at_mut(INLINE);
                (&mut sizes[..n], &mut strides[..n])
            }
            Repr::Heap(data) => {
                let n = data.len() / 2;
                data.split_at_mut(n)
            }
        }
    }

    /// Size of dimension `i`, or `None` if out of range.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let ss = SizesAndStrides::from_sizes_strides(&[2, 3], &[3, 1])?;
    /// assert_eq!(ss.get_size(1), Some(3));
    /// assert_eq!(ss.get_size(2), None);
    /// # Ok::<(), c10_core::sizes_and_strides::SizesAndStridesError>(())
    /// ```
    pub fn get_size(&self, i: usize) -> Option<i64> {
        self.sizes().get(i).copied()
    }

    /// Stride of dimension `i`, or `None` if out of range.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let ss = SizesAndStrides::from_sizes_strides(&[2, 3], &[3, 1])?;
    /// assert_eq!(ss.get_stride(0), Some(3));
    /// assert_eq!(ss.get_stride(5), None);
    /// # Ok::<(), c10_core::sizes_and_strides::SizesAndStridesError>(())
    /// ```
    pub fn get_stride(&self, i: usize) -> Option<i64> {
        self.strides().get(i).copied()
    }

    /// Mutable size of dimension `i`, or `None` if out of range.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let mut ss = SizesAndStrides::new();
    /// if let Some(s) = ss.get_size_mut(0) {
    ///     *s = 4;
    /// }
    /// assert_eq!(ss.sizes(), &[4]);
    /// assert!(ss.get_size_mut(1).is_none());
    /// ```
    pub fn get_size_mut(&mut self, i: usize) -> Option<&mut i64> {
        self.sizes_mut().get_mut(i)
    }

    /// Mutable stride of dimension `i`, or `None` if out of range.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let mut ss = SizesAndStrides::from_sizes_strides(&[2, 3], &[3, 1])?;
    /// *ss.get_stride_mut(0).unwrap() = 4; // pad each row to 4 elements
    /// assert_eq!(ss.strides(), &[4, 1]);
    /// # Ok::<(), c10_core::sizes_and_strides::SizesAndStridesError>(())
    /// ```
    pub fn get_stride_mut(&mut self, i: usize) -> Option<&mut i64> {
        self.strides_mut().get_mut(i)
    }

    /// Changes the number of dimensions to `new_size` (c10 `resize`).
    ///
    /// Sizes and strides of the first `min(old, new)` dimensions are kept;
    /// new dimensions get size 0 and stride 0. Crossing the five-dimension
    /// boundary moves the values between inline and heap storage; shrinking
    /// to five or fewer frees the heap block. Fails (leaving `self`
    /// unchanged) if the heap block cannot be allocated.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let mut ss = SizesAndStrides::from_sizes_strides(&[2, 3], &[3, 1]).unwrap();
    /// ss.resize(7).unwrap();
    /// assert_eq!(ss.sizes(), &[2, 3, 0, 0, 0, 0, 0]);
    /// ss.resize(1).unwrap();
    /// assert_eq!((ss.sizes(), ss.strides(), ss.is_inline()), (&[2][..], &[3][..], true));
    /// assert!(ss.resize(usize::MAX).is_err());
    /// ```
    pub fn resize(&mut self, new_size: usize) -> Result<(), SizesAndStridesError> {
        let old_size = self.size();
        if new_size == old_size {
            return Ok(());
        }
        if new_size <= INLINE {
            if let Repr::Inline { ndim, buf } = &mut self.repr {
                for i in old_size..new_size {
                    buf[i] = 0;
                    buf[INLINE + i] = 0;
                }
                *ndim = InlineDims::new(new_size);
                return Ok(());
            }
        }
        // Into, out of, or within the heap: one exact block (or none), like
        // c10's malloc / realloc / free.
        let keep = old_size.min(new_size);
        let resized = SizesAndStrides::from_fn(new_size, |sizes, strides| {
            sizes[..keep].copy_from_slice(&self.sizes()[..keep]);
            strides[..keep].copy_from_slice(&self.strides()[..keep]);
        })?;
        *self = resized;
        Ok(())
    }

    /// Removes dimension `d` (its size and stride), in place; the view ops'
    /// `select`. Leaving the heap (six dims to five) frees the heap block.
    /// Fails with [`SizesAndStridesError::DimOutOfRange`] (and no change) if
    /// `d >= self.size()`.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let mut ss = SizesAndStrides::from_sizes_strides(&[2, 3, 4], &[12, 4, 1]).unwrap();
    /// ss.remove_dim(1).unwrap();
    /// assert_eq!((ss.sizes(), ss.strides()), (&[2, 4][..], &[12, 1][..]));
    /// assert!(ss.remove_dim(2).is_err());
    /// ```
    #[inline]
    pub fn remove_dim(&mut self, d: usize) -> Result<(), SizesAndStridesError> {
        let n = self.size();
        if d >= n {
            return Err(SizesAndStridesError::DimOutOfRange { dim: d, ndim: n });
        }
        if let Repr::Inline { ndim, buf } = &mut self.repr {
            // Fixed trip counts: unrolled, no call to `memmove`.
            for i in 0..INLINE - 1 {
                if i >= d {
                    buf[i] = buf[i + 1];
                    buf[INLINE + i] = buf[INLINE + i + 1];
                }
            }
            *ndim = InlineDims::new(n - 1);
            return Ok(());
        }
        let (sizes, strides) = (self.sizes(), self.strides());
        *self = SizesAndStrides::from_fn(n - 1, |s, st| {
            s[..d].copy_from_slice(&sizes[..d]);
            s[d..].copy_from_slice(&sizes[d + 1..]);
            st[..d].copy_from_slice(&strides[..d]);
            st[d..].copy_from_slice(&strides[d + 1..]);
        })?;
        Ok(())
    }

    /// Inserts a dimension of `size` and `stride` before dimension `d`
    /// (`d == self.size()` appends), in place; the view ops' `unsqueeze`.
    /// Growing from five dims to six moves the values to the heap. Fails
    /// with [`SizesAndStridesError::DimOutOfRange`] (and no change) if
    /// `d > self.size()`.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let mut ss = SizesAndStrides::from_sizes_strides(&[2, 4], &[4, 1]).unwrap();
    /// ss.insert_dim(1, 1, 4).unwrap();
    /// assert_eq!((ss.sizes(), ss.strides()), (&[2, 1, 4][..], &[4, 4, 1][..]));
    /// assert!(ss.insert_dim(5, 1, 1).is_err());
    /// ```
    // Always inlined: `unsqueeze` of a tensor with fewer than five dims
    // (the inline case) then costs no call; `#[inline]` alone left it out
    // of line.
    #[inline(always)]
    pub fn insert_dim(
        &mut self,
        d: usize,
        size: i64,
        stride: i64,
    ) -> Result<(), SizesAndStridesError> {
        let n = self.size();
        if d > n {
            return Err(SizesAndStridesError::DimOutOfRange { dim: d, ndim: n });
        }
        if n < INLINE {
            if let Repr::Inline { ndim, buf } = &mut self.repr {
                for i in (1..INLINE).rev() {
                    if i > d {
                        buf[i] = buf[i - 1];
                        buf[INLINE + i] = buf[INLINE + i - 1];
                    }
                }
                buf[d] = size;
                buf[INLINE + d] = stride;
                *ndim = InlineDims::new(n + 1);
                return Ok(());
            }
        }
        let (sizes, strides) = (self.sizes(), self.strides());
        *self = SizesAndStrides::from_fn(n + 1, |s, st| {
            s[..d].copy_from_slice(&sizes[..d]);
            s[d] = size;
            s[d + 1..].copy_from_slice(&sizes[d..]);
            st[..d].copy_from_slice(&strides[..d]);
            st[d] = stride;
            st[d + 1..].copy_from_slice(&strides[d..]);
        })?;
        Ok(())
    }

    /// Sets the sizes (c10 `set_sizes`): resizes to `sizes.len()` dimensions,
    /// then copies the sizes. Strides of surviving dimensions are kept and
    /// the strides of new dimensions are zero. Fails as
    /// [`resize`](Self::resize) does.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let mut ss = SizesAndStrides::from_sizes_strides(&[5], &[2])?;
    /// ss.set_sizes(&[5, 4])?;
    /// assert_eq!(ss.sizes(), &[5, 4]);
    /// assert_eq!(ss.strides(), &[2, 0]); // the new dimension's stride is zero
    /// # Ok::<(), c10_core::sizes_and_strides::SizesAndStridesError>(())
    /// ```
    pub fn set_sizes(&mut self, sizes: &[i64]) -> Result<(), SizesAndStridesError> {
        self.resize(sizes.len())?;
        self.sizes_mut().copy_from_slice(sizes);
        Ok(())
    }

    /// Sets the strides (c10 `set_strides`).
    ///
    /// # Errors
    ///
    /// [`SizesAndStridesError::StridesLengthMismatch`] (and no change) if
    /// `strides.len()` differs from the number of dimensions; c10 treats that
    /// as an internal assertion failure.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::{SizesAndStrides, SizesAndStridesError};
    /// let mut ss = SizesAndStrides::from_sizes_strides(&[2, 3], &[3, 1])?;
    /// ss.set_strides(&[1, 2])?;
    /// assert_eq!(ss.strides(), &[1, 2]);
    /// let err = ss.set_strides(&[1]).unwrap_err();
    /// assert_eq!(err, SizesAndStridesError::StridesLengthMismatch { ndim: 2, strides: 1 });
    /// # Ok::<(), SizesAndStridesError>(())
    /// ```
    pub fn set_strides(&mut self, strides: &[i64]) -> Result<(), SizesAndStridesError> {
        if strides.len() != self.size() {
            return Err(SizesAndStridesError::StridesLengthMismatch {
                ndim: self.size(),
                strides: strides.len(),
            });
        }
        self.strides_mut().copy_from_slice(strides);
        Ok(())
    }

    /// Sets both sizes and strides, resizing as needed.
    ///
    /// # Errors
    ///
    /// [`SizesAndStridesError::LengthMismatch`] (and no change) if the slices
    /// differ in length.
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let mut ss = SizesAndStrides::new();
    /// ss.set_sizes_and_strides(&[2, 2, 2], &[4, 2, 1])?;
    /// assert_eq!((ss.sizes(), ss.strides()), (&[2, 2, 2][..], &[4, 2, 1][..]));
    /// assert!(ss.set_sizes_and_strides(&[2], &[]).is_err());
    /// # Ok::<(), c10_core::sizes_and_strides::SizesAndStridesError>(())
    /// ```
    pub fn set_sizes_and_strides(
        &mut self,
        sizes: &[i64],
        strides: &[i64],
    ) -> Result<(), SizesAndStridesError> {
        check_same_length(sizes, strides)?;
        self.resize(sizes.len())?;
        let (s, st) = self.sizes_and_strides_mut();
        s.copy_from_slice(sizes);
        st.copy_from_slice(strides);
        Ok(())
    }

    /// Takes the value out, leaving `self` zero-dimensional, which is what
    /// c10's move constructor does to its source (`rhs.size_ = 0`).
    ///
    /// ```
    /// use c10_core::sizes_and_strides::SizesAndStrides;
    /// let mut src = SizesAndStrides::from_sizes_strides(&[3], &[1])?;
    /// let moved = src.take();
    /// assert_eq!(moved.sizes(), &[3]);
    /// assert!(src.is_empty()); // like a moved-from c10 object
    /// # Ok::<(), c10_core::sizes_and_strides::SizesAndStridesError>(())
    /// ```
    #[must_use]
    pub fn take(&mut self) -> SizesAndStrides {
        std::mem::replace(self, SizesAndStrides::new_zero_dim())
    }
}

fn check_same_length(sizes: &[i64], strides: &[i64]) -> Result<(), SizesAndStridesError> {
    if sizes.len() == strides.len() {
        Ok(())
    } else {
        Err(SizesAndStridesError::LengthMismatch {
            sizes: sizes.len(),
            strides: strides.len(),
        })
    }
}

impl PartialEq for SizesAndStrides {
    /// Same number of dimensions and equal live sizes and strides (see the
    /// type-level docs for how this differs from c10's stale-slot memcmp).
    fn eq(&self, other: &SizesAndStrides) -> bool {
        self.sizes() == other.sizes() && self.strides() == other.strides()
    }
}

impl Eq for SizesAndStrides {}

impl Hash for SizesAndStrides {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.size().hash(state);
        self.sizes().hash(state);
        self.strides().hash(state);
    }
}

impl fmt::Debug for SizesAndStrides {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SizesAndStrides")
            .field("sizes", &self.sizes())
            .field("strides", &self.strides())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ss(sizes: &[i64], strides: &[i64]) -> SizesAndStrides {
        SizesAndStrides::from_sizes_strides(sizes, strides).unwrap()
    }

    #[test]
    fn size_matches_c10() {
        assert!(std::mem::size_of::<SizesAndStrides>() <= 88);
        assert_eq!(std::mem::size_of::<SizesAndStrides>(), 88);
    }

    #[test]
    fn default_is_one_dim_empty() {
        let d = SizesAndStrides::default();
        assert_eq!(d.size(), 1);
        assert_eq!(d.sizes(), &[0]);
        assert_eq!(d.strides(), &[1]);
        assert!(d.is_inline());
        assert_eq!(d, SizesAndStrides::new());
        assert_eq!(
            format!("{d:?}"),
            "SizesAndStrides { sizes: [0], strides: [1] }"
        );
        let z = SizesAndStrides::new_zero_dim();
        assert!(z.is_empty());
        assert_eq!(z.len(), 0);
        assert_eq!(z.sizes(), &[] as &[i64]);
    }

    #[test]
    fn grow_zero_fills_and_set_sizes_keeps_strides() {
        let mut s = ss(&[2, 3], &[3, 1]);
        s.resize(4).unwrap();
        assert_eq!(s.sizes(), &[2, 3, 0, 0]);
        assert_eq!(s.strides(), &[3, 1, 0, 0]);
        s.set_sizes(&[7, 8, 9]).unwrap();
        assert_eq!(s.sizes(), &[7, 8, 9]);
        assert_eq!(s.strides(), &[3, 1, 0]);
        // Shrink then grow: the dropped slots come back as zero, not stale.
        s.resize(1).unwrap();
        s.resize(3).unwrap();
        assert_eq!(s.sizes(), &[7, 0, 0]);
        assert_eq!(s.strides(), &[3, 0, 0]);
        s.resize(0).unwrap();
        assert!(s.is_empty());
        s.set_sizes(&[5]).unwrap();
        assert_eq!(s.strides(), &[0]);
    }

    #[test]
    fn inline_heap_5_6_5() {
        let mut s = ss(&[1, 2, 3, 4, 5], &[120, 60, 20, 5, 1]);
        assert!(s.is_inline());
        s.resize(6).unwrap();
        assert!(!s.is_inline());
        assert_eq!(s.sizes(), &[1, 2, 3, 4, 5, 0]);
        assert_eq!(s.strides(), &[120, 60, 20, 5, 1, 0]);
        s.sizes_mut()[5] = 6;
        s.strides_mut()[5] = 7;
        s.resize(5).unwrap();
        assert!(s.is_inline());
        assert_eq!(s.sizes(), &[1, 2, 3, 4, 5]);
        assert_eq!(s.strides(), &[120, 60, 20, 5, 1]);
    }

    #[test]
    fn inline_heap_6_8_3() {
        let mut s = ss(&[1, 2, 3, 4, 5, 6], &[11, 12, 13, 14, 15, 16]);
        assert!(!s.is_inline());
        s.resize(8).unwrap();
        assert!(!s.is_inline());
        assert_eq!(s.sizes(), &[1, 2, 3, 4, 5, 6, 0, 0]);
        assert_eq!(s.strides(), &[11, 12, 13, 14, 15, 16, 0, 0]);
        s.resize(7).unwrap();
        assert!(!s.is_inline());
        assert_eq!(s.strides(), &[11, 12, 13, 14, 15, 16, 0]);
        s.resize(3).unwrap();
        assert!(s.is_inline());
        assert_eq!(s.sizes(), &[1, 2, 3]);
        assert_eq!(s.strides(), &[11, 12, 13]);
        s.set_sizes(&[9; 10]).unwrap();
        assert!(!s.is_inline());
        assert_eq!(s.strides(), &[11, 12, 13, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn setters_and_errors() {
        let mut s = SizesAndStrides::default();
        assert_eq!(
            s.set_strides(&[1, 2]),
            Err(SizesAndStridesError::StridesLengthMismatch {
                ndim: 1,
                strides: 2
            })
        );
        assert_eq!(s, SizesAndStrides::default());
        assert_eq!(
            s.set_sizes_and_strides(&[1, 2], &[1]),
            Err(SizesAndStridesError::LengthMismatch {
                sizes: 2,
                strides: 1
            })
        );
        assert_eq!(s, SizesAndStrides::default());
        s.set_sizes_and_strides(&[2, 3, 4, 5, 6, 7], &[1, 2, 3, 4, 5, 6])
            .unwrap();
        assert_eq!(s.sizes(), &[2, 3, 4, 5, 6, 7]);
        assert_eq!(s.strides(), &[1, 2, 3, 4, 5, 6]);
        assert_eq!(s.get_size(1), Some(3));
        assert_eq!(s.get_stride(5), Some(6));
        assert_eq!(s.get_size(6), None);
        assert_eq!(s.get_stride(0), Some(1));
        *s.get_size_mut(0).unwrap() = 10;
        *s.get_stride_mut(0).unwrap() = 20;
        assert_eq!((s.get_size(0), s.get_stride(0)), (Some(10), Some(20)));
        assert!(s.get_stride_mut(6).is_none());
        let (sizes, strides) = s.sizes_and_strides_mut();
        sizes[1] = strides[1];
        assert_eq!(s.get_size(1), Some(2));
        assert_eq!(
            SizesAndStridesError::LengthMismatch {
                sizes: 2,
                strides: 1
            }
            .to_string(),
            "mismatch in length of strides and shape: 2 sizes but 1 strides"
        );
    }

    #[test]
    fn take_leaves_zero_dims() {
        let mut s = ss(&[1, 2, 3, 4, 5, 6, 7], &[1; 7]);
        let t = s.take();
        assert_eq!(s.size(), 0);
        assert!(s.is_inline());
        assert_eq!(t.size(), 7);
    }

    #[test]
    fn equality_and_clone() {
        let a = ss(&[2, 3, 4, 5, 6, 7], &[1, 1, 1, 1, 1, 1]);
        let b = a.clone();
        assert_eq!(a, b);
        assert!(!b.is_inline());
        let mut c = a.clone();
        c.resize(2).unwrap();
        c.resize(6).unwrap();
        assert_ne!(a, c);
        assert_ne!(ss(&[1], &[1]), ss(&[1, 1], &[1, 1]));
        // Different split of the same numbers is not equal.
        assert_ne!(ss(&[1, 2], &[3, 4]), ss(&[1], &[2]));
    }

    /// Naive model: two Vecs with c10's documented semantics.
    #[derive(Debug, Clone)]
    enum Op {
        Resize(usize),
        SetSizes(Vec<i64>),
        SetStrides(Vec<i64>),
        SetBoth(Vec<i64>, Vec<i64>),
        Poke(usize, i64, i64),
    }

    fn op_strategy() -> impl Strategy<Value = Op> {
        let vals = || proptest::collection::vec(-100i64..100, 0..10);
        prop_oneof![
            (0usize..10).prop_map(Op::Resize),
            vals().prop_map(Op::SetSizes),
            vals().prop_map(Op::SetStrides),
            (vals(), vals()).prop_map(|(a, b)| Op::SetBoth(a, b)),
            (0usize..10, any::<i64>(), any::<i64>()).prop_map(|(i, a, b)| Op::Poke(i, a, b)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: if cfg!(miri) { 4 } else { 256 },
            failure_persistence: None,
            ..ProptestConfig::default()
        })]
        #[test]
        fn matches_naive_model(ops in proptest::collection::vec(op_strategy(), 0..40)) {
            let mut real = SizesAndStrides::default();
            let (mut sizes, mut strides) = (vec![0i64], vec![1i64]);
            for op in ops {
                match op {
                    Op::Resize(n) => {
                        real.resize(n).unwrap();
                        sizes.resize(n, 0);
                        strides.resize(n, 0);
                    }
                    Op::SetSizes(v) => {
                        real.set_sizes(&v).unwrap();
                        strides.resize(v.len(), 0);
                        sizes = v;
                    }
                    Op::SetStrides(v) => {
                        let ok = real.set_strides(&v).is_ok();
                        prop_assert_eq!(ok, v.len() == sizes.len());
                        if ok {
                            strides = v;
                        }
                    }
                    Op::SetBoth(a, b) => {
                        let ok = real.set_sizes_and_strides(&a, &b).is_ok();
                        prop_assert_eq!(ok, a.len() == b.len());
                        if ok {
                            sizes = a;
                            strides = b;
                        }
                    }
                    Op::Poke(i, a, b) => {
                        if let (Some(s), Some(_)) = (real.get_size_mut(i), sizes.get(i)) {
                            *s = a;
                            sizes[i] = a;
                        }
                        if let (Some(s), Some(_)) = (real.get_stride_mut(i), strides.get(i)) {
                            *s = b;
                            strides[i] = b;
                        }
                    }
                }
                prop_assert_eq!(real.sizes(), &sizes[..]);
                prop_assert_eq!(real.strides(), &strides[..]);
                prop_assert_eq!(real.size(), sizes.len());
                prop_assert_eq!(real.is_inline(), sizes.len() <= MAX_INLINE_SIZE);
                let rebuilt = SizesAndStrides::from_sizes_strides(&sizes, &strides).unwrap();
                prop_assert_eq!(&real, &rebuilt);
                prop_assert_eq!(real.clone(), rebuilt);
            }
        }
    }
}
