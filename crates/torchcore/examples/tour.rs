//! A guided tour of PyTorch's tensor model, rebuilt in Rust.
//!
//! Run it with `cargo run --example tour`. Each step prints what it does
//! and what came out, so the output reads as a walkthrough of both halves:
//! how storages, views, strides and version counters fit together (steps
//! 1-8), then where the memory comes from: the allocator registry and its
//! statistics, memory formats, a DLPack round trip, the CUDA caching
//! allocator's algorithm on a simulated device, and a custom allocator
//! (steps 9-13), and finally the same view ops on symbolic sizes, with the
//! guards they record (step 14). `cargo run --example tour -- --explain`
//! adds each view's long `explain()` output.

use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, FakeDevice, StreamId};
use c10_storage::{get_allocator, set_allocator_scoped, Allocator};
use torchcore::interop::dlpack::{from_dlpack, to_dlpack};
use torchcore::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let explain = std::env::args().any(|a| a == "--explain");
    heading("1. One storage, many views");
    let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
    println!("a = arange(12)\n{a}");
    show("a", &a);

    let b = a.view(&[3, 4])?;
    println!("\nb = a.view(3, 4)\n{b}");
    show("b", &b);
    let c = a.slice(0, Some(2), None, 1)?;
    println!("\nc = a[2:]\n{c}");
    show("c", &c);
    println!(
        "\nSame storage? a/b: {}, a/c: {}. Storage use count: {} (a, b and c share it).",
        a.is_alias_of(&b),
        a.is_alias_of(&c),
        a.storage().use_count()
    );

    heading("2. A write through a view shows everywhere");
    b.set::<i64>(&[1, 1], 99)?;
    println!("b[1, 1] = 99");
    println!(
        "a[5] = {}   (element (1, 1) of b is storage offset 0 + 1*4 + 1*1 = 5)",
        a.get::<i64>(&[5])?
    );
    println!(
        "c[3] = {}   (c starts at offset 2, so its element 3 is storage offset 5 too)",
        c.get::<i64>(&[3])?
    );
    if explain {
        println!("\nb.explain():\n{}", b.explain());
    }

    heading("3. The version counter is shared by a base and its views");
    println!(
        "a._version = {}, b._version = {}, c._version = {}",
        a.version()?,
        b.version()?,
        c.version()?
    );
    c.fill_(7)?;
    println!(
        "after c.fill_(7): a._version = {}, b._version = {}",
        a.version()?,
        b.version()?
    );
    println!("a = {a}");

    heading("4. A transposed tensor cannot be viewed, but it can be reshaped");
    let t = b.t()?;
    show("t = b.t()", &t);
    match t.view(&[12]) {
        Ok(_) => println!("unexpected: the view succeeded"),
        Err(e) => println!("t.view(12) fails, as in PyTorch:\n  {e}"),
    }
    let r = t.reshape(&[12])?;
    println!("t.reshape(12) copies instead:\n{r}");
    println!("shares a's storage? {}", r.is_alias_of(&a));
    let r2 = t.reshape(&[2, 2, 3])?;
    println!(
        "but t.reshape(2, 2, 3) only splits a dim, so it stays a view (computeStride found strides {:?}): shares storage? {}",
        r2.strides(),
        r2.is_alias_of(&a)
    );
    if explain {
        println!("\nt.explain():\n{}", t.explain());
    }

    heading("5. Sizes and strides of up to 5 dims live inline");
    let five = a.view(&[1, 2, 1, 3, 2])?;
    let six = a.view(&[1, 2, 1, 3, 2, 1])?;
    println!(
        "5-d view: inline = {}; 6-d view: inline = {} (one extra heap block of 6*16 bytes)",
        five.impl_ref().sizes_and_strides().is_inline(),
        six.impl_ref().sizes_and_strides().is_inline()
    );
    println!(
        "size_of::<TensorImpl>() = {} bytes (c10's is 176); size_of::<Tensor>() = {} bytes",
        std::mem::size_of::<torchcore::core::TensorImpl>(),
        std::mem::size_of::<Tensor>()
    );

    heading("6. Autograd metadata is allocated only when asked for");
    let mut w = Tensor::zeros(&[2, 2], ScalarType::Float)?;
    println!(
        "w = zeros(2, 2): requires_grad = {}, autograd metadata allocated: {}",
        w.requires_grad(),
        w.has_autograd_meta()
    );
    w.set_requires_grad(false)?;
    println!(
        "after requires_grad_(False): metadata allocated: {}",
        w.has_autograd_meta()
    );
    w.set_requires_grad(true)?;
    println!(
        "after requires_grad_(True):  metadata allocated: {}",
        w.has_autograd_meta()
    );

    heading("7. Broadcasting views: stride 0");
    let row = Tensor::arange(0, 3, 1, ScalarType::Float)?;
    let e = row.expand(&[2, 3])?;
    println!(
        "row.expand(2, 3) has strides {:?}: both rows read the same storage cells\n{e}",
        e.strides()
    );
    if explain {
        println!("\ne.explain():\n{}", e.explain());
    }

    heading("8. Errors say what PyTorch says");
    for (what, r) in [
        ("a.view(5, 5)", a.view(&[5, 5]).map(drop)),
        ("a.select(0, 12)", a.select(0, 12).map(drop)),
        ("b.transpose(0, 2)", b.transpose(0, 2).map(drop)),
        (
            "Tensor::empty(&[2, -3])",
            Tensor::empty(&[2, -3], ScalarType::Float).map(drop),
        ),
    ] {
        if let Err(e) = r {
            println!("{what:>26}: {e}");
        }
    }
    match "cuda:01".parse::<Device>() {
        Ok(d) => println!("unexpected: parsed {d}"),
        Err(e) => println!("{:>26}: {e}", "\"cuda:01\".parse::<Device>()"),
    }

    allocator_half()?;
    symbolic_shapes()?;
    Ok(())
}

/// Steps 9-13: where the bytes come from.
fn allocator_half() -> Result<(), Box<dyn std::error::Error>> {
    heading("9. Every factory asks the allocator registry");
    let cpu = get_allocator(DeviceType::Cpu)?;
    let x = Tensor::zeros(&[256, 256], ScalarType::Float)?;
    let served_by = x.storage().allocator().map(|a| a.name().to_string());
    println!(
        "registry[cpu] = {}; x = zeros(256, 256) was served by {}",
        cpu.name(),
        served_by.as_deref().unwrap_or("(no allocator)")
    );
    match cpu.stats() {
        Some(st) => println!(
            "{} stats: {} bytes live, peak {} bytes, {} allocations so far",
            cpu.name(),
            st.current_bytes,
            st.peak_bytes,
            st.allocations
        ),
        None => println!(
            "{} keeps no statistics by default (switch them on with CpuAllocator::builder().track_stats(true)); step 13's allocator does",
            cpu.name()
        ),
    }

    heading("10. Memory formats: the same NCHW tensor, laid out NHWC");
    let img = Tensor::arange(0, 2 * 3 * 4 * 5, 1, ScalarType::Float)?.view(&[2, 3, 4, 5])?;
    let nhwc = img.contiguous_in(MemoryFormat::ChannelsLast)?;
    println!(
        "img: strides {:?}, channels_last? {}\nimg.contiguous(memory_format=channels_last): strides {:?}, channels_last? {}, same values? {}",
        img.strides(),
        img.is_contiguous_in(MemoryFormat::ChannelsLast),
        nhwc.strides(),
        nhwc.is_contiguous_in(MemoryFormat::ChannelsLast),
        img.to_vec::<f32>()? == nhwc.to_vec::<f32>()?
    );

    heading("11. DLPack: hand the memory to another framework and take it back");
    let src = Tensor::arange(0, 6, 1, ScalarType::Int)?.view(&[2, 3])?;
    let capsule = to_dlpack(&src)?;
    // SAFETY: `capsule` came from `to_dlpack` just above and is consumed once.
    let back = unsafe { from_dlpack(capsule)? };
    back.set::<i32>(&[1, 2], 42)?;
    println!(
        "back = from_dlpack(to_dlpack(src)): sizes {:?}, strides {:?}; wrote back[1, 2] = 42, src[1, 2] = {} (no copy)",
        back.sizes(),
        back.strides(),
        src.get::<i32>(&[1, 2])?
    );
    let mut grow = src.clone();
    match grow.resize_(&[100], MemoryFormat::Contiguous) {
        Ok(()) => println!("unexpected: the exported storage was reallocated"),
        Err(e) => println!("while exported, src.resize_(100) is refused: {e}"),
    }
    drop(back);
    grow.resize_(&[100], MemoryFormat::Contiguous)?;
    println!(
        "after the consumer released it, resize_(100) works: {:?}",
        grow.sizes()
    );

    heading("12. PyTorch's CUDA caching allocator, on a simulated device");
    let dev = FakeDevice::new(1 << 30);
    let cache = CachingAllocator::new(dev, 0, CachingAllocatorConfig::default());
    let s = StreamId::DEFAULT;
    let p1 = cache.malloc(300, s)?;
    let p2 = cache.malloc(1000, s)?;
    println!(
        "malloc(300), malloc(1000): one 2 MiB segment from cudaMalloc, split into blocks of 512 and 1024 bytes ({} cudaMalloc call)",
        cache.device().counters().malloc_calls
    );
    // SAFETY: nothing uses p1 any more.
    unsafe { cache.free(p1)? };
    let p3 = cache.malloc(400, s)?;
    println!(
        "free the first, malloc(400): reused from the cache ({} cudaMalloc calls so far, same address: {})",
        cache.device().counters().malloc_calls,
        p3 == p1
    );
    let stats = cache.stats().to_flat_map();
    println!(
        "stats: allocated_bytes.all.current = {}, reserved_bytes.all.current = {}, segment.all.current = {}",
        stats["allocated_bytes.all.current"],
        stats["reserved_bytes.all.current"],
        stats["segment.all.current"]
    );
    for seg in cache.snapshot() {
        let blocks: Vec<String> = seg
            .blocks
            .iter()
            .map(|b| format!("{} {:?}", b.size, b.state))
            .collect();
        println!(
            "snapshot: segment of {} bytes at {:#x}: [{}]",
            seg.total_size,
            seg.address,
            blocks.join(", ")
        );
    }
    // SAFETY: nothing uses these any more.
    unsafe {
        cache.free(p2)?;
        cache.free(p3)?;
    }
    cache.empty_cache()?;
    println!(
        "after freeing everything and empty_cache(): {} cudaFree call(s), reserved = {}",
        cache.device().counters().free_calls,
        cache.stats().to_flat_map()["reserved_bytes.all.current"]
    );

    heading("13. Your own allocator, registered for a scope");
    static MINE: std::sync::LazyLock<custom_allocator::CachingCpuAllocator> =
        std::sync::LazyLock::new(custom_allocator::CachingCpuAllocator::new);
    let mine: &'static custom_allocator::CachingCpuAllocator = &MINE;
    {
        let _scope = set_allocator_scoped(DeviceType::Cpu, mine, 10)?;
        let t = Tensor::zeros(&[1024], ScalarType::Float)?;
        println!(
            "inside the scope, zeros(1024) comes from {}",
            t.storage().allocator().map(|a| a.name()).unwrap_or("?")
        );
        drop(t);
        let _u = Tensor::zeros(&[1024], ScalarType::Float)?;
        println!(
            "free it and allocate the same size again: cache hits {}, misses {}",
            mine.cache_hits(),
            mine.cache_misses()
        );
        if let Some(st) = mine.stats() {
            println!(
                "its stats: {} bytes live, peak {} bytes, {} allocations",
                st.current_bytes, st.peak_bytes, st.allocations
            );
        }
    }
    let after = Tensor::zeros(&[4], ScalarType::Float)?;
    println!(
        "after the scope, new tensors come from {} again",
        after.storage().allocator().map(|a| a.name()).unwrap_or("?")
    );
    Ok(())
}

/// Step 14: view ops over symbolic sizes (what `torch.compile` traces with).
fn symbolic_shapes() -> Result<(), Box<dyn std::error::Error>> {
    use torchcore::core::sym::{ShapeEnv, SymInt};
    use torchcore::core::TensorOptions;
    use torchcore::shape::generic::{sym_reshape, sym_view_op};

    heading("14. Views over symbolic sizes, and the guards they record");
    let env = ShapeEnv::new();
    let sizes = [
        env.create_symbol(4, "x.size(0)")?,
        env.create_symbol(6, "x.size(1)")?,
        env.create_symbol(8, "x.size(2)")?,
    ];
    let x = Tensor::empty_symint(&sizes, TensorOptions::new().device(Device::META))?;
    show_sym("x (example sizes 4, 6, 8)", &x);
    let y = sym_view_op(&x, |g| g.view(&[SymInt::from(-1), SymInt::from(8)]))?;
    show_sym("y = x.view(-1, 8)", &y);
    let z = sym_view_op(&y, |g| g.narrow(0, 1, &SymInt::from(3)))?;
    show_sym("z = y.narrow(0, 1, 3)", &z);
    let w = sym_view_op(&z, |g| g.transpose(0, 1))?;
    show_sym("w = z.t()", &w);
    let r = sym_reshape(&w, &[SymInt::from(-1)])?;
    show_sym("r = w.reshape(-1)  (a copy: not viewable)", &r);
    println!("\nGuards (the trace is valid exactly where all hold):");
    for g in env.produce_guards() {
        println!("    {g}");
    }
    for vals in [[5, 7, 8], [4, 6, 16], [1, 6, 8], [3, 3, 3]] {
        let ok = env.evaluate_guards(&|s| vals.get(s as usize).copied())?;
        println!("valid for sizes {vals:?}? {ok}");
    }
    if let Err(e) = x.checked_sizes() {
        println!("\nx.checked_sizes(): {e}");
    }
    Ok(())
}

fn show_sym(name: &str, t: &Tensor) {
    let list = |v: &[torchcore::core::sym::SymInt]| {
        v.iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "{name}: sizes ({}), strides ({}), offset {}, numel {}",
        list(&t.sym_sizes()),
        list(&t.sym_strides()),
        t.sym_storage_offset(),
        t.sym_numel()
    );
}

fn heading(title: &str) {
    println!(
        "\n=== {title} {}",
        "=".repeat(70usize.saturating_sub(title.len()))
    );
}

fn show(name: &str, t: &Tensor) {
    println!(
        "{name}: sizes {:?}, strides {:?}, storage offset {}, contiguous {}, storage {:#x}",
        t.sizes(),
        t.strides(),
        t.storage_offset(),
        t.is_contiguous(),
        t.storage().id()
    );
}
