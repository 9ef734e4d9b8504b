//! The autograd metadata slot.
//!
//! c10 keeps `unique_ptr<AutogradMetaInterface>` in every `TensorImpl`;
//! null means "requires_grad = false, no grad", so tensors that never need a
//! gradient allocate nothing. This crate has no autograd engine; the slot
//! and the allocation discipline are what it provides, and a higher layer
//! can plug its own metadata type in through [`AutogradMetaInterface`].

use std::fmt::Debug;

/// What a tensor's autograd metadata must provide (c10's
/// `AutogradMetaInterface`, reduced to what the tensor core reads).
///
/// ```
/// use c10_core::autograd::{AutogradMetaInterface, ViewOrigin};
///
/// // A minimal metadata type: the provided methods supply the defaults.
/// #[derive(Debug, Clone)]
/// struct Flag(bool);
/// impl AutogradMetaInterface for Flag {
///     fn requires_grad(&self) -> bool { self.0 }
///     fn set_requires_grad(&mut self, r: bool) { self.0 = r }
///     fn clone_box(&self) -> Box<dyn AutogradMetaInterface> { Box::new(self.clone()) }
/// }
/// assert!(Flag(true).is_leaf());
/// assert_eq!(Flag(true).view_origin(), ViewOrigin::NotAView);
/// ```
pub trait AutogradMetaInterface: Debug + Send + Sync {
    /// Whether gradients are tracked.
    ///
    /// ```
    /// use c10_core::autograd::{AutogradMeta, AutogradMetaInterface};
    /// let meta: Box<dyn AutogradMetaInterface> = Box::new(AutogradMeta::leaf());
    /// assert!(meta.requires_grad());
    /// ```
    fn requires_grad(&self) -> bool;
    /// Sets whether gradients are tracked.
    ///
    /// ```
    /// use c10_core::autograd::{AutogradMeta, AutogradMetaInterface};
    /// let mut meta = AutogradMeta::leaf();
    /// meta.set_requires_grad(false);
    /// assert!(!meta.requires_grad());
    /// ```
    fn set_requires_grad(&mut self, requires_grad: bool);
    /// A copy for a new tensor (copy-on-write of a shared `TensorImpl`).
    ///
    /// ```
    /// use c10_core::autograd::{AutogradMeta, AutogradMetaInterface, ViewOrigin};
    /// let meta = AutogradMeta::computed(ViewOrigin::OfNonLeaf);
    /// let copy: Box<dyn AutogradMetaInterface> = meta.clone_box();
    /// assert_eq!(copy.view_origin(), ViewOrigin::OfNonLeaf);
    /// assert!(!copy.is_leaf());
    /// ```
    fn clone_box(&self) -> Box<dyn AutogradMetaInterface>;
    /// Whether the tensor is a leaf: made by the user, not computed by a
    /// recorded operation (`is_leaf`). The default: a leaf.
    ///
    /// ```
    /// use c10_core::autograd::{AutogradMeta, AutogradMetaInterface, ViewOrigin};
    /// assert!(AutogradMeta::leaf().is_leaf());
    /// assert!(!AutogradMeta::computed(ViewOrigin::NotAView).is_leaf());
    /// ```
    fn is_leaf(&self) -> bool {
        true
    }
    /// What the tensor is a view of, for the in-place rules. The default:
    /// not a view.
    ///
    /// ```
    /// use c10_core::autograd::{AutogradMeta, AutogradMetaInterface, ViewOrigin};
    /// assert_eq!(AutogradMeta::no_grad_view().view_origin(), ViewOrigin::NoGrad);
    /// assert_eq!(AutogradMeta::leaf().view_origin(), ViewOrigin::NotAView);
    /// ```
    fn view_origin(&self) -> ViewOrigin {
        ViewOrigin::NotAView
    }
}

/// Where a view that takes part in autograd came from (PyTorch's
/// `CreationMeta`, reduced to what the in-place rules read).
///
/// ```
/// use c10_core::autograd::{AutogradMeta, ViewOrigin};
/// assert_eq!(ViewOrigin::default(), ViewOrigin::NotAView);
/// let view_of_leaf = AutogradMeta::computed(ViewOrigin::OfLeaf);
/// assert_eq!(view_of_leaf.view, ViewOrigin::OfLeaf);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ViewOrigin {
    /// Not a view, or a view of a tensor that does not require grad.
    #[default]
    NotAView,
    /// A view (possibly of a view) of a leaf that requires grad: in-place
    /// changes with grad mode on are refused (`a view of a leaf Variable
    /// that requires grad is being used in an in-place operation.`).
    OfLeaf,
    /// A view of a computed tensor that requires grad: in-place changes
    /// are allowed (PyTorch records them on the base).
    OfNonLeaf,
    /// A view made with grad mode off of a tensor that requires grad: it
    /// reports `requires_grad` (from its base) and is a leaf, and in-place
    /// changes with grad mode on are refused.
    NoGrad,
}

/// The metadata allocated when `requires_grad` is first set to `true`, or
/// when an operation with grad mode on makes a tensor from one that
/// requires grad.
///
/// ```
/// use c10_core::autograd::{AutogradMeta, AutogradMetaInterface, ViewOrigin};
/// let leaf = AutogradMeta::leaf();
/// assert!(leaf.requires_grad() && leaf.is_leaf());
/// let view = AutogradMeta::computed(ViewOrigin::OfLeaf);
/// assert!(!view.is_leaf());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutogradMeta {
    /// Whether gradients are tracked.
    pub requires_grad: bool,
    /// False when a recorded operation computed the tensor (PyTorch: it
    /// has a `grad_fn`).
    pub is_leaf: bool,
    /// What the tensor is a view of.
    pub view: ViewOrigin,
}

impl Default for AutogradMeta {
    fn default() -> Self {
        AutogradMeta::leaf()
    }
}

impl AutogradMeta {
    /// A leaf that requires grad (`requires_grad_()`).
    ///
    /// ```
    /// use c10_core::autograd::{AutogradMeta, ViewOrigin};
    /// let m = AutogradMeta::leaf();
    /// assert_eq!((m.requires_grad, m.is_leaf, m.view), (true, true, ViewOrigin::NotAView));
    /// assert_eq!(AutogradMeta::default(), m);
    /// ```
    pub fn leaf() -> AutogradMeta {
        AutogradMeta {
            requires_grad: true,
            is_leaf: true,
            view: ViewOrigin::NotAView,
        }
    }

    /// The output of a recorded operation on a tensor that requires grad.
    ///
    /// ```
    /// use c10_core::autograd::{AutogradMeta, ViewOrigin};
    /// let m = AutogradMeta::computed(ViewOrigin::OfNonLeaf);
    /// assert!(m.requires_grad && !m.is_leaf);
    /// ```
    pub fn computed(view: ViewOrigin) -> AutogradMeta {
        AutogradMeta {
            requires_grad: true,
            is_leaf: false,
            view,
        }
    }

    /// A view made with grad mode off of a tensor that requires grad.
    ///
    /// ```
    /// use c10_core::autograd::{AutogradMeta, ViewOrigin};
    /// let m = AutogradMeta::no_grad_view();
    /// assert!(m.requires_grad && m.is_leaf);
    /// assert_eq!(m.view, ViewOrigin::NoGrad);
    /// ```
    pub fn no_grad_view() -> AutogradMeta {
        AutogradMeta {
            requires_grad: true,
            is_leaf: true,
            view: ViewOrigin::NoGrad,
        }
    }
}

impl AutogradMetaInterface for AutogradMeta {
    fn requires_grad(&self) -> bool {
        self.requires_grad
    }
    fn set_requires_grad(&mut self, requires_grad: bool) {
        self.requires_grad = requires_grad;
    }
    fn clone_box(&self) -> Box<dyn AutogradMetaInterface> {
        Box::new(self.clone())
    }
    fn is_leaf(&self) -> bool {
        self.is_leaf
    }
    fn view_origin(&self) -> ViewOrigin {
        self.view
    }
}

/// The autograd metadata of a view of `base` made now (PyTorch's rules
/// for differentiable views): none when `base` does not require grad; with
/// grad mode on, a computed tensor that remembers whether its base is a
/// leaf; with grad mode off, a "no_grad view".
pub(crate) fn view_meta(
    base: Option<&dyn AutogradMetaInterface>,
) -> Option<Box<dyn AutogradMetaInterface>> {
    let base = base.filter(|m| m.requires_grad())?;
    if !crate::GradMode::is_enabled() {
        return Some(Box::new(AutogradMeta::no_grad_view()));
    }
    let origin = match base.view_origin() {
        ViewOrigin::OfLeaf => ViewOrigin::OfLeaf,
        ViewOrigin::NoGrad => ViewOrigin::NoGrad,
        _ if base.is_leaf() => ViewOrigin::OfLeaf,
        _ => ViewOrigin::OfNonLeaf,
    };
    Some(Box::new(AutogradMeta::computed(origin)))
}

/// The long message PyTorch gives for an in-place change, with grad mode
/// on, of a view made with grad mode off.
pub(crate) const NO_GRAD_VIEW_INPLACE: &str = "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).";
