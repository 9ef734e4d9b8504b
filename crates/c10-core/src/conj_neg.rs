//! The conjugate and negative bits (c10's `DispatchKey::Conjugate` and
//! `DispatchKey::Negative`): a tensor whose key set holds one of them shows
//! the complex conjugate, or the negation, of the values its storage holds.
//! PyTorch's `conj()` of a complex tensor and `_neg_view()` are views that
//! only set a bit; reading an element (`get`, `to_vec`, `item`, printing),
//! writing one (`set`, `fill_`) and copying (`aten_shape`'s `copy_`,
//! `clone`, `contiguous`) apply it. Views of such a tensor keep the bits
//! (they copy the key set); new tensors start without them.

use crate::dispatch_key::DispatchKey;
use crate::tensor::{MetadataEdit, Tensor};

impl Tensor {
    /// Whether the conjugate bit is set (`is_conj()`): the tensor shows the
    /// conjugate of its stored values.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::zeros(&[2], ScalarType::ComplexFloat)?;
    /// assert!(!t.is_conj());
    /// let mut c = t.as_strided(&[2], &[1], None)?;
    /// c.edit_metadata().set_conj(true); // what `aten_shape`'s `conj()` does
    /// assert!(c.is_conj() && !t.is_conj());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn is_conj(&self) -> bool {
        self.impl_ref().key_set().has(DispatchKey::Conjugate)
    }

    /// Whether the negative bit is set (`is_neg()`): the tensor shows the
    /// negation of its stored values.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::arange(1, 4, 1, ScalarType::Float)?;
    /// let mut n = t.as_strided(&[3], &[1], None)?;
    /// n.edit_metadata().set_neg(true); // what `_neg_view()` does
    /// assert!(n.is_neg());
    /// assert_eq!(n.to_vec::<f32>()?, [-1.0, -2.0, -3.0]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn is_neg(&self) -> bool {
        self.impl_ref().key_set().has(DispatchKey::Negative)
    }
}

impl MetadataEdit<'_> {
    /// Sets or clears the conjugate bit (c10's `_set_conj`). Only the view
    /// ops that make lazy conjugates call it (`conj`, `_conj`); the values
    /// stored stay as they are.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// use c10_core::scalar_type::Complex64;
    /// let t = Tensor::from_slice_1d(&[Complex64::new(1.0, 2.0)])?;
    /// let mut c = t.as_strided(&[1], &[1], None)?;
    /// c.edit_metadata().set_conj(true);
    /// assert_eq!(c.get::<Complex64>(&[0])?, Complex64::new(1.0, -2.0));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn set_conj(&mut self, conj: bool) {
        let ks = self.imp.key_set;
        self.imp.key_set = if conj {
            ks.add(DispatchKey::Conjugate)
        } else {
            ks.remove(DispatchKey::Conjugate)
        };
    }

    /// Sets or clears the negative bit (c10's `_set_neg`).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::arange(0, 2, 1, ScalarType::Long)?;
    /// let mut n = t.as_strided(&[2], &[1], None)?;
    /// n.edit_metadata().set_neg(true);
    /// n.set(&[1], 5i64)?; // stored as -5
    /// assert_eq!(t.to_vec::<i64>()?, [0, -5]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn set_neg(&mut self, neg: bool) {
        let ks = self.imp.key_set;
        self.imp.key_set = if neg {
            ks.add(DispatchKey::Negative)
        } else {
            ks.remove(DispatchKey::Negative)
        };
    }
}
