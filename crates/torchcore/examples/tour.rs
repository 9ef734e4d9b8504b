//! A guided tour of PyTorch's tensor model, rebuilt in Rust.
//!
//! Run it with `cargo run --example tour`. Each step prints what it does
//! and what came out, so the output reads as a walkthrough of how storages,
//! views, strides and version counters fit together.

use torchcore::prelude::*;

fn main() -> Result<(), TensorError> {
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
    println!("\nb.explain():\n{}", b.explain());

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
    println!("\nt.explain():\n{}", t.explain());

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
    println!("\ne.explain():\n{}", e.explain());

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
    Ok(())
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
