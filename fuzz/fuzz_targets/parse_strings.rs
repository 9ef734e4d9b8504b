//! Fuzz target 2: device strings (`Device`/`DeviceType::from_str`), dtype and
//! dispatch-key names, and `PYTORCH_CUDA_ALLOC_CONF` strings
//! (`CachingAllocatorConfig::parse`). No input may panic; whatever parses
//! must print back to a string that parses to the same value.
#![no_main]

use std::str::FromStr;

use alloc_cuda::CachingAllocatorConfig;
use c10_core::{DispatchKey, ScalarType};
use c10_storage::{Device, DeviceType};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    let s: &str = &s;

    if let Ok(d) = Device::from_str(s) {
        // c10 narrows the index to int8 ("cuda:128" is cuda:-128, which
        // only `validate` rejects); valid devices must round-trip.
        if d.validate().is_ok() {
            let printed = d.to_string();
            assert_eq!(
                Device::from_str(&printed).ok(),
                Some(d),
                "{s:?} -> {printed:?}"
            );
        }
    }
    if let Ok(t) = DeviceType::from_str(s) {
        let printed = t.to_string();
        assert_eq!(
            DeviceType::from_str(&printed).ok(),
            Some(t),
            "{s:?} -> {printed:?}"
        );
    }
    if let Ok(t) = ScalarType::from_str(s) {
        let _ = t.to_string();
    }
    let _ = DispatchKey::from_str(s);

    if let Ok(c) = CachingAllocatorConfig::parse(s) {
        // Every accessor of a parsed config is total.
        let _ = (c.max_split_size(), c.max_non_split_rounding_size());
        for size in [0u64, 1, 1 << 20, 1 << 30, u64::MAX] {
            let _ = c.roundup_power2_divisions_for(size);
            let _ = alloc_cuda::round_size(size.min(1 << 40), &c);
        }
        let _ = (
            c.garbage_collection_threshold(),
            c.expandable_segments(),
            c.backend(),
        );
    }
    // The same string as the value of each of the two variables.
    let _ = CachingAllocatorConfig::from_env_values(Some(s), None);
    let _ = CachingAllocatorConfig::from_env_values(None, Some(s));
});
