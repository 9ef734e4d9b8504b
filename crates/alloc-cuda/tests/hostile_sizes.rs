//! Hostile sizes (issue #20): every public function of alloc-cuda that
//! takes a size, count, alignment or address either saturates (documented)
//! or returns an error, identically in debug and release builds; none
//! overflows (a panic in debug, a silent wrap in release before).

use alloc_cuda::{
    format_size, get_allocation_size, round_size, roundup_power2_next_division, CachingAllocator,
    CachingAllocatorConfig, DevicePtr, FakeDevice, RawDevice, StreamId,
};

/// Sizes near the top of the range (and a few ordinary ones).
const SIZES: [u64; 10] = [
    0,
    1,
    511,
    (1 << 63) - 1,
    1 << 63,
    (1 << 63) + 1,
    u64::MAX - 512,
    u64::MAX - 511,
    u64::MAX - 1,
    u64::MAX,
];

#[test]
fn rounding_saturates_at_u64_max() {
    for divisions in [0, 1, 2, 4, 8, 1 << 20, 1 << 63, u64::MAX] {
        for &size in &SIZES {
            let r = roundup_power2_next_division(size, divisions);
            assert!(r >= size, "roundup({size}, {divisions}) = {r}");
        }
    }
    assert_eq!(roundup_power2_next_division(u64::MAX, 4), u64::MAX);
    assert_eq!(roundup_power2_next_division((7 << 61) + 1, 4), u64::MAX);
    assert_eq!(
        roundup_power2_next_division((1 << 63) + 1, 4),
        (1 << 63) + (1 << 61)
    );
    // 2^63 divisions of the top interval: steps of 1 byte, size kept.
    assert_eq!(
        roundup_power2_next_division((1 << 63) + 1, u64::MAX),
        (1 << 63) + 1
    );
    // Below the top the rounding is unchanged.
    assert_eq!(
        roundup_power2_next_division((1 << 62) + 1, 4),
        (1 << 62) + (1 << 60)
    );

    let configs = [
        CachingAllocatorConfig::default(),
        CachingAllocatorConfig::parse("roundup_power2_divisions:4").unwrap(),
        CachingAllocatorConfig::parse("roundup_power2_divisions:[>:8]").unwrap(),
    ];
    for c in &configs {
        for &size in &SIZES {
            let r = round_size(size, c);
            assert!(r >= size.max(512), "round_size({size}) = {r}");
            let a = get_allocation_size(r);
            assert!(a >= r, "get_allocation_size({r}) = {a}");
            assert!(!format_size(size).is_empty());
        }
        assert_eq!(round_size(u64::MAX, c), u64::MAX);
        assert_eq!(round_size(u64::MAX - 510, c), u64::MAX);
    }
    assert_eq!(
        round_size(u64::MAX - 511, &configs[0]),
        u64::MAX - 511,
        "already a multiple of 512"
    );
}

#[test]
fn fake_device_alignment_and_granularity_are_clamped() {
    for alignment in [0, 1, 513, (1 << 63) + 1, u64::MAX] {
        let dev = FakeDevice::new(u64::MAX).with_alignment(alignment);
        // The first malloc lands on an aligned address or is refused.
        if let Ok(p) = dev.malloc(1) {
            assert_eq!(p.0 % alignment.clamp(512, 1 << 63).next_power_of_two(), 0);
        }
        // With 2^63 alignment the address space runs out at once: errors,
        // never an overflow.
        for _ in 0..3 {
            let _ = dev.malloc(u64::MAX);
            let _ = dev.malloc(1 << 62);
        }
    }
    let dev = FakeDevice::new(u64::MAX).with_granularity(u64::MAX);
    assert_eq!(dev.vmm_granularity(), 1 << 63);
    assert!(dev.reserve_address_range(1 << 63, u64::MAX).is_err());
}

#[test]
fn fake_device_raw_calls_refuse_wrapping_ranges() {
    let dev = FakeDevice::new(u64::MAX).with_alignment(512);
    for &size in &SIZES {
        let _ = dev.malloc(size);
    }
    dev.set_external_usage(u64::MAX);
    assert!(dev.malloc(1).is_err());
    assert!(dev.create_physical(dev.vmm_granularity()).is_err());

    let dev = FakeDevice::new(u64::MAX);
    let g = dev.vmm_granularity();
    let p = dev.reserve_address_range(g, 0).unwrap();
    for alignment in [0, 1, 1 << 62, 1 << 63, u64::MAX] {
        let _ = dev.reserve_address_range(u64::MAX - (u64::MAX % g), alignment);
    }
    let h = dev.create_physical(g).unwrap();
    // A mapping whose end would wrap is an invalid value, not an overflow.
    let top = DevicePtr(u64::MAX - (u64::MAX % g));
    assert!(dev.map(top, g, h).is_err());
    assert!(dev.set_access(top, u64::MAX).is_err());
    assert!(dev.set_access(DevicePtr(u64::MAX), 1).is_err());
    dev.map(p, g, h).unwrap();
    dev.set_access(p, g).unwrap();
    // SAFETY: the fake device never dereferences; `p`/`h` are live.
    unsafe {
        assert!(dev.free_address_range(top, u64::MAX).is_err());
        dev.unmap(p, g).unwrap();
        dev.release_physical(h).unwrap();
        dev.free_address_range(p, g).unwrap();
    }
}

#[test]
fn caching_allocator_refuses_sizes_near_u64_max() {
    for config in ["", "roundup_power2_divisions:8", "expandable_segments:True"] {
        let c = CachingAllocatorConfig::parse(config).unwrap();
        let a = CachingAllocator::new(FakeDevice::new(u64::MAX).with_alignment(u64::MAX), 0, c);
        for &size in &SIZES[1..] {
            assert!(
                a.malloc(size, StreamId(0)).is_err() || size < 1 << 60,
                "{config}: malloc({size})"
            );
        }
        a.validate().unwrap();
    }
    // Builder values that would overflow once scaled saturate.
    let c = CachingAllocatorConfig::builder()
        .max_split_size_mb(u64::MAX)
        .max_non_split_rounding_mb(u64::MAX)
        .build()
        .unwrap();
    assert!(c.max_split_size() >= 1 << 62);
}
