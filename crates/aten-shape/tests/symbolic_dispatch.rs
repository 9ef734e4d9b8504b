//! One op API for concrete and symbolic tensors: every view op, called as
//! a method or a free function on a tensor with symbolic sizes, returns a
//! symbolic view with the geometry and the guards of the `Geometry<SymInt>`
//! rule (the path the symbolic corpus checks against PyTorch's fake
//! tensors); symbolic arguments work on both kinds of tensor; shapes and
//! indices take the integer types users have.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use aten_shape::generic::{sym_reshape, sym_view_op, Geometry};
use aten_shape::views::{self, ViewOps};
use c10_core::sym::{ShapeEnv, SymInt};
use c10_core::{Device, Result, ScalarType, Tensor, TensorOptions};

/// A fresh environment and a meta tensor of sizes `(s0, s1, s2)` (hints
/// 4, 6, 8), contiguous.
fn symbolic() -> (Arc<ShapeEnv>, Tensor) {
    let env = ShapeEnv::new();
    let sizes = [
        env.create_symbol(4, "x.size(0)").unwrap(),
        env.create_symbol(6, "x.size(1)").unwrap(),
        env.create_symbol(8, "x.size(2)").unwrap(),
    ];
    let x = Tensor::empty_symint(&sizes, TensorOptions::new().device(Device::META)).unwrap();
    (env, x)
}

type SymGeom = (Vec<String>, Vec<String>, String);

fn sym_geom(t: &Tensor) -> SymGeom {
    let s = |v: Vec<SymInt>| v.iter().map(|x| x.to_string()).collect();
    (
        s(t.sym_sizes()),
        s(t.sym_strides()),
        t.sym_storage_offset().to_string(),
    )
}

fn guards(env: &ShapeEnv) -> Vec<String> {
    env.guards().iter().map(|g| g.to_string()).collect()
}

/// The outcome of one op on a fresh symbolic tensor: its geometry (or
/// error text) and the guards it recorded.
fn outcome(
    op: impl Fn(&Tensor) -> Result<Tensor>,
) -> (std::result::Result<SymGeom, String>, Vec<String>) {
    let (env, x) = symbolic();
    let r = op(&x).map(|t| sym_geom(&t)).map_err(|e| e.to_string());
    (r, guards(&env))
}

/// Asserts that the ordinary op and the `Geometry` rule agree (result
/// and guards) on a fresh symbolic tensor.
fn same(
    name: &str,
    ordinary: impl Fn(&Tensor) -> Result<Tensor>,
    rule: impl Fn(&Tensor) -> Result<Tensor>,
) {
    let a = outcome(ordinary);
    let b = outcome(rule);
    assert_eq!(a, b, "{name}: ordinary op vs Geometry rule");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn every_single_view_op_dispatches_to_the_symbolic_rule() {
    let s = |v: i64| SymInt::from(v);
    same(
        "view",
        |x| x.view([-1, 8]),
        |x| sym_view_op(x, |g| g.view(&[s(-1), s(8)])),
    );
    same(
        "view (bad)",
        |x| x.view([5, -1, 7]),
        |x| sym_view_op(x, |g| g.view(&[s(5), s(-1), s(7)])),
    );
    same(
        "views::view",
        |x| views::view(x, (-1,)),
        |x| sym_view_op(x, |g| g.view(&[s(-1)])),
    );
    same(
        "reshape (view)",
        |x| x.reshape(-1),
        |x| sym_reshape(x, &[s(-1)]),
    );
    same(
        "reshape (copy)",
        |x| x.transpose(0, 1)?.reshape(-1),
        |x| sym_reshape(&sym_view_op(x, |g| g.transpose(0, 1))?, &[s(-1)]),
    );
    same(
        "transpose",
        |x| x.transpose(0, -1),
        |x| sym_view_op(x, |g| g.transpose(0, -1)),
    );
    same(
        "swapaxes",
        |x| x.swapaxes(0, 1),
        |x| sym_view_op(x, |g| g.transpose(0, 1)),
    );
    same(
        "swapdims",
        |x| views::swapdims(x, 1, 2),
        |x| sym_view_op(x, |g| g.transpose(1, 2)),
    );
    same(
        "mt",
        |x| x.mt(),
        |x| sym_view_op(x, |g| g.transpose(-2, -1)),
    );
    same(
        "numpy_t",
        |x| x.numpy_t(),
        |x| sym_view_op(x, |g| g.permute(&[2, 1, 0])),
    );
    same(
        "permute",
        |x| x.permute(&[2, 0, 1]),
        |x| sym_view_op(x, |g| g.permute(&[2, 0, 1])),
    );
    same(
        "permute (bad)",
        |x| x.permute(&[0, 0, 1]),
        |x| sym_view_op(x, |g| g.permute(&[0, 0, 1])),
    );
    same(
        "movedim",
        |x| x.movedim(&[0], &[-1]),
        |x| sym_view_op(x, |g| g.movedim_dims(&[0], &[-1])),
    );
    same(
        "moveaxis",
        |x| x.moveaxis(&[0, 1], &[2, 0]),
        |x| sym_view_op(x, |g| g.movedim_dims(&[0, 1], &[2, 0])),
    );
    same(
        "narrow",
        |x| x.narrow(1, 1, 3),
        |x| sym_view_op(x, |g| g.narrow(1, &s(1), &s(3))),
    );
    same(
        "narrow (bad)",
        |x| x.narrow(1, 7, 3),
        |x| sym_view_op(x, |g| g.narrow(1, &s(7), &s(3))),
    );
    same(
        "select",
        |x| x.select(1, -2),
        |x| sym_view_op(x, |g| g.select(1, &s(-2))),
    );
    same(
        "slice",
        |x| x.slice(2, Some(1), None, 3),
        |x| sym_view_op(x, |g| g.slice(2, Some(&s(1)), None, 3)),
    );
    same(
        "slice (i32)",
        |x| x.slice(0, 1, 3, 1),
        |x| sym_view_op(x, |g| g.slice(0, Some(&s(1)), Some(&s(3)), 1)),
    );
    same(
        "expand",
        |x| x.unsqueeze(0)?.expand([5, -1, -1, -1]),
        |x| sym_view_op(x, |g| g.unsqueeze(0)?.expand(&[s(5), s(-1), s(-1), s(-1)])),
    );
    same(
        "broadcast_to",
        |x| x.broadcast_to([2, -1, -1, -1]),
        |x| sym_view_op(x, |g| g.expand(&[s(2), s(-1), s(-1), s(-1)])),
    );
    same(
        "squeeze",
        |x| x.unsqueeze(1)?.squeeze(),
        |x| sym_view_op(x, |g| g.unsqueeze(1)?.squeeze()),
    );
    same(
        "squeeze_dim",
        |x| x.squeeze_dim(0),
        |x| sym_view_op(x, |g| g.squeeze_dim(0)),
    );
    same(
        "squeeze_dims",
        |x| x.squeeze_dims(&[0, 2]),
        |x| sym_view_op(x, |g| g.squeeze_dims(&[0, 2])),
    );
    same(
        "unsqueeze",
        |x| x.unsqueeze(-1),
        |x| sym_view_op(x, |g| g.unsqueeze(-1)),
    );
    same(
        "flatten",
        |x| x.flatten(0, 1),
        |x| {
            let (g, copied) = Geometry::of(x).flatten(0, 1)?;
            assert!(!copied);
            g.view_of(x)
        },
    );
    same(
        "unflatten",
        |x| x.flatten(0, 1)?.unflatten(0, (2, -1)),
        |x| sym_view_op(x, |g| g.flatten(0, 1)?.0.unflatten(0, &[s(2), s(-1)])),
    );
    same(
        "diagonal",
        |x| x.diagonal(1, 0, 2),
        |x| sym_view_op(x, |g| g.diagonal(1, 0, 2)),
    );
    same(
        "unfold",
        |x| x.unfold(2, 3, 2),
        |x| sym_view_op(x, |g| g.unfold(2, 3, 2)),
    );
    same(
        "alias",
        |x| x.alias(),
        |x| sym_view_op(x, |g| Ok(g.clone())),
    );
    same(
        "index_ints",
        |x| x.index_ints([1, -1]),
        |x| sym_view_op(x, |g| g.select(0, &s(1))?.select(0, &s(-1))),
    );
    same("t (error)", |x| x.t(), views::t);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn the_results_are_symbolic_views_of_the_input() -> Result<()> {
    let (env, x) = symbolic();
    let y = x.view((-1, 8))?.narrow(1, 1, 3)?.transpose(0, 1)?;
    assert!(y.has_symbolic_sizes_strides() && y.is_alias_of(&x));
    assert_eq!(y.sym_sizes()[0].to_string(), "3");
    assert_eq!(y.sym_strides()[0].to_string(), "1");
    assert_eq!(y.sym_storage_offset().to_string(), "1");
    assert!(!guards(&env).is_empty());
    // The concrete accessors still refuse, as c10's do.
    assert!(y.checked_sizes().is_err());
    Ok(())
}

/// Asserts that a list-returning op agrees with its `Geometry` rule.
fn same_list(
    name: &str,
    ordinary: impl Fn(&Tensor) -> Result<Vec<Tensor>>,
    rule: impl Fn(&Geometry<SymInt>) -> Result<Vec<Geometry<SymInt>>>,
) {
    let (env_a, x) = symbolic();
    let a = ordinary(&x)
        .map(|v| v.iter().map(sym_geom).collect::<Vec<_>>())
        .map_err(|e| e.to_string());
    let (env_b, x) = symbolic();
    let b = rule(&Geometry::of(&x))
        .and_then(|v| {
            v.iter()
                .map(|g| g.view_of(&x).map(|t| sym_geom(&t)))
                .collect::<Result<Vec<_>>>()
        })
        .map_err(|e| e.to_string());
    assert_eq!((a, guards(&env_a)), (b, guards(&env_b)), "{name}");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn list_ops_dispatch_too() {
    let s = |v: i64| SymInt::from(v);
    same_list("split", |x| x.split(4, 2), |g| g.split(&s(4), 2));
    same_list("chunk", |x| x.chunk(3, 1), |g| g.chunk(3, 1));
    same_list("unbind", |x| x.unbind(0), |g| g.unbind(0));
    same_list(
        "split_with_sizes",
        |x| x.split_with_sizes([2, 6], 2),
        |g| g.split_with_sizes(&[s(2), s(6)], 2),
    );
    same_list(
        "tensor_split",
        |x| x.tensor_split(3, 1),
        |g| g.tensor_split(3, 1),
    );
    same_list(
        "tensor_split_indices",
        |x| x.tensor_split_indices([1, 3], 2),
        |g| g.tensor_split_indices(&[s(1), s(3)], 2),
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn symbolic_arguments_narrow_and_select() -> Result<()> {
    let (env, x) = symbolic();
    let n = env.create_symbol(2, "n")?;
    // narrow with a symbolic start and length, select with a symbolic index.
    let y = x.narrow(1, &n, 3)?;
    assert_eq!(y.sym_storage_offset(), n.mul(&x.sym_strides()[1])?);
    let z = x.select(2, n.clone())?;
    assert_eq!(z.sym_sizes().len(), 2);
    assert_eq!(z.sym_storage_offset().to_string(), n.to_string());
    // A symbolic argument on a concrete tensor gives a symbolic view of it.
    let c = Tensor::zeros(&[4, 6], ScalarType::Float)?;
    let v = c.narrow(1, 1, &n)?;
    assert!(v.has_symbolic_sizes_strides() && v.is_alias_of(&c));
    assert_eq!(v.sym_sizes()[1], n);
    let w = c.view([n.clone(), SymInt::from(-1)])?;
    assert_eq!(w.sym_sizes()[0], n);
    assert!(!guards(&env).is_empty());
    // All-constant SymInt lists stay on the concrete path.
    let k = c.view(vec![SymInt::from(24)])?;
    assert!(!k.has_symbolic_sizes_strides() && k.sizes() == [24]);
    Ok(())
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn shapes_take_what_users_have() -> Result<()> {
    let a = Tensor::arange(0, 24, 1, ScalarType::Long)?;
    let want: &[i64] = &[2, 3, 4];
    let dims_usize: Vec<usize> = vec![2, 3, 4];
    let dims_i64: Vec<i64> = vec![2, 3, 4];
    for v in [
        a.view(&[2, 3, 4])?,
        a.view([2, 3, 4])?,
        a.view([2usize, 3, 4])?,
        a.view(&dims_usize[..])?,
        a.view(&dims_usize)?,
        a.view(dims_usize.clone())?,
        a.view(&dims_i64)?,
        a.view(dims_i64.clone())?,
        a.view((2, 3, 4))?,
        a.view((2usize, 3i64, 4u32))?,
        a.reshape((2, -1, 4))?,
        views::view(&a, [2i32, 3, 4])?,
    ] {
        assert_eq!(v.sizes(), want);
    }
    assert_eq!(a.view(-1)?.sizes(), &[24]);
    assert_eq!(a.narrow(0, 2usize, 3usize)?.storage_offset(), 2);
    assert_eq!(a.select(0, 5i32)?.item::<i64>()?, 5);
    assert_eq!(a.slice(0, 2usize, None, 2)?.sizes(), &[11]);
    assert_eq!(a.split(10usize, 0)?.len(), 3);
    assert_eq!(a.unflatten(0, (4, 6))?.sizes(), &[4, 6]);
    let e = Tensor::zeros(&[1], ScalarType::Float)?.expand((3usize, 5usize))?;
    assert_eq!(e.sizes(), &[3, 5]);
    // Factories take the same shapes.
    assert_eq!(Tensor::zeros((2, 3), ScalarType::Float)?.sizes(), &[2, 3]);
    assert_eq!(Tensor::ones(vec![4usize], ScalarType::Float)?.sizes(), &[4]);
    assert_eq!(Tensor::empty((), TensorOptions::new())?.dim(), 0);
    assert_eq!(Tensor::zeros(&[], ScalarType::Float)?.dim(), 0);
    Ok(())
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn oversized_usize_arguments_are_errors_not_panics() -> Result<()> {
    let a = Tensor::arange(0, 24, 1, ScalarType::Long)?;
    let big = i64::MAX as usize + 1;
    let msg = "value cannot be converted to type int64_t without overflow";
    assert_eq!(a.view([big]).unwrap_err().to_string(), msg);
    assert_eq!(a.view(vec![1, big]).unwrap_err().to_string(), msg);
    assert_eq!(a.narrow(0, big, 1usize).unwrap_err().to_string(), msg);
    assert_eq!(a.select(0, big).unwrap_err().to_string(), msg);
    assert_eq!(a.slice(0, big, None, 1).unwrap_err().to_string(), msg);
    assert_eq!(a.expand((big,)).unwrap_err().to_string(), msg);
    assert_eq!(
        Tensor::zeros([big], ScalarType::Float)
            .unwrap_err()
            .to_string(),
        msg
    );
    Ok(())
}

/// The in-place metadata ops take symbolic arguments and symbolic tensors
/// (PyTorch's fake path): the tensor becomes (or stays) symbolic, and the
/// storage checks are decisions on its symbolic byte size.
#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn in_place_ops_take_symbolic_sizes() {
    let (env, x) = symbolic();
    let s = x.sym_sizes();
    let mut t = x.clone();
    t.resize_(vec![s[1].clone(), s[0].clone(), s[2].clone()], None)
        .unwrap();
    assert_eq!(
        sym_geom(&t).1,
        ["s0*s2", "s2", "1"],
        "contiguous strides of the new sizes"
    );
    // The size comparison guards (s0 == s1 is false at the hints).
    assert_eq!(guards(&env), ["Ne(s0, s1)"]);
    assert_eq!(t.version().unwrap(), 1);

    let mut u = x.clone();
    u.as_strided_([s[1].clone(), 2.into()], [1.into(), s[1].clone()], &s[2])
        .unwrap();
    assert_eq!(
        sym_geom(&u),
        (
            vec!["s1".into(), "2".into()],
            vec!["1".into(), "s1".into()],
            "s2".into()
        )
    );
    // Out of bounds at the hints: an error, as on PyTorch's fake path.
    let mut w = x.clone();
    let big = s[0].mul(&s[1]).unwrap().mul(&s[2]).unwrap();
    let e = w.as_strided_([big], [1], 1).unwrap_err();
    assert!(
        e.to_string().contains("out of bounds for storage of size"),
        "{e}"
    );

    // A concrete tensor with a symbolic size becomes symbolic.
    let n = env.create_symbol(3, "n").unwrap();
    let mut c = Tensor::zeros(&[6], ScalarType::Float).unwrap();
    c.resize_(vec![n.clone()], None).unwrap();
    assert!(c.has_symbolic_sizes_strides());
    assert_eq!(c.sym_sizes(), vec![n.clone()]);
    let storage = c.storage().clone();
    c.set_(
        &storage,
        0,
        [n.clone(), 1.into()],
        [SymInt::from(1), SymInt::from(1)],
    )
    .unwrap();
    assert_eq!(c.sym_sizes(), vec![n, 1.into()]);
}

/// `view(dtype)` of a fake tensor: the last dim rescaled symbolically,
/// with PyTorch's divisibility guards.
#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn view_dtype_of_a_symbolic_tensor() {
    let (env, x) = symbolic();
    let v = x.view_dtype(ScalarType::Long).unwrap();
    assert_eq!(v.dtype(), ScalarType::Long);
    assert_eq!(sym_geom(&v).0, ["s0", "s1", "((s2)//2)"]);
    assert_eq!(guards(&env), ["Eq(Mod(s2, 2), 0)", "Eq(Mod(s1*s2, 2), 0)"]);
    let b = x.view_dtype(ScalarType::Byte).unwrap();
    assert_eq!(sym_geom(&b).0, ["s0", "s1", "4*s2"]);
    let e = x
        .transpose(1, 2)
        .unwrap()
        .view_dtype(ScalarType::Long)
        .unwrap_err();
    assert!(
        e.to_string().starts_with("self.stride(-1) must be 1"),
        "{e}"
    );
}

/// The factories take symbolic sizes: a meta (or fake) tensor.
#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn factories_take_symbolic_sizes() {
    let (_env, x) = symbolic();
    let s = x.sym_sizes();
    let z = x.new_zeros([s[0].clone(), 3.into()]).unwrap();
    assert_eq!(sym_geom(&z).0, ["s0", "3"]);
    let e = x
        .new_empty_strided([s[0].clone(), s[1].clone()], [1.into(), s[0].clone()])
        .unwrap();
    assert_eq!(sym_geom(&e).1, ["1", "s0"]);
    let f = Tensor::full([s[2].clone()], 7, TensorOptions::new().device(Device::META)).unwrap();
    assert_eq!(
        (f.dtype(), sym_geom(&f).0),
        (ScalarType::Long, vec!["s2".to_string()])
    );
    let o = Tensor::ones([s[1].clone()], ScalarType::Int).unwrap();
    assert_eq!(o.fake_device(), Some(Device::CPU));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
#[allow(deprecated)]
fn the_old_index_name_still_works() -> Result<()> {
    let t = Tensor::arange(0, 6, 1, ScalarType::Long)?.view((2, 3))?;
    assert_eq!(
        t.index(&[1, 2])?.item::<i64>()?,
        t.index_ints([1, 2])?.item::<i64>()?
    );
    assert_eq!(views::index(&t, &[1, 2])?.item::<i64>()?, 5);
    Ok(())
}

/// Divisibility facts simplify later decisions as PyTorch's
/// `ShapeEnv.divisible` does: after `view(dtype)` records
/// `Eq(Mod(s2, 2), 0)`, `2*(s2//2)` is `s2`, so viewing the round trip back
/// as the original sizes (or `-1`) records nothing more (PyTorch 2.15's
/// guards for these chains, generated with FakeTensorMode + ShapeEnv, are
/// the same two).
#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn divisibility_guards_make_exact_divisions_static() {
    type Chain = fn(&Tensor, &[SymInt]) -> Result<Tensor>;
    let chains: [(&str, Chain); 3] = [
        ("view(sizes)", |x, s| {
            x.view_dtype(ScalarType::Long)?
                .view_dtype(ScalarType::Float)?
                .view(s)
        }),
        ("view(-1, s2)", |x, s| {
            x.view_dtype(ScalarType::Long)?
                .view_dtype(ScalarType::Float)?
                .view([SymInt::from(-1), s[2].clone()])
        }),
        ("reshape(-1)", |x, _| {
            x.view_dtype(ScalarType::Long)?
                .view_dtype(ScalarType::Float)?
                .reshape(-1)
        }),
    ];
    for (name, chain) in chains {
        let (env, x) = symbolic();
        let s = x.sym_sizes();
        let y = chain(&x, &s).unwrap();
        assert_eq!(
            y.sym_sizes().len(),
            if name == "reshape(-1)" {
                1
            } else {
                s.len() - (name == "view(-1, s2)") as usize
            },
            "{name}"
        );
        assert_eq!(
            guards(&env),
            ["Eq(Mod(s2, 2), 0)", "Eq(Mod(s1*s2, 2), 0)"],
            "{name}"
        );
    }
}

/// `squeeze(dim)` of a dim that is not 1 at the hint decides on the
/// symbolic size (guarding), not on the hint: after `view(2, -1)` of an
/// `(s0,)`, the size `s0//2` could be 1, so PyTorch records `Ne(s0//2, 1)`.
#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn squeeze_dim_guards_on_the_symbolic_size() {
    let env = ShapeEnv::new();
    let s0 = env.create_symbol(6, "x.size(0)").unwrap();
    let x = Tensor::empty_symint(&[s0], TensorOptions::new().device(Device::META)).unwrap();
    let z = x.view((2, -1)).unwrap().squeeze_dim(1).unwrap();
    assert_eq!(z.dim(), 2);
    assert_eq!(guards(&env).last().unwrap(), "Ne(((s0)//2), 1)");
}

/// Slices, narrows and splits of unbacked sizes decide what they can
/// without guards, as PyTorch 2.15's fake path does: open clamps become
/// `Min`/`Max` (PyTorch: `x[1:]` of `(u0, u1)` has size
/// `Max(0, u0 - Min(1, u0))` and offset `u1*Min(1, u0)`), checks become
/// runtime asserts, and `split(u0 - 1)` splits in two.
#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn unbacked_slices_and_splits_follow_pytorch() {
    let env = ShapeEnv::new();
    let (u0, u1) = (
        env.create_unbacked_symint("u0"),
        env.create_unbacked_symint("u1"),
    );
    let x = Tensor::empty_symint(
        &[u0.clone(), u1.clone()],
        TensorOptions::new().device(Device::META),
    )
    .unwrap();
    let at = |v: &SymInt, a: i64, b: i64| {
        v.expr()
            .unwrap()
            .eval(&|s| Some(if s == 0 { a } else { b }))
            .unwrap()
    };
    // x[1:], x[-1:], x[2:4] against PyTorch's expressions at a few sizes.
    type Want = fn(i64) -> (i64, i64);
    let cases: [(Option<i64>, Option<i64>, Want); 3] = [
        (Some(1), None, |u| ((u - 1.min(u)).max(0), 1.min(u))),
        (Some(-1), None, |u| {
            ((u - (u - 1).max(0)).max(0), (u - 1).max(0))
        }),
        (Some(2), Some(4), |u| {
            ((4.min(u) - 2.min(u)).max(0), 2.min(u))
        }),
    ];
    for (start, end, want) in cases {
        let y = x.slice(0, start, end, 1).unwrap();
        for u in [0, 1, 2, 3, 7] {
            let (size, first) = want(u);
            assert_eq!(
                at(&y.sym_sizes()[0], u, 5),
                size,
                "{start:?}:{end:?} at {u}"
            );
            assert_eq!(
                at(&y.sym_storage_offset(), u, 5),
                first * 5,
                "{start:?}:{end:?} at {u}"
            );
        }
    }
    let p = x.split(u0.sub(&1.into()).unwrap(), 0).unwrap();
    assert_eq!(p.len(), 2);
    assert_eq!(p[1].sym_sizes()[0], SymInt::from(1));
    let n = x.narrow(0, 1, u0.sub(&2.into()).unwrap()).unwrap();
    assert_eq!(
        n.sym_sizes()[0].to_string(),
        u0.sub(&2.into()).unwrap().to_string()
    );
    let a =
        views::as_strided(&x, [SymInt::from(2), u0.sub(&1.into()).unwrap()], [1, 1], 0).unwrap();
    assert_eq!(a.dim(), 2);
    assert!(env.guards().is_empty(), "{:?}", guards(&env));
    let asserts: Vec<String> = env
        .deferred_runtime_asserts()
        .iter()
        .map(|a| a.to_string())
        .collect();
    assert!(!asserts.is_empty());
}

/// Every op that takes a size, an index or an offset takes a `SymInt`,
/// and the copies (`contiguous`, `clone`, `reshape`'s copy branch) of a
/// symbolic tensor are symbolic tensors, not refusals.
#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn symbolic_arguments_everywhere_and_symbolic_copies() -> Result<()> {
    use aten_shape::copy::{clone, contiguous};
    use c10_core::MemoryFormat;
    let (env, x) = symbolic();
    let s = x.sym_sizes();
    let one = SymInt::from(1);
    let m1 = |v: &SymInt| v.sub(&one).unwrap();
    // slice start/end/step, narrow, select, expand, view, reshape,
    // split, split_with_sizes, unflatten, as_strided: all with SymInts.
    let a = x.slice(2, one.clone(), s[2].clone(), m1(&s[1]))?;
    assert_eq!(a.sym_sizes()[2].to_string(), "((s1 + s2 - 3)//(s1 - 1))");
    assert_eq!(a.sym_strides()[2].to_string(), "s1 - 1");
    x.narrow(1, m1(&s[1]), one.clone())?;
    x.select(0, m1(&s[0]))?;
    x.unsqueeze(0)?
        .expand([s[1].clone(), s[0].clone(), s[1].clone(), s[2].clone()])?;
    x.view([s[0].clone(), s[1].mul(&s[2])?])?;
    x.reshape([s[2].clone(), SymInt::from(-1)])?;
    assert_eq!(x.split(m1(&s[2]), 2)?.len(), 2);
    x.split_with_sizes([m1(&s[0]), one.clone()], 0)?;
    x.unflatten(2, [SymInt::from(2), SymInt::from(-1)])?;
    views::as_strided(&x, [s[2].clone()], [one.clone()], m1(&s[0]))?;
    // Copies stay symbolic.
    let t = x.transpose(0, 1)?;
    let c = contiguous(&t, MemoryFormat::Contiguous)?;
    assert!(c.has_symbolic_sizes_strides());
    assert_eq!(sym_geom(&c).1, vec!["s0*s2", "s2", "1"]);
    let k = clone(&x, MemoryFormat::Contiguous)?;
    assert_eq!(k.sym_sizes(), s);
    let cl = clone(&x.unsqueeze(0)?, MemoryFormat::ChannelsLast)?;
    assert_eq!(sym_geom(&cl).1, vec!["s0*s1*s2", "1", "s0*s2", "s0"]);
    // A contiguous input is its own `contiguous()`.
    assert!(contiguous(&x, MemoryFormat::Contiguous)?.is_alias_of(&x));
    let r = t.reshape([SymInt::from(-1)])?;
    assert!(r.has_symbolic_sizes_strides() && !r.is_alias_of(&t));
    assert!(!guards(&env).is_empty());
    Ok(())
}

/// The one-API promise, op by op: every op that takes a size, index,
/// offset or shape in PyTorch (a `SymInt` there) takes symbolic
/// arguments through ordinary method syntax on a fake tensor, with the
/// result and guards of the `Geometry<SymInt>` rule. No inherent method
/// of `Tensor` shadows a `ViewOps` method with a concrete-only
/// signature: `as_strided` and `empty_strided` (inherent) take `SymInt`s
/// too.
#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn every_symint_argument_through_method_syntax() {
    // Arguments derived from the input's own sizes (s0, s1, s2).
    let sz = |x: &Tensor, d: usize| x.sym_sizes()[d].clone();
    let sub = |v: SymInt, k: i64| v.sub(&SymInt::from(k)).unwrap();
    let c = |v: i64| SymInt::from(v);
    same(
        "view",
        |x| x.view([sz(x, 1), c(-1)]),
        |x| sym_view_op(x, |g| g.view(&[sz(x, 1), c(-1)])),
    );
    same(
        "reshape",
        |x| x.transpose(0, 1)?.reshape([c(-1), sz(x, 2)]),
        |x| sym_reshape(&sym_view_op(x, |g| g.transpose(0, 1))?, &[c(-1), sz(x, 2)]),
    );
    same(
        "narrow",
        |x| x.narrow(1, sub(sz(x, 1), 2), 2),
        |x| sym_view_op(x, |g| g.narrow(1, &sub(sz(x, 1), 2), &c(2))),
    );
    same(
        "select",
        |x| x.select(2, sub(sz(x, 2), 1)),
        |x| sym_view_op(x, |g| g.select(2, &sub(sz(x, 2), 1))),
    );
    same(
        "slice",
        |x| x.slice(1, sub(sz(x, 1), 4), sz(x, 1), 2),
        |x| {
            let (st, en) = (sub(sz(x, 1), 4), sz(x, 1));
            sym_view_op(x, |g| g.slice(1, Some(&st), Some(&en), 2))
        },
    );
    same(
        "as_strided (inherent method)",
        |x| x.as_strided([sz(x, 2), sz(x, 1)], [c(1), sz(x, 2)], sz(x, 0)),
        |x| {
            let (s, st, o) = ([sz(x, 2), sz(x, 1)], [c(1), sz(x, 2)], sz(x, 0));
            sym_view_op(x, |g| g.as_strided(&s, &st, Some(&o)))
        },
    );
    same(
        "expand",
        |x| {
            x.select(1, 0)?
                .unsqueeze(1)?
                .expand([c(-1), sz(x, 1), sz(x, 2)])
        },
        |x| {
            sym_view_op(x, |g| {
                g.select(1, &c(0))?
                    .unsqueeze(1)?
                    .expand(&[c(-1), sz(x, 1), sz(x, 2)])
            })
        },
    );
    same(
        "unflatten",
        |x| x.unflatten(2, [c(2), c(-1)]),
        |x| sym_view_op(x, |g| g.unflatten(2, &[c(2), c(-1)])),
    );
    same_list(
        "split",
        |x| x.split(sub(sz(x, 1), 1), 1),
        |g| g.split(&sub(g.sizes[1].clone(), 1), 1),
    );
    same_list(
        "split_with_sizes",
        |x| x.split_with_sizes([c(1), sub(sz(x, 0), 1)], 0),
        |g| g.split_with_sizes(&[c(1), sub(g.sizes[0].clone(), 1)], 0),
    );
    same_list(
        "tensor_split_indices",
        |x| x.tensor_split_indices([c(1), sub(sz(x, 2), 1)], 2),
        |g| g.tensor_split_indices(&[c(1), sub(g.sizes[2].clone(), 1)], 2),
    );

    // The factories and the in-place ops, by method syntax too.
    let (env, x) = symbolic();
    let s = x.sym_sizes();
    let e = x.new_empty([s[2].clone(), s[0].clone()]).unwrap();
    assert_eq!(sym_geom(&e).0, ["s2", "s0"]);
    let z = x.new_zeros([s[1].clone()]).unwrap();
    assert_eq!(sym_geom(&z).0, ["s1"]);
    let st = x
        .new_empty_strided([s[0].clone(), c(3)], [c(1), s[0].clone()])
        .unwrap();
    assert_eq!(sym_geom(&st).1, ["1", "s0"]);
    let es = Tensor::empty_strided(
        [s[1].clone(), c(2)],
        [c(1), s[1].clone()],
        TensorOptions::new().device(Device::META),
    )
    .unwrap();
    assert_eq!(
        sym_geom(&es),
        (
            vec!["s1".into(), "2".into()],
            vec!["1".into(), "s1".into()],
            "0".into()
        )
    );
    let mut r = x.clone();
    r.resize_([s[2].clone(), s[1].clone()], None).unwrap();
    assert_eq!(sym_geom(&r).0, ["s2", "s1"]);
    let mut a = x.clone();
    a.as_strided_([s[1].clone()], [s[2].clone()], c(0)).unwrap();
    assert_eq!(
        sym_geom(&a),
        (vec!["s1".into()], vec!["s2".into()], "0".into())
    );
    // A symbolic slice step (no `Geometry` method: the op's own face).
    let sl = x.slice(2, None, None, sub(s[0].clone(), 2)).unwrap();
    assert_eq!(sym_geom(&sl).0[2], "((s0 + s2 - 3)//(s0 - 2))");
    assert_eq!(sym_geom(&sl).1[2], "s0 - 2");
    let mut t = x.clone();
    let storage = x.storage().clone();
    t.set_(&storage, s[2].clone(), [s[0].clone()], [c(1)])
        .unwrap();
    assert_eq!(
        sym_geom(&t),
        (vec!["s0".into()], vec!["1".into()], "s2".into())
    );
    // Concrete arguments on a concrete tensor: the concrete methods.
    let k = Tensor::zeros(&[4, 6], ScalarType::Float).unwrap();
    let v = k.as_strided(&[6, 4], &[1, 6], None).unwrap();
    assert!(!v.has_symbolic_sizes_strides() && v.strides() == [1, 6]);
    // A symbolic offset on a concrete tensor: a symbolic view of it.
    let w = k.as_strided([c(2)], [c(1)], s[0].clone()).unwrap();
    assert!(w.has_symbolic_sizes_strides() && w.is_alias_of(&k));
    assert_eq!(w.sym_storage_offset(), s[0]);
    drop(env);
}

/// `Tensor::as_strided`'s argument checks hold on symbolic arguments
/// (ATen's `checkAsStridedArgs`: negative strides, a negative offset).
#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn as_strided_checks_symbolic_arguments() {
    let (_env, x) = symbolic();
    let s = x.sym_sizes();
    let neg = SymInt::from(0).sub(&s[0]).unwrap();
    let e = x
        .as_strided([s[1].clone()], [neg.clone()], None)
        .unwrap_err();
    assert!(
        e.to_string().contains("Negative strides are not supported"),
        "{e}"
    );
    let e = x
        .as_strided([s[1].clone()], [SymInt::from(1)], neg)
        .unwrap_err();
    assert!(e.to_string().contains("invalid storage offset"), "{e}");
}

/// Fixes from a fourth random generator (PyTorch 2.15's fake path as the
/// reference; the cases are in `data/symbolic-targeted.jsonl` too).
/// `expand` of an unbacked tensor to an unbacked size: `size != target`
/// is decided size-obliviously (a new dim gets stride 0, no
/// data-dependent error, no guard), as PyTorch's fake `expand` does.
#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn unbacked_expand_to_unbacked_sizes() {
    let env = ShapeEnv::new();
    let (u0, u1) = (
        env.create_unbacked_symint("u0"),
        env.create_unbacked_symint("u1"),
    );
    let x = Tensor::empty_symint(
        &[u0.clone(), u1.clone()],
        TensorOptions::new().device(Device::META),
    )
    .unwrap();
    let one = SymInt::from(1);
    let y = x
        .expand([SymInt::from(2), u0.clone(), u0.clone(), SymInt::from(-1)])
        .unwrap();
    assert_eq!(
        sym_geom(&y),
        (
            vec!["2".into(), "s0".into(), "s0".into(), "s1".into()],
            // (an unbacked input's contiguous strides are `Max(1, u)`)
            vec!["0".into(), "0".into(), "Max(1, s1)".into(), "1".into()],
            "0".into()
        )
    );
    // A target `u0 + 1` of a new dim: never 1 for a size-like u0.
    let z = x
        .expand([u0.add(&one).unwrap(), u0.clone(), u1.clone()])
        .unwrap();
    assert_eq!(sym_geom(&z).1, ["0", "Max(1, s1)", "1"]);
    assert!(env.guards().is_empty() && env.deferred_runtime_asserts().is_empty());
}

/// A new leading dim of size 1 gets PyTorch's fake-path stride
/// (`stride(0) * size(0)` of the input, `prims.broadcast_in_dim`), not
/// the next output dim's product (0 after a broadcast dim, ATen's C++
/// rule, which the concrete path keeps).
#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn expand_new_size_one_dim_takes_the_fake_path_stride() {
    let (env, x) = symbolic();
    let y = x.expand([1, 5, -1, -1, -1]).unwrap();
    assert_eq!(sym_geom(&y).1, ["s0*s1*s2", "0", "s1*s2", "s2", "1"]);
    assert!(env.guards().is_empty());
    // The concrete path: ATen's C++ `inferExpandGeometry`.
    let c = Tensor::zeros(&[2, 3], ScalarType::Float).unwrap();
    assert_eq!(c.expand([1, 5, 2, 3]).unwrap().strides(), &[0, 0, 3, 1]);
}

/// `computeStorageNbytes` over `SymInt`s decides `size == 0` with
/// `guard_or_false`: `as_strided_` of an unbacked tensor to `u0 - 2`
/// (which size-oblivious reasoning cannot settle) works and records
/// nothing, as on PyTorch's fake path.
#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn unbacked_as_strided_to_a_difference() {
    let env = ShapeEnv::new();
    let u0 = env.create_unbacked_symint("u0");
    let mut x = Tensor::empty_symint(
        std::slice::from_ref(&u0),
        TensorOptions::new().device(Device::META),
    )
    .unwrap();
    let len = u0.sub(&SymInt::from(2)).unwrap();
    x.as_strided_([len], [1], 2).unwrap();
    assert_eq!(
        sym_geom(&x),
        (vec!["s0 - 2".into()], vec!["1".into()], "2".into())
    );
    assert!(env.guards().is_empty() && env.deferred_runtime_asserts().is_empty());
}

/// An empty slice with a symbolic step has size 0 (not `(s - 1)//s`,
/// which is undefined at a step 0 that a trace without 0/1
/// specialisation may be evaluated at).
#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn empty_slice_with_a_symbolic_step() {
    let (_env, x) = symbolic();
    let s2 = x.sym_sizes()[2].clone();
    let y = x.slice(1, 9, 0, s2).unwrap();
    assert_eq!(sym_geom(&y).0[1], "0");
}

/// A runtime assert is a fact in its reduced spelling (the integer
/// content divided out, as sympy keeps it): after `as_strided([u3, 2],
/// [u4, 1])`, `unflatten(0, (5, 1, -1))` records `Eq(2*u3, 10*(u3//5))`
/// (the view's element count) and its `computeStride` asks
/// `Ne(5*(u3//5), u3)`, now static, so the view exists (PyTorch 2.15
/// gives sizes `(5, 1, u3//5, 2)`).
#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (symbolic sizes, meta tensors), and slow under the interpreter"
)]
fn runtime_asserts_are_facts_without_their_constant_factor() {
    let env = ShapeEnv::new();
    let u: Vec<SymInt> = (0..5)
        .map(|i| env.create_unbacked_symint(&format!("u{i}")))
        .collect();
    let x = Tensor::empty_symint(&u, TensorOptions::new().device(Device::META)).unwrap();
    let a = x
        .as_strided(
            [u[3].clone(), SymInt::from(2)],
            [u[4].clone(), SymInt::from(1)],
            0,
        )
        .unwrap();
    let v = a.unflatten(0, [5, 1, -1]).unwrap();
    assert_eq!(sym_geom(&v).0, ["5", "1", "((s3)//5)", "2"]);
    assert_eq!(sym_geom(&v).1[2], "s4");
}
