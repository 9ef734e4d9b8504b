//! Shape and index arguments that take what users have.
//!
//! Every op that takes a shape (`view`, `reshape`, `expand`,
//! `unflatten`, `split_with_sizes`, the factories, ...) takes an
//! [`IntoShape`]; every op that takes one size, index or offset (`narrow`'s
//! `start` and `length`, `select`'s `index`, `split`'s size, ...) takes an
//! [`IntoSymInt`]. Both accept plain integers (`i64`, `i32`, `usize`, ...)
//! and [`SymInt`]s, so one call serves concrete and symbolic tensors.
//!
//! | argument | accepted |
//! |---|---|
//! | shape ([`IntoShape`]) | slices `&[T]`, `Vec<T>` and `&Vec<T>` of any integer type `T` (`i64`, `usize`, `i32`, ...) or of [`SymInt`]; arrays `&[i64; N]` by reference (so `&[2, 3]` and `&[]` need no annotation) and arrays of the other types by value (`[2usize, 3]`, `[s0, s1]`); tuples of up to 6 integers; one integer (a 1-d shape, `t.view(-1)`); `()` (0-d) |
//! | scalar ([`IntoSymInt`]) | `i64`, `i32`, `isize`, `usize`, `u32`, `u64`, `SymInt`, `&SymInt` |
//! | slice bound ([`IntoSliceBound`]) | `None`, `Some(i64)`, any scalar above, `Option<SymInt>` via [`SliceBound`] |
//!
//! Unsigned values above `i64::MAX` are refused with c10's overflow
//! error, not truncated:
//!
//! ```
//! use c10_core::shape_arg::{IntoShape, IntoSymInt, Shape};
//! let s = (2usize, 3usize).into_shape()?;
//! assert!(matches!(s, Shape::Ints([2, 3])));
//! assert_eq!(vec![4usize, 5].into_shape()?.to_sym_ints().len(), 2);
//! assert_eq!(7usize.into_sym_int()?, 7.into());
//! let e = usize::MAX.into_sym_int().unwrap_err();
//! assert_eq!(e.to_string(), "value cannot be converted to type int64_t without overflow");
//! # Ok::<(), c10_core::TensorError>(())
//! ```
//!
//! Only `i64` arrays are accepted by reference, and only by reference:
//! with one such impl, a literal `&[2, 3]` is an `&[i64; 2]` and `&[]` an
//! `&[i64; 0]` without annotations, and no borrow is needless. Other
//! arrays go by value (`[2usize, 3]`, a literal `[2, 3]`) or as slices
//! (`&a[..]`).
//!
//! **Cost.** Conversions are generic and inlined at the call: `&[i64]`,
//! `&[i64; N]` and `Vec<i64>` are passed on as they are, arrays and
//! tuples of other integer types become an `[i64; N]` on the stack, and
//! other slices a [`DimVec`] (on the stack up to 8 dims). No heap
//! allocation for a concrete shape that is not already a `Vec`.

use crate::error::{Result, TensorError};
use crate::geometry::DimVec;
use crate::sym::SymInt;

/// A converted shape argument: plain integers in the cheapest container
/// the input allowed, or [`SymInt`]s of which at least one is symbolic
/// (an all-constant `SymInt` list converts to [`Shape::Ints`]).
///
/// ```
/// use c10_core::shape_arg::{IntoShape, Shape};
/// use c10_core::sym::SymInt;
/// assert!(matches!([SymInt::from(2)].into_shape()?, Shape::Ints(_)));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Debug, Clone)]
pub enum Shape<I> {
    /// Concrete sizes.
    Ints(I),
    /// Sizes of which at least one is symbolic.
    Sym(Vec<SymInt>),
}

impl<I: AsRef<[i64]>> Shape<I> {
    /// The sizes as `SymInt`s (for the symbolic path of an op).
    ///
    /// ```
    /// use c10_core::shape_arg::IntoShape;
    /// assert_eq!((2, 3).into_shape()?.to_sym_ints(), vec![2.into(), 3.into()]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn to_sym_ints(&self) -> Vec<SymInt> {
        match self {
            Shape::Ints(v) => v.as_ref().iter().map(|&x| SymInt::Int(x)).collect(),
            Shape::Sym(v) => v.clone(),
        }
    }

    /// The concrete sizes, if no size is symbolic.
    ///
    /// ```
    /// use c10_core::shape_arg::IntoShape;
    /// assert_eq!((2, 3).into_shape()?.ints(), Some(&[2i64, 3][..]));
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    #[inline]
    pub fn ints(&self) -> Option<&[i64]> {
        match self {
            Shape::Ints(v) => Some(v.as_ref()),
            Shape::Sym(_) => None,
        }
    }
}

/// Anything usable as a shape (a list of sizes) or another list of
/// integers that may be symbolic (split sizes, split indices, strides).
/// See the [module docs](self) for the accepted types.
///
/// ```
/// use c10_core::shape_arg::IntoShape;
/// fn numel(shape: impl IntoShape) -> c10_core::Result<i64> {
///     Ok(shape.into_shape()?.ints().map_or(-1, |s| s.iter().product()))
/// }
/// assert_eq!(numel(&[2i64, 3][..])?, 6);
/// assert_eq!(numel(vec![2usize, 3])?, 6);
/// assert_eq!(numel((2, 3, 4))?, 24);
/// assert_eq!(numel([5u32; 2])?, 25);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub trait IntoShape {
    /// The container the concrete sizes arrive in.
    type Ints: AsRef<[i64]>;
    /// Converts, refusing values that do not fit in `i64`.
    fn into_shape(self) -> Result<Shape<Self::Ints>>;
    /// The sizes as an `i64` slice without converting, where they already
    /// are one (`&[i64]`, `&[i64; N]`, `&Vec<i64>`, `&DimVec`, `Vec<i64>`,
    /// `DimVec`); `None` otherwise (then use
    /// [`into_shape`](Self::into_shape)). A fast path for ops whose
    /// concrete face takes slices.
    ///
    /// ```
    /// use c10_core::shape_arg::IntoShape;
    /// assert_eq!((&[2i64, 3]).int_slice(), Some(&[2i64, 3][..]));
    /// assert_eq!((2, 3).int_slice(), None);
    /// ```
    #[inline(always)]
    fn int_slice(&self) -> Option<&[i64]> {
        None
    }
}

/// The overflow error of c10's `checked_convert` (a `RuntimeError`).
fn overflow() -> TensorError {
    TensorError::runtime("value cannot be converted to type int64_t without overflow")
}

/// One integer of a shape or an index: converted to `i64`, refusing
/// values above `i64::MAX`.
///
/// ```
/// use c10_core::shape_arg::ShapeElem;
/// assert_eq!(3u8.to_dim()?, 3);
/// assert!(u64::MAX.to_dim().is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub trait ShapeElem: Copy {
    /// The value as `i64`.
    fn to_dim(self) -> Result<i64>;
}

macro_rules! lossless_elem {
    ($($t:ty),*) => {$(
        impl ShapeElem for $t {
            #[inline(always)]
            fn to_dim(self) -> Result<i64> {
                Ok(i64::from(self))
            }
        }
    )*};
}
lossless_elem!(i64, i32, i16, i8, u32, u16, u8);

macro_rules! checked_elem {
    ($($t:ty),*) => {$(
        impl ShapeElem for $t {
            #[inline(always)]
            fn to_dim(self) -> Result<i64> {
                i64::try_from(self).map_err(|_| overflow())
            }
        }
    )*};
}
checked_elem!(isize, usize, u64);

/// Converts a fixed number of elements into an `[i64; N]` on the stack.
#[inline(always)]
fn array_of<E: ShapeElem, const N: usize>(v: &[E; N]) -> Result<[i64; N]> {
    let mut out = [0i64; N];
    for (o, &e) in out.iter_mut().zip(v) {
        *o = e.to_dim()?;
    }
    Ok(out)
}

/// Converts a slice into a [`DimVec`].
#[inline]
fn dimvec_of<E: ShapeElem>(v: &[E]) -> Result<DimVec> {
    v.iter().map(|&e| e.to_dim()).collect()
}

// `i64` lists are passed on without a copy.
impl<'a> IntoShape for &'a [i64] {
    type Ints = &'a [i64];
    #[inline(always)]
    fn int_slice(&self) -> Option<&[i64]> {
        Some(self)
    }
    #[inline(always)]
    fn into_shape(self) -> Result<Shape<&'a [i64]>> {
        Ok(Shape::Ints(self))
    }
}
impl<'a, const N: usize> IntoShape for &'a [i64; N] {
    type Ints = &'a [i64];
    #[inline(always)]
    fn int_slice(&self) -> Option<&[i64]> {
        Some(&self[..])
    }
    #[inline(always)]
    fn into_shape(self) -> Result<Shape<&'a [i64]>> {
        Ok(Shape::Ints(self))
    }
}
impl<'a> IntoShape for &'a Vec<i64> {
    type Ints = &'a [i64];
    #[inline(always)]
    fn int_slice(&self) -> Option<&[i64]> {
        Some(self)
    }
    #[inline(always)]
    fn into_shape(self) -> Result<Shape<&'a [i64]>> {
        Ok(Shape::Ints(self))
    }
}
impl<'a> IntoShape for &'a DimVec {
    type Ints = &'a [i64];
    #[inline(always)]
    fn int_slice(&self) -> Option<&[i64]> {
        Some(self)
    }
    #[inline(always)]
    fn into_shape(self) -> Result<Shape<&'a [i64]>> {
        Ok(Shape::Ints(self))
    }
}
impl IntoShape for Vec<i64> {
    type Ints = Vec<i64>;
    #[inline(always)]
    fn int_slice(&self) -> Option<&[i64]> {
        Some(self)
    }
    #[inline(always)]
    fn into_shape(self) -> Result<Shape<Vec<i64>>> {
        Ok(Shape::Ints(self))
    }
}
impl IntoShape for DimVec {
    type Ints = DimVec;
    #[inline(always)]
    fn int_slice(&self) -> Option<&[i64]> {
        Some(self)
    }
    #[inline(always)]
    fn into_shape(self) -> Result<Shape<DimVec>> {
        Ok(Shape::Ints(self))
    }
}

// Every other integer type converts element by element (checked for the
// unsigned and pointer-sized ones). Arrays of them go by value: an
// `[i64; N]` goes by reference (`&a`), so that `&[2, 3]` is not a
// needless borrow of a value that would do.
macro_rules! converted_lists {
    ($($t:ty),*) => {$(
        impl<const N: usize> IntoShape for [$t; N] {
            type Ints = [i64; N];
            #[inline(always)]
            fn into_shape(self) -> Result<Shape<[i64; N]>> {
                Ok(Shape::Ints(array_of(&self)?))
            }
        }
        impl IntoShape for &[$t] {
            type Ints = DimVec;
            #[inline]
            fn into_shape(self) -> Result<Shape<DimVec>> {
                Ok(Shape::Ints(dimvec_of(self)?))
            }
        }
        impl IntoShape for &Vec<$t> {
            type Ints = DimVec;
            #[inline]
            fn into_shape(self) -> Result<Shape<DimVec>> {
                Ok(Shape::Ints(dimvec_of(self)?))
            }
        }
        impl IntoShape for Vec<$t> {
            type Ints = DimVec;
            #[inline]
            fn into_shape(self) -> Result<Shape<DimVec>> {
                Ok(Shape::Ints(dimvec_of(&self)?))
            }
        }
        /// One integer: a 1-d shape (`t.view(-1)`).
        impl IntoShape for $t {
            type Ints = [i64; 1];
            #[inline(always)]
            fn into_shape(self) -> Result<Shape<[i64; 1]>> {
                Ok(Shape::Ints([self.to_dim()?]))
            }
        }
    )*};
}
converted_lists!(i32, i16, i8, u32, u16, u8, isize, usize, u64);

impl IntoShape for i64 {
    type Ints = [i64; 1];
    #[inline(always)]
    fn into_shape(self) -> Result<Shape<[i64; 1]>> {
        Ok(Shape::Ints([self]))
    }
}

impl IntoShape for () {
    type Ints = [i64; 0];
    #[inline(always)]
    fn into_shape(self) -> Result<Shape<[i64; 0]>> {
        Ok(Shape::Ints([]))
    }
}

macro_rules! tuples {
    ($($n:literal: ($($e:ident),+)),*) => {$(
        impl<$($e: ShapeElem),+> IntoShape for ($($e,)+) {
            type Ints = [i64; $n];
            #[inline(always)]
            #[allow(non_snake_case)]
            fn into_shape(self) -> Result<Shape<[i64; $n]>> {
                let ($($e,)+) = self;
                Ok(Shape::Ints([$($e.to_dim()?),+]))
            }
        }
    )*};
}
tuples!(1: (A), 2: (A, B), 3: (A, B, C), 4: (A, B, C, D), 5: (A, B, C, D, E), 6: (A, B, C, D, E, F));

/// `SymInt` lists: plain integers when every entry is concrete.
fn sym_shape(v: &[SymInt]) -> Shape<DimVec> {
    let ints: Option<DimVec> = v.iter().map(SymInt::maybe_as_int).collect();
    match ints {
        Some(ints) => Shape::Ints(ints),
        None => Shape::Sym(v.to_vec()),
    }
}

impl IntoShape for &[SymInt] {
    type Ints = DimVec;
    fn into_shape(self) -> Result<Shape<DimVec>> {
        Ok(sym_shape(self))
    }
}
impl<const N: usize> IntoShape for [SymInt; N] {
    type Ints = DimVec;
    fn into_shape(self) -> Result<Shape<DimVec>> {
        Ok(sym_shape(&self))
    }
}
impl IntoShape for &Vec<SymInt> {
    type Ints = DimVec;
    fn into_shape(self) -> Result<Shape<DimVec>> {
        Ok(sym_shape(self))
    }
}
impl IntoShape for Vec<SymInt> {
    type Ints = DimVec;
    fn into_shape(self) -> Result<Shape<DimVec>> {
        Ok(sym_shape(&self))
    }
}

/// One size, index or offset, concrete or symbolic. See the [module
/// docs](self).
///
/// ```
/// use c10_core::shape_arg::IntoSymInt;
/// use c10_core::sym::SymInt;
/// assert_eq!(3i32.into_sym_int()?, SymInt::from(3));
/// assert_eq!((&SymInt::from(4)).into_sym_int()?, SymInt::from(4));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub trait IntoSymInt {
    /// Converts, refusing values that do not fit in `i64`.
    fn into_sym_int(self) -> Result<SymInt>;
}

impl<E: ShapeElem> IntoSymInt for E {
    #[inline(always)]
    fn into_sym_int(self) -> Result<SymInt> {
        Ok(SymInt::Int(self.to_dim()?))
    }
}
impl IntoSymInt for SymInt {
    #[inline]
    fn into_sym_int(self) -> Result<SymInt> {
        Ok(self)
    }
}
impl IntoSymInt for &SymInt {
    #[inline]
    fn into_sym_int(self) -> Result<SymInt> {
        Ok(self.clone())
    }
}

/// A `slice` bound: absent (`None`, Python's empty bound) or a value.
///
/// ```
/// use c10_core::shape_arg::{IntoSliceBound, SliceBound};
/// use c10_core::sym::SymInt;
/// assert_eq!(None.into_slice_bound()?, None);
/// assert_eq!(Some(2).into_slice_bound()?, Some(SymInt::from(2)));
/// assert_eq!(5usize.into_slice_bound()?, Some(SymInt::from(5)));
/// assert_eq!(SliceBound(Some(SymInt::from(1))).into_slice_bound()?, Some(SymInt::from(1)));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
pub trait IntoSliceBound {
    /// Converts, refusing values that do not fit in `i64`.
    fn into_slice_bound(self) -> Result<Option<SymInt>>;
    /// The bound as an `Option<i64>` without converting, where it already
    /// is one; `None` otherwise (then use
    /// [`into_slice_bound`](Self::into_slice_bound)).
    ///
    /// ```
    /// use c10_core::shape_arg::IntoSliceBound;
    /// assert_eq!(Some(2i64).int_bound(), Some(Some(2)));
    /// assert_eq!(2i64.int_bound(), None);
    /// ```
    #[inline(always)]
    fn int_bound(&self) -> Option<Option<i64>> {
        None
    }
}

/// An optional `SymInt` bound, for `slice` (a bare `Option<SymInt>` is
/// not accepted, so that a plain `None` needs no type annotation).
///
/// ```
/// use c10_core::shape_arg::{IntoSliceBound, SliceBound};
/// assert_eq!(SliceBound(None).into_slice_bound()?, None);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct SliceBound(pub Option<SymInt>);

impl IntoSliceBound for Option<i64> {
    #[inline(always)]
    fn int_bound(&self) -> Option<Option<i64>> {
        Some(*self)
    }
    #[inline(always)]
    fn into_slice_bound(self) -> Result<Option<SymInt>> {
        Ok(self.map(SymInt::Int))
    }
}
impl IntoSliceBound for SliceBound {
    #[inline]
    fn into_slice_bound(self) -> Result<Option<SymInt>> {
        Ok(self.0)
    }
}
impl<T: IntoSymInt> IntoSliceBound for T {
    #[inline(always)]
    fn into_slice_bound(self) -> Result<Option<SymInt>> {
        Ok(Some(self.into_sym_int()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(s: impl IntoShape) -> Result<Vec<i64>> {
        Ok(s.into_shape()?
            .to_sym_ints()
            .iter()
            .filter_map(SymInt::maybe_as_int)
            .collect())
    }

    #[test]
    fn every_accepted_form_converts() -> Result<()> {
        let want = vec![2i64, 3];
        assert_eq!(ints(&[2i64, 3][..])?, want);
        assert_eq!(ints(&[2usize, 3][..])?, want);
        assert_eq!(ints([2i32, 3])?, want);
        assert_eq!(ints([2usize, 3])?, want);
        assert_eq!(ints(&[2, 3])?, want);
        assert_eq!(ints(vec![2i64, 3])?, want);
        assert_eq!(ints(vec![2usize, 3])?, want);
        let v = vec![2usize, 3];
        assert_eq!(ints(&v)?, want);
        assert_eq!(v.len(), 2);
        assert_eq!(ints((2, 3))?, want);
        assert_eq!(ints((2usize, 3i64))?, want);
        assert_eq!(ints((1, 2, 3, 4, 5, 6))?.len(), 6);
        assert_eq!(ints(-1)?, vec![-1]);
        assert_eq!(ints(())?, Vec::<i64>::new());
        assert_eq!(ints(vec![SymInt::from(2), SymInt::from(3)])?, want);
        Ok(())
    }

    #[test]
    fn oversized_unsigned_values_are_errors() {
        let big = i64::MAX as usize + 1;
        for r in [
            [big, 1].into_shape().map(|_| ()),
            vec![1, big].into_shape().map(|_| ()),
            (1usize, big).into_shape().map(|_| ()),
            big.into_shape().map(|_| ()),
            big.into_sym_int().map(|_| ()),
        ] {
            let e = r.unwrap_err();
            assert_eq!(
                e.to_string(),
                "value cannot be converted to type int64_t without overflow"
            );
        }
        assert_eq!(
            (i64::MAX as usize).into_sym_int().unwrap(),
            SymInt::from(i64::MAX)
        );
    }

    #[test]
    fn symbolic_lists_stay_symbolic() -> Result<()> {
        let env = crate::sym::ShapeEnv::new();
        let s = env.create_symbol(4, "n")?;
        let shape = vec![s.clone(), SymInt::from(2)].into_shape()?;
        assert!(shape.ints().is_none());
        assert_eq!(shape.to_sym_ints()[0], s);
        Ok(())
    }
}
