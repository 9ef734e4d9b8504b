//! View-op geometry over any [`ShapeInt`]: the rules of every view op as
//! functions from a [`Geometry`] (sizes, strides, storage offset) to a new
//! one, written once for `i64` and [`SymInt`].
//!
//! On symbolic sizes each decision is taken where ATen's C++ takes it, with
//! the same kind of decision (`guard_bool`, `guard_or_false`,
//! `expect_true`, `guard_int`), so the guards recorded in the
//! [`ShapeEnv`] are ATen's. Each op's method sits in its family's module
//! (crate-private `ops`), next to the rule it shares with the concrete op
//! in [`crate::views`]; contiguity comes from [`c10_core::sym::rules`].
//!
//! **On tensors, call the ordinary ops**: `x.view(..)`, `x.narrow(..)`
//! and every other [`ViewOps`](crate::views::ViewOps) method run these
//! rules themselves when `x` has symbolic sizes or an argument is
//! symbolic (see [`crate::views`]). This module is for code that works on
//! bare geometry, and [`sym_view_op`] for a rule applied to a tensor's
//! geometry directly.
//!
//! ```
//! use aten_shape::generic::Geometry;
//! use c10_core::sym::{DimDynamic, ShapeEnv, SymInt};
//! let env = ShapeEnv::new();
//! let x = Geometry::symbolic(&env, &[4, 6, 8], "x")?;
//! let y = x.transpose(0, 1)?.narrow(2, &SymInt::from(2), &SymInt::from(4))?;
//! assert_eq!(y.to_string(), "sizes [s1, s0, 4], strides [s2, s1*s2, 1], offset 2");
//! let guards: Vec<String> = env.guards().iter().map(|g| g.to_string()).collect();
//! assert_eq!(guards, ["2 <= s2 - 4"]);
//! // The same code on plain integers:
//! let c = Geometry::<i64>::contiguous(&[4, 6, 8])?.transpose(0, 1)?.narrow(2, &2, &4)?;
//! assert_eq!((c.sizes, c.strides, c.offset), (vec![6, 4, 4], vec![8, 48, 1], 2));
//! # Ok::<(), c10_core::TensorError>(())
//! ```

use std::fmt;
use std::sync::Arc;

use c10_core::sym::rules::{contiguous_strides_into, is_contiguous};
use c10_core::sym::{fmt_list, ShapeEnv, ShapeInt, SymInt};
use c10_core::{Result, Tensor};

#[inline]
pub(crate) fn c<T: ShapeInt>(v: i64) -> T {
    T::from_i64(v)
}

/// A tensor's layout: sizes, strides (in elements) and storage offset.
#[derive(Clone, Debug, PartialEq)]
pub struct Geometry<T> {
    /// Sizes.
    pub sizes: Vec<T>,
    /// Strides.
    pub strides: Vec<T>,
    /// Storage offset.
    pub offset: T,
}

impl<T: fmt::Display> fmt::Display for Geometry<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sizes {}, strides {}, offset {}",
            fmt_list(&self.sizes),
            fmt_list(&self.strides),
            self.offset
        )
    }
}

impl Geometry<SymInt> {
    /// The geometry of a tensor, concrete or symbolic.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// use c10_core::{Tensor, TensorOptions};
    /// let g = Geometry::of(&Tensor::empty(&[2, 3], TensorOptions::new())?);
    /// assert_eq!(g.to_string(), "sizes [2, 3], strides [3, 1], offset 0");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn of(t: &Tensor) -> Geometry<SymInt> {
        Geometry {
            sizes: t.sym_sizes(),
            strides: t.sym_strides(),
            offset: t.sym_storage_offset(),
        }
    }

    /// A view of `base` with this geometry ([`Tensor::symbolic_view`]).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// use c10_core::{Tensor, TensorOptions};
    /// let t = Tensor::empty(&[2, 3], TensorOptions::new())?;
    /// let v = Geometry::of(&t).transpose(0, 1)?.view_of(&t)?;
    /// assert_eq!(v.strides(), &[1, 3]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn view_of(&self, base: &Tensor) -> Result<Tensor> {
        base.symbolic_view(&self.sizes, &self.strides, &self.offset)
    }

    /// A contiguous tensor with example sizes `sizes` whose every dim is a
    /// fresh symbol (PyTorch: `FakeTensorMode.from_tensor` with
    /// `DimDynamic.DYNAMIC`); sizes 0 and 1 stay constants.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let env = c10_core::sym::ShapeEnv::new();
    /// let x = Geometry::symbolic(&env, &[1, 6, 0], "x")?;
    /// assert_eq!(x.to_string(), "sizes [1, s0, 0], strides [s0, 1, 1], offset 0");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn symbolic(env: &Arc<ShapeEnv>, sizes: &[i64], name: &str) -> Result<Geometry<SymInt>> {
        let mut strides = vec![0i64; sizes.len()];
        contiguous_strides_into(sizes, &mut strides)?;
        let (sizes, strides, offset) = env.create_symbolic_sizes_strides_storage_offset(
            sizes,
            &strides,
            0,
            name,
            c10_core::sym::DimDynamic::Dynamic,
        )?;
        Ok(Geometry {
            sizes,
            strides,
            offset,
        })
    }
}

impl<T: ShapeInt> Geometry<T> {
    /// A contiguous layout of `sizes` at offset 0.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// assert_eq!(Geometry::<i64>::contiguous(&[2, 3])?.strides, vec![3, 1]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn contiguous(sizes: &[T]) -> Result<Geometry<T>> {
        let mut strides = sizes.to_vec();
        contiguous_strides_into(sizes, &mut strides)?;
        Ok(Geometry {
            sizes: sizes.to_vec(),
            strides,
            offset: c(0),
        })
    }

    pub(crate) fn dim(&self) -> usize {
        self.sizes.len()
    }

    /// The number of elements (`sym_numel`).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// assert_eq!(Geometry::<i64>::contiguous(&[2, 3])?.numel()?, 6);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn numel(&self) -> Result<T> {
        let mut n: T = c(1);
        for s in &self.sizes {
            n = n.mul(s)?;
        }
        Ok(n)
    }

    /// `is_contiguous()`, deciding (and guarding) like `TensorImpl`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// assert!(Geometry::<i64>::contiguous(&[2, 3])?.is_contiguous()?);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn is_contiguous(&self) -> Result<bool> {
        is_contiguous(&self.sizes, &self.strides)
    }

    /// `contiguous()`: itself when `is_contiguous()` (a guarding
    /// decision), else a contiguous copy.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let t = Geometry::<i64>::contiguous(&[2, 3])?.transpose(0, 1)?;
    /// assert_eq!(t.contiguous_copy()?.strides, vec![2, 1]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn contiguous_copy(&self) -> Result<Geometry<T>> {
        if self.is_contiguous()? {
            return Ok(self.clone());
        }
        Geometry::contiguous(&self.sizes)
    }
}

pub use crate::ops::split::GuardInt;

/// Runs a view op's geometry rule on a tensor whose geometry may be
/// symbolic and returns the view (the symbolic path of the view ops; the
/// rule is the same function the concrete path uses at `i64`). The
/// ordinary ops call it themselves on symbolic tensors (`x.view(-1)` is
/// the usual spelling of the example below); it stays for rules applied
/// to a tensor's geometry directly.
///
/// ```
/// use aten_shape::generic::{sym_view_op, Geometry};
/// use c10_core::sym::{ShapeEnv, SymInt};
/// use c10_core::{Device, Tensor, TensorOptions};
/// let env = ShapeEnv::new();
/// let x = Tensor::empty_symint(
///     &[env.create_symbol(4, "x.size(0)")?, env.create_symbol(6, "x.size(1)")?],
///     TensorOptions::new().device(Device::META),
/// )?;
/// let y = sym_view_op(&x, |g| g.view(&[SymInt::from(-1)]))?;
/// assert_eq!(y.sym_sizes()[0].to_string(), "s0*s1");
/// assert!(y.is_alias_of(&x));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn sym_view_op(
    t: &Tensor,
    op: impl FnOnce(&Geometry<SymInt>) -> Result<Geometry<SymInt>>,
) -> Result<Tensor> {
    op(&Geometry::of(t))?.view_of(t)
}

/// `reshape` on a tensor whose geometry may be symbolic: a view when
/// `computeStride` allows one, else a new contiguous (meta or fake)
/// tensor, as ATen's `_unsafe_view(clone(Contiguous), shape)` gives.
///
/// ```
/// use aten_shape::generic::{sym_reshape, sym_view_op};
/// use c10_core::sym::{ShapeEnv, SymInt};
/// use c10_core::{Device, Tensor, TensorOptions};
/// let env = ShapeEnv::new();
/// let x = Tensor::empty_symint(
///     &[env.create_symbol(4, "a")?, env.create_symbol(6, "b")?],
///     TensorOptions::new().device(Device::META),
/// )?;
/// let t = sym_view_op(&x, |g| g.transpose(0, 1))?;
/// let r = sym_reshape(&t, &[SymInt::from(-1)])?;
/// assert!(!r.is_alias_of(&x)); // a copy
/// assert_eq!(r.sym_strides()[0], SymInt::from(1));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub fn sym_reshape(t: &Tensor, shape: &[SymInt]) -> Result<Tensor> {
    let (g, copied) = Geometry::of(t).reshape(shape)?;
    view_or_copy(t, g, copied)
}

/// The result of a reshaping rule that may copy: a view of `t` with
/// geometry `g`, or (`copied`) a new tensor with `g`'s contiguous layout
/// on `t`'s (fake) device, as ATen's `_unsafe_view(clone(Contiguous),
/// shape)` gives.
pub(crate) fn view_or_copy(t: &Tensor, g: Geometry<SymInt>, copied: bool) -> Result<Tensor> {
    if !copied {
        return g.view_of(t);
    }
    let device = t.fake_device().unwrap_or(t.device());
    let options = c10_core::TensorOptions::new()
        .dtype(t.dtype())
        .device(device);
    Tensor::empty_strided_symint(&g.sizes, &g.strides, options)
}
