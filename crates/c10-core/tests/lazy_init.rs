//! Lazy initialisation of `empty` storages (issue #13): safe code never
//! sees bytes it did not write, except zeros, whatever the allocator left
//! in the block. Runs under Miri (`cargo xtask miri`), where the memory of
//! `allocate_for_overwrite` really is uninitialised: a path that exposed it
//! without the fill would be reported there.

use alloc_cpu::{CpuAllocator, FillMode};
use c10_core::{ScalarType, Tensor};
use c10_storage::Storage;

const N: i64 = if cfg!(miri) { 64 } else { 1 << 16 };

/// A pattern written into a tensor that is then dropped must never show
/// through a new `empty` tensor of the same size (the allocator is likely
/// to hand back the same block).
#[test]
fn empty_never_shows_a_freed_tensors_bytes() {
    for _ in 0..4 {
        let old = Tensor::full(&[N], 0x5A5A_5A5A_i64, ScalarType::Long).unwrap();
        drop(old);
        let e = Tensor::empty(&[N], ScalarType::Long).unwrap();
        assert!(e.to_vec::<i64>().unwrap().iter().all(|&v| v == 0));
    }
}

/// The same through a junk-filling allocator: its blocks hold junk, yet an
/// uninitialised storage reads as zeros.
#[test]
fn junk_from_the_allocator_never_shows() {
    static JUNK: CpuAllocator = CpuAllocator::with_fill(FillMode::Junk);
    let s = Storage::new_uninit(4096, &JUNK, true).unwrap();
    assert!(s.read().unwrap().bytes().unwrap().iter().all(|&b| b == 0));
    let s = Storage::new_uninit(4096, &JUNK, true).unwrap();
    assert!(s.write().unwrap().bytes().unwrap().iter().all(|&b| b == 0));
    // A partial write through a write guard: the rest reads as zeros.
    let s = Storage::new_uninit(64, &JUNK, true).unwrap();
    s.write().unwrap().bytes_mut().unwrap()[..8].fill(1);
    let bytes = s.read().unwrap().bytes().unwrap().to_vec();
    assert_eq!(&bytes[..8], &[1; 8]);
    assert!(bytes[8..].iter().all(|&b| b == 0));
}

/// Writing part of an `empty` tensor, then reading all of it: the written
/// elements and zeros elsewhere (the fill happens before the partial
/// write, never after it).
#[test]
fn partial_writes_then_reads() {
    let t = Tensor::empty(&[4, 4], ScalarType::Float).unwrap();
    t.set::<f32>(&[1, 2], 7.0).unwrap();
    let col = t.as_strided(&[4], &[4], Some(3)).unwrap();
    col.fill_(2.0).unwrap();
    let v = t.to_vec::<f32>().unwrap();
    for (i, &x) in v.iter().enumerate() {
        let want = if i == 6 {
            7.0
        } else if i % 4 == 3 {
            2.0
        } else {
            0.0
        };
        assert_eq!(x, want, "element {i}");
    }
}

/// Every way of looking at an `empty` tensor's bytes sees zeros: element
/// access, typed slices, printing, iteration, `item`.
#[test]
fn every_reader_initialises_first() {
    let t = Tensor::empty(&[2, 3], ScalarType::Double).unwrap();
    assert_eq!(
        format!("{t}"),
        "tensor([[0., 0., 0.],\n        [0., 0., 0.]], dtype=torch.float64)"
    );
    let t = Tensor::empty(&[2, 3], ScalarType::Double).unwrap();
    assert_eq!(t.read::<f64>().unwrap().as_slice().unwrap(), &[0.0; 6]);
    let t = Tensor::empty(&[2, 3], ScalarType::Double).unwrap();
    assert_eq!(t.get::<f64>(&[1, 2]).unwrap(), 0.0);
    let t = Tensor::empty(&[], ScalarType::Short).unwrap();
    assert_eq!(t.item::<i16>().unwrap(), 0);
    let t = Tensor::empty(&[5], ScalarType::Bool).unwrap();
    assert_eq!(t.to_vec::<bool>().unwrap(), [false; 5]);
    let t = Tensor::empty(&[3], ScalarType::Byte).unwrap();
    assert_eq!(t.storage().read().unwrap().bytes().unwrap(), &[0, 0, 0]);
    let t = Tensor::empty(&[3], ScalarType::Byte).unwrap();
    let mut w = t.write::<u8>().unwrap();
    assert_eq!(w.as_mut_slice().unwrap(), &[0, 0, 0]);
}

/// A full `fill_` (and `full`, `ones`) writes every byte: the result is the
/// value everywhere, including through a wider dtype view of the bytes.
#[test]
fn whole_fills_write_every_byte() {
    let t = Tensor::empty(&[N], ScalarType::Short).unwrap();
    t.fill_(-2).unwrap();
    assert!(t.to_vec::<i16>().unwrap().iter().all(|&x| x == -2));
    let bytes = t.storage().read().unwrap().bytes().unwrap().to_vec();
    assert!(bytes.iter().all(|&b| b == 0xFF || b == 0xFE));
    assert!(Tensor::ones(&[3, 3], ScalarType::Float)
        .unwrap()
        .to_vec::<f32>()
        .unwrap()
        .iter()
        .all(|&x| x == 1.0));
}

/// A `write_uninit` guard dropped without `assume_init` leaves the bytes to
/// the lazy fill: they read as zeros, never as the allocator's junk.
#[test]
fn an_abandoned_overwrite_guard_leaves_zeros() {
    static JUNK: CpuAllocator = CpuAllocator::with_fill(FillMode::Junk);
    let s = Storage::new_uninit(32, &JUNK, true).unwrap();
    {
        let g = s.write_uninit().unwrap();
        assert!(!g.is_initialized());
    }
    assert_eq!(s.read().unwrap().bytes().unwrap(), &[0; 32]);
}
