//! Element iterators: [`Tensor::iter`] walks every element in logical
//! (row-major) order, whatever the layout, under the storage's read lock.
//! (Iterating over the sub-tensors along a dim, `t.iter_dim(d)`, is
//! `aten_shape`'s, since each item is a `select` view.)

use crate::access::{StridedOffsets, TensorReadGuard};
use crate::error::Result;
use crate::scalar_type::Element;
use crate::tensor::Tensor;

/// The elements of a tensor in logical order; from [`Tensor::iter`].
///
/// Holds the storage's read lock (shared) until dropped: other readers
/// proceed, writers wait, and a write to the same storage from this thread
/// while the iterator is alive fails instead of deadlocking.
///
/// ```
/// use c10_core::Tensor;
/// let t = Tensor::from([[1i32, 2, 3], [4, 5, 6]]);
/// let mut it = t.iter::<i32>()?;
/// assert_eq!(it.len(), 6);
/// assert_eq!(it.next(), Some(1));
/// assert_eq!(it.sum::<i32>(), 20);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub struct Iter<'a, T: Element> {
    guard: TensorReadGuard<'a, T>,
    offsets: StridedOffsets<'a>,
    remaining: usize,
}

impl<T: Element> Iterator for Iter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        let off = self.offsets.next()?;
        self.remaining = self.remaining.saturating_sub(1);
        Some(self.guard.read_at(off))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<T: Element> ExactSizeIterator for Iter<'_, T> {}

impl<T: Element> std::fmt::Debug for Iter<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Iter")
            .field("dtype", &T::SCALAR_TYPE)
            .field("remaining", &self.remaining)
            .finish()
    }
}

impl Tensor {
    /// The elements in logical (row-major) order, whatever the layout
    /// (`for x in t.iter::<f32>()? { .. }`, like iterating over
    /// `t.flatten().tolist()` in Python, without the copy).
    ///
    /// `T` must be the tensor's element type (the error says which
    /// conversion to make otherwise); the memory must be readable from the
    /// host (not meta or CUDA). The iterator holds the storage's read lock
    /// (see [`Iter`]); collect what you need before writing to the tensor.
    ///
    /// ```
    /// use c10_core::Tensor;
    /// let m = Tensor::from([[1.0f32, 2.0], [3.0, 4.0]]);
    /// let t = m.as_strided(&[2, 2], &[1, 2], None)?; // the transpose
    /// assert_eq!(t.iter::<f32>()?.collect::<Vec<_>>(), vec![1.0, 3.0, 2.0, 4.0]);
    /// let max = m.iter::<f32>()?.fold(f32::MIN, f32::max);
    /// assert_eq!(max, 4.0);
    /// assert!(m.iter::<f64>().is_err()); // float32, not float64
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn iter<T: Element>(&self) -> Result<Iter<'_, T>> {
        let guard = self.read::<T>()?;
        Ok(Iter {
            guard,
            offsets: self.offsets(),
            remaining: self.numel().max(0) as usize,
        })
    }
}
