//! The legacy format's storage views (`view_metadata` set in a storage's
//! persistent id, what torch wrote before 1.0; torch 2.15 still reads
//! them, with `weights_only=True` too). The fixture
//! `torch-legacy-storage-views.pt` was built by hand in that layout (root
//! storage '0': float32 0..9; view 'v1': its elements 2..7; `whole` over
//! the root, `a` (offset 1, size (2, 2), stride (1, 2)) and `b` (the
//! five elements) over the view), and torch 2.15 loads it as checked
//! below. Tensors over a view load over the root storage with the view's
//! offset added: they share its memory, as in torch. Bare views (the
//! fixture `torch-legacy-storage-slices.pt`, written by
//! `tools/gen_legacy_storage_slices.py`) load as storage slices of the
//! root, sharing its bytes, as torch loads them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Cursor;

use c10_core::Tensor;
use torchcore_pt::{load, load_from_reader, LoadOptions, Value};

fn fixture() -> Vec<u8> {
    std::fs::read(
        common::fixtures()
            .parent()
            .unwrap()
            .join("torch-legacy-storage-views.pt"),
    )
    .unwrap()
}

fn field(v: &Value, key: &str) -> Tensor {
    let Value::Dict(items) = v else {
        panic!("{v:?}")
    };
    items
        .iter()
        .find(|(k, _)| *k == Value::Str(key.into()))
        .and_then(|(_, x)| x.as_tensor().cloned())
        .unwrap()
}

#[test]
fn tensors_over_storage_views_load_and_share_the_root() {
    for v in [
        load(
            common::fixtures()
                .parent()
                .unwrap()
                .join("torch-legacy-storage-views.pt"),
        )
        .unwrap(),
        load_from_reader(Cursor::new(fixture())).unwrap(),
    ] {
        let (whole, a, b) = (field(&v, "whole"), field(&v, "a"), field(&v, "b"));
        assert_eq!(
            whole.to_vec::<f32>().unwrap(),
            (0..10).map(|x| x as f32).collect::<Vec<_>>()
        );
        // torch: [[3, 5], [4, 6]] and [2, 3, 4, 5, 6].
        assert_eq!(a.to_vec::<f32>().unwrap(), [3.0, 5.0, 4.0, 6.0]);
        assert_eq!(b.to_vec::<f32>().unwrap(), [2.0, 3.0, 4.0, 5.0, 6.0]);
        // Offsets count from the root storage (torch: from the view, 1 and 0).
        assert_eq!((a.storage_offset(), b.storage_offset()), (3, 2));
        assert!(whole.storage().is_alias_of(a.storage()));
        assert!(whole.storage().is_alias_of(b.storage()));
        b.fill_(100.0).unwrap();
        assert_eq!(whole.to_vec::<f32>().unwrap()[2..7], [100.0; 5]);
    }
}

/// The fixture with the view's size (`K 5` after `'v1' BINPUT 15 K 2`) replaced.
fn with_view_size(size: u8) -> Vec<u8> {
    let mut bytes = fixture();
    let pat = b"v1q\x0fK\x02K\x05";
    let at = bytes
        .windows(pat.len())
        .position(|w| w == pat)
        .expect("view metadata");
    bytes[at + pat.len() - 1] = size;
    bytes
}

#[test]
fn storage_views_are_checked() {
    // The view reaches past its root storage (2 + 9 > 10 elements).
    let e = load_from_reader(Cursor::new(with_view_size(9)))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("storage view 'v1'") && e.contains("reaches past"),
        "{e}"
    );
    // The view is too small for `b` (5 elements) in a view of 4.
    let e = load_from_reader(Cursor::new(with_view_size(4)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("reaches past its storage view"), "{e}");
}

fn slices_fixture() -> std::path::PathBuf {
    common::fixtures()
        .parent()
        .unwrap()
        .join("torch-legacy-storage-slices.pt")
}

/// torch 2.15 on this file (`weights_only` both ways): `(v1, v2, v1)`, `v1`
/// one float (1.0) and `v2` three (2.0, 3.0, 4.0), `v2`'s data pointer 4
/// bytes past `v1`'s, `v1` the same object twice, writes through `v2`
/// shared, `resize_` of a view refused as not resizable.
#[test]
fn bare_storage_views_load_as_slices_of_the_root() {
    let v = load(slices_fixture()).unwrap();
    let Value::Tuple(items) = v else {
        panic!("{v:?}")
    };
    let [Value::Storage(a), Value::Storage(b), Value::Storage(c)] = &items[..] else {
        panic!("{items:?}")
    };
    assert_eq!(a.dtype, c10_core::ScalarType::Float);
    assert_eq!((a.storage.nbytes(), b.storage.nbytes()), (4, 12));
    assert!(a.storage.is_alias_of(&c.storage), "one slice per view key");
    assert!(!a.storage.is_alias_of(&b.storage));
    assert!(a.storage.shares_root_with(&b.storage));
    assert_eq!(
        b.storage.data_addr().unwrap(),
        a.storage.data_addr().unwrap() + 4
    );
    let (root, offset) = b.storage.slice_of().unwrap();
    assert_eq!((offset, root.nbytes()), (4, 16));
    let floats = |s: &c10_core::Storage| -> Vec<f32> {
        s.read()
            .unwrap()
            .bytes()
            .unwrap()
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    assert_eq!(floats(&a.storage), [1.0]);
    assert_eq!(floats(&b.storage), [2.0, 3.0, 4.0]);
    b.storage.write().unwrap().bytes_mut().unwrap()[..4].copy_from_slice(&50f32.to_le_bytes());
    assert_eq!(floats(root), [1.0, 50.0, 3.0, 4.0]);
    assert_eq!(
        b.storage.resize(40).unwrap_err().to_string(),
        "Trying to resize storage that is not resizable"
    );
}

#[test]
fn bare_storage_views_follow_a_storage_map() {
    // A map that copies every storage: the views are re-sliced from the
    // copy, still sharing one root.
    let opts = LoadOptions::default().storage_map(|_key, _loc, s| {
        let copy = c10_core::Storage::from_owner(s.read()?.bytes()?.to_vec());
        Ok(Some(copy))
    });
    let v = torchcore_pt::load_with(slices_fixture(), &opts).unwrap();
    let Value::Tuple(items) = v else {
        panic!("{v:?}")
    };
    let [Value::Storage(a), Value::Storage(b), _] = &items[..] else {
        panic!("{items:?}")
    };
    assert!(a.storage.shares_root_with(&b.storage));
    assert_eq!(b.storage.slice_of().map(|(_, o)| o), Some(4));
    assert_eq!(
        b.storage.read().unwrap().bytes().unwrap()[..4],
        2f32.to_le_bytes()
    );
}
