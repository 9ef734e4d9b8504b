//! The error type of tensor operations.

use c10_storage::{AllocError, StorageError};

use crate::scalar_type::ScalarType;

/// What kind of failure a [`TensorError`] is, for callers that branch on
/// it (the messages stay PyTorch's words). The kinds follow PyTorch's
/// exception classes and c10's error types.
///
/// ```
/// use c10_core::{ErrorKind, ScalarType, Tensor};
/// let t = Tensor::zeros(&[2, 3], ScalarType::Float)?;
/// let e = t.size(5).unwrap_err();
/// assert_eq!(e.kind(), ErrorKind::Index);
/// assert_eq!(e.kind().python_exception(), "IndexError");
/// let e = t.get::<i64>(&[0, 0]).unwrap_err();
/// assert_eq!(e.kind(), ErrorKind::Type);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A dim or an element index out of range (PyTorch: `IndexError`).
    Index,
    /// A bad argument value (PyTorch: `ValueError`).
    Value,
    /// The wrong element type (PyTorch: `TypeError`).
    Type,
    /// No kernel for this dtype or device (PyTorch: `NotImplementedError`).
    NotImplemented,
    /// The allocator could not provide the memory (PyTorch:
    /// `torch.OutOfMemoryError`).
    OutOfMemory,
    /// Memory on a device the operation cannot reach, or devices that do not
    /// match.
    Device,
    /// A storage-level refusal: read-only, not resizable, pinned by an
    /// export, held by this thread (would deadlock), no allocator.
    Storage,
    /// Any other failed check (PyTorch: `RuntimeError`).
    Runtime,
}

impl ErrorKind {
    /// The Python exception PyTorch raises for this kind.
    ///
    /// ```
    /// use c10_core::ErrorKind;
    /// assert_eq!(ErrorKind::NotImplemented.python_exception(), "NotImplementedError");
    /// assert_eq!(ErrorKind::Storage.python_exception(), "RuntimeError");
    /// ```
    pub fn python_exception(self) -> &'static str {
        match self {
            ErrorKind::Index => "IndexError",
            ErrorKind::Value => "ValueError",
            ErrorKind::Type => "TypeError",
            ErrorKind::NotImplemented => "NotImplementedError",
            ErrorKind::OutOfMemory => "torch.OutOfMemoryError",
            ErrorKind::Device | ErrorKind::Storage | ErrorKind::Runtime => "RuntimeError",
        }
    }
}

/// Why a tensor operation failed. Messages follow PyTorch's wording where
/// PyTorch has one, with the values involved; [`TensorError::kind`] says
/// which kind of failure it is.
///
/// ```
/// use c10_core::{ErrorKind, ScalarType, Tensor, TensorError};
/// let t = Tensor::zeros(&[2], ScalarType::Byte)?;
/// match t.fill_(300) {
///     Err(e @ TensorError::Runtime(_)) => {
///         assert_eq!(e.kind(), ErrorKind::Runtime);
///         assert_eq!(e.to_string(), "value cannot be converted to type uint8_t without overflow");
///     }
///     other => panic!("unexpected {other:?}"),
/// }
/// # Ok::<(), TensorError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TensorError {
    /// PyTorch raises `IndexError` for this one (dimension wrapping, select,
    /// narrow start, element indices).
    #[error("{0}")]
    Index(String),
    /// PyTorch raises `RuntimeError` for this one.
    #[error("{0}")]
    Runtime(String),
    /// PyTorch raises `ValueError` for this one.
    #[error("{0}")]
    Value(String),
    /// PyTorch raises `NotImplementedError`: the operation has no kernel for
    /// this dtype (`"arange_cpu" not implemented for 'Bool'`).
    #[error("{0}")]
    NotImplemented(String),
    /// The element type asked for is not the tensor's dtype.
    #[error(
        "expected a tensor of dtype {expected} but this tensor has dtype {actual}; \
         convert it first with `t.to(ScalarType::{expected:?})?` (the prelude's `DtypeOps`), \
         or read elements of any dtype as f64 with `to_f64_vec()`"
    )]
    DtypeMismatch {
        /// The dtype the caller's element type maps to.
        expected: ScalarType,
        /// The tensor's dtype.
        actual: ScalarType,
    },
    /// A storage-level failure (allocation, read-only, device memory).
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// PyTorch raises `TypeError` for this one (`view_as_real is only
    /// supported for complex tensors`).
    #[error("{0}")]
    Type(String),
    /// A shape check failed (a dim out of range, a shape that does not
    /// fit the input, sizes that do not broadcast): the kind and the
    /// values involved, with PyTorch's message as the text. Boxed, so that
    /// `TensorError` (and every `Result` of an op) stays small.
    #[error(transparent)]
    Shape(Box<ShapeError>),
}

impl From<ShapeError> for TensorError {
    // Errors are the cold path: kept out of line so that the boxing does
    // not grow the inlined checks of the view ops.
    #[cold]
    #[inline(never)]
    fn from(e: ShapeError) -> Self {
        TensorError::Shape(Box::new(e))
    }
}

/// Which shape check a [`ShapeError`] is: callers branch on this, never on
/// the message (which stays PyTorch's, word for word).
///
/// ```
/// use c10_core::{ShapeErrorKind, ScalarType, Tensor};
/// let t = Tensor::zeros(&[2, 3], ScalarType::Float)?;
/// let e = t.size(5).unwrap_err();
/// assert_eq!(e.shape_error().map(|s| s.kind()), Some(ShapeErrorKind::DimOutOfRange));
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ShapeErrorKind {
    /// A dim outside `[-ndim, ndim - 1]` (`Dimension out of range
    /// (expected to be in range of [-2, 1], but got 5)`; `IndexError`).
    DimOutOfRange,
    /// A dim given to a 0-d tensor where none is accepted (`Dimension
    /// specified as 0 but tensor has no dimensions`; `IndexError`).
    NoDims,
    /// A negative rank (`Rank cannot be negative but got -1`; `IndexError`).
    NegativeRank,
    /// A shape whose element count is not the input's (`shape '[5, 5]' is
    /// invalid for input of size 24`).
    NumelMismatch,
    /// More than one `-1` in a shape (`only one dimension can be
    /// inferred`).
    MultipleInferred,
    /// A `-1` beside a zero, for an input of 0 elements (`cannot reshape
    /// tensor of 0 elements into shape [-1, 0] because the unspecified
    /// dimension size -1 can be any value and is ambiguous`).
    AmbiguousInferred,
    /// A negative size other than `-1` in a shape (`invalid shape dimension
    /// -2 at index 0 of shape [-2, 12]`).
    InvalidSize,
    /// Two sizes that do not broadcast (`The size of tensor a (3) must
    /// match the size of tensor b (4) at non-singleton dimension 1`).
    BroadcastMismatch,
    /// A negative size met while broadcasting shapes (`Attempting to
    /// broadcast a dimension with negative length!`; `torch.broadcast_shapes`
    /// raises it as `ValueError`).
    BroadcastNegative,
    /// `expand` given fewer sizes than the tensor has dims (`expand(
    /// torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided
    /// (1) must be greater or equal to the number of dimensions in the
    /// tensor (2)`).
    ExpandTooFewSizes,
    /// `expand` to a size other than a non-singleton dim's own (`The
    /// expanded size of the tensor (4) must match the existing size (3) at
    /// non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes:
    /// [2, 3]`).
    ExpandMismatch,
    /// A `-1` in a dim that `expand` adds (`The expanded size of the
    /// tensor (-1) isn't allowed in a leading, non-existing dimension 0`).
    ExpandInferredNewDim,
    /// `view` of strides that cannot express the new shape (`view size is
    /// not compatible with input tensor's size and stride (at least one
    /// dimension spans across two contiguous subspaces). Use .reshape(...)
    /// instead.`).
    ViewIncompatible,
    /// An op that needs a dim given a 0-d tensor (`slice() cannot be
    /// applied to a 0-dim tensor.`, `split expects at least a 1-dimensional
    /// tensor`; `IndexError` for `slice` and `select`, as PyTorch).
    ZeroDim,
    /// An index or a start outside its dim (`select(): index 5 out of
    /// range for tensor of size [2, 3] at dimension 0`, `start out of range
    /// (expected to be in range of [-3, 3], but got 4)`; `IndexError`).
    IndexOutOfRange,
    /// More indices than dims (`too many indices for tensor of dimension
    /// 2`; `IndexError`).
    TooManyIndices,
    /// A length that is negative or runs past its dim (`narrow(): length
    /// must be non-negative.`, `start (2) + length (3) exceeds dimension
    /// size (4).`, `maximum size for tensor at dimension 1 is 4 but size is
    /// 5`).
    InvalidLength,
    /// A step that is not positive (`slice step must be positive`, `step
    /// is 0 but must be > 0`).
    InvalidStep,
    /// Split sizes or a section count that do not fit the dim
    /// (`split_with_sizes expects split_sizes to sum exactly to 4 ...`,
    /// `chunk expects `chunks` to be greater than 0, got: 0`).
    InvalidSplit,
    /// `unflatten`'s sizes empty or not multiplying up to the dim's size
    /// (`unflatten: Provided sizes [3, 3] don't multiply up to the size of
    /// dim 1 (8) in the input tensor`).
    InvalidUnflatten,
    /// A dim list that does not fit the tensor or its partner list, or
    /// repeats a dim (`permute(): duplicate dims are not allowed.`,
    /// `movedim: repeated dim in `source` ([0, 0])`).
    InvalidDimList,
    /// A rank the op does not accept (`t() expects a tensor with <= 2
    /// dimensions, but self is 3D`).
    WrongRank,
    /// Two dims that must differ (`diagonal dimensions cannot be identical
    /// 0, 0`).
    IdenticalDims,
    /// `as_strided` arguments that are no valid geometry (lengths that
    /// differ, a negative size, stride or storage offset).
    InvalidGeometry,
    /// A symbolic decision that depends on an unbacked size (no hint):
    /// `Could not guard on data-dependent expression ...` (PyTorch's
    /// `GuardOnDataDependentSymNode`, a `RuntimeError`). Ops with a
    /// data-independent fallback (the open `slice` clamps) match on it.
    DataDependent,
}

impl ShapeErrorKind {
    /// The Python exception PyTorch raises for this kind, unless the error
    /// says otherwise ([`ShapeError::error_kind`]: PyTorch raises
    /// `IndexError` for `slice` of a 0-d tensor, `RuntimeError` for
    /// `narrow` of one).
    ///
    /// ```
    /// use c10_core::ShapeErrorKind;
    /// assert_eq!(ShapeErrorKind::DimOutOfRange.error_kind().python_exception(), "IndexError");
    /// assert_eq!(ShapeErrorKind::NumelMismatch.error_kind().python_exception(), "RuntimeError");
    /// ```
    pub fn error_kind(self) -> ErrorKind {
        match self {
            ShapeErrorKind::DimOutOfRange
            | ShapeErrorKind::NoDims
            | ShapeErrorKind::NegativeRank => ErrorKind::Index,
            ShapeErrorKind::IndexOutOfRange | ShapeErrorKind::TooManyIndices => ErrorKind::Index,
            ShapeErrorKind::NumelMismatch
            | ShapeErrorKind::MultipleInferred
            | ShapeErrorKind::AmbiguousInferred
            | ShapeErrorKind::InvalidSize
            | ShapeErrorKind::BroadcastMismatch
            | ShapeErrorKind::BroadcastNegative
            | ShapeErrorKind::ExpandTooFewSizes
            | ShapeErrorKind::ExpandMismatch
            | ShapeErrorKind::ExpandInferredNewDim
            | ShapeErrorKind::ViewIncompatible
            | ShapeErrorKind::ZeroDim
            | ShapeErrorKind::InvalidLength
            | ShapeErrorKind::InvalidStep
            | ShapeErrorKind::InvalidSplit
            | ShapeErrorKind::InvalidUnflatten
            | ShapeErrorKind::InvalidDimList
            | ShapeErrorKind::WrongRank
            | ShapeErrorKind::IdenticalDims
            | ShapeErrorKind::InvalidGeometry
            | ShapeErrorKind::DataDependent => ErrorKind::Runtime,
        }
    }
}

/// A failed shape check: its [`ShapeErrorKind`], the dim and the sizes
/// involved where the check knows them as integers (not for symbolic
/// shapes), and PyTorch's message as its `Display`.
///
/// ```
/// use c10_core::{ShapeError, ShapeErrorKind, TensorError};
/// let e = ShapeError::new(ShapeErrorKind::NumelMismatch, "shape '[5, 5]' is invalid for input of size 24")
///     .with_sizes(&[5, 5])
///     .with_numel(24);
/// assert_eq!(e.sizes(), Some(&[5, 5][..]));
/// assert_eq!(e.numel(), Some(24));
/// let t: TensorError = e.into();
/// assert_eq!(t.to_string(), "shape '[5, 5]' is invalid for input of size 24");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ShapeError {
    kind: ShapeErrorKind,
    error_kind: ErrorKind,
    dim: Option<i64>,
    index: Option<i64>,
    sizes: Option<Vec<i64>>,
    numel: Option<i64>,
    message: String,
}

impl ShapeError {
    /// A shape error of `kind` with PyTorch's `message`.
    ///
    /// ```
    /// use c10_core::{ShapeError, ShapeErrorKind};
    /// let e = ShapeError::new(ShapeErrorKind::MultipleInferred, "only one dimension can be inferred");
    /// assert_eq!(e.kind(), ShapeErrorKind::MultipleInferred);
    /// assert_eq!(e.to_string(), "only one dimension can be inferred");
    /// ```
    pub fn new(kind: ShapeErrorKind, message: impl Into<String>) -> ShapeError {
        ShapeError {
            kind,
            error_kind: kind.error_kind(),
            dim: None,
            index: None,
            sizes: None,
            numel: None,
            message: message.into(),
        }
    }

    /// The same error, naming the dim it is about.
    ///
    /// ```
    /// use c10_core::{ShapeError, ShapeErrorKind};
    /// let e = ShapeError::new(ShapeErrorKind::DimOutOfRange, "..").with_dim(5);
    /// assert_eq!(e.dim(), Some(5));
    /// ```
    pub fn with_dim(mut self, dim: i64) -> ShapeError {
        self.dim = Some(dim);
        self
    }

    /// The same error, naming the index (or start) it is about.
    ///
    /// ```
    /// use c10_core::{ShapeError, ShapeErrorKind};
    /// let e = ShapeError::new(ShapeErrorKind::IndexOutOfRange, "..").with_index(5);
    /// assert_eq!(e.index(), Some(5));
    /// ```
    pub fn with_index(mut self, index: i64) -> ShapeError {
        self.index = Some(index);
        self
    }

    /// The same error, naming the index it is about when it is concrete.
    ///
    /// ```
    /// use c10_core::{ShapeError, ShapeErrorKind};
    /// let e = ShapeError::new(ShapeErrorKind::IndexOutOfRange, "..").with_index_of(&7i64);
    /// assert_eq!(e.index(), Some(7));
    /// ```
    pub fn with_index_of<T: crate::sym::ShapeInt>(self, index: &T) -> ShapeError {
        match index.maybe_as_int() {
            Some(i) => self.with_index(i),
            None => self,
        }
    }

    /// The same error, raised as `error_kind` where PyTorch's class for
    /// this op differs from the kind's usual one.
    ///
    /// ```
    /// use c10_core::{ErrorKind, ShapeError, ShapeErrorKind};
    /// let e = ShapeError::new(ShapeErrorKind::ZeroDim, "slice() cannot be applied to a 0-dim tensor.")
    ///     .with_error_kind(ErrorKind::Index);
    /// assert_eq!(e.error_kind(), ErrorKind::Index);
    /// ```
    pub fn with_error_kind(mut self, error_kind: ErrorKind) -> ShapeError {
        self.error_kind = error_kind;
        self
    }

    /// The same error, with the (concrete) sizes it is about.
    ///
    /// ```
    /// use c10_core::{ShapeError, ShapeErrorKind};
    /// let e = ShapeError::new(ShapeErrorKind::InvalidSize, "..").with_sizes(&[-2, 12]);
    /// assert_eq!(e.sizes(), Some(&[-2, 12][..]));
    /// ```
    pub fn with_sizes(mut self, sizes: &[i64]) -> ShapeError {
        self.sizes = Some(sizes.to_vec());
        self
    }

    /// The same error, with the sizes it is about when every one is
    /// concrete (symbolic sizes stay in the message only).
    ///
    /// ```
    /// use c10_core::{ShapeError, ShapeErrorKind};
    /// let e = ShapeError::new(ShapeErrorKind::ExpandMismatch, "..").with_sizes_of(&[2i64, 4]);
    /// assert_eq!(e.sizes(), Some(&[2, 4][..]));
    /// ```
    pub fn with_sizes_of<T: crate::sym::ShapeInt>(self, sizes: &[T]) -> ShapeError {
        let concrete: Option<Vec<i64>> = sizes.iter().map(T::maybe_as_int).collect();
        match concrete {
            Some(c) => ShapeError {
                sizes: Some(c),
                ..self
            },
            None => self,
        }
    }

    /// The same error, with the (concrete) element count it is about.
    ///
    /// ```
    /// use c10_core::{ShapeError, ShapeErrorKind};
    /// let e = ShapeError::new(ShapeErrorKind::NumelMismatch, "..").with_numel(24);
    /// assert_eq!(e.numel(), Some(24));
    /// ```
    pub fn with_numel(mut self, numel: i64) -> ShapeError {
        self.numel = Some(numel);
        self
    }

    /// Which check failed.
    ///
    /// ```
    /// use c10_core::{ShapeError, ShapeErrorKind};
    /// assert_eq!(ShapeError::new(ShapeErrorKind::NoDims, "..").kind(), ShapeErrorKind::NoDims);
    /// ```
    pub fn kind(&self) -> ShapeErrorKind {
        self.kind
    }

    /// The dim the check was about, if any.
    ///
    /// ```
    /// use c10_core::{ShapeError, ShapeErrorKind};
    /// assert_eq!(ShapeError::new(ShapeErrorKind::NoDims, "..").dim(), None);
    /// ```
    pub fn dim(&self) -> Option<i64> {
        self.dim
    }

    /// The index (or start) the check was about, if any.
    ///
    /// ```
    /// use c10_core::{ShapeError, ShapeErrorKind};
    /// assert_eq!(ShapeError::new(ShapeErrorKind::NoDims, "..").index(), None);
    /// ```
    pub fn index(&self) -> Option<i64> {
        self.index
    }

    /// The Python exception class of this error: its kind's
    /// ([`ShapeErrorKind::error_kind`]) unless PyTorch raises another one
    /// for this op.
    ///
    /// ```
    /// use c10_core::{ErrorKind, ShapeError, ShapeErrorKind};
    /// assert_eq!(ShapeError::new(ShapeErrorKind::NoDims, "..").error_kind(), ErrorKind::Index);
    /// ```
    pub fn error_kind(&self) -> ErrorKind {
        self.error_kind
    }

    /// The sizes the check was about, where they are concrete.
    ///
    /// ```
    /// use c10_core::{ShapeError, ShapeErrorKind};
    /// assert_eq!(ShapeError::new(ShapeErrorKind::NoDims, "..").sizes(), None);
    /// ```
    pub fn sizes(&self) -> Option<&[i64]> {
        self.sizes.as_deref()
    }

    /// The element count the check was about, where it is concrete.
    ///
    /// ```
    /// use c10_core::{ShapeError, ShapeErrorKind};
    /// assert_eq!(ShapeError::new(ShapeErrorKind::NoDims, "..").numel(), None);
    /// ```
    pub fn numel(&self) -> Option<i64> {
        self.numel
    }
}

impl From<AllocError> for TensorError {
    fn from(e: AllocError) -> Self {
        TensorError::Storage(StorageError::Alloc(e))
    }
}

/// A dtype name or code that does not parse (PyTorch's `TypeError` for
/// an unknown dtype).
impl From<crate::scalar_type::ScalarTypeError> for TensorError {
    fn from(e: crate::scalar_type::ScalarTypeError) -> Self {
        TensorError::Value(e.to_string())
    }
}

/// A device string that does not parse (PyTorch's `RuntimeError`).
impl From<c10_storage::DeviceParseError> for TensorError {
    fn from(e: c10_storage::DeviceParseError) -> Self {
        TensorError::runtime(e.to_string())
    }
}

/// A dispatch key or key set that does not parse or is out of range.
impl From<crate::dispatch_key::DispatchKeyError> for TensorError {
    fn from(e: crate::dispatch_key::DispatchKeyError) -> Self {
        TensorError::runtime(e.to_string())
    }
}

/// A file mapping failure (`alloc_cpu::mmap`).
impl From<alloc_cpu::mmap::MmapError> for TensorError {
    fn from(e: alloc_cpu::mmap::MmapError) -> Self {
        TensorError::runtime(e.to_string())
    }
}

/// A geometry container failure (too many dims to allocate, a dim out of
/// range) surfaces as PyTorch's `RuntimeError` with the container's message.
impl From<crate::sizes_and_strides::SizesAndStridesError> for TensorError {
    fn from(e: crate::sizes_and_strides::SizesAndStridesError) -> Self {
        TensorError::runtime(e.to_string())
    }
}

impl TensorError {
    /// Whether PyTorch would raise `IndexError` here.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// let t = Tensor::zeros(&[2, 3], ScalarType::Float)?;
    /// assert!(t.size(2).unwrap_err().is_index_error());
    /// assert!(!t.as_strided(&[4, 4], &[4, 1], None).unwrap_err().is_index_error());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn is_index_error(&self) -> bool {
        self.kind() == ErrorKind::Index
    }

    /// Which kind of failure this is.
    ///
    /// ```
    /// use c10_core::{ErrorKind, ScalarType, Tensor};
    /// let e = Tensor::arange(0, 3, 1, ScalarType::Bool).unwrap_err();
    /// assert_eq!(e.kind(), ErrorKind::NotImplemented);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match self {
            TensorError::Index(_) => ErrorKind::Index,
            TensorError::Runtime(_) => ErrorKind::Runtime,
            TensorError::Value(_) => ErrorKind::Value,
            TensorError::NotImplemented(_) => ErrorKind::NotImplemented,
            TensorError::DtypeMismatch { .. } => ErrorKind::Type,
            TensorError::Type(_) => ErrorKind::Type,
            TensorError::Shape(e) => e.error_kind(),
            TensorError::Storage(e) => match e {
                StorageError::Alloc(AllocError::OutOfMemory { .. }) => ErrorKind::OutOfMemory,
                StorageError::NotHostAccessible(_) | StorageError::DeviceMismatch { .. } => {
                    ErrorKind::Device
                }
                StorageError::Alloc(AllocError::NotRegistered(_))
                | StorageError::Alloc(AllocError::WrongDeviceType { .. }) => ErrorKind::Device,
                _ => ErrorKind::Storage,
            },
        }
    }

    /// A `RuntimeError` with this message (for crates that build on this
    /// one and report PyTorch's errors).
    ///
    /// ```
    /// use c10_core::{ErrorKind, TensorError};
    /// assert_eq!(TensorError::runtime("boom").kind(), ErrorKind::Runtime);
    /// ```
    pub fn runtime(msg: impl Into<String>) -> TensorError {
        TensorError::Runtime(msg.into())
    }

    /// An `IndexError` with this message.
    ///
    /// ```
    /// use c10_core::{ErrorKind, TensorError};
    /// assert_eq!(TensorError::index("index 3 is out of bounds").kind(), ErrorKind::Index);
    /// ```
    pub fn index(msg: impl Into<String>) -> TensorError {
        TensorError::Index(msg.into())
    }

    /// The shape error inside, if this is one (to branch on its kind and
    /// values rather than on the message).
    ///
    /// ```
    /// use c10_core::{ShapeErrorKind, ScalarType, Tensor};
    /// let t = Tensor::zeros(&[2], ScalarType::Float)?;
    /// let e = t.size(-3).unwrap_err();
    /// let s = e.shape_error().unwrap();
    /// assert_eq!((s.kind(), s.dim()), (ShapeErrorKind::DimOutOfRange, Some(-3)));
    /// assert!(t.get::<i64>(&[0]).unwrap_err().shape_error().is_none());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn shape_error(&self) -> Option<&ShapeError> {
        match self {
            TensorError::Shape(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

/// Shorthand for results of tensor operations.
pub type Result<T, E = TensorError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_error_stays_small() {
        // The shape data lives behind a box: results of ops do not grow.
        assert!(
            std::mem::size_of::<TensorError>() <= 48,
            "{}",
            std::mem::size_of::<TensorError>()
        );
    }
}
