//! The error type of this crate.

use std::path::PathBuf;

/// Why a checkpoint could not be loaded or saved. Every variant says what
/// was wrong, with the values involved.
///
/// ```
/// use torchcore_pt::{load_from_reader, PtError};
/// let err = load_from_reader(std::io::Cursor::new(b"not a checkpoint".to_vec())).unwrap_err();
/// assert!(matches!(err, PtError::NotACheckpoint { .. }));
/// assert!(err.to_string().contains("not a PyTorch checkpoint"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PtError {
    /// An I/O error reading or writing the file.
    #[error("I/O error on {what}: {source}")]
    Io {
        /// What was being read or written.
        what: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The ZIP container is damaged (truncated, bad directory, wrong CRC).
    #[error("damaged checkpoint archive: {0}")]
    Zip(String),
    /// The input is not a checkpoint in a format this crate reads.
    #[error("not a PyTorch checkpoint: {reason}")]
    NotACheckpoint {
        /// What the first bytes looked like.
        reason: String,
    },
    /// The file is in the tar format of PyTorch before 0.4, which is
    /// refused. (The later legacy format, pre-1.6 and non-ZIP, is read.)
    #[error(
        "this checkpoint is in PyTorch's legacy tar format (before 0.4), which torchcore \
         does not read; load it with torch and save it again with torch.save (the ZIP format)"
    )]
    LegacyFormat,
    /// A memory-mapped load was asked of a legacy (pre-1.6, non-ZIP)
    /// checkpoint, whose records are not aligned for mapping.
    #[error(
        "mmap can only be used with files saved in the ZIP format (torch.save's default since \
         1.6); this checkpoint is in the legacy (pre-1.6, non-ZIP) format: load it without mmap, \
         or save it again with torch.save"
    )]
    LegacyMmap,
    /// The archive's records are not laid out as torch writes them.
    #[error("malformed checkpoint archive: {0}")]
    Archive(String),
    /// The pickle is malformed (bad opcode, truncated, stack misuse).
    #[error("malformed pickle at byte {pos}: {msg}")]
    Pickle {
        /// Offset in the pickle of the offending opcode.
        pos: usize,
        /// What was wrong.
        msg: String,
    },
    /// The unpickled value is unacceptable as a whole (nested too deeply,
    /// self-referencing, or expanding far beyond the pickle's size).
    #[error("malformed pickle: {0}")]
    PickleValue(String),
    /// The pickle names a global outside the weights-only allowlist.
    #[error("{}", unsupported_global_message(module, name))]
    UnsupportedGlobal {
        /// The module.
        module: String,
        /// The name within the module.
        name: String,
    },
    /// A storage or tensor in the pickle is inconsistent with its record or
    /// with itself.
    #[error("invalid tensor data: {0}")]
    Tensor(String),
    /// A storage lives on a device this build cannot load it on.
    #[error("{}", location_message(key, location))]
    Location {
        /// The storage key.
        key: String,
        /// The location tag from the file.
        location: String,
    },
    /// A value cannot be saved.
    #[error("cannot save: {0}")]
    Save(String),
    /// A tensor operation failed.
    #[error(transparent)]
    Core(#[from] c10_core::TensorError),
    /// A storage operation failed.
    #[error(transparent)]
    Storage(#[from] c10_storage::StorageError),
    /// Mapping the file failed.
    #[error(transparent)]
    Mmap(#[from] alloc_cpu::mmap::MmapError),
}

impl PtError {
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> PtError {
        PtError::Io {
            what: what.into(),
            source,
        }
    }

    pub(crate) fn io_path(path: &std::path::Path, source: std::io::Error) -> PtError {
        PtError::io(PathBuf::from(path).display().to_string(), source)
    }
}

/// This crate's result type.
pub type Result<T, E = PtError> = std::result::Result<T, E>;

/// torch's wording for a CUDA storage on a machine without CUDA first (its
/// tests match it), then what torchcore does about it.
fn location_message(key: &str, location: &str) -> String {
    let ours = format!(
        "storage '{key}' was saved on '{location}'; torchcore loads checkpoints on the CPU: pass \
         MapLocation::Cpu (map_location='cpu') to load it there"
    );
    if location.starts_with("cuda") {
        format!(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is \
             False. If you are running on a CPU-only machine, please use torch.load with \
             map_location=torch.device('cpu') to map your storages to the CPU. ({ours})"
        )
    } else {
        // torch's `default_restore_location` error, for a tag no backend
        // claims.
        format!(
            "don't know how to restore data location of torch.storage.UntypedStorage (tagged \
             with {location}) ({ours})"
        )
    }
}

/// torch's wording for a refused global (its tests match it): builtins by
/// their bare name, the modules torch blocks outright (`sys`, `os`,
/// `posix`, `nt`) said to be blocked; then what torchcore does.
fn unsupported_global_message(module: &str, name: &str) -> String {
    let shown = if module == "builtins" || module == "__builtin__" {
        name.to_string()
    } else {
        format!("{module}.{name}")
    };
    let blocked = if matches!(module, "sys" | "os" | "posix" | "nt") {
        format!(
            " (Trying to load unsupported GLOBAL {module}.{name} whose module {module} is blocked)"
        )
    } else {
        String::new()
    };
    format!(
        "Weights only load failed: Unsupported global: GLOBAL {shown} was not an allowed global by \
         default{blocked} (torchcore loads tensors, storages, containers and plain values only, and \
         never imports or calls anything)"
    )
}
