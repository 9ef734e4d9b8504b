//! The copying load from a file, fast: each storage record is read with
//! positioned reads (`pread`) straight into its storage, in file order,
//! after the pickle has run.
//!
//! Compared with reading through the ZIP reader into zero-filled storages,
//! this skips the zero fill (the storages start uninitialised, through
//! [`Storage::new_uninit`], and are marked initialised only once every
//! byte has been read) and the intermediate buffering; the CRC-32 of each
//! record is computed chunk by chunk right after the chunk is read, while
//! it is still in the cache. What remains is the copy from the page cache
//! and, for memory the process has not used before, the kernel's page
//! faults (see `docs/benchmarks.md`).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;

use c10_core::{ScalarType, Storage};

use crate::archive::{swap_to_native, RecordSpan};
use crate::error::{PtError, Result};

/// Bytes read and checksummed at a time: small enough to stay in the
/// cache between the read and the CRC, large enough that the system call
/// costs nothing.
const CHUNK: usize = 1 << 20;

/// A storage allocated while the pickle ran, waiting for its bytes.
pub(crate) struct PendingRecord {
    /// The record's full name, for messages.
    pub(crate) name: String,
    pub(crate) span: RecordSpan,
    pub(crate) storage: Storage,
    pub(crate) dtype: ScalarType,
}

/// Reads every pending record into its storage, in file order, checking
/// each record's CRC and byte-swapping big-endian data.
pub(crate) fn fill_records(
    file: &File,
    records: &mut [PendingRecord],
    big_endian: bool,
    skip_crc32: bool,
) -> Result<()> {
    records.sort_by_key(|r| r.span.data_start);
    for r in records.iter() {
        fill_one(file, r, big_endian, r.span.check_crc(skip_crc32))?;
    }
    Ok(())
}

fn truncated(name: &str) -> PtError {
    PtError::Zip(format!(
        "reading record {name:?}: the file ends before the record does (truncated archive)"
    ))
}

/// Reads `len` bytes at `offset` to `dst`, retrying short reads.
///
/// # Safety
///
/// `dst` must be valid for writes of `len` bytes, and nothing else may
/// access them meanwhile.
unsafe fn pread_exact(
    file: &File,
    dst: *mut u8,
    len: usize,
    offset: u64,
    name: &str,
) -> Result<()> {
    let mut done = 0usize;
    while done < len {
        let at = offset
            .checked_add(done as u64)
            .and_then(|o| libc::off_t::try_from(o).ok())
            .ok_or_else(|| truncated(name))?;
        // SAFETY: `dst + done .. dst + len` is inside the caller's buffer
        // (the caller's contract); `pread` writes at most `len - done`
        // bytes there and touches nothing else.
        let n = unsafe { libc::pread(file.as_raw_fd(), dst.add(done).cast(), len - done, at) };
        match n {
            0 => return Err(truncated(name)),
            n if n < 0 => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(PtError::Zip(format!("reading record {name:?}: {e}")));
                }
            }
            n => done += n as usize,
        }
    }
    Ok(())
}

fn fill_one(file: &File, r: &PendingRecord, big_endian: bool, check_crc: bool) -> Result<()> {
    let nbytes = r.storage.nbytes();
    let mut crc = crc32fast::Hasher::new();
    let mut guard = r.storage.write_uninit()?;
    let base = guard.as_mut_ptr();
    let mut done = 0usize;
    while done < nbytes {
        let n = CHUNK.min(nbytes - done);
        // SAFETY: `base + done .. + n` lies inside the storage's `nbytes`
        // bytes, which the write guard holds exclusively.
        unsafe {
            pread_exact(
                file,
                base.add(done),
                n,
                r.span.data_start + done as u64,
                &r.name,
            )?
        };
        if check_crc {
            // SAFETY: the same bytes, all just written by the read above.
            crc.update(unsafe { std::slice::from_raw_parts(base.add(done), n) });
        }
        done += n;
    }
    // SAFETY: the loop above wrote every one of the `nbytes` bytes.
    unsafe { guard.assume_init() };
    // A record longer than the storage needs (other writers): the rest
    // is read only for the checksum.
    let mut rest = if check_crc {
        r.span.len - nbytes as u64
    } else {
        0
    };
    let mut at = r.span.data_start + nbytes as u64;
    let mut scratch = Vec::new();
    while rest > 0 {
        let n = CHUNK.min(usize::try_from(rest).unwrap_or(CHUNK));
        scratch.resize(n, 0);
        file.read_exact_at(&mut scratch, at).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                truncated(&r.name)
            } else {
                PtError::Zip(format!("reading record {:?}: {e}", r.name))
            }
        })?;
        crc.update(&scratch);
        rest -= n as u64;
        at += n as u64;
    }
    let got = crc.finalize();
    if check_crc && got != r.span.crc32 {
        return Err(PtError::Zip(format!(
            "record {:?}: invalid checksum (CRC-32 of the data {got:#010x}, the archive says {:#010x})",
            r.name, r.span.crc32
        )));
    }
    if big_endian {
        swap_to_native(guard.bytes_mut()?, r.dtype);
    }
    Ok(())
}
