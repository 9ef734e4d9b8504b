//! `clone`, `contiguous`, `copy_` and `empty_like` against PyTorch's
//! results (torch 2.15; the reference's checklist items 105-108 and §6.18-
//! 6.19), and the copy engine against a naive element-by-element reference
//! for random layouts of every element size.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::thread;

use aten_shape::copy::{
    clone, contiguous, copy_, empty_like, is_non_overlapping_and_dense, CopyOps,
};
use c10_core::geometry::infer_dense_strides;
use c10_core::scalar_type::{Complex128, Complex64, Element};
use c10_core::{Device, InferenceMode, MemoryFormat, ScalarType, Storage, Tensor, TensorOptions};
use half::f16;

/// Fewer and smaller cases under Miri.
const ROUNDS: usize = if cfg!(miri) { 3 } else { 300 };
/// Under Miri each element costs milliseconds, so the random layouts there
/// are redrawn until they have at most this many elements (a 4-d layout
/// of 9s is 6,561 elements and took minutes). Natively nothing is redrawn.
const MIRI_MAX_NUMEL: i64 = 128;

fn opts(dtype: ScalarType) -> TensorOptions {
    TensorOptions::new().dtype(dtype)
}

/// A 1-d tensor `0, 1, ..., n-1` of `dtype`.
fn arange(n: i64, dtype: ScalarType) -> Tensor {
    Tensor::arange(0, n, 1, dtype).unwrap()
}

/// A view of a fresh `arange` storage big enough for the layout.
fn strided(sizes: &[i64], strides: &[i64], offset: i64, dtype: ScalarType) -> Tensor {
    let need = if sizes.contains(&0) {
        offset + 1
    } else {
        offset
            + sizes
                .iter()
                .zip(strides)
                .map(|(&n, &s)| (n - 1) * s)
                .sum::<i64>()
            + 1
    };
    arange(need, dtype)
        .as_strided(sizes, strides, Some(offset))
        .unwrap()
}

fn err(r: c10_core::Result<impl std::fmt::Debug>) -> String {
    r.unwrap_err().to_string()
}

const INTERNAL: &str = "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.";
const PARTIAL: &str = "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.";

// ---------------------------------------------------------------------------
// clone / empty_like strides (checklist 105-108, §6.19)
// ---------------------------------------------------------------------------

#[test]
fn clone_preserve_strides_follow_pytorch() {
    let f = ScalarType::Float;
    // (sizes, strides) -> expected clone strides, all verified on torch 2.15.
    let cases: &[(&[i64], &[i64], &[i64])] = &[
        // empty(4,6)[:, ::2] -> (3,1); its .t() -> (1,3)
        (&[4, 3], &[6, 2], &[3, 1]),
        (&[3, 4], &[2, 6], &[1, 3]),
        // (2,3,4).permute(2,0,1) is dense: kept
        (&[4, 2, 3], &[1, 12, 4], &[1, 12, 4]),
        // perm[:, :, ::2]
        (&[4, 2, 2], &[1, 12, 8], &[1, 8, 4]),
        // expanded (3,4)/(1,0)
        (&[3, 4], &[1, 0], &[4, 1]),
        // channels-last [..., ::2]
        (&[2, 3, 4, 3], &[72, 1, 18, 6], &[36, 1, 9, 3]),
        (&[2, 3, 4], &[1, 2, 8], &[1, 2, 6]),
        (&[2, 3], &[4, 4], &[1, 2]),
        (&[3, 2], &[4, 4], &[2, 1]),
        // odd strides of size-1 dims survive in a dense layout
        (&[2, 1, 3], &[3, 99, 1], &[3, 99, 1]),
        // zero-element tensors keep any strides (they are dense)
        (&[2, 0, 3], &[7, 11, 13], &[7, 11, 13]),
    ];
    for &(sizes, strides, expected) in cases {
        let t = strided(sizes, strides, 1, f);
        let c = clone(&t, MemoryFormat::Preserve).unwrap();
        assert_eq!(c.strides(), expected, "clone of {sizes:?}/{strides:?}");
        assert_eq!(c.sizes(), sizes);
        assert_eq!(c.storage_offset(), 0);
        assert_eq!(c.to_vec::<f32>().unwrap(), t.to_vec::<f32>().unwrap());
        let e = empty_like(&t, MemoryFormat::Preserve).unwrap();
        assert_eq!(e.strides(), expected, "empty_like of {sizes:?}/{strides:?}");
        assert!(!e.requires_grad());
    }
    // empty_strided's storage for a kept zero-element layout is empty.
    let z = clone(
        &strided(&[2, 0, 3], &[7, 11, 13], 0, f),
        MemoryFormat::Preserve,
    )
    .unwrap();
    assert_eq!(z.storage().nbytes(), 0);
}

#[test]
fn clone_explicit_formats() {
    let f = ScalarType::Float;
    let t = strided(&[2, 3, 4, 5], &[1, 2, 6, 24], 0, f); // fully reversed
    let c = clone(&t, MemoryFormat::Contiguous).unwrap();
    assert_eq!(c.strides(), &[60, 20, 5, 1]);
    assert_eq!(c.to_vec::<f32>().unwrap(), t.to_vec::<f32>().unwrap());
    let cl = clone(&t, MemoryFormat::ChannelsLast).unwrap();
    assert_eq!(cl.strides(), &[60, 1, 15, 3]);
    assert_eq!(cl.to_vec::<f32>().unwrap(), t.to_vec::<f32>().unwrap());
    let five = strided(&[2, 3, 2, 2, 2], &[24, 8, 4, 2, 1], 0, f);
    let cl3 = clone(&five, MemoryFormat::ChannelsLast3d).unwrap();
    assert_eq!(cl3.strides(), &[24, 1, 12, 6, 3]);
    assert_eq!(cl3.to_vec::<f32>().unwrap(), five.to_vec::<f32>().unwrap());
    let two = strided(&[2, 3], &[3, 1], 0, f);
    assert_eq!(
        err(clone(&two, MemoryFormat::ChannelsLast)),
        "required rank 4 tensor to use channels_last format"
    );
    assert_eq!(
        err(clone(&two, MemoryFormat::ChannelsLast3d)),
        "required rank 5 tensor to use channels_last_3d format"
    );
}

#[test]
fn clone_gets_new_storage_fresh_version_and_requires_grad() {
    let base = arange(24, ScalarType::Float);
    let mut t = base.as_strided(&[4, 3], &[6, 2], Some(1)).unwrap();
    base.fill_(2.0).unwrap();
    base.fill_(3.0).unwrap();
    assert_eq!(t.version().unwrap(), 2);
    t.set_requires_grad(true).unwrap();
    let c = clone(&t, MemoryFormat::Preserve).unwrap();
    assert!(!c.is_alias_of(&t));
    assert_eq!(c.version().unwrap(), 0);
    assert_eq!(
        (c.dtype(), c.device(), c.storage_offset()),
        (ScalarType::Float, Device::CPU, 0)
    );
    assert!(c.requires_grad());
    assert!(!empty_like(&t, MemoryFormat::Preserve)
        .unwrap()
        .requires_grad());
    assert!(!c.shares_version_counter_with(&t));
    {
        let _g = InferenceMode::new();
        assert!(!clone(&t, MemoryFormat::Preserve).unwrap().requires_grad());
    }
    // The source was only read.
    assert_eq!(t.version().unwrap(), 2);
}

// ---------------------------------------------------------------------------
// contiguous (§6.18, checklist 106)
// ---------------------------------------------------------------------------

#[test]
fn contiguous_returns_self_or_a_row_major_clone() {
    let f = ScalarType::Float;
    let t = strided(&[2, 3], &[3, 1], 0, f);
    assert!(contiguous(&t, MemoryFormat::Contiguous)
        .unwrap()
        .is_same(&t));
    assert!(contiguous(&t, MemoryFormat::Preserve).unwrap().is_same(&t));
    assert!(t.contiguous().unwrap().is_same(&t));
    // Size-1 strides are ignored: still contiguous.
    let u = strided(&[2, 1, 3], &[3, 99, 1], 0, f);
    assert!(contiguous(&u, MemoryFormat::Contiguous)
        .unwrap()
        .is_same(&u));

    let tt = strided(&[3, 2], &[1, 3], 2, f);
    let c = contiguous(&tt, MemoryFormat::Contiguous).unwrap();
    assert!(!c.is_same(&tt) && !c.is_alias_of(&tt));
    assert_eq!((c.strides(), c.storage_offset()), (&[2i64, 1][..], 0));
    assert_eq!(
        c.to_vec::<f32>().unwrap(),
        vec![2.0, 5.0, 3.0, 6.0, 4.0, 7.0]
    );
    assert_eq!(
        err(contiguous(&tt, MemoryFormat::Preserve)),
        "preserve memory format is unsupported by the contiguous operator"
    );
    assert_eq!(
        err(contiguous(&tt, MemoryFormat::ChannelsLast)),
        "required rank 4 tensor to use channels_last format"
    );
    assert_eq!(
        err(tt.contiguous_in(MemoryFormat::ChannelsLast3d)),
        "required rank 5 tensor to use channels_last_3d format"
    );

    // A channels-last tensor is not contiguous(): cloned to row-major.
    let cl = Tensor::empty(
        &[2, 3, 4, 5],
        opts(f).memory_format(MemoryFormat::ChannelsLast),
    )
    .unwrap();
    assert!(cl
        .contiguous_in(MemoryFormat::ChannelsLast)
        .unwrap()
        .is_same(&cl));
    let rm = cl.contiguous().unwrap();
    assert_eq!(rm.strides(), &[60, 20, 5, 1]);
    let back = rm.contiguous_in(MemoryFormat::ChannelsLast).unwrap();
    assert_eq!(back.strides(), &[60, 1, 15, 3]);
}

// ---------------------------------------------------------------------------
// The engine against a naive reference, for random layouts
// ---------------------------------------------------------------------------

/// xorshift64*: deterministic and cheap under Miri.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random layout: random sizes, dims stored in a random order, with
/// random gaps, a random offset and (if `expand`) maybe a zero stride.
fn random_layout(rng: &mut Rng, expand: bool) -> (Vec<i64>, Vec<i64>, i64) {
    let rank = rng.below(5) as usize;
    let choices = [1i64, 2, 3, 4, 5, 7, 9];
    let mut sizes: Vec<i64> = (0..rank)
        .map(|_| choices[rng.below(choices.len() as u64) as usize])
        .collect();
    if rank > 0 && rng.below(20) == 0 {
        sizes[rng.below(rank as u64) as usize] = 0;
    }
    let mut order: Vec<usize> = (0..rank).collect();
    for i in (1..rank).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let mut strides = vec![0i64; rank];
    let mut running = 1i64;
    for &d in &order {
        let step = if rng.below(3) == 0 { 2 } else { 1 };
        strides[d] = running * step;
        running = strides[d] * sizes[d].max(1) + rng.below(2) as i64;
    }
    if expand && rank > 0 && rng.below(4) == 0 {
        strides[rng.below(rank as u64) as usize] = 0;
    }
    (sizes, strides, rng.below(4) as i64)
}

/// Elements needed to hold a layout.
fn needed(sizes: &[i64], strides: &[i64], offset: i64) -> i64 {
    if sizes.contains(&0) {
        return offset + 1;
    }
    offset
        + sizes
            .iter()
            .zip(strides)
            .map(|(&n, &s)| (n - 1) * s)
            .sum::<i64>()
        + 1
}

fn view_of<T: Element>(
    make: fn(usize) -> T,
    base: usize,
    sizes: &[i64],
    strides: &[i64],
    offset: i64,
) -> Tensor {
    let n = needed(sizes, strides, offset) as usize;
    let v: Vec<T> = (0..n).map(|i| make(base + i)).collect();
    Tensor::from_vec(v, &[n as i64])
        .unwrap()
        .as_strided(sizes, strides, Some(offset))
        .unwrap()
}

fn check_random_layouts<T: Element + PartialEq>(make: fn(usize) -> T, seed: u64) {
    let mut rng = Rng(seed);
    for round in 0..ROUNDS {
        let (sizes, strides, offset) = loop {
            let layout = random_layout(&mut rng, true);
            if !cfg!(miri) || layout.0.iter().product::<i64>() <= MIRI_MAX_NUMEL {
                break layout;
            }
        };
        let src = view_of(make, 0, &sizes, &strides, offset);
        let expected = src.to_vec::<T>().unwrap();
        let what = format!("round {round}: {sizes:?}/{strides:?}+{offset}");

        // clone, Preserve: values and PyTorch's strides.
        let c = clone(&src, MemoryFormat::Preserve).unwrap();
        assert_eq!(c.to_vec::<T>().unwrap(), expected, "clone {what}");
        let want: Vec<i64> = if src.is_non_overlapping_and_dense() {
            strides.clone()
        } else {
            infer_dense_strides(&sizes, &strides).unwrap().to_vec()
        };
        assert_eq!(c.strides(), want.as_slice(), "clone strides {what}");
        // contiguous
        let k = contiguous(&src, MemoryFormat::Contiguous).unwrap();
        assert!(k.is_contiguous());
        assert_eq!(k.to_vec::<T>().unwrap(), expected, "contiguous {what}");

        // copy_ into a random non-overlapping destination; elements outside
        // the destination's layout keep their values.
        let (_, mut dst_strides, dst_offset) = random_layout(&mut rng, false);
        dst_strides.resize(sizes.len(), 1);
        // Re-derive a valid dense-with-gaps layout for `sizes`.
        let mut order: Vec<usize> = (0..sizes.len()).collect();
        order.sort_by_key(|&d| (dst_strides[d], d));
        let mut running = 1;
        for &d in &order {
            dst_strides[d] = running * (1 + (rng.below(3) == 0) as i64);
            running = dst_strides[d] * sizes[d].max(1);
        }
        let dst = view_of(make, 10_000, &sizes, &dst_strides, dst_offset);
        let base = Tensor::from_storage(
            dst.storage().clone(),
            T::SCALAR_TYPE,
            &[dst.storage().nbytes() as i64 / std::mem::size_of::<T>() as i64],
            &[1],
            0,
        )
        .unwrap();
        let before = base.to_vec::<T>().unwrap();
        copy_(&dst, &src).unwrap();
        assert_eq!(
            dst.to_vec::<T>().unwrap(),
            expected,
            "copy_ {what} into {dst_strides:?}+{dst_offset}"
        );
        let mut after = base.to_vec::<T>().unwrap();
        let mut reference = before;
        for (i, off) in dst.offsets().enumerate() {
            reference[off as usize] = expected[i];
        }
        after.truncate(reference.len());
        assert_eq!(after, reference, "copy_ touched other elements {what}");

        // copy_ with a broadcast source: drop leading dims, set some to 1.
        if !sizes.is_empty() {
            let keep = rng.below(sizes.len() as u64 + 1) as usize;
            let bsizes: Vec<i64> = sizes[sizes.len() - keep..]
                .iter()
                .map(|&n| if rng.below(2) == 0 { 1 } else { n })
                .collect();
            let (_, bstrides, boff) = random_layout(&mut rng, false);
            let mut bs = bstrides;
            bs.resize(bsizes.len(), 3);
            let bsrc = view_of(make, 20_000, &bsizes, &bs, boff);
            copy_(&dst, &bsrc).unwrap();
            let expanded = bsrc
                .as_strided(
                    &sizes,
                    &{
                        let mut s = vec![0i64; sizes.len()];
                        for j in 0..bsizes.len() {
                            let d = sizes.len() - bsizes.len() + j;
                            s[d] = if bsizes[j] == sizes[d] { bs[j] } else { 0 };
                        }
                        s
                    },
                    None,
                )
                .unwrap();
            assert_eq!(
                dst.to_vec::<T>().unwrap(),
                expanded.to_vec::<T>().unwrap(),
                "broadcast copy_ {what}"
            );
        }
    }
}

#[test]
fn random_layouts_u8() {
    check_random_layouts::<u8>(|i| (i % 251) as u8, 1);
}

#[test]
fn random_layouts_i16_and_f16() {
    check_random_layouts::<i16>(|i| i as i16, 2);
    check_random_layouts::<f16>(|i| f16::from_f32((i % 2048) as f32), 3);
}

#[test]
fn random_layouts_f32_and_i32() {
    check_random_layouts::<f32>(|i| i as f32, 4);
    check_random_layouts::<i32>(|i| -(i as i32), 5);
}

#[test]
fn random_layouts_f64_and_i64() {
    check_random_layouts::<f64>(|i| i as f64 + 0.5, 6);
    check_random_layouts::<i64>(|i| (i as i64) << 33, 7);
}

#[test]
fn random_layouts_complex128() {
    check_random_layouts::<Complex128>(|i| Complex128::new(i as f64, -(i as f64) - 0.25), 8);
}

/// Transposes (the tiled path) of many shapes, including odd ones, sizes
/// past a tile, and empty ones, for every element size.
///
/// `line` is a shape with both sides at least one cache line of elements
/// (64 bytes), so that even the Miri run covers the line-block kernel.
fn check_transposes<T: Element + PartialEq>(make: fn(usize) -> T, line: (i64, i64)) {
    let mut shapes: Vec<(i64, i64)> = if cfg!(miri) {
        vec![(11, 13), (1, 1), (0, 5), (5, 0), (3, 17)]
    } else {
        vec![
            (37, 53),
            (1, 1),
            (0, 5),
            (5, 0),
            (16, 16),
            (3, 40),
            (300, 270),
            (64, 520),
            (129, 1),
            (1, 129),
            (257, 255),
        ]
    };
    shapes.push(line);
    for (r, c) in shapes {
        // src is (c, r) row-major viewed as (r, c) transposed.
        let src = view_of(make, 0, &[r, c], &[1, r], 0);
        let expected = src.to_vec::<T>().unwrap();
        let k = contiguous(&src, MemoryFormat::Contiguous).unwrap();
        assert_eq!(k.to_vec::<T>().unwrap(), expected, "transpose {r}x{c}");
        // Also into a transposed destination from a contiguous source, and
        // batched (3-d) with an offset.
        let dst = Tensor::empty(&[c, r], opts(T::SCALAR_TYPE))
            .unwrap()
            .as_strided(&[r, c], &[1, r], None)
            .unwrap();
        copy_(&dst, &k).unwrap();
        assert_eq!(
            dst.to_vec::<T>().unwrap(),
            expected,
            "transposed destination {r}x{c}"
        );
        if cfg!(miri) && (r, c) == line {
            // The line-block shape is the largest under Miri; its batched
            // form adds nothing the small shapes do not already cover.
            continue;
        }
        let batched = view_of(make, 7, &[2, r, c], &[r * c + 3, 1, r], 2);
        let kb = contiguous(&batched, MemoryFormat::Contiguous).unwrap();
        assert_eq!(
            kb.to_vec::<T>().unwrap(),
            batched.to_vec::<T>().unwrap(),
            "batched {r}x{c}"
        );
    }
}

#[test]
fn transposes_every_element_size() {
    check_transposes::<u8>(|i| (i % 253) as u8, (64, 65));
    check_transposes::<i16>(|i| i as i16, (33, 32));
    check_transposes::<f32>(|i| i as f32, (16, 17));
    check_transposes::<i64>(|i| i as i64 * 3, (9, 8));
    check_transposes::<Complex128>(|i| Complex128::new(i as f64, 0.5 - i as f64), (4, 5));
}

#[test]
#[cfg_attr(miri, ignore = "too large for Miri")]
fn large_transpose_uses_streaming_stores_correctly() {
    // 2052 x 2048 f32 = 16.8 MB, above the non-temporal threshold; rows of
    // 8208 bytes (16-byte multiples); 2052 is not a multiple of the tile.
    let (r, c) = (2048i64, 2052i64);
    let src = arange(r * c, ScalarType::Float)
        .as_strided(&[c, r], &[1, c], None)
        .unwrap();
    let k = contiguous(&src, MemoryFormat::Contiguous).unwrap();
    let got = k.read::<f32>().unwrap();
    let got = got.as_slice().unwrap();
    for i in 0..c as usize {
        for j in (0..r as usize).step_by(7) {
            assert_eq!(got[i * r as usize + j], (j * c as usize + i) as f32);
        }
    }
    // Unaligned destination rows fall back to plain stores.
    let dst = Tensor::empty(&[c * (r + 1)], opts(ScalarType::Float))
        .unwrap()
        .as_strided(&[c, r], &[r + 1, 1], Some(1))
        .unwrap();
    copy_(&dst, &src).unwrap();
    assert_eq!(dst.get::<f32>(&[5, 9]).unwrap(), (9 * c + 5) as f32);
    assert_eq!(
        dst.get::<f32>(&[c - 1, r - 1]).unwrap(),
        ((r - 1) * c + c - 1) as f32
    );
}

/// `contiguous()` of a transposed `r`×`c` matrix of `T` with at least
/// 16 MiB (the streaming-store strips), checked element by element against
/// the definition.
fn check_large_transpose<T: Element + PartialEq + std::fmt::Debug>(
    make: fn(usize) -> T,
    r: i64,
    c: i64,
) {
    assert!(r * c * std::mem::size_of::<T>() as i64 >= 16 << 20);
    // src is (c, r) row-major viewed as (r, c) transposed.
    let src = view_of(make, 0, &[r, c], &[1, r], 0);
    let got = contiguous(&src, MemoryFormat::Contiguous)
        .unwrap()
        .to_vec::<T>()
        .unwrap();
    let (r, c) = (r as usize, c as usize);
    for i in 0..r {
        for j in 0..c {
            let want = make(j * r + i);
            if got[i * c + j] != want {
                panic!(
                    "{r}x{c} of {:?}: element ({i}, {j}) is {:?}, not {want:?}",
                    T::SCALAR_TYPE,
                    got[i * c + j]
                );
            }
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "too large for Miri")]
fn large_transposes_of_every_element_size_are_exact() {
    // Destination rows of a multiple of 16 bytes (streaming stores need
    // them aligned) but of no line block or tile, and odd source rows, so
    // every strip has edges on both sides.
    check_large_transpose::<u8>(|i| (i % 251) as u8, 4099, 4112);
    check_large_transpose::<f16>(|i| f16::from_f32((i % 2039) as f32), 2901, 2904);
    check_large_transpose::<f32>(|i| i as f32, 2053, 2044);
    check_large_transpose::<f64>(|i| i as f64, 1451, 1454);
    check_large_transpose::<Complex128>(|i| Complex128::new(i as f64, -(i as f64)), 1031, 1029);
}

// ---------------------------------------------------------------------------
// copy_: broadcasting, dtypes, errors
// ---------------------------------------------------------------------------

#[test]
fn copy_broadcasts_like_pytorch() {
    let f = ScalarType::Float;
    let dst = Tensor::zeros(&[2, 3], opts(f)).unwrap();
    copy_(
        &dst,
        &Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap(),
    )
    .unwrap();
    assert_eq!(
        dst.to_vec::<f32>().unwrap(),
        vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]
    );
    copy_(&dst, &Tensor::from_vec(vec![7.0f32, 8.0], &[2, 1]).unwrap()).unwrap();
    assert_eq!(
        dst.to_vec::<f32>().unwrap(),
        vec![7.0, 7.0, 7.0, 8.0, 8.0, 8.0]
    );
    copy_(&dst, &Tensor::scalar_tensor(5.0, opts(f)).unwrap()).unwrap();
    assert_eq!(dst.to_vec::<f32>().unwrap(), vec![5.0; 6]);
    // (1, 1, 3) does not broadcast into (2, 3): more dims than the output.
    let cases: &[(&[i64], &[i64], &str)] = &[
        (&[3, 1], &[3, 4], "output with shape [3, 1] doesn't match the broadcast shape [3, 4]"),
        (&[4], &[3, 4], "output with shape [4] doesn't match the broadcast shape [3, 4]"),
        (&[4], &[1, 4], "output with shape [4] doesn't match the broadcast shape [1, 4]"),
        (&[], &[1], "output with shape [] doesn't match the broadcast shape [1]"),
        (&[3, 4], &[3, 5], "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1"),
        (&[2, 3, 4], &[5, 4], "The size of tensor a (3) must match the size of tensor b (5) at non-singleton dimension 1"),
        (&[0, 3], &[5, 3], "The size of tensor a (0) must match the size of tensor b (5) at non-singleton dimension 0"),
        (&[2, 3], &[0, 3], "The size of tensor a (2) must match the size of tensor b (0) at non-singleton dimension 0"),
    ];
    for &(d, s, msg) in cases {
        let dst = Tensor::zeros(d, opts(f)).unwrap();
        let src = Tensor::ones(s, opts(f)).unwrap();
        assert_eq!(err(copy_(&dst, &src)), msg, "{d:?} <- {s:?}");
        assert_eq!(dst.version().unwrap(), 0, "no bump on error");
    }
    // (1,) into () is fine, and empty into empty.
    let one = Tensor::zeros(&[1], opts(f)).unwrap();
    copy_(&one, &Tensor::scalar_tensor(2.0, opts(f)).unwrap()).unwrap();
    assert_eq!(one.to_vec::<f32>().unwrap(), vec![2.0]);
    let e = Tensor::zeros(&[0, 3], opts(f)).unwrap();
    copy_(&e, &Tensor::zeros(&[3], opts(f)).unwrap()).unwrap();
}

#[test]
fn copy_converts_dtypes_like_pytorch() {
    let from_f64 = |v: &[f64]| Tensor::from_slice_1d(v).unwrap();
    let conv = |dst_dtype: ScalarType, src: &Tensor| {
        let d = Tensor::zeros(src.sizes(), opts(dst_dtype)).unwrap();
        copy_(&d, src).unwrap();
        d
    };
    // Values observed with torch 2.15 (CPU).
    let d = conv(ScalarType::Int, &from_f64(&[1.7, -2.9, 3e10]));
    assert_eq!(d.to_vec::<i32>().unwrap(), vec![1, -2, i32::MIN]);
    let d = conv(ScalarType::Byte, &from_f64(&[-1.7, 300.0, 256.0]));
    assert_eq!(d.to_vec::<u8>().unwrap(), vec![255, 44, 0]);
    let d = conv(
        ScalarType::Char,
        &Tensor::from_slice_1d(&[200i64, -300, 127]).unwrap(),
    );
    assert_eq!(d.to_vec::<i8>().unwrap(), vec![-56, -44, 127]);
    let d = conv(
        ScalarType::Bool,
        &Tensor::from_slice_1d(&[0.0f32, 0.1, f32::NAN]).unwrap(),
    );
    assert_eq!(d.to_vec::<bool>().unwrap(), vec![false, true, true]);
    let z =
        Tensor::from_slice_1d(&[Complex128::new(1.0, 2.0), Complex128::new(3.0, -1.0)]).unwrap();
    assert_eq!(
        conv(ScalarType::Float, &z).to_vec::<f32>().unwrap(),
        vec![1.0, 3.0]
    );
    assert_eq!(
        conv(ScalarType::ComplexFloat, &z)
            .to_vec::<Complex64>()
            .unwrap(),
        vec![Complex64::new(1.0, 2.0), Complex64::new(3.0, -1.0)]
    );
    let zb = Tensor::from_slice_1d(&[
        Complex128::new(0.0, 0.0),
        Complex128::new(0.0, 1.0),
        Complex128::new(1.0, 0.0),
    ])
    .unwrap();
    assert_eq!(
        conv(ScalarType::Bool, &zb).to_vec::<bool>().unwrap(),
        vec![false, true, true]
    );
    let u = Tensor::from_slice_1d(&[(1u64 << 62) + 1, u64::MAX - 4]).unwrap();
    assert_eq!(
        conv(ScalarType::Long, &u).to_vec::<i64>().unwrap(),
        vec![(1i64 << 62) + 1, -5]
    );
    let d = conv(ScalarType::Long, &from_f64(&[f64::NAN, f64::INFINITY]));
    assert_eq!(d.to_vec::<i64>().unwrap(), vec![i64::MIN, i64::MIN]);
    let d = conv(ScalarType::Half, &from_f64(&[0.1, 65520.0]));
    assert_eq!(
        d.to_vec::<f16>().unwrap(),
        vec![f16::from_f64(0.0999755859375), f16::INFINITY]
    );
    let d = conv(
        ScalarType::Double,
        &Tensor::from_slice_1d(&[true, false]).unwrap(),
    );
    assert_eq!(d.to_vec::<f64>().unwrap(), vec![1.0, 0.0]);
    let d = conv(
        ScalarType::ComplexFloat,
        &Tensor::from_slice_1d(&[true, false]).unwrap(),
    );
    assert_eq!(
        d.to_vec::<Complex64>().unwrap(),
        vec![Complex64::new(1.0, 0.0), Complex64::new(0.0, 0.0)]
    );
    let d = conv(
        ScalarType::Short,
        &Tensor::from_slice_1d(&[70000i64, -70000]).unwrap(),
    );
    assert_eq!(d.to_vec::<i16>().unwrap(), vec![4464, -4464]);
    let d = conv(
        ScalarType::UInt32,
        &Tensor::from_slice_1d(&[-1i64, (1 << 40) + 5]).unwrap(),
    );
    assert_eq!(d.to_vec::<u32>().unwrap(), vec![4294967295, 5]);
    let d = conv(
        ScalarType::Float,
        &Tensor::from_slice_1d(&[u64::MAX, 1]).unwrap(),
    );
    assert_eq!(d.to_vec::<f32>().unwrap(), vec![1.8446744e19, 1.0]);
    let d = conv(
        ScalarType::Byte,
        &Tensor::from_slice_1d(&[
            f16::from_f32(-1.0),
            f16::from_f32(255.9),
            f16::from_f32(-0.5),
        ])
        .unwrap(),
    );
    assert_eq!(d.to_vec::<u8>().unwrap(), vec![255, 255, 0]);
    let d = conv(
        ScalarType::Double,
        &Tensor::from_slice_1d(&[(1i64 << 62) + 1, 3]).unwrap(),
    );
    assert_eq!(d.to_vec::<f64>().unwrap(), vec![4611686018427387904.0, 3.0]);
    // int64 -> int64 stays exact far beyond 2^53.
    let big = Tensor::from_slice_1d(&[i64::MAX, i64::MIN + 1]).unwrap();
    assert_eq!(
        conv(ScalarType::UInt64, &big).to_vec::<u64>().unwrap(),
        vec![i64::MAX as u64, (i64::MIN + 1) as u64]
    );

    // Conversion through strided layouts and broadcasting.
    let src = strided(&[3, 4], &[1, 3], 1, ScalarType::Long); // transposed
    let d = Tensor::zeros(&[2, 3, 4], opts(ScalarType::Double)).unwrap();
    copy_(&d, &src).unwrap();
    let want: Vec<f64> = src
        .to_vec::<i64>()
        .unwrap()
        .iter()
        .map(|&v| v as f64)
        .collect();
    assert_eq!(d.to_vec::<f64>().unwrap(), [want.clone(), want].concat());
}

#[test]
fn copy_overlap_errors() {
    let f = ScalarType::Float;
    // An expanded destination: checked before shapes, as in PyTorch.
    let e = Tensor::zeros(&[3, 1], opts(f))
        .unwrap()
        .as_strided(&[3, 4], &[1, 0], None)
        .unwrap();
    assert_eq!(
        err(copy_(&e, &Tensor::ones(&[3, 4], opts(f)).unwrap())),
        INTERNAL
    );
    assert_eq!(
        err(copy_(&e, &Tensor::ones(&[3, 5], opts(f)).unwrap())),
        INTERNAL
    );
    assert_eq!(
        err(e.copy_(&Tensor::ones(&[3, 4], opts(f)).unwrap())),
        INTERNAL
    );
    // A size-0 expanded destination is dense: fine.
    let z = Tensor::zeros(&[1], opts(f))
        .unwrap()
        .as_strided(&[0], &[0], None)
        .unwrap();
    copy_(&z, &Tensor::ones(&[0], opts(f)).unwrap()).unwrap();

    // Partly overlapping dense views of one storage.
    let a = arange(16, f);
    let v = |o: i64| a.as_strided(&[8], &[1], Some(o)).unwrap();
    assert_eq!(err(copy_(&v(0), &v(4))), PARTIAL);
    assert_eq!(err(copy_(&v(4), &v(0))), PARTIAL);
    // Same span, other strides: partial too (and reported before shapes).
    let sq = a.as_strided(&[2, 2], &[2, 1], Some(0)).unwrap();
    assert_eq!(
        err(copy_(
            &a.as_strided(&[4], &[1], Some(0)).unwrap(),
            &sq.as_strided(&[2, 2], &[1, 2], None).unwrap()
        )),
        PARTIAL
    );
    assert_eq!(
        a.to_vec::<f32>().unwrap(),
        (0..16).map(|i| i as f32).collect::<Vec<_>>()
    );
}

#[test]
fn copy_between_views_of_one_storage() {
    let f = ScalarType::Float;
    // Disjoint halves: works (one lock, no deadlock).
    let a = arange(16, f);
    copy_(
        &a.as_strided(&[8], &[1], Some(0)).unwrap(),
        &a.as_strided(&[8], &[1], Some(8)).unwrap(),
    )
    .unwrap();
    assert_eq!(
        a.to_vec::<f32>().unwrap(),
        [(8..16).collect::<Vec<_>>(), (8..16).collect()]
            .concat()
            .iter()
            .map(|&i| i as f32)
            .collect::<Vec<_>>()
    );
    assert_eq!(a.version().unwrap(), 1);
    // Same layout: a no-op that still counts as an in-place op.
    let h = a.as_strided(&[8], &[1], Some(0)).unwrap();
    copy_(&h, &a.as_strided(&[8], &[1], Some(0)).unwrap()).unwrap();
    copy_(&h, &h).unwrap();
    assert_eq!(a.version().unwrap(), 3);

    // Layouts that are not dense may interleave or overlap; PyTorch allows
    // them. Results as torch 2.15 gives them.
    let x = arange(8, f);
    copy_(
        &x.as_strided(&[2, 2], &[4, 1], Some(0)).unwrap(),
        &x.as_strided(&[2, 2], &[4, 1], Some(2)).unwrap(),
    )
    .unwrap();
    assert_eq!(
        x.to_vec::<f32>().unwrap(),
        vec![2.0, 3.0, 2.0, 3.0, 6.0, 7.0, 6.0, 7.0]
    );
    let x = arange(8, f);
    copy_(
        &x.as_strided(&[4], &[2], Some(0)).unwrap(),
        &x.as_strided(&[4], &[2], Some(1)).unwrap(),
    )
    .unwrap();
    assert_eq!(
        x.to_vec::<f32>().unwrap(),
        vec![1.0, 1.0, 3.0, 3.0, 5.0, 5.0, 7.0, 7.0]
    );
    let x = arange(8, f);
    copy_(
        &x.as_strided(&[2, 2], &[2, 1], Some(0)).unwrap(),
        &x.as_strided(&[2, 2], &[0, 1], Some(0)).unwrap(),
    )
    .unwrap();
    assert_eq!(
        x.to_vec::<f32>().unwrap(),
        vec![0.0, 1.0, 0.0, 1.0, 4.0, 5.0, 6.0, 7.0]
    );
    // Overlapping non-dense views: the source is read in full first
    // (memmove semantics), whatever the direction.
    let x = arange(16, f);
    copy_(
        &x.as_strided(&[4, 2], &[4, 1], Some(1)).unwrap(),
        &x.as_strided(&[4, 2], &[4, 1], Some(0)).unwrap(),
    )
    .unwrap();
    assert_eq!(&x.to_vec::<f32>().unwrap()[..4], &[0.0, 0.0, 1.0, 3.0]);
    // ... also with a dtype conversion in place.
    let s = arange(4, ScalarType::Int);
    let as_float =
        Tensor::from_storage(s.storage().clone(), ScalarType::Float, &[4], &[1], 0).unwrap();
    copy_(&as_float, &s).unwrap();
    assert_eq!(as_float.to_vec::<f32>().unwrap(), vec![0.0, 1.0, 2.0, 3.0]);
    // An overlapping destination that is not expanded ("too hard" for
    // PyTorch) is written in order: torch gives [1, 3, 4, 3].
    let a = Tensor::zeros(&[4], opts(f)).unwrap();
    let d = a.as_strided(&[2, 2], &[1, 1], None).unwrap();
    copy_(
        &d,
        &Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap(),
    )
    .unwrap();
    assert_eq!(a.to_vec::<f32>().unwrap(), vec![1.0, 3.0, 4.0, 0.0]);
}

#[test]
fn copy_bumps_the_version_once() {
    let base = Tensor::zeros(&[2, 3], opts(ScalarType::Float)).unwrap();
    let view = base.as_strided(&[3], &[1], Some(3)).unwrap();
    let src = Tensor::ones(&[3], opts(ScalarType::Double)).unwrap();
    copy_(&view, &src).unwrap();
    assert_eq!(
        (
            base.version().unwrap(),
            view.version().unwrap(),
            src.version().unwrap()
        ),
        (1, 1, 0)
    );
    view.copy_(&src).unwrap();
    assert_eq!(base.version().unwrap(), 2);
    assert_eq!(
        base.to_vec::<f32>().unwrap(),
        vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    );
}

#[test]
fn copy_into_read_only_storage_fails() {
    let storage = Storage::from_read_only_owner(vec![0u8; 16], "a test table");
    let t = Tensor::from_storage(storage, ScalarType::Float, &[4], &[1], 0).unwrap();
    let e = err(copy_(
        &t,
        &Tensor::ones(&[4], opts(ScalarType::Float)).unwrap(),
    ));
    assert!(e.contains("read-only storage (a test table)"), "{e}");
    // Reading from it is fine.
    let c = clone(&t, MemoryFormat::Contiguous).unwrap();
    assert_eq!(c.to_vec::<f32>().unwrap(), vec![0.0; 4]);
}

#[test]
fn copies_in_opposite_directions_do_not_deadlock() {
    let n = if cfg!(miri) { 4 } else { 500 };
    let a = arange(64, ScalarType::Float);
    let b = arange(64, ScalarType::Float)
        .as_strided(&[8, 8], &[1, 8], None)
        .unwrap();
    let a2 = a.as_strided(&[8, 8], &[8, 1], None).unwrap();
    thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..n {
                copy_(&a2, &b).unwrap();
            }
        });
        s.spawn(|| {
            for _ in 0..n {
                copy_(&b, &a2).unwrap();
            }
        });
    });
    // Both hold a permutation of the original values, transposed.
    let va = a2.to_vec::<f32>().unwrap();
    let vb = b.to_vec::<f32>().unwrap();
    assert_eq!(va, vb);
}

#[test]
fn meta_and_inference_tensors() {
    let meta = TensorOptions::new().device(Device::META);
    let m = Tensor::empty(&[2, 3], meta).unwrap();
    let cpu = Tensor::ones(&[2, 3], opts(ScalarType::Float)).unwrap();
    copy_(&m, &cpu).unwrap();
    assert_eq!(
        err(copy_(
            &Tensor::empty(&[3], meta).unwrap(),
            &Tensor::ones(&[4], opts(ScalarType::Float)).unwrap()
        )),
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0"
    );
    assert_eq!(
        err(copy_(&cpu, &m)),
        "Cannot copy out of meta tensor; no data!"
    );
    let mt = m.as_strided(&[3, 2], &[1, 3], None).unwrap();
    let c = clone(&mt, MemoryFormat::Preserve).unwrap();
    assert_eq!((c.device(), c.strides()), (Device::META, &[1i64, 3][..]));
    assert_eq!(
        contiguous(&mt, MemoryFormat::Contiguous).unwrap().strides(),
        &[2, 1]
    );

    let inf = {
        let _g = InferenceMode::new();
        Tensor::zeros(&[2], opts(ScalarType::Float)).unwrap()
    };
    let e = err(copy_(
        &inf,
        &Tensor::ones(&[2], opts(ScalarType::Float)).unwrap(),
    ));
    assert!(
        e.starts_with("Inplace update to inference tensor outside InferenceMode is not allowed"),
        "{e}"
    );
    assert_eq!(inf.to_vec::<f32>().unwrap(), vec![0.0, 0.0]);
    {
        let _g = InferenceMode::new();
        copy_(&inf, &Tensor::ones(&[2], opts(ScalarType::Float)).unwrap()).unwrap();
    }
    assert_eq!(inf.to_vec::<f32>().unwrap(), vec![1.0, 1.0]);
    // A clone of an inference tensor outside inference mode is normal, and
    // its version is 1 as in PyTorch (the copy into it is an in-place
    // `copy_` that autograd sees).
    let c = clone(&inf, MemoryFormat::Preserve).unwrap();
    assert!(!c.is_inference());
    assert_eq!(c.version().unwrap(), 1);
}

#[test]
fn free_function_and_methods_agree() {
    let t = strided(&[3, 4], &[1, 3], 0, ScalarType::Double);
    assert!(is_non_overlapping_and_dense(&t));
    assert!(!is_non_overlapping_and_dense(
        &t.as_strided(&[3, 4], &[1, 0], None).unwrap()
    ));
    let a = t.clone_in(MemoryFormat::Contiguous).unwrap();
    let b = clone(&t, MemoryFormat::Contiguous).unwrap();
    assert_eq!(a.to_vec::<f64>().unwrap(), b.to_vec::<f64>().unwrap());
    assert_eq!(
        t.empty_like(MemoryFormat::Preserve).unwrap().strides(),
        &[1, 3]
    );
    assert!(a.contiguous().unwrap().is_same(&a));
    assert!(a.is_set_to(&a.contiguous().unwrap()));
}

/// Copies between equal dense layouts run as one span (`copy_dense_span`):
/// permuted and offset layouts, storage slices whose spans overlap
/// (`memmove` semantics, as the buffered path gives), and storages shrunk
/// under a layout (PyTorch's error, from the general path).
#[test]
fn equal_dense_layouts_copy_as_one_span() {
    let f = ScalarType::Float;
    // Permuted (dims (1, 0, 2) of a [3, 2, 4]) and offset: both sides have
    // the same strides, each on its own storage.
    let (sizes, strides) = ([2i64, 3, 4], [4i64, 8, 1]);
    let src = strided(&sizes, &strides, 5, f);
    let dst = Tensor::zeros(&[40], opts(f))
        .unwrap()
        .as_strided(&sizes, &strides, Some(11))
        .unwrap();
    copy_(&dst, &src).unwrap();
    assert_eq!(dst.to_vec::<f32>().unwrap(), src.to_vec::<f32>().unwrap());
    let untouched = Tensor::from_storage(dst.storage().clone(), f, &[40], &[1], 0).unwrap();
    let all = untouched.to_vec::<f32>().unwrap();
    assert!(all[..11].iter().chain(&all[35..]).all(|&x| x == 0.0));
    // clone keeps the dense strides and the values.
    let c = clone(&src, MemoryFormat::Preserve).unwrap();
    assert_eq!((c.strides(), c.storage_offset()), (&strides[..], 0));
    assert_eq!(c.to_vec::<f32>().unwrap(), src.to_vec::<f32>().unwrap());

    // Two slices of one root whose spans overlap, in both directions: the
    // result is the source as it was before the copy.
    for (d_at, s_at) in [(2usize, 0usize), (0, 2)] {
        let root = arange(12, f);
        let bytes = |at: usize| at * 4..(at + 8) * 4;
        let on = |at: usize| {
            let part = root.storage().slice(bytes(at)).unwrap();
            Tensor::from_storage(part, f, &[2, 4], &[4, 1], 0).unwrap()
        };
        let (d, s) = (on(d_at), on(s_at));
        let want = s.to_vec::<f32>().unwrap();
        copy_(&d, &s).unwrap();
        assert_eq!(
            d.to_vec::<f32>().unwrap(),
            want,
            "slices at {d_at} <- {s_at}"
        );
    }

    // A storage shrunk under the source's layout: PyTorch's error.
    let small = arange(8, f);
    let src = small.as_strided(&[2, 2], &[2, 1], Some(4)).unwrap();
    small.storage().resize(5 * 4).unwrap();
    let dst = Tensor::zeros(&[2, 2], opts(f)).unwrap();
    let e = err(copy_(&dst, &src));
    assert!(e.contains("does not fit in its storage"), "{e}");
    assert_eq!(
        dst.to_vec::<f32>().unwrap(),
        vec![0.0; 4],
        "nothing written"
    );
}
