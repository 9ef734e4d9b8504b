//! `zeros` skips its fill only when the allocator that made the storage
//! zero-fills: under a registered junk-filling CPU allocator it must still
//! write the zeros, and `full`/`ones` always fill. (Own test binary: it
//! registers a process-wide CPU allocator.)

use alloc_cpu::{CpuAllocator, FillMode};
use c10_core::{ScalarType, Tensor};
use c10_storage::{set_allocator, DeviceType};

static JUNK: CpuAllocator = CpuAllocator::with_fill(FillMode::Junk);

#[test]
fn zeros_fills_when_the_allocator_does_not() {
    // Under the default (zero-filling) allocator first.
    let z = Tensor::zeros(&[3, 5], ScalarType::Float).unwrap();
    assert_eq!(z.to_vec::<f32>().unwrap(), vec![0.0; 15]);

    set_allocator(DeviceType::Cpu, &JUNK, 0).unwrap();
    // The allocator's own blocks now hold junk (a NaN as f32), so a
    // skipped fill in `zeros` would show.
    let raw = c10_storage::Storage::new(60, &JUNK, true).unwrap();
    let junk: Vec<u8> = raw.read().unwrap().bytes().unwrap().to_vec();
    assert!(junk
        .chunks(4)
        .all(|w| f32::from_ne_bytes([w[0], w[1], w[2], w[3]]).is_nan()));
    // `empty` is lazily initialised: it reads as zeros, never the junk.
    let e = Tensor::empty(&[3, 5], ScalarType::Float).unwrap();
    assert_eq!(e.to_vec::<f32>().unwrap(), vec![0.0; 15]);
    for dtype in [ScalarType::Float, ScalarType::Long, ScalarType::Byte] {
        let z = Tensor::zeros(&[4, 7], dtype).unwrap();
        let st = z.storage();
        let guard = st.read().unwrap();
        let bytes = guard.bytes().unwrap();
        assert_eq!(bytes.len(), 28 * dtype.itemsize());
        assert!(bytes.iter().all(|&b| b == 0), "{dtype:?}: {bytes:?}");
        drop(guard);
        assert_eq!(
            z.version().unwrap(),
            0,
            "a factory's fill is not a user write"
        );
    }
    let o = Tensor::ones(&[2, 2], ScalarType::Int).unwrap();
    assert_eq!(o.to_vec::<i32>().unwrap(), vec![1; 4]);
}
