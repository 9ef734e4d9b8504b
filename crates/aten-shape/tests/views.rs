//! Exact sizes/strides/offsets and error texts of the view ops, pinned to
//! behaviour verified on PyTorch 2.15 (reference §6, checklist 66-104).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use aten_shape::views::{self, ViewOps};
use c10_core::{ScalarType, Tensor, TensorError};

type Geom = (Vec<i64>, Vec<i64>, i64);

fn geom(t: &Tensor) -> Geom {
    (t.sizes().to_vec(), t.strides().to_vec(), t.storage_offset())
}

fn g(sizes: &[i64], strides: &[i64], offset: i64) -> Geom {
    (sizes.to_vec(), strides.to_vec(), offset)
}

/// A contiguous float tensor of the given shape (values 0, 1, 2, ...).
fn arange(sizes: &[i64]) -> Tensor {
    let n: i64 = sizes.iter().product();
    Tensor::arange(0, n, 1, ScalarType::Float)
        .unwrap()
        .view(sizes)
        .unwrap()
}

/// A float tensor with exactly this geometry over a big enough storage.
fn strided(sizes: &[i64], strides: &[i64], offset: i64) -> Tensor {
    let storage = Tensor::zeros(&[1000], ScalarType::Float).unwrap();
    storage.as_strided(sizes, strides, Some(offset)).unwrap()
}

fn err(r: Result<Tensor, TensorError>) -> String {
    r.unwrap_err().to_string()
}

fn is_index_error(r: Result<Tensor, TensorError>) -> bool {
    r.unwrap_err().is_index_error()
}

#[test]
fn dim_wrapping() {
    let x = arange(&[2, 3, 4]);
    assert_eq!(
        err(x.transpose(3, 0)),
        "Dimension out of range (expected to be in range of [-3, 2], but got 3)"
    );
    assert!(is_index_error(x.transpose(0, -4)));
    // 0-dim tensors accept 0 and -1.
    let s = Tensor::scalar_tensor(5.0, ScalarType::Float).unwrap();
    assert_eq!(geom(&s.transpose(0, -1).unwrap()), g(&[], &[], 0));
    assert_eq!(geom(&s.squeeze_dim(0).unwrap()), g(&[], &[], 0));
    assert_eq!(
        err(s.transpose(0, 1)),
        "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
    );
}

#[test]
fn view_follows_compute_stride() {
    // 68: transposed (3,2,4)/(4,12,1) views as (3,2,2,2) with (4,12,2,1).
    let x = strided(&[3, 2, 4], &[4, 12, 1], 0);
    assert_eq!(
        geom(&x.view(&[3, 2, 2, 2]).unwrap()),
        g(&[3, 2, 2, 2], &[4, 12, 2, 1], 0)
    );
    // 69
    assert_eq!(
        err(x.view(&[12, 2])),
        "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead."
    );
    // 70: expanded (3,4)/(1,0)
    let e = strided(&[3, 4], &[1, 0], 0);
    assert_eq!(
        geom(&e.view(&[3, 2, 2]).unwrap()),
        g(&[3, 2, 2], &[1, 0, 0], 0)
    );
    assert!(e.view(&[12]).is_err());
    // 71: new size-1 dims
    let y = strided(&[4, 3], &[6, 2], 0);
    assert_eq!(
        geom(&y.view(&[4, 3, 1]).unwrap()),
        g(&[4, 3, 1], &[6, 2, 2], 0)
    );
    // size-1 dims never break a chunk
    let z = strided(&[4, 1, 3], &[3, 100, 1], 0);
    assert_eq!(geom(&z.view(&[12]).unwrap()), g(&[12], &[1], 0));
    // 72: zero elements
    let a = strided(&[0, 5], &[5, 1], 0);
    assert_eq!(geom(&a.view(&[5, 0]).unwrap()), g(&[5, 0], &[1, 1], 0));
    let b = strided(&[2, 0, 3], &[7, 11, 13], 0);
    assert_eq!(
        geom(&b.view(&[2, 0, 3]).unwrap()),
        g(&[2, 0, 3], &[7, 11, 13], 0)
    );
    assert_eq!(
        geom(&b.view(&[3, 0, 2]).unwrap()),
        g(&[3, 0, 2], &[2, 2, 1], 0)
    );
    assert_eq!(
        geom(&strided(&[0, 3], &[3, 1], 0).view(&[-1, 3]).unwrap()),
        g(&[0, 3], &[3, 1], 0)
    );
    // 73: 0-dim
    let s = Tensor::scalar_tensor(5.0, ScalarType::Float).unwrap();
    assert_eq!(geom(&s.view(&[1, 1]).unwrap()), g(&[1, 1], &[1, 1], 0));
    assert_eq!(geom(&arange(&[1, 1]).view(&[]).unwrap()), g(&[], &[], 0));
    // 76: the offset is kept
    let o = strided(&[2, 3], &[3, 1], 7);
    assert_eq!(geom(&o.view(&[6]).unwrap()), g(&[6], &[1], 7));
    // view_as
    assert_eq!(o.view_as(&arange(&[3, 2])).unwrap().sizes(), &[3, 2]);
}

#[test]
fn infer_size_errors() {
    let x = arange(&[2, 3, 4]);
    assert_eq!(err(x.view(&[-1, -1])), "only one dimension can be inferred");
    assert_eq!(
        err(x.view(&[-2, 12])),
        "invalid shape dimension -2 at index 0 of shape [-2, 12]"
    );
    assert_eq!(
        err(x.view(&[5, 5])),
        "shape '[5, 5]' is invalid for input of size 24"
    );
    assert_eq!(
        err(x.view(&[-1, 0])),
        "shape '[-1, 0]' is invalid for input of size 24"
    );
    assert_eq!(
        err(strided(&[0, 3], &[3, 1], 0).view(&[-1, 0])),
        "cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension size -1 can be any value and is ambiguous"
    );
    assert_eq!(geom(&x.view(&[4, -1]).unwrap()), g(&[4, 6], &[6, 1], 0));
}

#[test]
fn reshape_views_or_copies() {
    let x = arange(&[2, 3, 4]);
    let v = x.reshape(&[6, 4]).unwrap();
    assert!(v.is_alias_of(&x) && v.shares_version_counter_with(&x));
    // 75: transposed reshape(12, 2) copies with contiguous strides...
    let base = arange(&[3, 2, 4]);
    let tr = base.transpose(0, 1).unwrap(); // (2,3,4)/(4,8,1)
    let c = tr.reshape(&[12, 2]).unwrap();
    assert!(!c.is_alias_of(&base));
    assert_eq!(geom(&c), g(&[12, 2], &[2, 1], 0));
    assert_eq!(c.to_vec::<f32>().unwrap(), tr.to_vec::<f32>().unwrap());
    // ... with its own version counter (31).
    assert!(!c.shares_version_counter_with(&base));
    // ... while a viewable reshape aliases.
    let a = tr.reshape(&[2, 3, 2, 2]).unwrap();
    assert!(a.is_alias_of(&base));
    // 0-dim and back
    let s = Tensor::scalar_tensor(5.0, ScalarType::Float).unwrap();
    assert_eq!(geom(&s.reshape(&[1]).unwrap()), g(&[1], &[1], 0));
    assert_eq!(geom(&s.reshape(&[-1]).unwrap()), g(&[1], &[1], 0));
    assert_eq!(geom(&arange(&[1, 1]).reshape(&[]).unwrap()), g(&[], &[], 0));
    assert_eq!(x.reshape_as(&arange(&[4, 6])).unwrap().sizes(), &[4, 6]);
}

#[test]
fn slice_clamps_like_pytorch() {
    let x = arange(&[2, 3, 4]);
    // 77
    assert_eq!(
        geom(&x.slice(1, Some(-2), None, 1).unwrap()),
        g(&[2, 2, 4], &[12, 4, 1], 4)
    );
    assert_eq!(
        geom(&x.slice(1, Some(1), Some(100), 1).unwrap()),
        g(&[2, 2, 4], &[12, 4, 1], 4)
    );
    assert_eq!(
        geom(&x.slice(1, Some(2), Some(1), 1).unwrap()),
        g(&[2, 0, 4], &[12, 4, 1], 8)
    );
    assert_eq!(
        geom(&x.slice(1, Some(5), Some(9), 1).unwrap()),
        g(&[2, 0, 4], &[12, 4, 1], 12)
    );
    assert_eq!(
        geom(&x.slice(1, Some(-100), Some(i64::MAX), 1).unwrap()),
        g(&[2, 3, 4], &[12, 4, 1], 0)
    );
    // 79
    let r = Tensor::arange(0, 10, 1, ScalarType::Long).unwrap();
    let s = r.slice(0, Some(1), Some(8), 3).unwrap();
    assert_eq!(geom(&s), g(&[3], &[3], 1));
    assert_eq!(s.to_vec::<i64>().unwrap(), vec![1, 4, 7]);
    // 78
    assert_eq!(
        err(x.slice(0, None, None, 0)),
        "slice step must be positive"
    );
    assert_eq!(
        err(x.slice(0, None, None, -1)),
        "slice step must be positive"
    );
    let z = Tensor::scalar_tensor(1.0, ScalarType::Float).unwrap();
    assert_eq!(
        err(z.slice(0, None, None, 1)),
        "slice() cannot be applied to a 0-dim tensor."
    );
    assert!(is_index_error(z.slice(0, None, None, 1)));
    // A huge step wraps in PyTorch's int64 ceil division: 0 elements.
    assert_eq!(
        geom(&r.slice(0, Some(0), Some(10), i64::MAX).unwrap()),
        g(&[0], &[i64::MAX], 0)
    );
}

#[test]
fn narrow_bounds() {
    let x = Tensor::arange(0, 4, 1, ScalarType::Long).unwrap();
    // 81
    assert_eq!(geom(&x.narrow(0, 4, 0).unwrap()), g(&[0], &[1], 4));
    assert_eq!(geom(&x.narrow(0, -4, 2).unwrap()), g(&[2], &[1], 0));
    // 80
    assert_eq!(
        err(x.narrow(0, 5, 0)),
        "start out of range (expected to be in range of [-4, 4], but got 5)"
    );
    assert!(is_index_error(x.narrow(0, 5, 0)));
    assert_eq!(
        err(x.narrow(0, 3, 2)),
        "start (3) + length (2) exceeds dimension size (4)."
    );
    assert_eq!(
        err(x.narrow(0, -1, 2)),
        "start (3) + length (2) exceeds dimension size (4)."
    );
    assert_eq!(
        err(x.narrow(0, 0, -1)),
        "narrow(): length must be non-negative."
    );
    let z = Tensor::scalar_tensor(1.0, ScalarType::Float).unwrap();
    assert_eq!(
        err(z.narrow(0, 0, 1)),
        "narrow() cannot be applied to a 0-dim tensor."
    );
    assert!(x.narrow(0, i64::MIN, 0).unwrap_err().is_index_error());
    assert_eq!(
        err(x.narrow(0, 1, i64::MAX)),
        "start (1) + length (9223372036854775807) exceeds dimension size (4)."
    );
}

#[test]
fn select_and_unbind() {
    let x = arange(&[2, 3, 4]);
    // 83
    assert_eq!(geom(&x.select(1, 2).unwrap()), g(&[2, 4], &[12, 1], 8));
    assert_eq!(geom(&x.select(-1, -1).unwrap()), g(&[2, 3], &[12, 4], 3));
    // 82
    assert_eq!(
        err(x.select(1, 3)),
        "select(): index 3 out of range for tensor of size [2, 3, 4] at dimension 1"
    );
    assert_eq!(
        err(x.select(-2, -4)),
        "select(): index -4 out of range for tensor of size [2, 3, 4] at dimension 1"
    );
    assert!(is_index_error(x.select(1, 3)));
    assert!(is_index_error(x.select(0, i64::MIN)));
    let z = Tensor::scalar_tensor(1.0, ScalarType::Float).unwrap();
    assert_eq!(
        err(z.select(0, 0)),
        "select() cannot be applied to a 0-dim tensor."
    );
    let parts = x.unbind(1).unwrap();
    assert_eq!(parts.len(), 3);
    assert_eq!(geom(&parts[2]), g(&[2, 4], &[12, 1], 8));
    assert_eq!(
        z.unbind(0).unwrap_err().to_string(),
        "Dimension specified as 0 but tensor has no dimensions"
    );
}

#[test]
fn transpose_t_permute_movedim() {
    let x = arange(&[2, 3, 4]);
    assert_eq!(
        geom(&x.transpose(0, 2).unwrap()),
        g(&[4, 3, 2], &[1, 4, 12], 0)
    );
    // 85: equal dims give a new alias, not the same object.
    let a = x.transpose(1, -2).unwrap();
    assert!(!a.is_same(&x) && a.is_set_to(&x));
    // 84
    let v = arange(&[3]);
    let tv = v.t().unwrap();
    assert!(!tv.is_same(&v) && tv.is_set_to(&v));
    assert_eq!(
        err(x.t()),
        "t() expects a tensor with <= 2 dimensions, but self is 3D"
    );
    assert_eq!(geom(&arange(&[2, 3]).t().unwrap()), g(&[3, 2], &[1, 3], 0));
    // 86
    assert_eq!(
        err(x.permute(&[0, 0, 1])),
        "permute(): duplicate dims are not allowed."
    );
    assert_eq!(
        err(x.permute(&[0, 1])),
        "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = 3 is not equal to len(dims) = 2"
    );
    assert_eq!(
        geom(&x.permute(&[2, 0, 1]).unwrap()),
        g(&[4, 2, 3], &[1, 12, 4], 0)
    );
    // 87
    let y = arange(&[2, 3, 4, 5]);
    assert_eq!(
        geom(&y.movedim(&[0, 1], &[2, 3]).unwrap()),
        g(&[4, 5, 2, 3], &[5, 1, 60, 20], 0)
    );
    assert_eq!(
        err(y.movedim(&[0, 0], &[1, 2])),
        "movedim: repeated dim in `source` ([0, 0])"
    );
    assert_eq!(
        err(y.movedim(&[0, 1], &[1, -3])),
        "movedim: repeated dim in `destination` ([1, -3])"
    );
    assert_eq!(
        err(y.movedim(&[0, 1], &[1])),
        "movedim: Invalid source or destination dims: source ([0, 1] dims) should contain the same number of dims as destination ([1] dims)"
    );
    assert_eq!(
        geom(&y.movedim(&[-1], &[0]).unwrap()),
        g(&[5, 2, 3, 4], &[1, 60, 20, 5], 0)
    );
    // mT / numpy_T / swapaxes
    assert_eq!(geom(&x.mt().unwrap()), g(&[2, 4, 3], &[12, 1, 4], 0));
    assert_eq!(
        err(v.mt()),
        "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."
    );
    let s = Tensor::scalar_tensor(1.0, ScalarType::Float).unwrap();
    assert!(s.mt().unwrap().is_same(&s));
    assert_eq!(geom(&x.numpy_t().unwrap()), g(&[4, 3, 2], &[1, 4, 12], 0));
    assert_eq!(
        geom(&x.swapaxes(0, 1).unwrap()),
        geom(&x.swapdims(1, 0).unwrap())
    );
}

#[test]
fn expand_rules() {
    let x = strided(&[3, 1], &[1, 1], 0);
    assert_eq!(
        geom(&x.expand(&[2, 3, 4]).unwrap()),
        g(&[2, 3, 4], &[0, 1, 0], 0)
    );
    assert_eq!(geom(&x.expand(&[-1, 4]).unwrap()), g(&[3, 4], &[1, 0], 0));
    // 88
    assert_eq!(
        geom(&arange(&[3]).expand(&[1, 3]).unwrap()),
        g(&[1, 3], &[3, 1], 0)
    );
    let every_other = arange(&[6]).slice(0, None, None, 2).unwrap();
    assert_eq!(
        geom(&every_other.expand(&[1, 3]).unwrap()),
        g(&[1, 3], &[6, 2], 0)
    );
    assert_eq!(
        geom(&every_other.expand(&[1, 1, 3]).unwrap()),
        g(&[1, 1, 3], &[6, 6, 2], 0)
    );
    // 89
    assert_eq!(
        err(x.expand(&[-1, 3, 1])),
        "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"
    );
    // 90
    assert_eq!(
        err(x.expand(&[4, 4])),
        "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 0.  Target sizes: [4, 4].  Tensor sizes: [3, 1]"
    );
    // 91 (the legacy type name depends on the dtype)
    assert_eq!(
        err(x.expand(&[4])),
        "expand(torch.FloatTensor{[3, 1]}, size=[4]): the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)"
    );
    let b = Tensor::zeros(&[3, 1], ScalarType::BFloat16).unwrap();
    assert!(err(b.expand(&[4])).starts_with("expand(CPUBFloat16Type{[3, 1]}, size=[4])"));
    let l = Tensor::zeros(&[2], ScalarType::Long).unwrap();
    assert!(err(l.expand(&[])).starts_with("expand(torch.LongTensor{[2]}, size=[])"));
    // 92
    assert_eq!(geom(&x.expand(&[3, 0]).unwrap()), g(&[3, 0], &[1, 0], 0));
    assert!(strided(&[0, 1], &[1, 1], 0).expand(&[3, 5]).is_err());
    // 0-dim: sizes verbatim, strides 0; -1 leaks into the sizes.
    let s = Tensor::scalar_tensor(1.0, ScalarType::Float).unwrap();
    assert_eq!(geom(&s.expand(&[2, 3]).unwrap()), g(&[2, 3], &[0, 0], 0));
    assert_eq!(
        err(s.expand(&[-1])),
        "numel: integer multiplication overflow"
    );
    assert_eq!(geom(&s.expand(&[-1, 0]).unwrap()), g(&[-1, 0], &[0, 0], 0));
    // expand_as / broadcast_to
    assert_eq!(
        x.expand_as(&arange(&[2, 3, 5])).unwrap().sizes(),
        &[2, 3, 5]
    );
    assert_eq!(
        geom(&arange(&[3]).broadcast_to(&[2, 3]).unwrap()),
        g(&[2, 3], &[0, 1], 0)
    );
    assert_eq!(
        views::broadcast_shapes(&[&[2], &[3, 1], &[1, 1, 1]]).unwrap(),
        vec![1, 3, 2]
    );
}

#[test]
fn squeeze_and_unsqueeze() {
    let x = arange(&[2, 3, 4]);
    // 93
    assert_eq!(
        geom(&x.unsqueeze(0).unwrap()),
        g(&[1, 2, 3, 4], &[24, 12, 4, 1], 0)
    );
    assert_eq!(
        geom(&x.unsqueeze(1).unwrap()),
        g(&[2, 1, 3, 4], &[12, 12, 4, 1], 0)
    );
    assert_eq!(
        geom(&x.unsqueeze(3).unwrap()),
        g(&[2, 3, 4, 1], &[12, 4, 1, 1], 0)
    );
    assert_eq!(
        geom(&x.unsqueeze(-1).unwrap()),
        g(&[2, 3, 4, 1], &[12, 4, 1, 1], 0)
    );
    let tr = strided(&[3, 2, 4], &[4, 12, 1], 0);
    assert_eq!(tr.unsqueeze(1).unwrap().strides(), &[4, 24, 12, 1]);
    assert_eq!(
        geom(&strided(&[0, 3], &[3, 1], 0).unsqueeze(1).unwrap()),
        g(&[0, 1, 3], &[3, 3, 1], 0)
    );
    let s = Tensor::scalar_tensor(1.0, ScalarType::Float).unwrap();
    assert_eq!(geom(&s.unsqueeze(0).unwrap()), g(&[1], &[1], 0));
    assert_eq!(
        err(x.unsqueeze(4)),
        "Dimension out of range (expected to be in range of [-4, 3], but got 4)"
    );
    // 23: unsqueeze(1) of a contiguous (2,3,4) is also channels-last contiguous.
    let u = x.unsqueeze(1).unwrap();
    assert!(u.is_contiguous() && u.is_contiguous_in(c10_core::MemoryFormat::ChannelsLast));
    // 94
    let y = strided(&[1, 3, 1, 2], &[100, 2, 50, 1], 0);
    assert_eq!(geom(&y.squeeze().unwrap()), g(&[3, 2], &[2, 1], 0));
    let same = y.squeeze_dim(1).unwrap();
    assert!(!same.is_same(&y) && same.is_set_to(&y));
    assert_eq!(
        geom(&y.squeeze_dim(-2).unwrap()),
        g(&[1, 3, 2], &[100, 2, 1], 0)
    );
    assert_eq!(
        geom(&y.squeeze_dims(&[0, 1, 2]).unwrap()),
        g(&[3, 2], &[2, 1], 0)
    );
    assert_eq!(
        err(y.squeeze_dims(&[0, 0])),
        "dim 0 appears multiple times in the list of dims"
    );
    assert_eq!(
        err(y.squeeze_dims(&[3, -1])),
        "dim 3 appears multiple times in the list of dims"
    );
    assert_eq!(geom(&s.squeeze().unwrap()), g(&[], &[], 0));
    assert_eq!(geom(&s.squeeze_dims(&[0]).unwrap()), g(&[], &[], 0));
}

/// `flatten` of a row-major tensor writes the merged sizes straight into
/// the view; every other tensor goes through `reshape`. Both must agree
/// with the shape-only rules (`Geometry::flatten`, c10's `computeStride`)
/// for every pair of dims, on shapes with 1s and 0s, at an offset, and on
/// tensors that only look row-major in some dims.
#[test]
fn flatten_fast_path_matches_the_shape_rules() {
    use aten_shape::generic::Geometry;
    let shapes: [&[i64]; 9] = [
        &[5],
        &[2, 3],
        &[1, 4, 1],
        &[2, 1, 3, 1, 2],
        &[1, 1, 1],
        &[3, 0, 2],
        &[2, 2, 2, 2, 2, 2],
        &[4, 1, 1, 3],
        &[0],
    ];
    for sizes in shapes {
        let n = sizes.len() as i64;
        let c = Geometry::<i64>::contiguous(sizes).unwrap();
        let layouts = [
            strided(sizes, &c.strides, 0),
            strided(sizes, &c.strides, 7),
            // Sizes-1 dims with odd strides: still contiguous for c10, not
            // strictly row-major.
            strided(
                sizes,
                &c.strides
                    .iter()
                    .zip(sizes)
                    .map(|(&st, &sz)| if sz == 1 { 99 } else { st })
                    .collect::<Vec<_>>(),
                3,
            ),
        ];
        for t in &layouts {
            let geometry = Geometry {
                sizes: t.sizes().to_vec(),
                strides: t.strides().to_vec(),
                offset: t.storage_offset(),
            };
            for s in -n..n {
                for e in -n..n {
                    let got = t.flatten(s, e);
                    let want = geometry.flatten(s, e);
                    match (got, want) {
                        (Ok(v), Ok((w, _))) => {
                            assert_eq!(
                                geom(&v),
                                (w.sizes.clone(), w.strides.clone(), w.offset),
                                "{sizes:?} strides {:?} flatten({s}, {e})",
                                t.strides()
                            );
                            assert!(v.is_alias_of(t));
                            assert_eq!(v.is_contiguous(), t.is_contiguous());
                        }
                        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                        (a, b) => panic!("{sizes:?} flatten({s}, {e}): {a:?} against {b:?}"),
                    }
                }
            }
        }
    }
}

#[test]
fn flatten_unflatten_ravel() {
    let x = arange(&[2, 3, 4]);
    // 95
    assert!(x.flatten(1, 1).unwrap().is_same(&x));
    assert!(x.flatten(-1, 2).unwrap().is_same(&x));
    let s = Tensor::scalar_tensor(1.0, ScalarType::Float).unwrap();
    assert_eq!(geom(&s.flatten(0, -1).unwrap()), g(&[1], &[1], 0));
    assert_eq!(
        err(x.flatten(2, 1)),
        "flatten() has invalid args: start_dim cannot come after end_dim"
    );
    assert_eq!(geom(&x.flatten(0, -1).unwrap()), g(&[24], &[1], 0));
    assert_eq!(geom(&x.flatten(1, 2).unwrap()), g(&[2, 12], &[12, 1], 0));
    // 96: explicit product, no -1
    let z = strided(&[0, 1, 3, 0], &[3, 3, 1, 1], 0);
    assert_eq!(z.flatten(1, 2).unwrap().sizes(), &[0, 3, 0]);
    // a non-viewable flatten copies
    let tr = x.transpose(0, 2).unwrap();
    let f = tr.flatten(0, 1).unwrap();
    assert!(!f.is_alias_of(&x));
    assert_eq!(geom(&f), g(&[12, 2], &[2, 1], 0));
    // 97
    assert_eq!(
        geom(&x.unflatten(2, &[2, -1]).unwrap()),
        g(&[2, 3, 2, 2], &[12, 4, 2, 1], 0)
    );
    assert_eq!(
        err(x.unflatten(2, &[3, 2])),
        "unflatten: Provided sizes [3, 2] don't multiply up to the size of dim 2 (4) in the input tensor"
    );
    assert_eq!(
        err(x.unflatten(-1, &[3, 2])),
        "unflatten: Provided sizes [3, 2] don't multiply up to the size of dim 2 (4) in the input tensor"
    );
    assert_eq!(
        err(x.unflatten(2, &[])),
        "unflatten: sizes must be non-empty"
    );
    assert_eq!(
        err(x.unflatten(9, &[])),
        "unflatten: sizes must be non-empty"
    );
    assert_eq!(
        err(x.unflatten(2, &[-1, -1])),
        "unflatten got an unexpected error:\nonly one dimension can be inferred"
    );
    assert_eq!(
        err(s.unflatten(0, &[1])),
        "unflatten got an unexpected error:\nDimension specified as 0 but tensor has no dimensions"
    );
    // unflatten is a view: it fails rather than copies.
    assert!(tr.unflatten(0, &[2, 2]).is_ok());
    assert!(strided(&[4, 3], &[1, 8], 0).unflatten(0, &[2, 2]).is_ok());
    // ravel
    let r = arange(&[2, 3]).t().unwrap().ravel().unwrap();
    assert_eq!(
        r.to_vec::<f32>().unwrap(),
        vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    );
    let rv = x.ravel().unwrap();
    assert!(rv.is_alias_of(&x));
}

#[test]
fn diagonal_rules() {
    let x = arange(&[3, 4]);
    // 98
    assert_eq!(geom(&x.diagonal(0, 0, 1).unwrap()), g(&[3], &[5], 0));
    assert_eq!(geom(&x.diagonal(1, 0, 1).unwrap()), g(&[3], &[5], 1));
    assert_eq!(geom(&x.diagonal(-1, 0, 1).unwrap()), g(&[2], &[5], 4));
    assert_eq!(geom(&x.diagonal(10, 0, 1).unwrap()), g(&[0], &[5], 0));
    assert_eq!(geom(&x.diagonal(-10, 0, 1).unwrap()), g(&[0], &[5], 0));
    assert_eq!(geom(&x.diagonal(i64::MIN, 0, 1).unwrap()), g(&[0], &[5], 0));
    assert_eq!(geom(&x.diagonal(i64::MAX, 1, 0).unwrap()), g(&[0], &[5], 0));
    assert_eq!(
        geom(&arange(&[2, 3, 4]).diagonal(0, 0, 2).unwrap()),
        g(&[3, 2], &[4, 13], 0)
    );
    // 99
    assert_eq!(
        err(x.diagonal(0, 1, 1)),
        "diagonal dimensions cannot be identical 1, 1"
    );
    assert_eq!(
        err(x.diagonal(0, 0, -2)),
        "diagonal dimensions cannot be identical 0, -2"
    );
    assert!(is_index_error(arange(&[3]).diagonal(0, 0, 1)));
}

#[test]
fn unfold_rules() {
    // 100
    let x = Tensor::arange(0, 10, 1, ScalarType::Long).unwrap();
    let u = x.unfold(0, 3, 2).unwrap();
    assert_eq!(geom(&u), g(&[4, 3], &[2, 1], 0));
    assert_eq!(
        u.to_vec::<i64>().unwrap(),
        vec![0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7, 8]
    );
    assert_eq!(
        geom(&arange(&[4, 7]).unfold(1, 3, 2).unwrap()),
        g(&[4, 3, 3], &[7, 2, 1], 0)
    );
    assert_eq!(geom(&x.unfold(0, 0, 3).unwrap()), g(&[4, 0], &[3, 1], 0));
    let s = Tensor::scalar_tensor(1.0, ScalarType::Float).unwrap();
    assert_eq!(geom(&s.unfold(0, 1, 1).unwrap()), g(&[1], &[1], 0));
    assert_eq!(
        err(x.unfold(0, 11, 1)),
        "maximum size for tensor at dimension 0 is 10 but size is 11"
    );
    assert_eq!(
        err(x.unfold(-1, 11, 1)),
        "maximum size for tensor at dimension 0 is 10 but size is 11"
    );
    assert_eq!(err(x.unfold(0, 3, 0)), "step is 0 but must be > 0");
    assert_eq!(err(x.unfold(0, -1, 0)), "size is -1 but must be >= 0");
    assert_eq!(
        err(s.unfold(0, 2, 1)),
        "maximum size for tensor at dimension 0 is 1 but size is 2"
    );
}

#[test]
fn split_chunk_tensor_split() {
    let x = Tensor::arange(0, 5, 1, ScalarType::Long).unwrap();
    let lens = |v: Vec<Tensor>| {
        v.iter()
            .map(|t| (t.sizes()[0], t.storage_offset()))
            .collect::<Vec<_>>()
    };
    // 101
    assert_eq!(lens(x.split(2, 0).unwrap()), vec![(2, 0), (2, 2), (1, 4)]);
    assert_eq!(lens(x.split(10, 0).unwrap()), vec![(5, 0)]);
    assert_eq!(lens(arange(&[0]).split(3, 0).unwrap()), vec![(0, 0)]);
    assert_eq!(lens(arange(&[0]).split(0, 0).unwrap()), vec![(0, 0)]);
    assert_eq!(
        x.split(0, 0).unwrap_err().to_string(),
        "split_size can only be 0 if dimension size is 0, but got dimension size of 5"
    );
    assert_eq!(
        x.split(-1, 0).unwrap_err().to_string(),
        "split expects split_size be non-negative, but got split_size=-1"
    );
    let s = Tensor::scalar_tensor(1.0, ScalarType::Float).unwrap();
    assert_eq!(
        s.split(1, 0).unwrap_err().to_string(),
        "split expects at least a 1-dimensional tensor"
    );
    // split_with_sizes
    assert_eq!(
        lens(x.split_with_sizes(&[1, 0, 4], 0).unwrap()),
        vec![(1, 0), (0, 1), (4, 1)]
    );
    assert_eq!(
        x.split_with_sizes(&[1, 3], -1).unwrap_err().to_string(),
        "split_with_sizes expects split_sizes to sum exactly to 5 (input tensor's size at dimension -1), but got split_sizes=[1, 3]"
    );
    assert_eq!(
        x.split_with_sizes(&[-1, 6], 0).unwrap_err().to_string(),
        "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=[-1, 6]"
    );
    // 102
    let six = Tensor::arange(0, 6, 1, ScalarType::Long).unwrap();
    assert_eq!(lens(six.chunk(4, 0).unwrap()), vec![(2, 0), (2, 2), (2, 4)]);
    assert_eq!(
        lens(arange(&[3]).chunk(5, 0).unwrap()),
        vec![(1, 0), (1, 1), (1, 2)]
    );
    assert_eq!(
        lens(arange(&[7]).chunk(3, 0).unwrap()),
        vec![(3, 0), (3, 3), (1, 6)]
    );
    assert_eq!(lens(x.chunk(3, 0).unwrap()), vec![(2, 0), (2, 2), (1, 4)]);
    assert_eq!(
        lens(arange(&[0]).chunk(3, 0).unwrap()),
        vec![(0, 0), (0, 0), (0, 0)]
    );
    assert_eq!(
        x.chunk(0, 0).unwrap_err().to_string(),
        "chunk expects `chunks` to be greater than 0, got: 0"
    );
    assert_eq!(
        s.chunk(1, 0).unwrap_err().to_string(),
        "chunk expects at least a 1-dimensional tensor"
    );
    // tensor_split
    assert_eq!(
        lens(x.tensor_split(3, 0).unwrap()),
        vec![(2, 0), (2, 2), (1, 4)]
    );
    assert_eq!(
        lens(arange(&[2]).tensor_split(3, 0).unwrap()),
        vec![(1, 0), (1, 1), (0, 2)]
    );
    assert_eq!(
        lens(x.tensor_split_indices(&[1, 4, 2, 9], 0).unwrap()),
        vec![(1, 0), (3, 1), (0, 4), (3, 2), (0, 5)]
    );
    assert_eq!(
        x.tensor_split(0, 0).unwrap_err().to_string(),
        "number of sections must be larger than 0, got 0"
    );
    assert_eq!(
        s.tensor_split(2, 0).unwrap_err().to_string(),
        "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
    );
    // pieces are views of a 2-d tensor along dim 1
    let m = arange(&[2, 5]);
    let p = m.split(2, 1).unwrap();
    assert_eq!(geom(&p[2]), g(&[2, 1], &[5, 1], 4));
    assert!(p.iter().all(|t| t.is_alias_of(&m)));
}

#[test]
fn as_strided_alias_detach() {
    let x = Tensor::zeros(&[6], ScalarType::Float).unwrap(); // 24 bytes
                                                             // 103: no elements, no bounds check
    assert_eq!(
        geom(&x.as_strided(&[2, 0], &[3, 1], Some(100)).unwrap()),
        g(&[2, 0], &[3, 1], 100)
    );
    // default offset is the input's
    let tail = x.slice(0, Some(3), None, 1).unwrap();
    assert_eq!(
        tail.as_strided(&[2], &[1], None).unwrap().storage_offset(),
        3
    );
    // 104
    assert_eq!(
        err(x.as_strided(&[2, 4], &[3, 1], Some(0))),
        "setStorage: sizes [2, 4], strides [3, 1], storage offset 0, and itemsize 4 requiring a storage size of 28 are out of bounds for storage of size 24"
    );
    assert_eq!(
        err(x.as_strided(&[2], &[1, 1], None)),
        "mismatch in length of strides and shape"
    );
    assert_eq!(
        err(x.as_strided(&[2, 2], &[-1, 1], None)),
        "as_strided: Negative strides are not supported at the moment, got strides: [-1, 1]"
    );
    assert_eq!(
        err(x.as_strided(&[2], &[1], Some(-1))),
        "Tensor: invalid storage offset -1"
    );
    assert!(x.as_strided(&[i64::MIN, 0], &[0, 1], None).is_err());
    // alias and detach
    let a = x.alias().unwrap();
    assert!(a.is_set_to(&x) && !a.is_same(&x) && a.shares_version_counter_with(&x));
    let d = x.detach();
    assert!(d.is_set_to(&x) && d.shares_version_counter_with(&x));
}

#[test]
fn views_share_storage_and_version_counter() {
    let x = arange(&[2, 3, 4]);
    let v = x
        .transpose(0, 1)
        .unwrap()
        .select(0, 1)
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    assert!(v.is_alias_of(&x) && v.shares_version_counter_with(&x));
    v.set::<f32>(&[0, 1, 2], 99.0).unwrap();
    assert_eq!(x.get::<f32>(&[1, 1, 2]).unwrap(), 99.0);
    assert_eq!(x.version().unwrap(), 1);
    assert_eq!(v.version().unwrap(), 1);
}

#[test]
fn zero_element_tensors_with_absurd_dims_never_panic() {
    // Legal in PyTorch: no elements, so no storage is needed.
    let e = Tensor::zeros(&[0], ScalarType::Float).unwrap();
    let z = e.as_strided(&[0, 1 << 62], &[1, 1 << 62], Some(0)).unwrap();
    // offset 3 * 2^62 wraps: PyTorch's as_strided rejects the negative offset.
    assert_eq!(
        err(z.slice(1, Some(3), None, 1)),
        "Tensor: invalid storage offset -4611686018427387904"
    );
    assert_eq!(
        err(z.select(1, 3)),
        "Tensor: invalid storage offset -4611686018427387904"
    );
    // 2^62 * 2^62 wraps to 0 for the new size-1 dim's stride, as in PyTorch.
    assert_eq!(
        geom(&z.unsqueeze(1).unwrap()),
        g(&[0, 1, 1 << 62], &[1, 0, 1 << 62], 0)
    );
    assert_eq!(geom(&z.view(&[-1]).unwrap()), g(&[0], &[1], 0));
    assert_eq!(
        geom(&z.view(&[1 << 62, 0]).unwrap()),
        g(&[1 << 62, 0], &[1, 1], 0)
    );
    assert_eq!(
        geom(&z.expand(&[5, 0, 1 << 62]).unwrap()),
        g(&[5, 0, 1 << 62], &[0, 1, 1 << 62], 0)
    );
    // resize-style strides wrap too (2^80 -> 0)
    let y = strided(&[3, 0], &[1, 1], 0);
    assert_eq!(
        geom(&y.view(&[0, 1 << 40, 1 << 40]).unwrap()),
        g(&[0, 1 << 40, 1 << 40], &[0, 1 << 40, 1], 0)
    );
    // Everything else is an error or a result, never a panic.
    for op in 0..12 {
        let _ = match op {
            0 => z.narrow(1, (1i64 << 62) - 1, 1),
            1 => z.unfold(1, 3, i64::MAX),
            2 => z.diagonal(1 << 61, 0, 1),
            3 => z.slice(1, Some(i64::MIN), Some(i64::MAX), i64::MAX),
            4 => z.flatten(0, 1),
            5 => z.unflatten(1, &[1 << 31, -1]),
            6 => z.movedim(&[0], &[1]),
            7 => z.permute(&[1, 0]),
            8 => z.expand(&[-1, -1]),
            9 => z.split(1i64 << 61, 1).map(|v| v[0].clone()),
            10 => z.chunk(2, 1).map(|v| v[0].clone()),
            _ => z.tensor_split(1, 1).map(|v| v[0].clone()),
        };
    }
    // A list of 2^62 pieces is an error, not an abort.
    assert!(z.split(1, 1).is_err());
    assert!(z.unbind(1).is_err());
}
