//! Sizes and strides of a tensor with small-size optimisation (c10
//! `impl::SizesAndStrides`).
//!
//! c10 keeps up to five dimensions inline in an 88-byte object and only
//! touches the heap for tensors of six or more dimensions. This port keeps
//! those guarantees without `unsafe`: the values live in a
//! `SmallVec<[i64; 10]>` laid out as `[sizes..., strides...]`, which (with
//! smallvec's `union` feature) is also exactly 88 bytes.
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

use smallvec::SmallVec;

/// Largest number of dimensions stored without a heap allocation (c10
/// `C10_SIZES_AND_STRIDES_MAX_INLINE_SIZE`).
pub const MAX_INLINE_SIZE: usize = 5;

/// Errors from [`SizesAndStrides`] setters given slices of different lengths.
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
}

/// Storage of `[sizes..., strides...]`; inline capacity covers
/// `MAX_INLINE_SIZE` dimensions.
type Buffer = SmallVec<[i64; 2 * MAX_INLINE_SIZE]>;

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
/// * `size_of::<SizesAndStrides>()` is at most 88 bytes, like c10's.
///
/// Equality compares the number of dimensions and the live sizes and strides.
/// c10's `operator==` also compares the stale inline slots beyond `size()`
/// (it `memcmp`s all ten inline words), so two c10 objects with the same
/// visible metadata can compare unequal depending on their history. This port
/// never keeps stale values (shrinking truncates, growing zero-fills), so
/// comparing the live values is the only meaningful definition and matches
/// c10 whenever c10's answer does not depend on garbage.
///
/// C++ move construction leaves the source with `size() == 0`; Rust moves do
/// not leave a source behind, but [`take`](Self::take) reproduces that
/// behaviour explicitly.
#[derive(Clone)]
pub struct SizesAndStrides {
    /// `[size_0 .. size_{n-1}, stride_0 .. stride_{n-1}]`; the length is
    /// always even and the buffer is spilled exactly when `n > 5`.
    data: Buffer,
}

// c10 static-asserts sizeof(SizesAndStrides) == 88 on 64-bit; TensorImpl's
// layout budget relies on it.
const _: () = assert!(std::mem::size_of::<SizesAndStrides>() <= 88);

impl Default for SizesAndStrides {
    fn default() -> SizesAndStrides {
        let mut data = Buffer::new();
        data.extend_from_slice(&[0, 1]);
        SizesAndStrides { data }
    }
}

impl SizesAndStrides {
    /// The default: one dimension, size `[0]`, stride `[1]`.
    pub fn new() -> SizesAndStrides {
        SizesAndStrides::default()
    }

    /// A zero-dimensional value (sizes `[]`, strides `[]`), the state c10
    /// leaves a moved-from object in.
    pub fn new_zero_dim() -> SizesAndStrides {
        SizesAndStrides {
            data: Buffer::new(),
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
        let mut data = Buffer::with_capacity(sizes.len() * 2);
        data.extend_from_slice(sizes);
        data.extend_from_slice(strides);
        Ok(SizesAndStrides { data })
    }

    /// Number of dimensions (c10 `size()`).
    pub fn size(&self) -> usize {
        self.data.len() / 2
    }

    /// Number of dimensions; same as [`size`](Self::size).
    pub fn len(&self) -> usize {
        self.size()
    }

    /// Whether there are zero dimensions (a scalar tensor's metadata).
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Whether the values are stored inline (c10 `isInline()`, i.e.
    /// `size() <= 5`); no heap block is held in that case.
    pub fn is_inline(&self) -> bool {
        !self.data.spilled()
    }

    /// The sizes, one per dimension.
    pub fn sizes(&self) -> &[i64] {
        let n = self.size();
        &self.data[..n]
    }

    /// The strides, one per dimension.
    pub fn strides(&self) -> &[i64] {
        let n = self.size();
        &self.data[n..]
    }

    /// Mutable access to the sizes.
    pub fn sizes_mut(&mut self) -> &mut [i64] {
        let n = self.size();
        &mut self.data[..n]
    }

    /// Mutable access to the strides.
    pub fn strides_mut(&mut self) -> &mut [i64] {
        let n = self.size();
        &mut self.data[n..]
    }

    /// Mutable access to sizes and strides at the same time.
    pub fn sizes_and_strides_mut(&mut self) -> (&mut [i64], &mut [i64]) {
        let n = self.size();
        self.data.split_at_mut(n)
    }

    /// Size of dimension `i` (c10 `size_at`).
    ///
    /// # Panics
    ///
    /// If `i >= self.size()` (c10 only debug-asserts). Use
    /// [`get_size`](Self::get_size) for a checked lookup.
    pub fn size_at(&self, i: usize) -> i64 {
        self.sizes()[i]
    }

    /// Stride of dimension `i` (c10 `stride_at`).
    ///
    /// # Panics
    ///
    /// If `i >= self.size()`. Use [`get_stride`](Self::get_stride) for a
    /// checked lookup.
    pub fn stride_at(&self, i: usize) -> i64 {
        self.strides()[i]
    }

    /// Size of dimension `i`, or `None` if out of range.
    pub fn get_size(&self, i: usize) -> Option<i64> {
        self.sizes().get(i).copied()
    }

    /// Stride of dimension `i`, or `None` if out of range.
    pub fn get_stride(&self, i: usize) -> Option<i64> {
        self.strides().get(i).copied()
    }

    /// Mutable size of dimension `i`, or `None` if out of range.
    pub fn get_size_mut(&mut self, i: usize) -> Option<&mut i64> {
        self.sizes_mut().get_mut(i)
    }

    /// Mutable stride of dimension `i`, or `None` if out of range.
    pub fn get_stride_mut(&mut self, i: usize) -> Option<&mut i64> {
        self.strides_mut().get_mut(i)
    }

    /// Changes the number of dimensions to `new_size` (c10 `resize`).
    ///
    /// Sizes and strides of the first `min(old, new)` dimensions are kept;
    /// new dimensions get size 0 and stride 0. Crossing the five-dimension
    /// boundary moves the values between inline and heap storage; shrinking
    /// to five or fewer frees the heap block.
    pub fn resize(&mut self, new_size: usize) {
        let old_size = self.size();
        if new_size == old_size {
            return;
        }
        if new_size > old_size {
            let extra = new_size - old_size;
            // One exact allocation when spilling (c10 mallocs n * 16 bytes).
            self.data.reserve_exact(2 * extra);
            // [sizes | strides] -> [sizes, 0.. | strides, 0..]
            self.data
                .insert_many(old_size, std::iter::repeat_n(0, extra));
            self.data.extend(std::iter::repeat_n(0, extra));
        } else {
            // Move the surviving strides down next to the surviving sizes.
            self.data
                .copy_within(old_size..old_size + new_size, new_size);
            self.data.truncate(2 * new_size);
            if self.data.spilled() {
                // Back inline (and the heap block freed) when new_size <= 5,
                // otherwise a smaller heap block, like c10's realloc.
                self.data.shrink_to_fit();
            }
        }
    }

    /// Sets the sizes (c10 `set_sizes`): resizes to `sizes.len()` dimensions,
    /// then copies the sizes. Strides of surviving dimensions are kept and
    /// the strides of new dimensions are zero.
    pub fn set_sizes(&mut self, sizes: &[i64]) {
        self.resize(sizes.len());
        self.sizes_mut().copy_from_slice(sizes);
    }

    /// Sets the strides (c10 `set_strides`).
    ///
    /// # Errors
    ///
    /// [`SizesAndStridesError::StridesLengthMismatch`] (and no change) if
    /// `strides.len()` differs from the number of dimensions; c10 treats that
    /// as an internal assertion failure.
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
    pub fn set_sizes_and_strides(
        &mut self,
        sizes: &[i64],
        strides: &[i64],
    ) -> Result<(), SizesAndStridesError> {
        check_same_length(sizes, strides)?;
        self.resize(sizes.len());
        let (s, st) = self.sizes_and_strides_mut();
        s.copy_from_slice(sizes);
        st.copy_from_slice(strides);
        Ok(())
    }

    /// Takes the value out, leaving `self` zero-dimensional, which is what
    /// c10's move constructor does to its source (`rhs.size_ = 0`).
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
        // The buffer holds exactly the live values, so comparing it compares
        // ndim (its length) and every live size and stride.
        self.data[..] == other.data[..]
    }
}

impl Eq for SizesAndStrides {}

impl Hash for SizesAndStrides {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.data[..].hash(state);
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
        s.resize(4);
        assert_eq!(s.sizes(), &[2, 3, 0, 0]);
        assert_eq!(s.strides(), &[3, 1, 0, 0]);
        s.set_sizes(&[7, 8, 9]);
        assert_eq!(s.sizes(), &[7, 8, 9]);
        assert_eq!(s.strides(), &[3, 1, 0]);
        // Shrink then grow: the dropped slots come back as zero, not stale.
        s.resize(1);
        s.resize(3);
        assert_eq!(s.sizes(), &[7, 0, 0]);
        assert_eq!(s.strides(), &[3, 0, 0]);
        s.resize(0);
        assert!(s.is_empty());
        s.set_sizes(&[5]);
        assert_eq!(s.strides(), &[0]);
    }

    #[test]
    fn inline_heap_5_6_5() {
        let mut s = ss(&[1, 2, 3, 4, 5], &[120, 60, 20, 5, 1]);
        assert!(s.is_inline());
        s.resize(6);
        assert!(!s.is_inline());
        assert_eq!(s.sizes(), &[1, 2, 3, 4, 5, 0]);
        assert_eq!(s.strides(), &[120, 60, 20, 5, 1, 0]);
        s.sizes_mut()[5] = 6;
        s.strides_mut()[5] = 7;
        s.resize(5);
        assert!(s.is_inline());
        assert_eq!(s.sizes(), &[1, 2, 3, 4, 5]);
        assert_eq!(s.strides(), &[120, 60, 20, 5, 1]);
    }

    #[test]
    fn inline_heap_6_8_3() {
        let mut s = ss(&[1, 2, 3, 4, 5, 6], &[11, 12, 13, 14, 15, 16]);
        assert!(!s.is_inline());
        s.resize(8);
        assert!(!s.is_inline());
        assert_eq!(s.sizes(), &[1, 2, 3, 4, 5, 6, 0, 0]);
        assert_eq!(s.strides(), &[11, 12, 13, 14, 15, 16, 0, 0]);
        s.resize(7);
        assert!(!s.is_inline());
        assert_eq!(s.strides(), &[11, 12, 13, 14, 15, 16, 0]);
        s.resize(3);
        assert!(s.is_inline());
        assert_eq!(s.sizes(), &[1, 2, 3]);
        assert_eq!(s.strides(), &[11, 12, 13]);
        s.set_sizes(&[9; 10]);
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
        assert_eq!(s.size_at(1), 3);
        assert_eq!(s.stride_at(5), 6);
        assert_eq!(s.get_size(6), None);
        assert_eq!(s.get_stride(0), Some(1));
        *s.get_size_mut(0).unwrap() = 10;
        *s.get_stride_mut(0).unwrap() = 20;
        assert_eq!((s.size_at(0), s.stride_at(0)), (10, 20));
        assert!(s.get_stride_mut(6).is_none());
        let (sizes, strides) = s.sizes_and_strides_mut();
        sizes[1] = strides[1];
        assert_eq!(s.size_at(1), 2);
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
        c.resize(2);
        c.resize(6);
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
                        real.resize(n);
                        sizes.resize(n, 0);
                        strides.resize(n, 0);
                    }
                    Op::SetSizes(v) => {
                        real.set_sizes(&v);
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
