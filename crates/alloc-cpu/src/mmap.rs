//! Storages backed by files: memory-mapped (through `memmap2`), or read
//! into memory.
//!
//! [`map_file`] maps a whole file, [`map_file_range`] a byte range of it,
//! in one of three [`MapMode`]s. The result is an ordinary, non-resizable
//! CPU [`Storage`] whose deleter unmaps the file when the last handle is
//! dropped (the `memmap2` map is the storage's owner, and its `Drop` calls
//! `munmap`). Both are `unsafe`; [`read_file`] and [`read_file_range`] are
//! their safe, copying counterparts.
//!
//! # Why mapping is `unsafe`
//!
//! A storage hands out `&[u8]` (and, for writable modes, `&mut [u8]`) views
//! of its bytes and assumes nothing else changes them meanwhile: the
//! storage's lock is what makes that true, and a mapping escapes the lock.
//! The operating system cannot promise it for a mapped file:
//!
//! * if **another process, or another mapping of the same file in this
//!   one**, writes the file while it is mapped (a `MapMode::ReadWrite`
//!   mapping and a second mapping of the same file are two storages with
//!   two locks over the same memory), bytes change under a shared borrow:
//!   undefined behaviour, which optimised code really does show (a read
//!   folded into an earlier one returns a stale value);
//! * if the file is **truncated** while mapped, touching pages past the new
//!   end raises `SIGBUS` and kills the process.
//!
//! No check this crate could make rules these out (advisory file locks do
//! not bind other processes, and private copy-on-write mappings still see
//! other writers until a page is copied and still fault past a truncated
//! end), so the caller must promise them, exactly as `memmap2`'s map
//! constructors make their callers promise. When that promise cannot be
//! given (files that other programs may write, downloads in progress,
//! files on network filesystems), use [`read_file`]: one copy, then the
//! storage owns its bytes and nothing outside can change them.
//!
//! ```
//! # #[cfg(not(miri))] {
//! use alloc_cpu::mmap::{map_file, read_file, MapMode};
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("weights.bin");
//! std::fs::write(&path, [1u8, 2, 3, 4])?;
//!
//! // SAFETY: the file is private to this test: nothing else writes or
//! // truncates it while it is mapped, and it is mapped once.
//! let s = unsafe { map_file(&path, MapMode::ReadWrite)? };
//! s.write()?.bytes_mut()?[0] = 9;
//! drop(s); // unmapped here
//! assert_eq!(std::fs::read(&path)?, [9, 2, 3, 4]);
//!
//! // No promise needed: the bytes are copied.
//! let copy = read_file(&path)?;
//! assert_eq!(copy.read()?.bytes()?, &[9, 2, 3, 4]);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use std::io::{Read, Seek, SeekFrom};

use c10_storage::{Storage, StorageError};
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
    /// [`StorageError::ReadOnly`],
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
/// use alloc_cpu::mmap::{read_file, MmapError};
/// let err = read_file("/no/such/file").unwrap_err();
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
    /// Reading the file into memory failed (or it ended early: it was
    /// truncated while being read).
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The storage for the file's bytes could not be allocated.
    #[error("cannot allocate a storage for {}: {source}", path.display())]
    Alloc {
        /// The file.
        path: PathBuf,
        /// The allocator's error.
        #[source]
        source: StorageError,
    },
}

impl MmapError {
    /// The file the error is about.
    ///
    /// ```
    /// # #[cfg(not(miri))] {
    /// use alloc_cpu::mmap::read_file;
    /// let err = read_file("/no/such/file").unwrap_err();
    /// assert_eq!(err.path(), std::path::Path::new("/no/such/file"));
    /// # }
    /// ```
    pub fn path(&self) -> &Path {
        match self {
            MmapError::Open { path, .. }
            | MmapError::Metadata { path, .. }
            | MmapError::OutOfRange { path, .. }
            | MmapError::Map { path, .. }
            | MmapError::Read { path, .. }
            | MmapError::Alloc { path, .. } => path,
        }
    }
}

/// Maps the whole file at `path` as a CPU storage of the file's length.
///
/// Zero-length files give an empty storage. The storage is not resizable;
/// dropping its last handle unmaps the file. [`read_file`] is the safe,
/// copying alternative.
///
/// ```
/// # #[cfg(not(miri))] {
/// use alloc_cpu::mmap::{map_file, MapMode};
/// let file = tempfile::NamedTempFile::new()?;
/// std::fs::write(file.path(), b"abc")?;
/// // SAFETY: a private temporary file, mapped once, that nothing else
/// // writes or truncates while `s` lives.
/// let s = unsafe { map_file(file.path(), MapMode::ReadOnly)? };
/// assert_eq!(s.read()?.bytes()?, b"abc");
/// assert!(s.write().is_err()); // read-only
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Safety
///
/// Until the storage and every tensor on it are dropped, the mapped bytes
/// of the file must not be changed by anything but this storage, and the
/// file must not be truncated (see the [module documentation](self)):
/// no other process may write or truncate it, and this process must not
/// map the same file again (unless both mappings are
/// [`MapMode::ReadOnly`] and nothing writes the file) nor write it
/// through other means (`std::fs`, another library).
pub unsafe fn map_file(path: impl AsRef<Path>, mode: MapMode) -> Result<Storage, MmapError> {
    // SAFETY: forwarded to the caller.
    unsafe { map_impl(path.as_ref(), mode, 0, None) }
}

/// Maps `len` bytes of the file at `path` starting at byte `offset` (which
/// need not be page aligned; the storage then starts mid-page and is only
/// as aligned as `offset`). The range must lie inside the file.
/// [`read_file_range`] is the safe, copying alternative.
///
/// ```
/// # #[cfg(not(miri))] {
/// use alloc_cpu::mmap::{map_file_range, MapMode};
/// let file = tempfile::NamedTempFile::new()?;
/// std::fs::write(file.path(), b"header:payload")?;
/// // SAFETY: a private temporary file that nothing else changes.
/// let s = unsafe { map_file_range(file.path(), MapMode::CopyOnWrite, 7, 7)? };
/// assert_eq!(s.read()?.bytes()?, b"payload");
/// // SAFETY: as above (the call fails before mapping anything).
/// assert!(unsafe { map_file_range(file.path(), MapMode::ReadOnly, 7, 8) }.is_err());
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Safety
///
/// As [`map_file`], for the mapped range.
pub unsafe fn map_file_range(
    path: impl AsRef<Path>,
    mode: MapMode,
    offset: u64,
    len: usize,
) -> Result<Storage, MmapError> {
    // SAFETY: forwarded to the caller.
    unsafe { map_impl(path.as_ref(), mode, offset, Some(len)) }
}

/// Reads the whole file at `path` into a new CPU storage (from the
/// registered CPU allocator, resizable like any tensor's storage): the safe
/// alternative to [`map_file`]. The storage owns its bytes, so later
/// changes to the file, or its truncation, do not affect it.
///
/// ```
/// # #[cfg(not(miri))] {
/// use alloc_cpu::mmap::read_file;
/// let file = tempfile::NamedTempFile::new()?;
/// std::fs::write(file.path(), b"abc")?;
/// let s = read_file(file.path())?;
/// std::fs::write(file.path(), b"")?; // truncating the file changes nothing
/// assert_eq!(s.read()?.bytes()?, b"abc");
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_file(path: impl AsRef<Path>) -> Result<Storage, MmapError> {
    read_impl(path.as_ref(), 0, None)
}

/// Reads `len` bytes of the file at `path` from byte `offset` into a new CPU
/// storage: the safe alternative to [`map_file_range`]. The range must lie
/// inside the file.
///
/// ```
/// # #[cfg(not(miri))] {
/// use alloc_cpu::mmap::read_file_range;
/// let file = tempfile::NamedTempFile::new()?;
/// std::fs::write(file.path(), b"header:payload")?;
/// assert_eq!(read_file_range(file.path(), 7, 7)?.read()?.bytes()?, b"payload");
/// assert!(read_file_range(file.path(), 7, 8).is_err()); // past the end
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_file_range(
    path: impl AsRef<Path>,
    offset: u64,
    len: usize,
) -> Result<Storage, MmapError> {
    read_impl(path.as_ref(), offset, Some(len))
}

/// The length to map or read: `len`, or the rest of the file from
/// `offset`; checked against the file's length and the address space.
fn checked_len(
    path: &Path,
    file: &File,
    offset: u64,
    len: Option<usize>,
) -> Result<usize, MmapError> {
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
    Ok(len)
}

fn read_impl(path: &Path, offset: u64, len: Option<usize>) -> Result<Storage, MmapError> {
    let mut file = open(path, MapMode::ReadOnly)?;
    let len = checked_len(path, &file, offset, len)?;
    let read_err = |source| MmapError::Read {
        path: path.to_path_buf(),
        source,
    };
    let storage = crate::empty_storage(len).map_err(|source| MmapError::Alloc {
        path: path.to_path_buf(),
        source,
    })?;
    file.seek(SeekFrom::Start(offset)).map_err(read_err)?;
    {
        let mut guard = storage.write().map_err(|source| MmapError::Alloc {
            path: path.to_path_buf(),
            source,
        })?;
        let bytes = guard.bytes_mut().map_err(|source| MmapError::Alloc {
            path: path.to_path_buf(),
            source,
        })?;
        // `read_exact` fails with `UnexpectedEof` if the file shrank since
        // its length was read: reported, never a short storage.
        file.read_exact(bytes).map_err(read_err)?;
    }
    Ok(storage)
}

/// # Safety
///
/// As [`map_file`].
unsafe fn map_impl(
    path: &Path,
    mode: MapMode,
    offset: u64,
    len: Option<usize>,
) -> Result<Storage, MmapError> {
    let file = open(path, mode)?;
    let len = checked_len(path, &file, offset, len)?;
    let mut opts = MmapOptions::new();
    opts.offset(offset).len(len);
    let map_err = |source| MmapError::Map {
        path: path.to_path_buf(),
        source,
    };
    // SAFETY: the range lies inside the file (checked above), so no access
    // through the mapping goes past its end as long as the file is not
    // truncated. That, and no other writer changing the bytes while they
    // are borrowed, is what memmap2 cannot promise and what our caller
    // promised (`map_file`'s safety section). The map owns the mapping, and
    // the storage owns the map; dropping it unmaps. (Repeated at each
    // `unsafe` below.)
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
