//! Every single-tensor view op makes exactly one heap allocation (its
//! `TensorImpl`) for tensors of up to 5 dims, and none when the thread has
//! a freed `TensorImpl` block cached (`crates/c10-core/src/impl_arc.rs`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use aten_shape::views::ViewOps;
use c10_core::{ScalarType, Tensor};

struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let before = ALLOCS.with(|c| c.get());
    let r = f();
    (ALLOCS.with(|c| c.get()) - before, r)
}

#[test]
fn one_allocation_per_view() {
    let base = Tensor::arange(0, 120, 1, ScalarType::Float).unwrap();
    let x = base.view(&[2, 3, 4, 5]).unwrap();
    let x1 = base.view(&[2, 3, 4, 5, 1]).unwrap();
    let tr = x.transpose(1, 2).unwrap();
    let col = base.view(&[120, 1]).unwrap();
    type Op = Box<dyn Fn() -> c10_core::Result<Tensor>>;
    let cases: Vec<(&str, Op)> = vec![
        ("as_strided", {
            let x = x.clone();
            Box::new(move || x.as_strided(&[2, 3], &[3, 1], Some(1)))
        }),
        ("view", {
            let x = x.clone();
            Box::new(move || x.view(&[6, -1]))
        }),
        ("view non-contiguous", {
            let t = tr.clone();
            Box::new(move || t.view(&[2, 4, 3, 5, 1]))
        }),
        ("reshape (view)", {
            let x = x.clone();
            Box::new(move || x.reshape(&[6, 20]))
        }),
        ("slice", {
            let x = x.clone();
            Box::new(move || x.slice(2, Some(1), None, 2))
        }),
        ("narrow", {
            let x = x.clone();
            Box::new(move || x.narrow(-1, 1, 3))
        }),
        ("select", {
            let x = x.clone();
            Box::new(move || x.select(1, -1))
        }),
        ("transpose", {
            let x = x.clone();
            Box::new(move || x.transpose(0, 3))
        }),
        ("t", {
            let c = col.clone();
            Box::new(move || c.t())
        }),
        ("mt", {
            let x = x.clone();
            Box::new(move || x.mt())
        }),
        ("numpy_t", {
            let x = x.clone();
            Box::new(move || x.numpy_t())
        }),
        ("permute", {
            let x = x.clone();
            Box::new(move || x.permute(&[3, 1, 0, 2]))
        }),
        ("movedim", {
            let x = x.clone();
            Box::new(move || x.movedim(&[0, 1], &[3, 2]))
        }),
        ("expand", {
            let c = col.clone();
            Box::new(move || c.expand(&[4, 120, 7]))
        }),
        ("squeeze", {
            let x = x1.clone();
            Box::new(move || x.squeeze())
        }),
        ("squeeze_dim", {
            let x = x1.clone();
            Box::new(move || x.squeeze_dim(4))
        }),
        ("squeeze_dims", {
            let x = x1.clone();
            Box::new(move || x.squeeze_dims(&[0, 4]))
        }),
        ("unsqueeze", {
            let x = x.clone();
            Box::new(move || x.unsqueeze(2))
        }),
        ("flatten", {
            let x = x.clone();
            Box::new(move || x.flatten(1, 2))
        }),
        ("unflatten", {
            let x = x.clone();
            Box::new(move || x.unflatten(3, &[5, 1]))
        }),
        ("ravel", {
            let x = x.clone();
            Box::new(move || x.ravel())
        }),
        ("diagonal", {
            let x = x.clone();
            Box::new(move || x.diagonal(1, 2, 3))
        }),
        ("unfold", {
            let x = x.clone();
            Box::new(move || x.unfold(3, 2, 1))
        }),
        ("alias", {
            let x = x.clone();
            Box::new(move || x.alias())
        }),
    ];
    for (name, op) in &cases {
        op().unwrap(); // warm up (thread-locals, lazy statics)
                       // Every block of this thread's cache of freed `TensorImpl`s taken
                       // by a live view (it holds a few dozen at most), so the op has to
                       // allocate its own.
        let held: Vec<Tensor> = (0..256).map(|_| base.alias().unwrap()).collect();
        let (n, r) = allocations(op);
        let t = r.unwrap();
        drop(t);
        assert_eq!(n, 1, "{name} made {n} allocations");
        // The block just freed is cached: the same op again allocates
        // nothing.
        let (n, r) = allocations(op);
        drop(r.unwrap());
        assert_eq!(n, 0, "{name} made {n} allocations with a cached block");
        drop(held);
    }
}
