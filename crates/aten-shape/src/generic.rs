//! View-op geometry over any [`ShapeInt`]: the rules of every view op as
//! functions from a [`Geometry`] (sizes, strides, storage offset) to a new
//! one, written once for `i64` and [`SymInt`].
//!
//! On symbolic sizes each decision is taken where ATen's C++ takes it, with
//! the same kind of decision (`guard_bool`, `guard_or_false`,
//! `expect_true`, `guard_int`), so the guards recorded in the
//! [`ShapeEnv`] are ATen's. The shared shape rules
//! (`infer_size`, `computeStride`, `inferExpandGeometry`, contiguity) live
//! in [`c10_core::sym::rules`] and are the same functions the concrete view
//! ops in [`crate::views`] call.
//!
//! ```
//! use aten_shape::generic::Geometry;
//! use c10_core::sym::{DimDynamic, ShapeEnv, SymInt};
//! let env = ShapeEnv::new();
//! let x = Geometry::symbolic(&env, &[4, 6, 8], "x")?;
//! let y = x.transpose(0, 1)?.narrow(2, 2, &SymInt::from(4))?;
//! assert_eq!(y.to_string(), "sizes [s1, s0, 4], strides [s2, s1*s2, 1], offset 2");
//! let guards: Vec<String> = env.guards().iter().map(|g| g.to_string()).collect();
//! assert_eq!(guards, ["2 <= s2 - 4"]);
//! // The same code on plain integers:
//! let c = Geometry::<i64>::contiguous(&[4, 6, 8])?.transpose(0, 1)?.narrow(2, 2, &4)?;
//! assert_eq!((c.sizes, c.strides, c.offset), (vec![6, 4, 4], vec![8, 48, 1], 2));
//! # Ok::<(), c10_core::TensorError>(())
//! ```

use std::fmt;
use std::sync::Arc;

use c10_core::sym::rules::{
    compute_stride_into, contiguous_strides_into, expand_geometry_into, infer_size_into,
    is_contiguous,
};
use c10_core::sym::view_rules;
use c10_core::sym::{fmt_list, ShapeBool, ShapeEnv, ShapeInt, SymInt};
use c10_core::{Result, Tensor, TensorError};

const VIEW_INCOMPATIBLE: &str = "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.";

#[inline]
fn c<T: ShapeInt>(v: i64) -> T {
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

    fn dim(&self) -> usize {
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

    /// `view(shape)`: ATen's `view_impl` (`infer_size` then
    /// `computeStride`).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let v = Geometry::<i64>::contiguous(&[2, 3])?.view(&[-1])?;
    /// assert_eq!(v.sizes, vec![6]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn view(&self, shape: &[T]) -> Result<Geometry<T>> {
        let numel = self.numel()?;
        let mut sizes = shape.to_vec();
        infer_size_into(shape, &numel, &mut sizes)?;
        let mut strides = sizes.clone();
        match compute_stride_into(&self.sizes, &self.strides, &sizes, &mut strides)? {
            Some(_) => Ok(Geometry {
                sizes,
                strides,
                offset: self.offset.clone(),
            }),
            None => Err(TensorError::runtime(VIEW_INCOMPATIBLE)),
        }
    }

    /// `reshape(shape)`: a view when `computeStride` allows one, else a
    /// contiguous copy (offset 0). The flag says whether it copied.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let t = Geometry::<i64>::contiguous(&[2, 3])?.transpose(0, 1)?;
    /// let (r, copied) = t.reshape(&[-1])?;
    /// assert!(copied && r.strides == vec![1]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn reshape(&self, shape: &[T]) -> Result<(Geometry<T>, bool)> {
        // ATen's reshape asks `is_contiguous()` first (a guarding decision
        // on symbols: the `Ne(size, 1)` guards PyTorch records); a
        // contiguous input is viewed.
        if self.is_contiguous()? {
            return Ok((self.view(shape)?, false));
        }
        let numel = self.numel()?;
        let mut sizes = shape.to_vec();
        infer_size_into(shape, &numel, &mut sizes)?;
        let mut strides = sizes.clone();
        if compute_stride_into(&self.sizes, &self.strides, &sizes, &mut strides)?.is_some() {
            return Ok((
                Geometry {
                    sizes,
                    strides,
                    offset: self.offset.clone(),
                },
                false,
            ));
        }
        // `_unsafe_view(clone(Contiguous), shape)`.
        Ok((Geometry::contiguous(&sizes)?, true))
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

    /// `transpose(dim0, dim1)`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// assert_eq!(Geometry::<i64>::contiguous(&[2, 3])?.transpose(0, 1)?.strides, vec![1, 3]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn transpose(&self, dim0: i64, dim1: i64) -> Result<Geometry<T>> {
        let (a, b) = view_rules::transpose_dims(self.dim(), dim0, dim1)?;
        let mut g = self.clone();
        view_rules::transpose_in_place(&mut g.sizes, &mut g.strides, a, b);
        Ok(g)
    }

    /// `permute(dims)`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let p = Geometry::<i64>::contiguous(&[2, 3, 4])?.permute(&[2, 0, 1])?;
    /// assert_eq!((p.sizes, p.strides), (vec![4, 2, 3], vec![1, 12, 4]));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn permute(&self, dims: &[i64]) -> Result<Geometry<T>> {
        view_rules::check_permute(dims, self.dim())?;
        let mut g = self.clone();
        view_rules::permute_into(
            &self.sizes,
            &self.strides,
            dims,
            &mut g.sizes,
            &mut g.strides,
        );
        Ok(g)
    }

    /// `movedim(source, destination)` for single dims.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let m = Geometry::<i64>::contiguous(&[2, 3, 4])?.movedim(0, -1)?;
    /// assert_eq!(m.sizes, vec![3, 4, 2]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn movedim(&self, source: i64, destination: i64) -> Result<Geometry<T>> {
        self.movedim_dims(&[source], &[destination])
    }

    /// `movedim(source, destination)` for lists of dims.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let m = Geometry::<i64>::contiguous(&[2, 3, 4])?.movedim_dims(&[0, 1], &[2, 0])?;
    /// assert_eq!(m.sizes, vec![3, 4, 2]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn movedim_dims(&self, source: &[i64], destination: &[i64]) -> Result<Geometry<T>> {
        let mut g = self.clone();
        view_rules::movedim_into(
            &self.sizes,
            &self.strides,
            source,
            destination,
            &mut g.sizes,
            &mut g.strides,
        )?;
        Ok(g)
    }

    /// `slice(dim, start, end, step)` with the clamping of ATen's
    /// `slice` (each clamp a guard site on symbols).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let s = Geometry::<i64>::contiguous(&[10])?.slice(0, Some(&2), None, 3)?;
    /// assert_eq!((s.sizes, s.strides, s.offset), (vec![3], vec![3], 2));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn slice(
        &self,
        dim: i64,
        start: Option<&T>,
        end: Option<&T>,
        step: i64,
    ) -> Result<Geometry<T>> {
        let d = view_rules::slice_dim(self.dim(), dim)?;
        self.slice_at(d, start, end, step)
    }

    /// `slice` on the wrapped dim `d`.
    fn slice_at(
        &self,
        d: usize,
        start: Option<&T>,
        end: Option<&T>,
        step: i64,
    ) -> Result<Geometry<T>> {
        let r = view_rules::slice_rule(
            &self.sizes[d],
            &self.strides[d],
            &self.offset,
            start,
            end,
            step,
        )?;
        let mut g = self.clone();
        g.offset = r.offset;
        g.sizes[d] = r.size;
        g.strides[d] = r.stride;
        Ok(g)
    }

    /// `narrow(dim, start, length)`: ATen's checks, then `slice`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let n = Geometry::<i64>::contiguous(&[4, 6])?.narrow(1, 1, &3)?;
    /// assert_eq!((n.sizes, n.offset), (vec![4, 3], 1));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn narrow(&self, dim: i64, start: i64, length: &T) -> Result<Geometry<T>> {
        let d = view_rules::narrow_dim(self.dim(), dim, length)?;
        let (st, end) = view_rules::narrow_bounds(&self.sizes[d], start, length)?;
        self.slice_at(d, Some(&st), Some(&end), 1)
    }

    /// `select(dim, index)`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let s = Geometry::<i64>::contiguous(&[4, 6])?.select(1, -1)?;
    /// assert_eq!((s.sizes, s.offset), (vec![4], 5));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn select(&self, dim: i64, index: i64) -> Result<Geometry<T>> {
        let d = view_rules::select_dim(self.dim(), dim)?;
        let (offset, _) =
            view_rules::select_offset(&self.sizes, &self.strides, &self.offset, d, index)?;
        let mut g = self.clone();
        g.offset = offset;
        g.sizes.remove(d);
        g.strides.remove(d);
        Ok(g)
    }

    /// `expand(sizes)` (`-1` keeps a size).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let e = Geometry::<i64>::contiguous(&[3, 1])?.expand(&[2, 3, 4])?;
    /// assert_eq!(e.strides, vec![0, 1, 0]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn expand(&self, sizes: &[T]) -> Result<Geometry<T>> {
        if sizes.len() < self.dim() {
            return Err(TensorError::runtime(format!(
                "expand(torch.FloatTensor{{{}}}, size=[{}]): the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({})",
                fmt_list(&self.sizes).trim_matches(|c| c == '[' || c == ']'),
                fmt_list(sizes).trim_matches(|c| c == '[' || c == ']'),
                sizes.len(),
                self.dim()
            )));
        }
        let mut out_sizes = sizes.to_vec();
        let mut out_strides = sizes.to_vec();
        expand_geometry_into(
            &self.sizes,
            &self.strides,
            sizes,
            &mut out_sizes,
            &mut out_strides,
        )?;
        Ok(Geometry {
            sizes: out_sizes,
            strides: out_strides,
            offset: self.offset.clone(),
        })
    }

    /// `squeeze()`: drops every dim whose size is 1 (`guard_or_false`, so
    /// an unbacked size is kept without a guard).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// assert_eq!(Geometry::<i64>::contiguous(&[1, 3, 1])?.squeeze()?.sizes, vec![3]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn squeeze(&self) -> Result<Geometry<T>> {
        let mut g = self.clone();
        let k = view_rules::squeeze_into(&self.sizes, &self.strides, &mut g.sizes, &mut g.strides)?;
        g.sizes.truncate(k);
        g.strides.truncate(k);
        Ok(g)
    }

    /// `squeeze(dim)`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// assert_eq!(Geometry::<i64>::contiguous(&[1, 3])?.squeeze_dim(0)?.sizes, vec![3]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn squeeze_dim(&self, dim: i64) -> Result<Geometry<T>> {
        let mut g = self.clone();
        if let Some(d) = view_rules::squeeze_dim_index(&self.sizes, dim)? {
            g.sizes.remove(d);
            g.strides.remove(d);
        }
        Ok(g)
    }

    /// `squeeze(dims)`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let g = Geometry::<i64>::contiguous(&[1, 3, 1])?.squeeze_dims(&[0, -1])?;
    /// assert_eq!(g.sizes, vec![3]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn squeeze_dims(&self, dims: &[i64]) -> Result<Geometry<T>> {
        let mut g = self.clone();
        let k = view_rules::squeeze_dims_into(
            &self.sizes,
            &self.strides,
            dims,
            &mut g.sizes,
            &mut g.strides,
        )?;
        g.sizes.truncate(k);
        g.strides.truncate(k);
        Ok(g)
    }

    /// `unsqueeze(dim)`: size 1, stride `size[d]*stride[d]` (1 at the end).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let u = Geometry::<i64>::contiguous(&[2, 3])?.unsqueeze(1)?;
    /// assert_eq!((u.sizes, u.strides), (vec![2, 1, 3], vec![3, 3, 1]));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn unsqueeze(&self, dim: i64) -> Result<Geometry<T>> {
        let (d, stride, _) = view_rules::unsqueeze_rule(&self.sizes, &self.strides, dim)?;
        let mut g = self.clone();
        g.sizes.insert(d, c(1));
        g.strides.insert(d, stride);
        Ok(g)
    }

    /// `flatten(start_dim, end_dim)`: a `reshape` (so possibly a copy).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let (f, copied) = Geometry::<i64>::contiguous(&[2, 3, 4])?.flatten(1, -1)?;
    /// assert_eq!((f.sizes, copied), (vec![2, 12], false));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn flatten(&self, start_dim: i64, end_dim: i64) -> Result<(Geometry<T>, bool)> {
        match view_rules::flatten_plan(&self.sizes, start_dim, end_dim)? {
            view_rules::FlattenPlan::Scalar => self.reshape(&[c(1)]),
            view_rules::FlattenPlan::Unchanged => Ok((self.clone(), false)),
            view_rules::FlattenPlan::Reshape(shape) => self.reshape(&shape),
        }
    }

    /// `unflatten(dim, sizes)`: `infer_size` on the dim, then `view`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let u = Geometry::<i64>::contiguous(&[2, 12])?.unflatten(1, &[3, -1])?;
    /// assert_eq!(u.sizes, vec![2, 3, 4]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn unflatten(&self, dim: i64, sizes: &[T]) -> Result<Geometry<T>> {
        self.view(&view_rules::unflatten_shape(&self.sizes, dim, sizes)?)
    }

    /// `split(split_size, dim)`: the number of pieces is a plain integer,
    /// so on symbols it is `guard_int`'ed (it specialises that count).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let p = Geometry::<i64>::contiguous(&[5])?.split(&2, 0)?;
    /// assert_eq!(p.iter().map(|g| g.sizes[0]).collect::<Vec<_>>(), vec![2, 2, 1]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn split(&self, split_size: &T, dim: i64) -> Result<Vec<Geometry<T>>>
    where
        T: GuardInt,
    {
        let view_rules::SplitPlan {
            dim: d,
            num_splits,
            last,
        } = view_rules::split_plan(&self.sizes, split_size, dim)?;
        let mut out = Vec::new();
        for i in 0..num_splits {
            let length = if i < num_splits - 1 {
                split_size.clone()
            } else {
                last.clone()
            };
            let start = split_size.mul(&c(i))?;
            out.push(self.narrow_sym(d, &start, &length)?);
        }
        Ok(out)
    }

    /// `narrow` with a symbolic start (what `split` needs).
    fn narrow_sym(&self, d: usize, start: &T, length: &T) -> Result<Geometry<T>> {
        if !length.sym_ge(&c(0))?.expect_true()? {
            return Err(TensorError::runtime(
                "narrow(): length must be non-negative.",
            ));
        }
        let cur = self.sizes[d].clone();
        if !start.sym_le(&cur.sub(length)?)?.expect_true()? {
            return Err(TensorError::runtime(format!(
                "start ({start}) + length ({length}) exceeds dimension size ({cur})."
            )));
        }
        let end = start.add(length)?;
        self.slice_at(d, Some(start), Some(&end), 1)
    }

    /// `chunk(chunks, dim)`: `split` by `ceil(size / chunks)`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// assert_eq!(Geometry::<i64>::contiguous(&[5])?.chunk(2, 0)?.len(), 2);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn chunk(&self, chunks: i64, dim: i64) -> Result<Vec<Geometry<T>>>
    where
        T: GuardInt,
    {
        let (d, split_size, all_empty) = view_rules::chunk_split_size(&self.sizes, chunks, dim)?;
        if all_empty {
            // Every piece is empty.
            let mut out = Vec::new();
            for _ in 0..chunks {
                out.push(self.narrow_sym(d, &c(0), &c(0))?);
            }
            return Ok(out);
        }
        self.split(&split_size, d as i64)
    }

    /// `diagonal(offset, dim1, dim2)`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let g = Geometry::<i64>::contiguous(&[3, 4])?.diagonal(1, 0, 1)?;
    /// assert_eq!((g.sizes, g.strides, g.offset), (vec![3], vec![5], 1));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> Result<Geometry<T>> {
        let plan = view_rules::diagonal_plan(
            &self.sizes,
            &self.strides,
            &self.offset,
            offset,
            dim1,
            dim2,
        )?;
        let m = self.dim() - 1;
        let mut sizes = self.sizes[..m].to_vec();
        let mut strides = self.strides[..m].to_vec();
        view_rules::diagonal_fill(&self.sizes, &self.strides, &plan, &mut sizes, &mut strides);
        Ok(Geometry {
            sizes,
            strides,
            offset: plan.offset,
        })
    }

    /// `unfold(dimension, size, step)`.
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let u = Geometry::<i64>::contiguous(&[7])?.unfold(0, 3, 2)?;
    /// assert_eq!((u.sizes, u.strides), (vec![3, 3], vec![2, 1]));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn unfold(&self, dimension: i64, size: i64, step: i64) -> Result<Geometry<T>> {
        let plan = view_rules::unfold_plan(&self.sizes, &self.strides, dimension, size, step)?;
        let mut g = self.clone();
        g.sizes.push(c(0));
        g.strides.push(c(0));
        view_rules::unfold_fill(
            &self.sizes,
            &self.strides,
            &plan,
            &mut g.sizes,
            &mut g.strides,
        );
        Ok(g)
    }

    /// `as_strided(sizes, strides, offset)`: the values as given (on meta
    /// and fake tensors there is no storage to check against).
    ///
    /// ```
    /// use aten_shape::generic::Geometry;
    /// let a = Geometry::<i64>::contiguous(&[6])?.as_strided(&[2, 3], &[1, 2], Some(&1))?;
    /// assert_eq!(a.offset, 1);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn as_strided(
        &self,
        sizes: &[T],
        strides: &[T],
        offset: Option<&T>,
    ) -> Result<Geometry<T>> {
        let offset = offset.cloned().unwrap_or_else(|| self.offset.clone());
        view_rules::check_as_strided_args(sizes, strides, &offset)?;
        Ok(Geometry {
            sizes: sizes.to_vec(),
            strides: strides.to_vec(),
            offset,
        })
    }
}

pub use c10_core::sym::view_rules::GuardInt;

/// Runs a view op's geometry rule on a tensor whose geometry may be
/// symbolic and returns the view (the symbolic path of the view ops; the
/// rule is the same function the concrete path uses at `i64`).
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
    if !copied {
        return g.view_of(t);
    }
    let device = t.fake_device().unwrap_or(t.device());
    let options = c10_core::TensorOptions::new()
        .dtype(t.dtype())
        .device(device);
    Tensor::empty_strided_symint(&g.sizes, &g.strides, options)
}
