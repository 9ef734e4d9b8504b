//! `ExtraMeta`: the out-of-line part of a `TensorImpl`, for what most
//! tensors never need.
//!
//! c10 keeps two such pointers in `TensorImpl`, `autograd_meta_` and
//! `extra_meta_` (symbolic sizes, named dims, ...), both null for a plain
//! tensor. We keep one thin pointer (8 bytes, `None` for a plain tensor)
//! to a block that holds all of them: a tensor that needs none of it pays
//! one null word and no allocation, and the bytes saved against a fat
//! `Box<dyn AutogradMetaInterface>` keep `TensorImpl` within its 176-byte
//! budget as fields are added (the binding slot).
//!
//! The block is private to the crate; [`TensorImpl::autograd_meta`]
//! (crate::TensorImpl::autograd_meta) is the public view of it.

use crate::autograd::AutogradMetaInterface;
use crate::sym::SymInt;
use c10_storage::Device;

/// c10's `SymbolicShapeMeta`: the real geometry of a tensor with symbolic
/// sizes or strides (its inline fields then hold the hints; see
/// `docs/symbolic-shapes.md`), and, for a fake tensor, the device it
/// stands for.
#[derive(Clone, Debug)]
pub(crate) struct SymbolicShapeMeta {
    pub(crate) sizes: Vec<SymInt>,
    pub(crate) strides: Vec<SymInt>,
    pub(crate) storage_offset: SymInt,
    /// `multiply_integers(sizes)`, computed once (c10 computes it lazily;
    /// the geometry never changes after construction here).
    pub(crate) numel: SymInt,
    /// The example device of a fake tensor (c10's `fake_device_`); `None`
    /// for a plain meta tensor.
    pub(crate) fake_device: Option<Device>,
    /// `is_contiguous()`, decided (and guarded) once, on first use, like
    /// c10's lazily filled `is_contiguous_` cache.
    pub(crate) is_contiguous: std::sync::OnceLock<bool>,
    /// The byte size of the storage as a `SymInt` (c10's symbolic
    /// `StorageImpl::sym_nbytes` of a fake tensor's storage), shared by
    /// the views made from this tensor; `None`: the storage's own size.
    pub(crate) storage_nbytes: Option<SymInt>,
}

/// What a `TensorImpl` holds out of line. `None` in the `TensorImpl`
/// whenever every field here is empty, so a tensor that once required
/// grad and no longer holds metadata goes back to the null pointer.
#[derive(Debug)]
pub(crate) struct ExtraMeta {
    /// c10's `autograd_meta_`: allocated only for a tensor that requires
    /// grad, or that is a view or output of one.
    pub(crate) autograd: Option<Box<dyn AutogradMetaInterface>>,
    /// Symbolic sizes, strides, offset and numel (c10's
    /// `symbolic_shape_meta_`), for a tensor made with `SymInt`s.
    pub(crate) symbolic: Option<Box<SymbolicShapeMeta>>,
}

impl ExtraMeta {
    /// The block for `autograd` alone, or no block at all when there is
    /// nothing to hold.
    #[inline]
    pub(crate) fn with_autograd(
        autograd: Option<Box<dyn AutogradMetaInterface>>,
    ) -> Option<Box<ExtraMeta>> {
        autograd.map(|a| {
            Box::new(ExtraMeta {
                autograd: Some(a),
                symbolic: None,
            })
        })
    }

    /// Whether every field is empty (the block can be dropped).
    fn is_empty(&self) -> bool {
        self.autograd.is_none() && self.symbolic.is_none()
    }
}

impl Clone for ExtraMeta {
    fn clone(&self) -> Self {
        ExtraMeta {
            autograd: self.autograd.as_ref().map(|m| m.clone_box()),
            symbolic: self.symbolic.clone(),
        }
    }
}

/// The autograd metadata in `extra`, if any.
#[inline]
pub(crate) fn autograd(extra: &Option<Box<ExtraMeta>>) -> Option<&dyn AutogradMetaInterface> {
    extra.as_deref().and_then(|e| e.autograd.as_deref())
}

/// The symbolic geometry in `extra`, if any.
#[inline]
pub(crate) fn symbolic(extra: &Option<Box<ExtraMeta>>) -> Option<&SymbolicShapeMeta> {
    extra.as_deref().and_then(|e| e.symbolic.as_deref())
}

/// The block for `autograd` and `symbolic`, or none when both are empty.
pub(crate) fn with_parts(
    autograd: Option<Box<dyn AutogradMetaInterface>>,
    symbolic: Option<Box<SymbolicShapeMeta>>,
) -> Option<Box<ExtraMeta>> {
    if autograd.is_none() && symbolic.is_none() {
        return None;
    }
    Some(Box::new(ExtraMeta { autograd, symbolic }))
}

/// Replaces the autograd metadata in `extra`, allocating the block only
/// when there is something to hold and dropping it when it becomes empty.
pub(crate) fn set_autograd(
    extra: &mut Option<Box<ExtraMeta>>,
    autograd: Option<Box<dyn AutogradMetaInterface>>,
) {
    match extra {
        Some(e) => {
            e.autograd = autograd;
            if e.is_empty() {
                *extra = None;
            }
        }
        None => *extra = ExtraMeta::with_autograd(autograd),
    }
}

#[cfg(test)]
mod symbolic_tests {
    use super::*;

    #[test]
    fn a_symbolic_block_is_not_empty_and_survives_autograd_changes() {
        let meta = SymbolicShapeMeta {
            sizes: vec![SymInt::from(2)],
            strides: vec![SymInt::from(1)],
            storage_offset: SymInt::from(0),
            numel: SymInt::from(2),
            fake_device: None,
            is_contiguous: std::sync::OnceLock::new(),
            storage_nbytes: None,
        };
        let mut extra = with_parts(None, Some(Box::new(meta)));
        assert!(extra.as_ref().is_some_and(|e| !e.is_empty()));
        set_autograd(&mut extra, None);
        assert!(
            symbolic(&extra).is_some(),
            "clearing autograd keeps the symbolic geometry"
        );
        assert!(symbolic(&extra.clone()).is_some());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::autograd::AutogradMeta;

    #[test]
    fn the_block_exists_only_while_it_holds_something() {
        let mut extra = ExtraMeta::with_autograd(None);
        assert!(extra.is_none());
        set_autograd(&mut extra, Some(Box::new(AutogradMeta::leaf())));
        assert!(autograd(&extra).is_some_and(|m| m.requires_grad()));
        let copy = extra.clone();
        assert!(autograd(&copy).is_some_and(|m| m.is_leaf()));
        set_autograd(&mut extra, None);
        assert!(extra.is_none());
    }

    #[test]
    fn the_pointer_is_thin() {
        assert_eq!(
            std::mem::size_of::<Option<Box<ExtraMeta>>>(),
            std::mem::size_of::<usize>()
        );
    }
}
