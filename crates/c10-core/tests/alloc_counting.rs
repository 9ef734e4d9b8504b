//! Heap allocations counted by a global allocator: what a handle clone, a
//! view, many dims and autograd metadata cost.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use c10_core::{ScalarType, SizesAndStrides, Tensor, TensorImpl};

/// Counts allocations made by the current thread while counting is on, so
/// tests running in parallel do not disturb each other.
struct Counting;

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the bookkeeping touches only
// thread-local cells (const-initialised, so they never allocate).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ON.with(Cell::get) {
            COUNT.with(|c| c.set(c.get() + 1));
        }
        // SAFETY: forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if ON.with(Cell::get) {
            COUNT.with(|c| c.set(c.get() + 1));
        }
        // SAFETY: forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if ON.with(Cell::get) {
            COUNT.with(|c| c.set(c.get() + 1));
        }
        // SAFETY: forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f` on this thread (its result is dropped outside
/// the counted region).
fn allocations<R>(f: impl FnOnce() -> R) -> (usize, R) {
    COUNT.with(|c| c.set(0));
    ON.with(|o| o.set(true));
    let r = f();
    ON.with(|o| o.set(false));
    (COUNT.with(Cell::get), r)
}

fn base(n: i64) -> Tensor {
    Tensor::arange(0, n, 1, ScalarType::Float).unwrap()
}

/// Empties this thread's cache of freed `TensorImpl` blocks (a view reuses
/// one of those instead of allocating) by taking every cached block into
/// a live view; the result must be kept alive while counting. The cache
/// holds at most a few dozen blocks; 256 views take them all.
fn drain_impl_cache(t: &Tensor) -> Vec<Tensor> {
    (0..256)
        .map(|_| t.view_with_geometry(&[1], &[1], 0).unwrap())
        .collect()
}

#[test]
fn sizes_of_the_core_types() {
    let ti = std::mem::size_of::<TensorImpl>();
    let ss = std::mem::size_of::<SizesAndStrides>();
    println!("size_of::<TensorImpl>() = {ti} bytes (c10: 176)");
    println!("size_of::<SizesAndStrides>() = {ss} bytes (c10: 88)");
    println!(
        "size_of::<Tensor>() = {} bytes (c10 at::Tensor: 8)",
        std::mem::size_of::<Tensor>()
    );
    assert!(ti <= 176, "TensorImpl is {ti} bytes, more than c10's 176");
    assert!(ss <= 88);
    assert_eq!(std::mem::size_of::<Tensor>(), 8);
}

#[test]
fn cloning_a_handle_allocates_nothing() {
    let t = base(12);
    let (n, c) = allocations(|| t.clone());
    assert_eq!(n, 0);
    assert!(c.is_same(&t));
}

#[test]
fn a_view_of_up_to_five_dims_is_one_allocation() {
    let t = base(64);
    for (sizes, strides) in [
        (vec![64], vec![1]),
        (vec![8, 8], vec![1, 8]),
        (vec![2, 2, 2, 2, 2], vec![32, 16, 8, 4, 2]),
    ] {
        let _held = drain_impl_cache(&t);
        let (n, v) = allocations(|| t.as_strided(&sizes, &strides, None).unwrap());
        assert_eq!(n, 1, "{sizes:?}: only the TensorImpl");
        assert!(v.impl_ref().sizes_and_strides().is_inline());
        let (n, _w) = allocations(|| v.view_with_geometry(&sizes, &strides, 0).unwrap());
        assert_eq!(n, 1);
    }
}

#[test]
fn a_view_reuses_the_block_of_a_dropped_one() {
    let t = base(64);
    drop(t.as_strided(&[8, 8], &[8, 1], None).unwrap());
    let (n, v) = allocations(|| t.as_strided(&[8, 8], &[1, 8], None).unwrap());
    assert_eq!(n, 0, "the dropped view's block is reused");
    assert_eq!(v.strides(), &[1, 8]);
}

#[test]
fn six_or_more_dims_allocate_once_more() {
    let t = base(256);
    for nd in [6usize, 8] {
        let sizes = vec![2i64; nd];
        let strides: Vec<i64> = (0..nd).map(|d| 1i64 << (nd - 1 - d)).collect();
        let _held = drain_impl_cache(&t);
        let (n, v) = allocations(|| t.as_strided(&sizes, &strides, Some(0)).unwrap());
        assert_eq!(
            n, 2,
            "{nd} dims: the TensorImpl plus the out-of-line sizes and strides"
        );
        assert!(!v.impl_ref().sizes_and_strides().is_inline());
    }
}

#[test]
fn no_autograd_metadata_unless_asked_for() {
    let mut t = base(4);
    assert!(!t.has_autograd_meta());
    let (n, _) = allocations(|| t.set_requires_grad(false).unwrap());
    assert_eq!(
        n, 0,
        "requires_grad=false on a fresh tensor allocates nothing"
    );
    assert!(!t.has_autograd_meta());
    assert!(!t.requires_grad());
    let (n, _) = allocations(|| t.set_requires_grad(true).unwrap());
    // Two blocks: the out-of-line `ExtraMeta` (one thin pointer in the
    // `TensorImpl`, shared with the other rarely used fields) and the
    // `AutogradMeta` behind it (a trait object, so an engine can supply
    // its own).
    assert_eq!(n, 2, "requires_grad=true allocates the metadata");
    assert!(t.requires_grad());
    let (n, _) = allocations(|| t.set_requires_grad(false).unwrap());
    assert_eq!(n, 0, "metadata is kept, never freed back to null (as c10)");
    assert!(t.has_autograd_meta());
}

#[test]
fn empty_costs_storage_buffer_and_impl() {
    // The first call installs the default CPU allocator (a one-time cost).
    drop(Tensor::empty(&[1], ScalarType::Float).unwrap());
    let b = base(1);
    let _held = drain_impl_cache(&b);
    let (n, t) = allocations(|| Tensor::empty(&[3, 4], ScalarType::Float).unwrap());
    println!("Tensor::empty(&[3, 4]) made {n} heap allocations");
    assert_eq!(n, 3, "StorageImpl, the data buffer, and the TensorImpl");
    drop(t);
}
