//! The legacy format's storage views (`view_metadata` set in a storage's
//! persistent id, what torch wrote before 1.0; torch 2.15 still reads
//! them, with `weights_only=True` too). The fixture
//! `torch-legacy-storage-views.pt` was built by hand in that layout (root
//! storage '0': float32 0..9; view 'v1': its elements 2..7; `whole` over
//! the root, `a` (offset 1, size (2, 2), stride (1, 2)) and `b` (the
//! five elements) over the view), and torch 2.15 loads it as checked
//! below. Tensors over a view load over the root storage with the view's
//! offset added: they share its memory, as in torch.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Cursor;

use c10_core::Tensor;
use torchcore_pt::{load, load_from_reader, Value};

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
