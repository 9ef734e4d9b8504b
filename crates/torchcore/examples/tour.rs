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
//!
//! Every line names the Rust call it made (with PyTorch's spelling in a
//! comment where it differs), and the tour uses `torchcore::...` paths
//! only: everything here works in a program that depends on `torchcore`
//! alone.

use torchcore::caching::{CachingAllocator, CachingAllocatorConfig, FakeDevice, StreamId};
use torchcore::cpu::CpuAllocator;
use torchcore::interop::dlpack::{from_dlpack, to_dlpack};
use torchcore::prelude::*;
use torchcore::storage::{get_allocator, set_allocator_scoped, Allocator};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let explain = std::env::args().any(|a| a == "--explain");
    heading("1. One storage, many views");
    let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;
    println!("let a = Tensor::arange(0, 12, 1, ScalarType::Long)?;\n{a}");
    show("a", &a);

    let b = a.view(&[3, 4])?;
    println!("\nlet b = a.view(&[3, 4])?;\n{b}");
    show("b", &b);
    let c = a.slice(0, Some(2), None, 1)?;
    println!("\nlet c = a.slice(0, Some(2), None, 1)?;   // Python: a[2:]\n{c}");
    show("c", &c);
    println!(
        "\nSame storage? a/b: {}, a/c: {}. Storage use count: {} (a, b and c share it).",
        a.is_alias_of(&b),
        a.is_alias_of(&c),
        a.storage().use_count()
    );

    heading("2. A write through a view shows everywhere");
    b.set::<i64>(&[1, 1], 99)?;
    println!("b.set::<i64>(&[1, 1], 99)?;");
    println!(
        "a.get::<i64>(&[5])? = {}   (element (1, 1) of b is storage offset 0 + 1*4 + 1*1 = 5)",
        a.get::<i64>(&[5])?
    );
    println!(
        "c.get::<i64>(&[3])? = {}   (c starts at offset 2, so its element 3 is storage offset 5 too)",
        c.get::<i64>(&[3])?
    );
    if explain {
        println!("\nb.explain():\n{}", b.explain());
    }

    heading("3. The version counter is shared by a base and its views");
    println!(
        "a.version()? = {}, b.version()? = {}, c.version()? = {}   (1, not 0: step 2's b.set(..) was an in-place write, and the three share one counter)",
        a.version()?,
        b.version()?,
        c.version()?
    );
    c.fill_(7)?;
    println!(
        "after c.fill_(7)?: a.version()? = {}, b.version()? = {}   (Python: a._version)",
        a.version()?,
        b.version()?
    );
    println!("a = {a}");

    heading("4. A transposed tensor cannot be viewed, but it can be reshaped");
    let t = b.t()?;
    show("let t = b.t()?", &t);
    match t.view(&[12]) {
        Ok(_) => println!("unexpected: the view succeeded"),
        Err(e) => println!("t.view(&[12]) fails, as in PyTorch:\n  {e}"),
    }
    let r = t.reshape(&[12])?;
    println!("t.reshape(&[12])? copies instead:\n{r}");
    println!("r.is_alias_of(&a) = {}", r.is_alias_of(&a));
    let r2 = t.reshape(&[2, 2, 3])?;
    println!(
        "but t.reshape(&[2, 2, 3])? only splits a dim, so it stays a view (computeStride found strides {:?}): is_alias_of(&a) = {}",
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
        "a.view(&[1, 2, 1, 3, 2])?: inline = {}; a.view(&[1, 2, 1, 3, 2, 1])?: inline = {} (one extra heap block of 6*16 bytes)",
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
        "let mut w = Tensor::zeros(&[2, 2], ScalarType::Float)?: w.requires_grad() = {}, w.has_autograd_meta() = {}",
        w.requires_grad(),
        w.has_autograd_meta()
    );
    w.set_requires_grad(false)?;
    println!(
        "after w.set_requires_grad(false)?: w.has_autograd_meta() = {}",
        w.has_autograd_meta()
    );
    w.set_requires_grad(true)?;
    println!(
        "after w.set_requires_grad(true)?:  w.has_autograd_meta() = {}   (Python: w.requires_grad_(True))",
        w.has_autograd_meta()
    );

    heading("7. Broadcasting views: stride 0");
    let row = Tensor::arange(0, 3, 1, ScalarType::Float)?;
    let e = row.expand(&[2, 3])?;
    println!(
        "row.expand(&[2, 3])? has strides {:?}: both rows read the same storage cells\n{e}",
        e.strides()
    );
    if explain {
        println!("\ne.explain():\n{}", e.explain());
    }

    heading("8. Errors say what PyTorch says");
    for (what, r) in [
        ("a.view(&[5, 5])", a.view(&[5, 5]).map(drop)),
        ("a.select(0, 12)", a.select(0, 12).map(drop)),
        ("b.transpose(0, 2)", b.transpose(0, 2).map(drop)),
        (
            "Tensor::empty(&[2, -3], ..)",
            Tensor::empty(&[2, -3], ScalarType::Float).map(drop),
        ),
    ] {
        if let Err(e) = r {
            println!("{what:>30}: {e}");
        }
    }
    match "cuda:01".parse::<Device>() {
        Ok(d) => println!("unexpected: parsed {d}"),
        Err(e) => println!("{:>30}: {e}", "\"cuda:01\".parse::<Device>()"),
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
        "get_allocator(DeviceType::Cpu)?.name() = {}; Tensor::zeros(&[256, 256], ..) was served by {}",
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
            "{} keeps no statistics by default (switch them on with CpuAllocator::builder().track_stats(true)); step 13's allocator does so",
            cpu.name()
        ),
    }

    heading("10. Memory formats: the same NCHW tensor, laid out NHWC");
    let img = Tensor::arange(0, 2 * 3 * 4 * 5, 1, ScalarType::Float)?.view(&[2, 3, 4, 5])?;
    let nhwc = img.contiguous_in(MemoryFormat::ChannelsLast)?;
    println!(
        "img: strides {:?}, is_contiguous_in(MemoryFormat::ChannelsLast) = {}\nimg.contiguous_in(MemoryFormat::ChannelsLast)?: strides {:?}, is_contiguous_in(MemoryFormat::ChannelsLast) = {}, same values? {}",
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
        "let back = unsafe {{ from_dlpack(to_dlpack(&src)?)? }}: sizes {:?}, strides {:?}; back.set::<i32>(&[1, 2], 42)?, then src.get::<i32>(&[1, 2])? = {} (no copy)",
        back.sizes(),
        back.strides(),
        src.get::<i32>(&[1, 2])?
    );
    let mut grow = src.clone();
    match grow.resize_(&[100], MemoryFormat::Contiguous) {
        Ok(()) => println!("unexpected: the exported storage was reallocated"),
        Err(e) => {
            println!("while exported, resize_(&[100], MemoryFormat::Contiguous) is refused: {e}")
        }
    }
    drop(back);
    grow.resize_(&[100], MemoryFormat::Contiguous)?;
    println!(
        "after the consumer released it (drop(back)), resize_ works: sizes {:?}",
        grow.sizes()
    );

    heading("12. PyTorch's CUDA caching allocator, on a simulated device");
    let dev = FakeDevice::new(1 << 30);
    let cache = CachingAllocator::new(dev, 0, CachingAllocatorConfig::default());
    let s = StreamId::DEFAULT;
    let p1 = cache.malloc(300, s)?;
    let p2 = cache.malloc(1000, s)?;
    println!(
        "cache.malloc(300, s)?, cache.malloc(1000, s)?: one 2 MiB segment from the device, split into blocks of 512 and 1024 bytes ({})",
        calls(cache.device().counters().malloc_calls, "cudaMalloc")
    );
    // SAFETY: nothing uses p1 any more.
    unsafe { cache.free(p1)? };
    let p3 = cache.malloc(400, s)?;
    println!(
        "unsafe {{ cache.free(p1)? }}, then cache.malloc(400, s)?: reused from the cache ({} so far, same address: {})",
        calls(cache.device().counters().malloc_calls, "cudaMalloc"),
        p3 == p1
    );
    let stats = cache.stats().to_flat_map();
    println!(
        "cache.stats().to_flat_map(): allocated_bytes.all.current = {}, reserved_bytes.all.current = {}, segment.all.current = {}",
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
            "cache.snapshot(): segment of {} bytes at {:#x}: [{}]",
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
        "after freeing everything and cache.empty_cache()?: {}, reserved = {}",
        calls(cache.device().counters().free_calls, "cudaFree"),
        cache.stats().to_flat_map()["reserved_bytes.all.current"]
    );

    heading("13. Your own allocator, registered for a scope");
    // Any `&'static dyn Allocator` can be registered: here a CPU allocator
    // configured to keep statistics (docs/custom-allocator.md shows how to
    // write one from scratch).
    static MINE: std::sync::LazyLock<CpuAllocator> =
        std::sync::LazyLock::new(|| CpuAllocator::builder().track_stats(true).build());
    let mine: &'static CpuAllocator = &MINE;
    let is_mine = |t: &Tensor| {
        t.storage().allocator().is_some_and(|a| {
            std::ptr::addr_eq(a as *const dyn Allocator, mine as *const CpuAllocator)
        })
    };
    {
        let _scope = set_allocator_scoped(DeviceType::Cpu, mine, 10)?;
        println!("let _scope = set_allocator_scoped(DeviceType::Cpu, mine, 10)?;");
        let t = Tensor::zeros(&[1024], ScalarType::Float)?;
        let u = Tensor::zeros(&[256], ScalarType::Float)?;
        println!(
            "inside the scope, Tensor::zeros(&[1024], ..) comes from mine? {}",
            is_mine(&t)
        );
        if let Some(st) = mine.stats() {
            println!(
                "mine.stats() with zeros(1024) and zeros(256) alive: {} bytes live, peak {} bytes, {} allocations",
                st.current_bytes, st.peak_bytes, st.allocations
            );
        }
        drop((t, u));
        if let Some(st) = mine.stats() {
            println!(
                "after dropping both: {} bytes live, peak {} bytes",
                st.current_bytes, st.peak_bytes
            );
        }
    }
    let after = Tensor::zeros(&[4], ScalarType::Float)?;
    println!(
        "after the scope guard is dropped, new tensors come from mine? {} (from {})",
        is_mine(&after),
        after.storage().allocator().map(|a| a.name()).unwrap_or("?")
    );
    Ok(())
}

/// Step 14: view ops over symbolic sizes (what `torch.compile` traces with).
fn symbolic_shapes() -> Result<(), Box<dyn std::error::Error>> {
    use torchcore::core::sym::ShapeEnv;
    use torchcore::core::TensorOptions;

    heading("14. Views over symbolic sizes, and the guards they record");
    let env = ShapeEnv::new();
    let sizes = [
        env.create_symbol(4, "x.size(0)")?,
        env.create_symbol(6, "x.size(1)")?,
        env.create_symbol(8, "x.size(2)")?,
    ];
    // A fake tensor: symbolic sizes, no data, standing for a CPU tensor
    // (PyTorch: FakeTensorMode().from_tensor(x) with dynamic dims).
    let x = Tensor::empty_symint(&sizes, TensorOptions::new())?;
    show_sym(
        "let x = Tensor::empty_symint(&[s0, s1, s2], cpu)?  (example sizes 4, 6, 8)",
        &x,
    );
    if let Some(d) = x.fake_device() {
        println!(
            "    x.fake_device() = Some({d}), x.device() = {}",
            x.device()
        );
    }
    // Each op prints the guards it recorded (Python: ShapeEnv.guards).
    let mut seen = env.guards().len();
    // The ordinary view ops: on a symbolic tensor they take the symbolic
    // path themselves and return symbolic tensors.
    let y = x.view((-1, 8))?;
    show_sym("let y = x.view((-1, 8))?", &y);
    seen = new_guards(&env, seen);
    let z = y.narrow(0, 1, 3)?;
    show_sym("let z = y.narrow(0, 1, 3)?", &z);
    seen = new_guards(&env, seen);
    let w = z.transpose(0, 1)?;
    show_sym("let w = z.transpose(0, 1)?", &w);
    seen = new_guards(&env, seen);
    let r = w.reshape(-1)?;
    show_sym("let r = w.reshape(-1)?  (a copy: not viewable)", &r);
    seen = new_guards(&env, seen);
    // Symbolic arguments: a start computed from a size.
    let last3 = x.narrow(2, sizes[2].sub(&3.into())?, 3)?;
    show_sym("let l = x.narrow(2, s2 - 3, 3)?", &last3);
    seen = new_guards(&env, seen);
    let v = x.view_dtype(ScalarType::Long)?;
    show_sym("let v = x.view_dtype(ScalarType::Long)?", &v);
    seen = new_guards(&env, seen);
    // After Eq(Mod(s2, 2), 0), 2*(s2//2) is s2: viewing back records nothing.
    let back = v.view_dtype(ScalarType::Float)?.view(&sizes[..])?;
    show_sym(
        "let b = v.view_dtype(ScalarType::Float)?.view(&[s0, s1, s2])?",
        &back,
    );
    new_guards(&env, seen);
    println!("\nenv.produce_guards_python() (what a compiler caches on):");
    for g in env.produce_guards_python() {
        println!("    {g}");
    }
    // `produce_guards` is those guards (named by their sources) plus one
    // range guard per symbol, listed first: print only the range guards.
    let recorded = env.guards().len();
    let all = env.produce_guards();
    println!(
        "\nenv.produce_guards() adds one range guard per symbol to these {recorded} (sizes 0 and 1\nare specialised, as in PyTorch); the trace is valid exactly where all of them hold:"
    );
    for g in all.iter().take(all.len().saturating_sub(recorded)) {
        println!("    {g}");
    }
    for vals in [[5, 7, 8], [4, 6, 16], [1, 6, 8], [3, 3, 3]] {
        let ok = env.evaluate_guards(&|s| vals.get(s as usize).copied())?;
        println!("env.evaluate_guards(sizes {vals:?}) = {ok}");
    }
    if let Err(e) = x.checked_sizes() {
        println!("\nx.checked_sizes() fails: {e}");
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

/// Prints the guards `env` recorded since the first `seen`; returns the new count.
fn new_guards(env: &torchcore::core::sym::ShapeEnv, seen: usize) -> usize {
    let all = env.guards();
    if all.len() == seen {
        println!("    records no guard");
    }
    for g in all.iter().skip(seen) {
        println!("    records guard: {g}");
    }
    all.len()
}

/// "1 cudaMalloc call", "2 cudaMalloc calls".
fn calls(n: u64, what: &str) -> String {
    format!("{n} {what} call{}", if n == 1 { "" } else { "s" })
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
