//! `PYTORCH_CUDA_ALLOC_CONF` parsing: every key, and every validation
//! error with PyTorch's message.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use alloc_cuda::{Backend, CachingAllocatorConfig, ConfigError};

const MIB: u64 = 1 << 20;

fn err(s: &str) -> String {
    CachingAllocatorConfig::parse(s).unwrap_err().to_string()
}

#[test]
fn defaults() {
    let c = CachingAllocatorConfig::parse("").unwrap();
    assert_eq!(c, CachingAllocatorConfig::default());
    assert_eq!(c.max_split_size(), u64::MAX);
    assert_eq!(c.max_non_split_rounding_size(), 20 * MIB);
    assert_eq!(c.roundup_power2_divisions(), &[0; 16]);
    assert_eq!(c.garbage_collection_threshold(), 0.0);
    assert!(!c.expandable_segments());
    assert!(!c.release_lock_on_cudamalloc());
    assert!(!c.pinned_use_cuda_host_register());
    assert_eq!(c.pinned_num_register_threads(), 1);
    assert_eq!(c.backend(), Backend::Native);
}

#[test]
fn every_key() {
    let s =
        "max_split_size_mb:100, max_non_split_rounding_mb:64,garbage_collection_threshold:0.75,\
             roundup_power2_divisions:8,expandable_segments:True,release_lock_on_cudamalloc:True,\
             pinned_use_cuda_host_register:True,pinned_num_register_threads:8,\
             pinned_use_background_threads:True,pinned_reserve_segment_size_mb:16,\
             graph_capture_record_stream_reuse:True,backend:native";
    let c = CachingAllocatorConfig::parse(s).unwrap();
    assert_eq!(c.max_split_size(), 100 * MIB);
    assert_eq!(c.max_non_split_rounding_size(), 64 * MIB);
    assert_eq!(c.garbage_collection_threshold(), 0.75);
    assert_eq!(c.roundup_power2_divisions(), &[8; 16]);
    assert!(c.expandable_segments());
    assert!(c.release_lock_on_cudamalloc());
    assert!(c.pinned_use_cuda_host_register());
    assert_eq!(c.pinned_num_register_threads(), 8);
    assert!(c.pinned_use_background_threads());
    assert_eq!(c.pinned_reserve_segment_size_mb(), 16);
    assert!(c.graph_capture_record_stream_reuse());
    assert_eq!(c.backend(), Backend::Native);
    assert_eq!(c.last_allocator_settings(), s);
    // Aliases, the other backend, last value wins, trailing comma.
    let c = CachingAllocatorConfig::parse(
        "release_lock_on_hipmalloc:True,pinned_use_hip_host_register:False,backend:cudaMallocAsync,\
         expandable_segments:True,expandable_segments:False,",
    )
    .unwrap();
    assert!(c.release_lock_on_cudamalloc());
    assert!(!c.expandable_segments());
    assert_eq!(c.backend(), Backend::CudaMallocAsync);
    // Limits: 20 is allowed; huge values are clamped.
    assert_eq!(
        CachingAllocatorConfig::parse("max_split_size_mb:20")
            .unwrap()
            .max_split_size(),
        20 * MIB
    );
    assert_eq!(
        CachingAllocatorConfig::parse("pinned_num_register_threads:128")
            .unwrap()
            .pinned_num_register_threads(),
        128
    );
}

#[test]
fn divisions_list_form() {
    let c =
        CachingAllocatorConfig::parse("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]").unwrap();
    assert_eq!(
        c.roundup_power2_divisions(),
        &[1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8, 8, 8, 8, 8]
    );
    // The first bound also fills the intervals below it; '>' fills above
    // the last bound only.
    let c =
        CachingAllocatorConfig::parse("roundup_power2_divisions:[64:8,256:4,1024:4,>:1]").unwrap();
    assert_eq!(
        c.roundup_power2_divisions(),
        &[8, 8, 8, 8, 8, 8, 8, 0, 4, 0, 4, 1, 1, 1, 1, 1]
    );
    // Bounds past 32 GiB clamp to the last interval; 0 disables.
    let c = CachingAllocatorConfig::parse("roundup_power2_divisions:[1:2,65536:0]").unwrap();
    assert_eq!(
        c.roundup_power2_divisions(),
        &[2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    );
    let c = CachingAllocatorConfig::parse(
        " roundup_power2_divisions : [ > : 4 ] , max_split_size_mb : 40 ",
    )
    .unwrap();
    assert_eq!(c.roundup_power2_divisions()[0], 0);
    assert_eq!(c.roundup_power2_divisions()[1], 4);
    assert_eq!(c.max_split_size(), 40 * MIB);
}

#[test]
fn every_validation_error() {
    assert_eq!(
        err("max_split_size_mb:19"),
        "CachingAllocator option max_split_size_mb too small, must be >= 20"
    );
    assert_eq!(
        err("max_non_split_rounding_mb:10"),
        "CachingAllocator option max_non_split_rounding_mb too small, must be >= 20"
    );
    for v in ["0", "1", "1.5", "-0.5", "0.0"] {
        assert_eq!(
            err(&format!("garbage_collection_threshold:{v}")),
            "garbage_collect_threshold is invalid, set it in (0.0, 1.0)"
        );
    }
    assert_eq!(
        err("roundup_power2_divisions:3"),
        "For roundups, the divisions has to be power of 2 "
    );
    assert_eq!(
        err("roundup_power2_divisions:0"),
        "For roundups, the divisions has to be power of 2 "
    );
    assert_eq!(
        err("roundup_power2_divisions:[256:3]"),
        "For roundups, the divisions has to be power of 2 or 0 to disable roundup "
    );
    assert_eq!(
        err("roundup_power2_divisions:[300:2]"),
        "For roundups, the intervals have to be power of 2 "
    );
    assert_eq!(
        err("roundup_power2_divisions:[256:2,512:4"),
        "Expected closing bracket ']' in ConfigTokenizer but reached end of config"
    );
    assert_eq!(
        err("roundup_power2_divisions:[256:2,"),
        "Expected closing bracket ']' in ConfigTokenizer but reached end of config"
    );
    assert_eq!(
        err("roundup_power2_divisions:[256:2:512:4]"),
        "Error parsing CachingAllocator settings, expected ,"
    );
    assert_eq!(
        err("foo:1"),
        "Unrecognized key 'foo' in CUDA allocator config."
    );
    assert_eq!(
        err("max_split_size_mb:100,bar:2"),
        "Unrecognized key 'bar' in CUDA allocator config."
    );
    assert_eq!(
        err("max_split_size_mb"),
        "Error parsing CachingAllocator settings, expected :"
    );
    assert_eq!(
        err("max_split_size_mb=100"),
        "Unrecognized key 'max_split_size_mb=100' in CUDA allocator config."
    );
    assert_eq!(
        err("max_split_size_mb:"),
        "Error, expecting max_split_size_mb value"
    );
    assert_eq!(
        err("max_split_size_mb:100:2"),
        "Error parsing CachingAllocator settings, expected ,"
    );
    assert_eq!(
        err("max_split_size_mb:abc"),
        "Error parsing max_split_size_mb value, expected a number but got 'abc'"
    );
    assert_eq!(
        err("expandable_segments:true"),
        "Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'true'"
    );
    assert_eq!(
        err("max_split_size_mb:40,release_lock_on_cudamalloc:1"),
        "Expected 'True' or 'False' at index 6 in ConfigTokenizer but got '1'"
    );
    assert_eq!(
        err("backend:foo"),
        "Unknown allocator backend, options are native and cudaMallocAsync"
    );
    assert_eq!(
        err("pinned_num_register_threads:3"),
        "Number of register threads has to be power of 2, got 3"
    );
    assert_eq!(
        err("pinned_num_register_threads:256"),
        "Number of register threads should be less than or equal to 128, got 256"
    );
    assert_eq!(
        err("pinned_reserve_segment_size_mb:0"),
        "Pinned reserve segment size has to be greater than 0"
    );
    assert!(matches!(
        CachingAllocatorConfig::parse("foo:1"),
        Err(ConfigError::UnknownKey(k)) if k == "foo"
    ));
}

#[test]
fn builder_validates_like_parse() {
    let built = CachingAllocatorConfig::builder()
        .max_split_size_mb(64)
        .max_non_split_rounding_mb(40)
        .garbage_collection_threshold(0.5)
        .roundup_power2_divisions(4)
        .expandable_segments(true)
        .release_lock_on_cudamalloc(true)
        .backend(Backend::Native)
        .build()
        .unwrap();
    let parsed = CachingAllocatorConfig::parse(
        "max_split_size_mb:64,max_non_split_rounding_mb:40,garbage_collection_threshold:0.5,\
         roundup_power2_divisions:4,expandable_segments:True,release_lock_on_cudamalloc:True",
    )
    .unwrap();
    assert_eq!(built.max_split_size(), parsed.max_split_size());
    assert_eq!(
        built.max_non_split_rounding_size(),
        parsed.max_non_split_rounding_size()
    );
    assert_eq!(
        built.garbage_collection_threshold(),
        parsed.garbage_collection_threshold()
    );
    assert_eq!(
        built.roundup_power2_divisions(),
        parsed.roundup_power2_divisions()
    );
    assert_eq!(built.expandable_segments(), parsed.expandable_segments());
    assert_eq!(
        built.release_lock_on_cudamalloc(),
        parsed.release_lock_on_cudamalloc()
    );
    assert_eq!(built.last_allocator_settings(), "");
    let e = CachingAllocatorConfig::builder()
        .max_split_size_mb(5)
        .garbage_collection_threshold(2.0)
        .build()
        .unwrap_err();
    assert_eq!(
        e,
        ConfigError::MaxSplitSizeTooSmall,
        "the first error is kept"
    );
    assert_eq!(
        CachingAllocatorConfig::builder()
            .garbage_collection_threshold(1.0)
            .build()
            .unwrap_err(),
        ConfigError::GarbageCollectionThreshold
    );
    assert_eq!(
        CachingAllocatorConfig::builder()
            .roundup_power2_divisions(6)
            .build()
            .unwrap_err(),
        ConfigError::DivisionsNotPowerOfTwo
    );
    let mut per = [0u64; 16];
    per[3] = 5;
    assert_eq!(
        CachingAllocatorConfig::builder()
            .roundup_power2_divisions_per_interval(per)
            .build()
            .unwrap_err(),
        ConfigError::ListDivisionsNotPowerOfTwo
    );
}

#[test]
fn environment_variables() {
    // The generic variable wins; the CUDA one is the fallback.
    let c = CachingAllocatorConfig::from_env_values(
        Some("max_split_size_mb:30"),
        Some("max_split_size_mb:50"),
    )
    .unwrap();
    assert_eq!(c.max_split_size(), 30 * MIB);
    let c = CachingAllocatorConfig::from_env_values(None, Some("max_split_size_mb:50")).unwrap();
    assert_eq!(c.max_split_size(), 50 * MIB);
    assert_eq!(
        CachingAllocatorConfig::from_env_values(None, None).unwrap(),
        CachingAllocatorConfig::default()
    );
    assert!(CachingAllocatorConfig::from_env_values(Some("nope:1"), None).is_err());
    // from_env reads the real environment (whatever it holds, it parses or
    // reports an error; it must not panic).
    let _ = CachingAllocatorConfig::from_env();
}

#[test]
#[cfg(feature = "snapshot-json")]
fn config_serializes() {
    let c = CachingAllocatorConfig::parse("max_split_size_mb:64,roundup_power2_divisions:[512:2]")
        .unwrap();
    let j = serde_json::to_string(&c).unwrap();
    let back: CachingAllocatorConfig = serde_json::from_str(&j).unwrap();
    assert_eq!(back, c);
}
