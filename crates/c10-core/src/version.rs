//! The version counter (c10's `VariableVersion`) and inference mode.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use c10_storage::Storage;

use crate::error::{Result, TensorError};

/// Where a tensor's version counter lives.
///
/// A base and its views share one counter; it bumps once per in-place
/// operation or write access, through any of them. Most tensors use the
/// counter embedded in their storage ([`VersionCounter::Storage`]): a view
/// op then costs one reference-count increment (the storage handle) instead
/// of two. The other forms cover what c10 also allows:
///
/// * [`VersionCounter::Own`]: a counter of its own, for a tensor that shares
///   a storage with unrelated tensors (`.data`-style aliases, tensors built
///   over an existing storage); its views share it.
/// * [`VersionCounter::OfStorage`]: the embedded counter of *another*
///   storage, kept after `set_` moved the tensor to a new storage, so its
///   old views still share its counter (as in c10, where `set_` keeps the
///   tensor's counter).
/// * [`VersionCounter::Disabled`]: inference tensors track no version
///   (c10's null `VariableVersion`).
///
/// ```
/// use c10_core::{Tensor, TensorOptions, VersionCounter};
/// let t = Tensor::zeros(&[2], TensorOptions::new())?;
/// assert!(matches!(t.impl_ref().version_counter(), VersionCounter::Storage));
/// let before = t.version()?;
/// t.fill_(1.0)?; // an in-place write bumps the counter
/// assert_eq!(t.version()?, before + 1);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Debug, Default)]
pub enum VersionCounter {
    /// The counter embedded in the tensor's own storage.
    #[default]
    Storage,
    /// A counter of its own.
    Own(Arc<AtomicU32>),
    /// The counter embedded in another storage.
    OfStorage(Storage),
    /// No counter (inference tensors).
    Disabled,
}

// By hand rather than derived: every view clones its base's counter, and
// the common case (the storage's own counter, a unit variant) should be a
// tag copy with the handle-cloning variants out of line.
impl Clone for VersionCounter {
    #[inline]
    fn clone(&self) -> VersionCounter {
        match self {
            VersionCounter::Storage => VersionCounter::Storage,
            other => other.clone_counted(),
        }
    }
}

impl VersionCounter {
    /// The variants that own a handle: cloned out of line.
    #[inline(never)]
    fn clone_counted(&self) -> VersionCounter {
        match self {
            VersionCounter::Storage => VersionCounter::Storage,
            VersionCounter::Own(c) => VersionCounter::Own(Arc::clone(c)),
            VersionCounter::OfStorage(s) => VersionCounter::OfStorage(s.clone()),
            VersionCounter::Disabled => VersionCounter::Disabled,
        }
    }

    /// A fresh counter starting at `v`.
    ///
    /// ```
    /// use std::sync::atomic::Ordering;
    /// use c10_core::VersionCounter;
    /// let c = VersionCounter::fresh(3);
    /// assert!(matches!(c, VersionCounter::Own(ref v) if v.load(Ordering::SeqCst) == 3));
    /// ```
    pub fn fresh(v: u32) -> VersionCounter {
        VersionCounter::Own(Arc::new(AtomicU32::new(v)))
    }

    /// Whether a counter is tracked (c10's `enabled()`).
    ///
    /// ```
    /// use c10_core::VersionCounter;
    /// assert!(VersionCounter::Storage.enabled());
    /// assert!(VersionCounter::fresh(0).enabled());
    /// assert!(!VersionCounter::Disabled.enabled());
    /// ```
    pub fn enabled(&self) -> bool {
        !matches!(self, VersionCounter::Disabled)
    }

    /// The counter cell, given the tensor's storage.
    pub(crate) fn cell<'a>(&'a self, storage: &'a Storage) -> Option<&'a AtomicU32> {
        match self {
            VersionCounter::Storage => Some(storage.version_counter()),
            VersionCounter::Own(a) => Some(a),
            VersionCounter::OfStorage(s) => Some(s.version_counter()),
            VersionCounter::Disabled => None,
        }
    }

    /// Whether two counters (each with its tensor's storage) are the same
    /// shared counter.
    pub(crate) fn same_as(
        &self,
        storage: &Storage,
        other: &VersionCounter,
        other_storage: &Storage,
    ) -> bool {
        match (self.cell(storage), other.cell(other_storage)) {
            (Some(a), Some(b)) => std::ptr::eq(a, b),
            _ => false,
        }
    }

    /// c10's `current_version()`.
    pub(crate) fn current(&self, storage: &Storage) -> Result<u32> {
        self.cell(storage)
            .map(|c| c.load(Ordering::SeqCst))
            .ok_or_else(|| TensorError::runtime("Inference tensors do not track version counter."))
    }

    /// c10's `bump()`: +1 (wrapping, as c10's `uint32`), or the inference
    /// tensor error outside inference mode.
    pub(crate) fn bump(&self, storage: &Storage) -> Result<()> {
        match self.cell(storage) {
            Some(c) => {
                c.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
            None if InferenceMode::is_enabled() => Ok(()),
            None => Err(TensorError::runtime(
                "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.",
            )),
        }
    }
}

thread_local! {
    static INFERENCE_MODE: Cell<bool> = const { Cell::new(false) };
}

/// c10's `InferenceMode` RAII guard: while one is alive on a thread, new
/// tensors made on that thread are inference tensors (no autograd keys in
/// their key set, no version counter).
///
/// ```
/// use c10_core::{InferenceMode, Tensor, TensorOptions};
/// let t = {
///     let _guard = InferenceMode::new();
///     Tensor::zeros(&[2], TensorOptions::default())?
/// };
/// assert!(t.is_inference());
/// assert!(t.version().is_err());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Debug)]
pub struct InferenceMode {
    prev: bool,
    // Thread-local state: the guard must be dropped on its own thread.
    _not_send: std::marker::PhantomData<*const ()>,
}

impl InferenceMode {
    /// Enables inference mode on this thread until the guard is dropped.
    ///
    /// ```
    /// use c10_core::InferenceMode;
    /// {
    ///     let _guard = InferenceMode::new();
    ///     assert!(InferenceMode::is_enabled());
    /// }
    /// assert!(!InferenceMode::is_enabled()); // restored on drop
    /// ```
    #[allow(clippy::new_without_default)] // A guard, not a value: `new` is the idiom (as `MutexGuard`-like APIs).
    pub fn new() -> InferenceMode {
        InferenceMode::with_enabled(true)
    }

    /// Sets inference mode to `enabled` until the guard is dropped (c10's
    /// `InferenceMode(bool)`).
    ///
    /// ```
    /// use c10_core::{InferenceMode, Tensor, TensorOptions};
    /// let _outer = InferenceMode::new();
    /// {
    ///     let _inner = InferenceMode::with_enabled(false);
    ///     let t = Tensor::zeros(&[1], TensorOptions::new())?;
    ///     assert!(!t.is_inference());
    /// }
    /// assert!(InferenceMode::is_enabled());
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn with_enabled(enabled: bool) -> InferenceMode {
        let prev = INFERENCE_MODE.with(|c| c.replace(enabled));
        InferenceMode {
            prev,
            _not_send: std::marker::PhantomData,
        }
    }

    /// Whether inference mode is on for this thread.
    ///
    /// ```
    /// use c10_core::{GradMode, InferenceMode};
    /// assert!(!InferenceMode::is_enabled()); // off by default
    /// let _guard = InferenceMode::new();
    /// assert!(InferenceMode::is_enabled());
    /// assert!(!GradMode::is_enabled()); // inference mode implies no grad
    /// ```
    pub fn is_enabled() -> bool {
        INFERENCE_MODE.with(Cell::get)
    }
}

impl Drop for InferenceMode {
    fn drop(&mut self) {
        INFERENCE_MODE.with(|c| c.set(self.prev));
    }
}

thread_local! {
    static GRAD_MODE: Cell<bool> = const { Cell::new(true) };
}

/// c10's `GradMode`: whether operations on this thread record autograd
/// history (on by default; off under [`GradMode::disable`], PyTorch's
/// `torch.no_grad()`, and always off in [`InferenceMode`]).
///
/// It decides what a view of a tensor that requires grad is (a computed
/// tensor, or a "no_grad view"), whether `clone` of such a tensor requires
/// grad, and whether the in-place rules for leaves apply.
///
/// ```
/// use c10_core::{GradMode, Tensor, TensorOptions};
/// let mut w = Tensor::zeros(&[2], TensorOptions::new().requires_grad(true))?;
/// assert!(w.fill_(1.0).is_err()); // a leaf that requires grad
/// {
///     let _no_grad = GradMode::disable();
///     assert!(!GradMode::is_enabled());
///     w.fill_(1.0)?; // allowed without grad mode
/// }
/// assert!(GradMode::is_enabled());
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Debug)]
pub struct GradMode {
    prev: bool,
    // Thread-local state: the guard must be dropped on its own thread.
    _not_send: std::marker::PhantomData<*const ()>,
}

impl GradMode {
    /// Turns grad mode off on this thread until the guard is dropped
    /// (`torch.no_grad()`).
    ///
    /// ```
    /// use c10_core::GradMode;
    /// {
    ///     let _no_grad = GradMode::disable();
    ///     assert!(!GradMode::is_enabled());
    /// }
    /// assert!(GradMode::is_enabled());
    /// ```
    pub fn disable() -> GradMode {
        GradMode::set_enabled(false)
    }

    /// Sets grad mode until the guard is dropped
    /// (`torch.set_grad_enabled(enabled)`).
    ///
    /// ```
    /// use c10_core::GradMode;
    /// let _off = GradMode::disable();
    /// {
    ///     let _on = GradMode::set_enabled(true); // `torch.enable_grad()` inside `no_grad`
    ///     assert!(GradMode::is_enabled());
    /// }
    /// assert!(!GradMode::is_enabled());
    /// ```
    pub fn set_enabled(enabled: bool) -> GradMode {
        let prev = GRAD_MODE.with(|c| c.replace(enabled));
        GradMode {
            prev,
            _not_send: std::marker::PhantomData,
        }
    }

    /// Whether operations on this thread record autograd history: grad
    /// mode on and inference mode off.
    ///
    /// ```
    /// use c10_core::{GradMode, InferenceMode};
    /// assert!(GradMode::is_enabled()); // on by default
    /// let _inference = InferenceMode::new();
    /// assert!(!GradMode::is_enabled());
    /// ```
    pub fn is_enabled() -> bool {
        GRAD_MODE.with(Cell::get) && !InferenceMode::is_enabled()
    }
}

impl Drop for GradMode {
    fn drop(&mut self) {
        GRAD_MODE.with(|c| c.set(self.prev));
    }
}
