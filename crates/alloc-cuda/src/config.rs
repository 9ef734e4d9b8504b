//! [`CachingAllocatorConfig`]: the `PYTORCH_CUDA_ALLOC_CONF` settings.
//!
//! The syntax is PyTorch's: `key:value,key:value`, whitespace ignored, and
//! `roundup_power2_divisions` also takes a list `[256:1,512:2,1024:4,>:8]`
//! (interval lower bounds in MiB, `>` for every larger interval). Parsing
//! follows PyTorch's tokenizer (`,` `:` `[` `]` are tokens) and reports
//! PyTorch's validation messages word for word; see [`ConfigError`].
//!
//! ```
//! use alloc_cuda::CachingAllocatorConfig;
//! let c = CachingAllocatorConfig::parse(
//!     "max_split_size_mb:128, garbage_collection_threshold:0.6,\
//!      roundup_power2_divisions:[256:1,512:2,1024:4,>:8]",
//! )?;
//! assert_eq!(c.max_split_size(), 128 << 20);
//! assert_eq!(c.garbage_collection_threshold(), 0.6);
//! assert_eq!(c.roundup_power2_divisions_for(600 << 20), 2);
//! let e = CachingAllocatorConfig::parse("max_split_size_mb:10").unwrap_err();
//! assert_eq!(e.to_string(), "CachingAllocator option max_split_size_mb too small, must be >= 20");
//! # Ok::<(), alloc_cuda::ConfigError>(())
//! ```

#[cfg(feature = "snapshot-json")]
use serde::{Deserialize, Serialize};

use crate::caching::{LARGE_BUFFER, ROUNDUP_POWER2_INTERVALS};

const MB: u64 = 1 << 20;

/// Largest `pinned_num_register_threads` (PyTorch's
/// `pinned_max_register_threads()`).
pub const PINNED_MAX_REGISTER_THREADS: u64 = 128;

/// Which allocator backend the configuration asks for (`backend:`).
///
/// This crate implements `native`; `cudaMallocAsync` is recorded so that a
/// caller can choose another backend, and the caching allocator ignores it.
///
/// ```
/// use alloc_cuda::{Backend, CachingAllocatorConfig};
/// assert_eq!(CachingAllocatorConfig::default().backend(), Backend::Native);
/// let c = CachingAllocatorConfig::parse("backend:cudaMallocAsync")?;
/// assert_eq!(c.backend(), Backend::CudaMallocAsync);
/// # Ok::<(), alloc_cuda::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "snapshot-json", derive(Serialize, Deserialize))]
pub enum Backend {
    /// PyTorch's caching allocator (this crate).
    #[default]
    Native,
    /// The driver's stream-ordered allocator (`cudaMallocAsync`).
    CudaMallocAsync,
}

/// A configuration error, with PyTorch's message as its `Display`.
///
/// Messages follow PyTorch's 2025 device-generic `AcceleratorAllocatorConfig`
/// and `CUDAAllocatorConfig` (`c10/core/AllocatorConfig.{h,cpp}`,
/// `c10/cuda/CUDAAllocatorConfig.cpp`). Where that code has no message of
/// its own (a missing separator, a missing value: there PyTorch trips an
/// internal assertion) the earlier `CUDAAllocatorConfig` messages are used,
/// and [`ConfigError::InvalidNumber`] is ours (PyTorch lets `std::stoull`
/// throw).
///
/// ```
/// use alloc_cuda::{CachingAllocatorConfig, ConfigError};
/// let e = CachingAllocatorConfig::parse("expandable_segments:yes").unwrap_err();
/// assert!(matches!(e, ConfigError::InvalidBool { .. }));
/// let e = CachingAllocatorConfig::parse("no_such_key:1").unwrap_err();
/// assert_eq!(e, ConfigError::UnknownKey("no_such_key".into()));
/// assert_eq!(e.to_string(), "Unrecognized key 'no_such_key' in CUDA allocator config.");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A key that no allocator knows.
    #[error("Unrecognized key '{0}' in CUDA allocator config.")]
    UnknownKey(String),
    /// A `:` or `,` was expected and something else (or nothing) was found.
    #[error("Error parsing CachingAllocator settings, expected {0}")]
    ExpectedToken(char),
    /// A key with `:` but no value.
    #[error("Error, expecting {0} value")]
    MissingValue(String),
    /// A value that should be a number is not one (our message).
    #[error("Error parsing {key} value, expected a number but got '{value}'")]
    InvalidNumber {
        /// The key being parsed.
        key: String,
        /// The offending token.
        value: String,
    },
    /// A boolean value other than `True`/`False` (`index` is the token
    /// index, as in PyTorch's `ConfigTokenizer::toBool`).
    #[error("Expected 'True' or 'False' at index {index} in ConfigTokenizer but got '{value}'")]
    InvalidBool {
        /// Index of the token in the tokenized string.
        index: usize,
        /// The offending token.
        value: String,
    },
    /// `max_split_size_mb` below 20.
    #[error("CachingAllocator option max_split_size_mb too small, must be >= 20")]
    MaxSplitSizeTooSmall,
    /// `max_non_split_rounding_mb` below 20.
    #[error("CachingAllocator option max_non_split_rounding_mb too small, must be >= 20")]
    MaxNonSplitRoundingTooSmall,
    /// `garbage_collection_threshold` not in (0, 1).
    #[error("garbage_collect_threshold is invalid, set it in (0.0, 1.0)")]
    GarbageCollectionThreshold,
    /// The single-number form of `roundup_power2_divisions` is not a power
    /// of two (the trailing space is PyTorch's).
    #[error("For roundups, the divisions has to be power of 2 ")]
    DivisionsNotPowerOfTwo,
    /// A division count in the list form is neither 0 nor a power of two.
    #[error("For roundups, the divisions has to be power of 2 or 0 to disable roundup ")]
    ListDivisionsNotPowerOfTwo,
    /// An interval bound in the list form is not a power of two.
    #[error("For roundups, the intervals have to be power of 2 ")]
    IntervalNotPowerOfTwo,
    /// A `[` list without its `]`.
    #[error("Expected closing bracket ']' in ConfigTokenizer but reached end of config")]
    UnclosedList,
    /// `backend` other than `native`/`cudaMallocAsync`.
    #[error("Unknown allocator backend, options are native and cudaMallocAsync")]
    UnknownBackend,
    /// `pinned_num_register_threads` not a power of two.
    #[error("Number of register threads has to be power of 2, got {0}")]
    RegisterThreadsNotPowerOfTwo(u64),
    /// `pinned_num_register_threads` above 128.
    #[error("Number of register threads should be less than or equal to 128, got {0}")]
    TooManyRegisterThreads(u64),
    /// `pinned_reserve_segment_size_mb` of 0.
    #[error("Pinned reserve segment size has to be greater than 0")]
    PinnedReserveSegmentSize,
}

/// The caching allocator's settings (PyTorch's `CUDAAllocatorConfig`).
///
/// Build one with [`CachingAllocatorConfig::parse`] (the
/// `PYTORCH_CUDA_ALLOC_CONF` syntax), [`CachingAllocatorConfig::from_env`],
/// or [`CachingAllocatorConfig::builder`]; the default is PyTorch's default
/// (no `max_split_size`, 20 MiB non-split rounding, plain 512-byte rounding,
/// no garbage collection, no expandable segments).
///
/// ```
/// use alloc_cuda::CachingAllocatorConfig;
/// let c = CachingAllocatorConfig::builder()
///     .max_split_size_mb(64)
///     .expandable_segments(true)
///     .build()?;
/// assert_eq!(c.max_split_size(), 64 << 20);
/// assert!(c.expandable_segments());
/// # Ok::<(), alloc_cuda::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "snapshot-json", derive(Serialize, Deserialize))]
pub struct CachingAllocatorConfig {
    max_split_size: u64,
    max_non_split_rounding_size: u64,
    roundup_power2_divisions: [u64; ROUNDUP_POWER2_INTERVALS],
    garbage_collection_threshold: f64,
    expandable_segments: bool,
    release_lock_on_cudamalloc: bool,
    pinned_use_cuda_host_register: bool,
    pinned_num_register_threads: u64,
    pinned_use_background_threads: bool,
    pinned_reserve_segment_size_mb: u64,
    graph_capture_record_stream_reuse: bool,
    backend: Backend,
    last_allocator_settings: String,
}

impl Default for CachingAllocatorConfig {
    fn default() -> Self {
        CachingAllocatorConfig {
            max_split_size: u64::MAX,
            max_non_split_rounding_size: LARGE_BUFFER,
            roundup_power2_divisions: [0; ROUNDUP_POWER2_INTERVALS],
            garbage_collection_threshold: 0.0,
            expandable_segments: false,
            release_lock_on_cudamalloc: false,
            pinned_use_cuda_host_register: false,
            pinned_num_register_threads: 1,
            pinned_use_background_threads: false,
            pinned_reserve_segment_size_mb: 0,
            graph_capture_record_stream_reuse: false,
            backend: Backend::Native,
            last_allocator_settings: String::new(),
        }
    }
}

/// PyTorch's `ConfigTokenizer`: `,` `:` `[` `]` are tokens, whitespace is
/// dropped, everything else accumulates into words.
fn tokenize(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut buf = String::new();
    for ch in s.chars() {
        if matches!(ch, ',' | ':' | '[' | ']') {
            if !buf.is_empty() {
                out.push(std::mem::take(&mut buf));
            }
            out.push(ch.to_string());
        } else if !ch.is_whitespace() {
            buf.push(ch);
        }
    }
    if !buf.is_empty() {
        out.push(buf);
    }
    out
}

struct Tokens<'a> {
    t: &'a [String],
}

impl Tokens<'_> {
    fn is(&self, i: usize, s: &str) -> bool {
        self.t.get(i).is_some_and(|x| x == s)
    }

    fn sep(&self, i: usize, c: char) -> Result<(), ConfigError> {
        let mut b = [0u8; 4];
        if self.is(i, c.encode_utf8(&mut b)) {
            Ok(())
        } else {
            Err(ConfigError::ExpectedToken(c))
        }
    }

    fn value(&self, i: usize, key: &str) -> Result<&str, ConfigError> {
        match self.t.get(i) {
            Some(v) if !matches!(v.as_str(), "," | ":" | "[" | "]") || v == "[" => Ok(v),
            _ => Err(ConfigError::MissingValue(key.to_owned())),
        }
    }

    fn size(&self, i: usize, key: &str) -> Result<u64, ConfigError> {
        let v = self.value(i, key)?;
        v.parse::<u64>().map_err(|_| ConfigError::InvalidNumber {
            key: key.to_owned(),
            value: v.to_owned(),
        })
    }

    fn float(&self, i: usize, key: &str) -> Result<f64, ConfigError> {
        let v = self.value(i, key)?;
        v.parse::<f64>().map_err(|_| ConfigError::InvalidNumber {
            key: key.to_owned(),
            value: v.to_owned(),
        })
    }

    fn boolean(&self, i: usize, key: &str) -> Result<bool, ConfigError> {
        match self.value(i, key)? {
            "True" => Ok(true),
            "False" => Ok(false),
            other => Err(ConfigError::InvalidBool {
                index: i,
                value: other.to_owned(),
            }),
        }
    }
}

fn is_pow2(v: u64) -> bool {
    v != 0 && v.is_power_of_two()
}

impl CachingAllocatorConfig {
    /// A builder starting from the defaults.
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// let c = CachingAllocatorConfig::builder().expandable_segments(true).build()?;
    /// assert!(c.expandable_segments());
    /// assert_eq!(c.max_split_size(), u64::MAX); // everything else is the default
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn builder() -> CachingAllocatorConfigBuilder {
        CachingAllocatorConfigBuilder {
            config: CachingAllocatorConfig::default(),
            error: None,
        }
    }

    /// Parses a `PYTORCH_CUDA_ALLOC_CONF` string (see the [module
    /// docs](crate::config)). The empty string gives the defaults.
    ///
    /// Keys: `max_split_size_mb`, `max_non_split_rounding_mb`,
    /// `roundup_power2_divisions`, `garbage_collection_threshold`,
    /// `expandable_segments`, `release_lock_on_cudamalloc` (or `..._hipmalloc`),
    /// `pinned_use_cuda_host_register` (or `..._hip_...`),
    /// `pinned_num_register_threads`, `pinned_use_background_threads`,
    /// `pinned_reserve_segment_size_mb`, `graph_capture_record_stream_reuse`,
    /// `backend`. A key given twice keeps its last value.
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// let c = CachingAllocatorConfig::parse("max_split_size_mb:64, max_split_size_mb:32")?;
    /// assert_eq!(c.max_split_size(), 32 << 20); // the last value wins
    /// assert_eq!(CachingAllocatorConfig::parse("")?, CachingAllocatorConfig::default());
    /// assert!(CachingAllocatorConfig::parse("max_split_size_mb").is_err());
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn parse(s: &str) -> Result<CachingAllocatorConfig, ConfigError> {
        let mut c = CachingAllocatorConfig {
            last_allocator_settings: s.to_owned(),
            ..CachingAllocatorConfig::default()
        };
        let toks = tokenize(s);
        let t = Tokens { t: &toks };
        let mut native_option = false;
        let mut i = 0;
        while i < toks.len() {
            let (last, native) = c.set_option(&t, toks[i].as_str(), i)?;
            native_option |= native;
            i = last;
            if i + 1 < toks.len() {
                t.sep(i + 1, ',')?;
                i += 1;
            }
            i += 1;
        }
        if c.backend == Backend::CudaMallocAsync && native_option {
            tracing::warn!(
                target: "alloc_cuda",
                "backend:cudaMallocAsync ignores max_split_size_mb,roundup_power2_divisions, and garbage_collect_threshold."
            );
        }
        Ok(c)
    }

    /// Applies the option `key` (token `i`) whose value follows its `:`;
    /// returns the index of the value's last token and whether the option
    /// is one the native allocator alone reads.
    fn set_option(
        &mut self,
        t: &Tokens<'_>,
        key: &str,
        i: usize,
    ) -> Result<(usize, bool), ConfigError> {
        // The value's first token, after checking the `:` (an unknown key
        // is reported as such first).
        let value = || -> Result<usize, ConfigError> {
            t.sep(i + 1, ':')?;
            Ok(i + 2)
        };
        if let Some(flag) = self.flag_option(key) {
            let i = value()?;
            *flag = t.boolean(i, key)?;
            return Ok((i, true));
        }
        match key {
            "max_split_size_mb" => {
                let i = value()?;
                let v = t.size(i, key)?;
                if v < LARGE_BUFFER / MB {
                    return Err(ConfigError::MaxSplitSizeTooSmall);
                }
                self.max_split_size = v.min(u64::MAX / MB) * MB;
                Ok((i, true))
            }
            "max_non_split_rounding_mb" => {
                let i = value()?;
                let v = t.size(i, key)?;
                if v < LARGE_BUFFER / MB {
                    return Err(ConfigError::MaxNonSplitRoundingTooSmall);
                }
                self.max_non_split_rounding_size = v.min(u64::MAX / MB) * MB;
                Ok((i, true))
            }
            "garbage_collection_threshold" => {
                let i = value()?;
                let v = t.float(i, key)?;
                if !(v > 0.0 && v < 1.0) {
                    return Err(ConfigError::GarbageCollectionThreshold);
                }
                self.garbage_collection_threshold = v;
                Ok((i, true))
            }
            "roundup_power2_divisions" => {
                let i = self.parse_divisions(t, value()?)?;
                Ok((i, true))
            }
            "pinned_num_register_threads" => {
                let i = value()?;
                let v = t.size(i, key)?;
                if !is_pow2(v) {
                    return Err(ConfigError::RegisterThreadsNotPowerOfTwo(v));
                }
                if v > PINNED_MAX_REGISTER_THREADS {
                    return Err(ConfigError::TooManyRegisterThreads(v));
                }
                self.pinned_num_register_threads = v;
                Ok((i, true))
            }
            "pinned_reserve_segment_size_mb" => {
                let i = value()?;
                let v = t.size(i, key)?;
                if v == 0 {
                    return Err(ConfigError::PinnedReserveSegmentSize);
                }
                self.pinned_reserve_segment_size_mb = v;
                Ok((i, true))
            }
            "backend" => {
                let i = value()?;
                self.backend = match t.value(i, key)? {
                    "native" => Backend::Native,
                    "cudaMallocAsync" => Backend::CudaMallocAsync,
                    _ => return Err(ConfigError::UnknownBackend),
                };
                Ok((i, false))
            }
            other => Err(ConfigError::UnknownKey(other.to_owned())),
        }
    }

    /// The boolean option named `key`, if it is one.
    fn flag_option(&mut self, key: &str) -> Option<&mut bool> {
        match key {
            "expandable_segments" => Some(&mut self.expandable_segments),
            "release_lock_on_cudamalloc" | "release_lock_on_hipmalloc" => {
                Some(&mut self.release_lock_on_cudamalloc)
            }
            "pinned_use_cuda_host_register" | "pinned_use_hip_host_register" => {
                Some(&mut self.pinned_use_cuda_host_register)
            }
            "pinned_use_background_threads" => Some(&mut self.pinned_use_background_threads),
            "graph_capture_record_stream_reuse" => {
                Some(&mut self.graph_capture_record_stream_reuse)
            }
            _ => None,
        }
    }

    /// Parses `roundup_power2_divisions`' value starting at token `i`;
    /// returns the index of its last token.
    fn parse_divisions(&mut self, t: &Tokens<'_>, mut i: usize) -> Result<usize, ConfigError> {
        const KEY: &str = "roundup_power2_divisions";
        let first = t.value(i, KEY)?;
        if first != "[" {
            let v = t.size(i, KEY)?;
            if !is_pow2(v) {
                return Err(ConfigError::DivisionsNotPowerOfTwo);
            }
            self.roundup_power2_divisions = [v; ROUNDUP_POWER2_INTERVALS];
            return Ok(i);
        }
        let mut first_value = true;
        let mut last_index = 0usize;
        loop {
            i += 1;
            if i >= t.t.len() {
                return Err(ConfigError::UnclosedList);
            }
            if t.is(i, "]") {
                return Ok(i);
            }
            let bound_index = i;
            t.sep(i + 1, ':')?;
            i += 2;
            let value = t.size(i, KEY)?;
            if value != 0 && !value.is_power_of_two() {
                return Err(ConfigError::ListDivisionsNotPowerOfTwo);
            }
            if t.is(bound_index, ">") {
                for d in self
                    .roundup_power2_divisions
                    .iter_mut()
                    .skip(last_index + 1)
                {
                    *d = value;
                }
            } else {
                let bound = t.size(bound_index, KEY)?;
                if !is_pow2(bound) {
                    return Err(ConfigError::IntervalNotPowerOfTwo);
                }
                let index = (bound.ilog2() as usize).min(ROUNDUP_POWER2_INTERVALS - 1);
                if first_value {
                    for d in &mut self.roundup_power2_divisions[..index] {
                        *d = value;
                    }
                    first_value = false;
                }
                self.roundup_power2_divisions[index] = value;
                last_index = index;
            }
            if !t.is(i + 1, "]") {
                if i + 1 >= t.t.len() {
                    return Err(ConfigError::UnclosedList);
                }
                t.sep(i + 1, ',')?;
                i += 1;
            }
        }
    }

    /// Reads `PYTORCH_ALLOC_CONF`, or, when it is unset, the older
    /// `PYTORCH_CUDA_ALLOC_CONF` (PyTorch 2.9+ gives the generic variable
    /// priority and treats the CUDA one as a deprecated alias). Neither set
    /// gives the defaults.
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// // With neither variable set this is the default configuration.
    /// let c = CachingAllocatorConfig::from_env()?;
    /// assert!(c.max_split_size() >= 20 << 20);
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn from_env() -> Result<CachingAllocatorConfig, ConfigError> {
        let generic = std::env::var("PYTORCH_ALLOC_CONF").ok();
        let cuda = std::env::var("PYTORCH_CUDA_ALLOC_CONF").ok();
        Self::from_env_values(generic.as_deref(), cuda.as_deref())
    }

    /// [`CachingAllocatorConfig::from_env`] with the two variables' values
    /// passed in (`PYTORCH_ALLOC_CONF`, then `PYTORCH_CUDA_ALLOC_CONF`), for
    /// callers and tests that do not want to touch the environment.
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// let c = CachingAllocatorConfig::from_env_values(Some("max_split_size_mb:40"), Some("max_split_size_mb:80"))?;
    /// assert_eq!(c.max_split_size(), 40 << 20); // PYTORCH_ALLOC_CONF wins
    /// let c = CachingAllocatorConfig::from_env_values(None, Some("expandable_segments:True"))?;
    /// assert!(c.expandable_segments());
    /// assert_eq!(CachingAllocatorConfig::from_env_values(None, None)?, CachingAllocatorConfig::default());
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn from_env_values(
        pytorch_alloc_conf: Option<&str>,
        pytorch_cuda_alloc_conf: Option<&str>,
    ) -> Result<CachingAllocatorConfig, ConfigError> {
        match (pytorch_alloc_conf, pytorch_cuda_alloc_conf) {
            (Some(s), _) => Self::parse(s),
            (None, Some(s)) => {
                tracing::warn!(
                    target: "alloc_cuda",
                    "PYTORCH_CUDA_ALLOC_CONF is deprecated, use PYTORCH_ALLOC_CONF instead"
                );
                Self::parse(s)
            }
            (None, None) => Ok(CachingAllocatorConfig::default()),
        }
    }

    /// Blocks of at least this many bytes are "oversize": never split, and
    /// reused only by requests within [`max_non_split_rounding_size`]
    /// (`u64::MAX` = unlimited, the default).
    ///
    /// [`max_non_split_rounding_size`]: CachingAllocatorConfig::max_non_split_rounding_size
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// assert_eq!(CachingAllocatorConfig::default().max_split_size(), u64::MAX);
    /// let c = CachingAllocatorConfig::parse("max_split_size_mb:256")?;
    /// assert_eq!(c.max_split_size(), 256 << 20);
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn max_split_size(&self) -> u64 {
        self.max_split_size
    }

    /// How much larger than the request a reused oversize block may be
    /// (default 20 MiB).
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// assert_eq!(CachingAllocatorConfig::default().max_non_split_rounding_size(), 20 << 20);
    /// let c = CachingAllocatorConfig::parse("max_non_split_rounding_mb:64")?;
    /// assert_eq!(c.max_non_split_rounding_size(), 64 << 20);
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn max_non_split_rounding_size(&self) -> u64 {
        self.max_non_split_rounding_size
    }

    /// The 16 division counts of `roundup_power2_divisions`, one per
    /// power-of-two interval from 1 MiB (index 0 also covers smaller sizes)
    /// to 32 GiB and above (index 15). 0 or 1 = plain 512-byte rounding.
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// let c = CachingAllocatorConfig::parse("roundup_power2_divisions:[256:1,512:2,>:8]")?;
    /// let d = c.roundup_power2_divisions();
    /// assert_eq!((d[0], d[8], d[9], d[10], d[15]), (1, 1, 2, 8, 8));
    /// assert_eq!(CachingAllocatorConfig::default().roundup_power2_divisions(), &[0; 16]);
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn roundup_power2_divisions(&self) -> &[u64; ROUNDUP_POWER2_INTERVALS] {
        &self.roundup_power2_divisions
    }

    /// The division count that applies to a request of `size` bytes
    /// (PyTorch's `roundup_power2_divisions(size)`): interval index
    /// `floor(log2(size)) - 20`, clamped to `0..=15`.
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// let c = CachingAllocatorConfig::parse("roundup_power2_divisions:[256:1,512:2,>:8]")?;
    /// assert_eq!(c.roundup_power2_divisions_for(1000), 1); // below 1 MiB: index 0
    /// assert_eq!(c.roundup_power2_divisions_for(600 << 20), 2); // [512, 1024) MiB
    /// assert_eq!(c.roundup_power2_divisions_for(4 << 30), 8);
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn roundup_power2_divisions_for(&self, size: u64) -> u64 {
        let log = if size == 0 { 0 } else { size.ilog2() as usize };
        let index = log.saturating_sub(20).min(ROUNDUP_POWER2_INTERVALS - 1);
        self.roundup_power2_divisions[index]
    }

    /// The garbage-collection threshold in (0, 1), or 0 when off. It only
    /// acts when a memory fraction is set.
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// assert_eq!(CachingAllocatorConfig::default().garbage_collection_threshold(), 0.0);
    /// let c = CachingAllocatorConfig::parse("garbage_collection_threshold:0.8")?;
    /// assert_eq!(c.garbage_collection_threshold(), 0.8);
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn garbage_collection_threshold(&self) -> f64 {
        self.garbage_collection_threshold
    }

    /// Whether expandable segments are requested.
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// assert!(!CachingAllocatorConfig::default().expandable_segments());
    /// let c = CachingAllocatorConfig::parse("expandable_segments:True")?;
    /// assert!(c.expandable_segments());
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn expandable_segments(&self) -> bool {
        self.expandable_segments
    }

    /// Whether the allocator lock is released around the device `malloc`.
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// let c = CachingAllocatorConfig::parse("release_lock_on_cudamalloc:True")?;
    /// assert!(c.release_lock_on_cudamalloc());
    /// assert!(!CachingAllocatorConfig::default().release_lock_on_cudamalloc());
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn release_lock_on_cudamalloc(&self) -> bool {
        self.release_lock_on_cudamalloc
    }

    /// Pinned host allocator: `malloc` + `cudaHostRegister` instead of
    /// `cudaHostAlloc` (recorded only; this crate has no host allocator).
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// let c = CachingAllocatorConfig::parse("pinned_use_cuda_host_register:True")?;
    /// assert!(c.pinned_use_cuda_host_register());
    /// assert!(!CachingAllocatorConfig::default().pinned_use_cuda_host_register());
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn pinned_use_cuda_host_register(&self) -> bool {
        self.pinned_use_cuda_host_register
    }

    /// Pinned host allocator: threads used to register memory (recorded only).
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// assert_eq!(CachingAllocatorConfig::default().pinned_num_register_threads(), 1);
    /// let c = CachingAllocatorConfig::parse("pinned_num_register_threads:8")?;
    /// assert_eq!(c.pinned_num_register_threads(), 8);
    /// assert!(CachingAllocatorConfig::parse("pinned_num_register_threads:6").is_err());
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn pinned_num_register_threads(&self) -> u64 {
        self.pinned_num_register_threads
    }

    /// Pinned host allocator: background event processing (recorded only).
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// let c = CachingAllocatorConfig::parse("pinned_use_background_threads:True")?;
    /// assert!(c.pinned_use_background_threads());
    /// assert!(!CachingAllocatorConfig::default().pinned_use_background_threads());
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn pinned_use_background_threads(&self) -> bool {
        self.pinned_use_background_threads
    }

    /// Pinned host allocator: reserved segment size in MiB, 0 = none
    /// (recorded only).
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// assert_eq!(CachingAllocatorConfig::default().pinned_reserve_segment_size_mb(), 0);
    /// let c = CachingAllocatorConfig::parse("pinned_reserve_segment_size_mb:16")?;
    /// assert_eq!(c.pinned_reserve_segment_size_mb(), 16);
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn pinned_reserve_segment_size_mb(&self) -> u64 {
        self.pinned_reserve_segment_size_mb
    }

    /// CUDA graphs: reuse record_stream'd blocks during capture (recorded
    /// only; this crate has no graph capture).
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// let c = CachingAllocatorConfig::parse("graph_capture_record_stream_reuse:True")?;
    /// assert!(c.graph_capture_record_stream_reuse());
    /// assert!(!CachingAllocatorConfig::default().graph_capture_record_stream_reuse());
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn graph_capture_record_stream_reuse(&self) -> bool {
        self.graph_capture_record_stream_reuse
    }

    /// The requested backend.
    ///
    /// ```
    /// use alloc_cuda::{Backend, CachingAllocatorConfig};
    /// assert_eq!(CachingAllocatorConfig::parse("backend:native")?.backend(), Backend::Native);
    /// let c = CachingAllocatorConfig::parse("backend:cudaMallocAsync")?;
    /// assert_eq!(c.backend(), Backend::CudaMallocAsync);
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The string this configuration was parsed from (empty otherwise),
    /// PyTorch's `last_allocator_settings`.
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// let c = CachingAllocatorConfig::parse("max_split_size_mb:64")?;
    /// assert_eq!(c.last_allocator_settings(), "max_split_size_mb:64");
    /// assert_eq!(CachingAllocatorConfig::builder().build()?.last_allocator_settings(), "");
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn last_allocator_settings(&self) -> &str {
        &self.last_allocator_settings
    }
}

/// Builder for [`CachingAllocatorConfig`] with the same validation as
/// [`CachingAllocatorConfig::parse`] (the first error is reported by
/// [`build`](CachingAllocatorConfigBuilder::build)).
///
/// ```
/// use alloc_cuda::{CachingAllocatorConfig, ConfigError};
/// let c = CachingAllocatorConfig::builder().max_split_size_mb(64).garbage_collection_threshold(0.7).build()?;
/// assert_eq!(c.max_split_size(), 64 << 20);
/// // Invalid values are reported by `build`, the first one wins.
/// let e = CachingAllocatorConfig::builder().max_split_size_mb(1).roundup_power2_divisions(3).build();
/// assert_eq!(e, Err(ConfigError::MaxSplitSizeTooSmall));
/// # Ok::<(), ConfigError>(())
/// ```
#[derive(Debug, Clone)]
#[must_use = "call build() to get the configuration"]
pub struct CachingAllocatorConfigBuilder {
    config: CachingAllocatorConfig,
    error: Option<ConfigError>,
}

impl CachingAllocatorConfigBuilder {
    fn fail(mut self, e: ConfigError) -> Self {
        if self.error.is_none() {
            self.error = Some(e);
        }
        self
    }

    /// `max_split_size_mb` (≥ 20).
    ///
    /// ```
    /// use alloc_cuda::{CachingAllocatorConfig, ConfigError};
    /// let c = CachingAllocatorConfig::builder().max_split_size_mb(128).build()?;
    /// assert_eq!(c.max_split_size(), 128 << 20);
    /// let e = CachingAllocatorConfig::builder().max_split_size_mb(10).build();
    /// assert_eq!(e, Err(ConfigError::MaxSplitSizeTooSmall));
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn max_split_size_mb(mut self, mb: u64) -> Self {
        if mb < LARGE_BUFFER / MB {
            return self.fail(ConfigError::MaxSplitSizeTooSmall);
        }
        self.config.max_split_size = mb.min(u64::MAX / MB) * MB;
        self
    }

    /// `max_non_split_rounding_mb` (≥ 20).
    ///
    /// ```
    /// use alloc_cuda::{CachingAllocatorConfig, ConfigError};
    /// let c = CachingAllocatorConfig::builder().max_non_split_rounding_mb(40).build()?;
    /// assert_eq!(c.max_non_split_rounding_size(), 40 << 20);
    /// let e = CachingAllocatorConfig::builder().max_non_split_rounding_mb(0).build();
    /// assert_eq!(e, Err(ConfigError::MaxNonSplitRoundingTooSmall));
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn max_non_split_rounding_mb(mut self, mb: u64) -> Self {
        if mb < LARGE_BUFFER / MB {
            return self.fail(ConfigError::MaxNonSplitRoundingTooSmall);
        }
        self.config.max_non_split_rounding_size = mb.min(u64::MAX / MB) * MB;
        self
    }

    /// `roundup_power2_divisions` as one number for every interval (a
    /// power of two).
    ///
    /// ```
    /// use alloc_cuda::{CachingAllocatorConfig, ConfigError};
    /// let c = CachingAllocatorConfig::builder().roundup_power2_divisions(4).build()?;
    /// assert_eq!(c.roundup_power2_divisions(), &[4; 16]);
    /// let e = CachingAllocatorConfig::builder().roundup_power2_divisions(3).build();
    /// assert_eq!(e, Err(ConfigError::DivisionsNotPowerOfTwo));
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn roundup_power2_divisions(mut self, divisions: u64) -> Self {
        if !is_pow2(divisions) {
            return self.fail(ConfigError::DivisionsNotPowerOfTwo);
        }
        self.config.roundup_power2_divisions = [divisions; ROUNDUP_POWER2_INTERVALS];
        self
    }

    /// `roundup_power2_divisions` per interval (each 0 or a power of two).
    ///
    /// ```
    /// use alloc_cuda::{CachingAllocatorConfig, ConfigError};
    /// let mut d = [0; 16];
    /// d[1] = 4; // requests of [2, 4) MiB
    /// let c = CachingAllocatorConfig::builder().roundup_power2_divisions_per_interval(d).build()?;
    /// assert_eq!(c.roundup_power2_divisions_for(3 << 20), 4);
    /// assert_eq!(c.roundup_power2_divisions_for(8 << 20), 0);
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn roundup_power2_divisions_per_interval(
        mut self,
        divisions: [u64; ROUNDUP_POWER2_INTERVALS],
    ) -> Self {
        if divisions.iter().any(|&d| d != 0 && !d.is_power_of_two()) {
            return self.fail(ConfigError::ListDivisionsNotPowerOfTwo);
        }
        self.config.roundup_power2_divisions = divisions;
        self
    }

    /// `garbage_collection_threshold` in (0, 1).
    ///
    /// ```
    /// use alloc_cuda::{CachingAllocatorConfig, ConfigError};
    /// let c = CachingAllocatorConfig::builder().garbage_collection_threshold(0.6).build()?;
    /// assert_eq!(c.garbage_collection_threshold(), 0.6);
    /// let e = CachingAllocatorConfig::builder().garbage_collection_threshold(1.0).build();
    /// assert_eq!(e, Err(ConfigError::GarbageCollectionThreshold));
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn garbage_collection_threshold(mut self, threshold: f64) -> Self {
        if !(threshold > 0.0 && threshold < 1.0) {
            return self.fail(ConfigError::GarbageCollectionThreshold);
        }
        self.config.garbage_collection_threshold = threshold;
        self
    }

    /// `expandable_segments`.
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// let c = CachingAllocatorConfig::builder().expandable_segments(true).build()?;
    /// assert!(c.expandable_segments());
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn expandable_segments(mut self, on: bool) -> Self {
        self.config.expandable_segments = on;
        self
    }

    /// `release_lock_on_cudamalloc`.
    ///
    /// ```
    /// use alloc_cuda::CachingAllocatorConfig;
    /// let c = CachingAllocatorConfig::builder().release_lock_on_cudamalloc(true).build()?;
    /// assert!(c.release_lock_on_cudamalloc());
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn release_lock_on_cudamalloc(mut self, on: bool) -> Self {
        self.config.release_lock_on_cudamalloc = on;
        self
    }

    /// `backend`.
    ///
    /// ```
    /// use alloc_cuda::{Backend, CachingAllocatorConfig};
    /// let c = CachingAllocatorConfig::builder().backend(Backend::CudaMallocAsync).build()?;
    /// assert_eq!(c.backend(), Backend::CudaMallocAsync);
    /// # Ok::<(), alloc_cuda::ConfigError>(())
    /// ```
    pub fn backend(mut self, backend: Backend) -> Self {
        self.config.backend = backend;
        self
    }

    /// The configuration, or the first validation error.
    ///
    /// ```
    /// use alloc_cuda::{CachingAllocatorConfig, ConfigError};
    /// let c = CachingAllocatorConfig::builder().build()?;
    /// assert_eq!(c, CachingAllocatorConfig::default());
    /// let e = CachingAllocatorConfig::builder().garbage_collection_threshold(0.0).build();
    /// assert_eq!(e.unwrap_err().to_string(), "garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn build(self) -> Result<CachingAllocatorConfig, ConfigError> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.config),
        }
    }
}
