//! Storages backed by memory-mapped files (through `memmap2`).
//!
//! [`map_file`] maps a whole file, [`map_file_range`] a byte range of it,
//! in one of three [`MapMode`]s. The result is an ordinary, non-resizable
//! CPU [`Storage`] whose deleter unmaps the file when the last handle is
//! dropped (the `memmap2` map is the storage's owner, and its `Drop` calls
//! `munmap`).
//!
//! # The risk you accept
//!
//! A storage hands out `&[u8]` (and, for writable modes, `&mut [u8]`) views
//! of its bytes and assumes nothing else changes them meanwhile. For a
//! mapped file the operating system cannot promise that: if **another
//! process (or another mapping in this one) modifies or truncates the
//! file** while it is mapped, reads may see bytes change under a shared
//! borrow, and touching pages past a truncated end raises `SIGBUS`. This is
//! the same caveat that makes `memmap2`'s map constructors `unsafe`; these
//! functions are safe to call in the same sense as other mmap-based loaders
//! (safetensors, numpy's `memmap`): map only files that nobody modifies
//! while they are mapped, and do not map one file writable twice.
//!
//! ```
//! # #[cfg(not(miri))] {
//! use alloc_cpu::mmap::{map_file, MapMode};
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("weights.bin");
//! std::fs::write(&path, [1u8, 2, 3, 4])?;
//!
//! let s = map_file(&path, MapMode::ReadWrite)?;
//! s.write()?.bytes_mut()?[0] = 9;
//! drop(s); // unmapped here
//! assert_eq!(std::fs::read(&path)?, [9, 2, 3, 4]);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use c10_storage::Storage;
use memmap2::MmapOptions;

/// How a file is mapped.
///
/// ```
/// use alloc_cpu::mmap::MapMode;
/// assert_ne!(MapMode::ReadOnly, MapMode::CopyOnWrite);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MapMode {
    /// A shared read-only mapping (the file is opened read-only). Writes to
    /// the storage are refused with
    /// [`StorageError::ReadOnly`](c10_storage::StorageError::ReadOnly),
    /// whose message names the file.
    ReadOnly,
    /// A shared writable mapping (the file is opened for reading and
    /// writing): writes through the storage reach the file (through the
    /// page cache at once, so other readers of the file see them; on disk
    /// when the kernel writes the pages back).
    ReadWrite,
    /// A private writable mapping (the file is opened read-only): the
    /// storage can be written, but the changes stay in this process's
    /// copy-on-write pages and never reach the file.
    CopyOnWrite,
}

/// Why a file could not be mapped. Every variant names the file.
///
/// ```
/// # #[cfg(not(miri))] {
/// use alloc_cpu::mmap::{map_file, MapMode, MmapError};
/// let err = map_file("/no/such/file", MapMode::ReadOnly).unwrap_err();
/// assert!(matches!(err, MmapError::Open { .. }));
/// assert!(err.to_string().starts_with("cannot open /no/such/file for memory mapping"));
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MmapError {
    /// Opening the file failed.
    #[error("cannot open {} for memory mapping: {source}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// Reading the file's length failed.
    #[error("cannot read the size of {}: {source}", path.display())]
    Metadata {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The requested range does not lie inside the file (or does not fit in
    /// the address space).
    #[error(
        "cannot map {len} bytes at offset {offset} of {}: the file has {file_len} bytes",
        path.display()
    )]
    OutOfRange {
        /// The file.
        path: PathBuf,
        /// Start of the requested range.
        offset: u64,
        /// Length of the requested range.
        len: u64,
        /// The file's length.
        file_len: u64,
    },
    /// The `mmap` call failed.
    #[error("cannot memory-map {}: {source}", path.display())]
    Map {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

impl MmapError {
    /// The file the error is about.
    ///
    /// ```
    /// # #[cfg(not(miri))] {
    /// use alloc_cpu::mmap::{map_file, MapMode};
    /// let err = map_file("/no/such/file", MapMode::ReadWrite).unwrap_err();
    /// assert_eq!(err.path(), std::path::Path::new("/no/such/file"));
    /// # }
    /// ```
    pub fn path(&self) -> &Path {
        match self {
            MmapError::Open { path, .. }
            | MmapError::Metadata { path, .. }
            | MmapError::OutOfRange { path, .. }
            | MmapError::Map { path, .. } => path,
        }
    }
}

/// Maps the whole file at `path` as a CPU storage of the file's length.
///
/// Zero-length files give an empty storage. The storage is not resizable;
/// dropping its last handle unmaps the file. See the [module
/// documentation](self) for the risk of files modified while mapped.
///
/// ```
/// # #[cfg(not(miri))] {
/// use alloc_cpu::mmap::{map_file, MapMode};
/// let file = tempfile::NamedTempFile::new()?;
/// std::fs::write(file.path(), b"abc")?;
/// let s = map_file(file.path(), MapMode::ReadOnly)?;
/// assert_eq!(s.read()?.bytes()?, b"abc");
/// assert!(s.write().is_err()); // read-only
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn map_file(path: impl AsRef<Path>, mode: MapMode) -> Result<Storage, MmapError> {
    map_impl(path.as_ref(), mode, 0, None)
}

/// Maps `len` bytes of the file at `path` starting at byte `offset` (which
/// need not be page aligned; the storage then starts mid-page and is only
/// as aligned as `offset`). The range must lie inside the file.
///
/// ```
/// # #[cfg(not(miri))] {
/// use alloc_cpu::mmap::{map_file_range, MapMode};
/// let file = tempfile::NamedTempFile::new()?;
/// std::fs::write(file.path(), b"header:payload")?;
/// let s = map_file_range(file.path(), MapMode::CopyOnWrite, 7, 7)?;
/// assert_eq!(s.read()?.bytes()?, b"payload");
/// assert!(map_file_range(file.path(), MapMode::ReadOnly, 7, 8).is_err()); // past the end
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn map_file_range(
    path: impl AsRef<Path>,
    mode: MapMode,
    offset: u64,
    len: usize,
) -> Result<Storage, MmapError> {
    map_impl(path.as_ref(), mode, offset, Some(len))
}

fn map_impl(
    path: &Path,
    mode: MapMode,
    offset: u64,
    len: Option<usize>,
) -> Result<Storage, MmapError> {
    let file = open(path, mode)?;
    let file_len = file
        .metadata()
        .map_err(|source| MmapError::Metadata {
            path: path.to_path_buf(),
            source,
        })?
        .len();
    let out_of_range = |len: u64| MmapError::OutOfRange {
        path: path.to_path_buf(),
        offset,
        len,
        file_len,
    };
    let len = match len {
        Some(len) => {
            let end = offset.checked_add(len as u64);
            if end.is_none_or(|end| end > file_len) {
                return Err(out_of_range(len as u64));
            }
            len
        }
        None => {
            let rest = file_len
                .checked_sub(offset)
                .ok_or_else(|| out_of_range(0))?;
            usize::try_from(rest).map_err(|_| out_of_range(rest))?
        }
    };
    if isize::try_from(len).is_err() {
        return Err(out_of_range(len as u64));
    }
    let mut opts = MmapOptions::new();
    opts.offset(offset).len(len);
    let map_err = |source| MmapError::Map {
        path: path.to_path_buf(),
        source,
    };
    // SAFETY: the range lies inside the file (checked above), so no access
    // through the mapping goes past its end as long as the file is not
    // truncated. That, and no other writer changing the bytes while they
    // are borrowed, is what memmap2 cannot promise and what this API
    // documents as the caller's risk (module docs, "The risk you accept"),
    // as memmap2 itself does. The map owns the mapping, and the storage owns
    // the map; dropping it unmaps. (Repeated at each `unsafe` below.)
    let storage = match mode {
        MapMode::ReadOnly => {
            // SAFETY: as above; the storage refuses writes.
            let map = unsafe { opts.map(&file) }.map_err(map_err)?;
            let reason = format!("memory-mapped read-only from {}", path.display());
            Storage::from_read_only_owner(map, &reason)
        }
        MapMode::ReadWrite => {
            // SAFETY: as above; the file was opened for writing.
            let map = unsafe { opts.map_mut(&file) }.map_err(map_err)?;
            Storage::from_owner(map)
        }
        MapMode::CopyOnWrite => {
            // SAFETY: as above; a private mapping never writes to the file.
            let map = unsafe { opts.map_copy(&file) }.map_err(map_err)?;
            Storage::from_owner(map)
        }
    };
    Ok(storage)
}

fn open(path: &Path, mode: MapMode) -> Result<File, MmapError> {
    let mut opts = OpenOptions::new();
    opts.read(true);
    if mode == MapMode::ReadWrite {
        opts.write(true);
    }
    opts.open(path).map_err(|source| MmapError::Open {
        path: path.to_path_buf(),
        source,
    })
}
