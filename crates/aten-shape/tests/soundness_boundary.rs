//! Soundness review, classes 1 and 6: no safe public call can make the
//! layout flags that `unsafe` code trusts lie, and the public geometry
//! helpers answer inconsistent input with an error instead of a panic.
//! Runs under Miri (`cargo xtask miri`): a lying flag would show there as a
//! read of uninitialised memory in `clone`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use aten_shape::prelude::*;
use c10_core::{
    geometry, LayoutFlags, MemoryFormat, ScalarType, SizesAndStrides, StridedOffsets, Tensor,
    TensorImpl,
};

fn arange(n: i64) -> Tensor {
    Tensor::arange(0, n, 1, ScalarType::Long).unwrap()
}

/// The attack of the review: a gapped geometry (sizes [8], strides [8]
/// over 64 elements) written through the safe view constructors of a dense
/// base. The flag is computed, so `clone(Preserve)` allocates a dense
/// result and copies exactly the 8 elements.
#[test]
fn gapped_geometry_is_not_called_dense() {
    let base = arange(64);
    assert!(base.is_non_overlapping_and_dense());
    let edited = TensorImpl::view_tensor_edit(&base, 0, |g| {
        *g = SizesAndStrides::from_sizes_strides(&[8], &[8]).unwrap();
        Ok(())
    })
    .unwrap();
    let filled = TensorImpl::view_tensor_fill_or_abandon(&base, 0, 1, |s, st| {
        s[0] = 8;
        st[0] = 8;
        Ok(true)
    })
    .unwrap()
    .unwrap();
    let want: Vec<i64> = (0..8).map(|i| i * 8).collect();
    for v in [edited, filled] {
        assert!(!v.is_non_overlapping_and_dense());
        assert!(!v.is_contiguous());
        let c = v.clone_in(MemoryFormat::Preserve).unwrap();
        assert_eq!(c.strides(), &[1]);
        assert_eq!(c.storage().nbytes(), 64);
        assert_eq!(c.to_vec::<i64>().unwrap(), want);
    }
}

/// An overlapping geometry (rows sharing bytes) is never dense either, so
/// the copy engine never splits such a destination across threads.
#[test]
fn overlapping_geometry_is_not_called_dense() {
    let base = arange(if cfg!(miri) { 64 } else { 1 << 22 });
    let rows = if cfg!(miri) { 8 } else { 1 << 11 };
    let v = TensorImpl::view_tensor_edit(&base, 0, |g| {
        *g = SizesAndStrides::from_sizes_strides(&[rows, rows], &[1, 1]).unwrap();
        Ok(())
    })
    .unwrap();
    assert!(!v.is_non_overlapping_and_dense());
    // Writing into it is defined (the engine goes element by element when
    // a destination overlaps itself) and every row sees the last write.
    let src = Tensor::zeros(&[rows, rows], ScalarType::Long).unwrap();
    v.copy_(&src).unwrap();
    assert_eq!(base.get::<i64>(&[0]).unwrap(), 0);
    let c = v.clone_in(MemoryFormat::Preserve).unwrap();
    assert!(c.is_contiguous());
    assert_eq!(c.numel(), rows * rows);
}

/// `view_with_geometry` (safe, public) computes the flags too.
#[test]
fn view_with_geometry_computes_the_flags() {
    let base = arange(16);
    for (sizes, strides, dense) in [
        (&[4i64, 4][..], &[4i64, 1][..], true),
        (&[4, 4], &[1, 4], true),
        (&[4, 2], &[4, 2], false),
        (&[4, 4], &[0, 1], false),
        (&[2, 2], &[1, 1], false),
    ] {
        let v = base.view_with_geometry(sizes, strides, 0).unwrap();
        assert_eq!(
            v.is_non_overlapping_and_dense(),
            dense,
            "{sizes:?} {strides:?}"
        );
        assert_eq!(
            v.clone_in(MemoryFormat::Preserve)
                .unwrap()
                .to_vec::<i64>()
                .unwrap(),
            v.to_vec::<i64>().unwrap()
        );
    }
}

/// Class 6: the public geometry helpers with sizes and strides of
/// different lengths return an error (or, for the flags, a safe answer)
/// instead of indexing out of bounds.
#[test]
fn geometry_helpers_refuse_mismatched_lengths() {
    let (sizes, strides) = (&[2i64, 3, 4][..], &[12i64, 4][..]);
    let msg = "dimensionality of sizes (3) must match dimensionality of strides (2)";
    assert_eq!(
        geometry::is_contiguous(sizes, strides, 24)
            .unwrap_err()
            .to_string(),
        msg
    );
    assert_eq!(
        geometry::is_non_overlapping_and_dense(sizes, strides)
            .unwrap_err()
            .to_string(),
        msg
    );
    assert_eq!(
        geometry::infer_dense_strides(sizes, strides)
            .unwrap_err()
            .to_string(),
        msg
    );
    assert_eq!(
        LayoutFlags::compute(sizes, strides, 24)
            .unwrap_err()
            .to_string(),
        msg
    );
    assert_eq!(
        StridedOffsets::new(sizes, strides, 0)
            .unwrap_err()
            .to_string(),
        msg
    );
    // Matching lengths still work as before.
    assert!(geometry::is_contiguous(&[2, 3], &[3, 1], 6).unwrap());
    assert!(LayoutFlags::compute(&[2, 3], &[1, 2], 6)
        .unwrap()
        .is_non_overlapping_and_dense());
    let offs: Vec<i64> = StridedOffsets::new(&[2, 2], &[1, 2], 1).unwrap().collect();
    assert_eq!(offs, [1, 3, 2, 4]);
}
