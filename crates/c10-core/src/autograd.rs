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
pub trait AutogradMetaInterface: Debug + Send + Sync {
    /// Whether gradients are tracked.
    fn requires_grad(&self) -> bool;
    /// Sets whether gradients are tracked.
    fn set_requires_grad(&mut self, requires_grad: bool);
    /// A copy for a new tensor (copy-on-write of a shared `TensorImpl`).
    fn clone_box(&self) -> Box<dyn AutogradMetaInterface>;
}

/// The metadata allocated when `requires_grad` is first set to `true`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AutogradMeta {
    /// Whether gradients are tracked.
    pub requires_grad: bool,
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
}
