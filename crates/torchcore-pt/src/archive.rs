//! Reading the ZIP container torch writes: records under one top folder,
//! stored uncompressed.

use std::io::{Read, Seek, SeekFrom};

use c10_core::ScalarType;
use c10_storage::Storage;
use zip::read::ZipReadOptions;
use zip::{CompressionMethod, ZipArchive};

use crate::error::{PtError, Result};

/// Largest `data.pkl` (and small record) accepted: far beyond any real
/// checkpoint's pickle, and bounded by the file's length anyway.
const MAX_SMALL_RECORD: u64 = 1 << 31;

/// Where one record's bytes lie in the file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecordSpan {
    pub(crate) data_start: u64,
    pub(crate) len: u64,
    /// The CRC-32 the central directory gives for the record.
    pub(crate) crc32: u32,
}

impl RecordSpan {
    /// Whether the record's CRC-32 is checked: not when the archive
    /// records none (0, what torch writes with
    /// `serialization.set_crc32_options(False)`; its reader checks no
    /// CRCs at all), nor when the load asked not to
    /// (`LoadOptions::skip_crc32`).
    pub(crate) fn check_crc(&self, skip: bool) -> bool {
        !skip && self.crc32 != 0
    }
}

/// An opened checkpoint archive.
pub(crate) struct Archive<R: Read + Seek> {
    zip: ZipArchive<R>,
    prefix: String,
    file_len: u64,
    big_endian: bool,
    /// Whether the archive has a `byteorder` record (torch writes one
    /// since 1.13; older files, and `_disable_byteorder_record=True`, lack it).
    byteorder_recorded: bool,
    loaded_bytes: u64,
    /// `LoadOptions::skip_crc32`: storage records are read unchecked.
    skip_crc32: bool,
}

fn zip_err(e: zip::result::ZipError) -> PtError {
    match e {
        zip::result::ZipError::Io(io) => PtError::Zip(format!("I/O error: {io}")),
        other => PtError::Zip(other.to_string()),
    }
}

/// Says why `head` (the first bytes of a file) is not a ZIP archive.
fn classify_non_zip(head: &[u8]) -> PtError {
    if crate::legacy::is_legacy(head) {
        // Loaders dispatch legacy files before opening an archive; what
        // reaches here only describes ZIP archives (inspect).
        return PtError::NotACheckpoint {
            reason: "a legacy (pre-1.6, non-ZIP) checkpoint; load() reads it, but this \
                     operation needs the ZIP format"
                .into(),
        };
    }
    if head.len() >= 262 && &head[257..262] == b"ustar" {
        // The tar-based format of PyTorch before 0.4.
        return PtError::LegacyFormat;
    }
    let shown: String = head
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ");
    PtError::NotACheckpoint {
        reason: format!("not a ZIP archive (first bytes: {shown})"),
    }
}

impl<R: Read + Seek> Archive<R> {
    /// Opens the archive: checks the format, finds the top folder, reads
    /// `byteorder`.
    pub(crate) fn open(mut reader: R) -> Result<Archive<R>> {
        let file_len = reader
            .seek(SeekFrom::End(0))
            .map_err(|e| PtError::io("the checkpoint", e))?;
        reader
            .seek(SeekFrom::Start(0))
            .map_err(|e| PtError::io("the checkpoint", e))?;
        let mut head = Vec::with_capacity(512);
        (&mut reader)
            .take(512)
            .read_to_end(&mut head)
            .map_err(|e| PtError::io("the checkpoint", e))?;
        if !head.starts_with(b"PK\x03\x04") {
            return Err(classify_non_zip(&head));
        }
        reader
            .seek(SeekFrom::Start(0))
            .map_err(|e| PtError::io("the checkpoint", e))?;
        let zip = ZipArchive::new(reader).map_err(zip_err)?;
        let mut prefix: Option<String> = None;
        for name in zip.file_names() {
            let name = name.map_err(zip_err)?;
            check_record_name(&name)?;
            let top = match name.split_once('/') {
                Some((top, rest)) if !top.is_empty() && !rest.is_empty() => top,
                _ => {
                    return Err(PtError::Archive(format!(
                        "record {name:?} is not inside a top folder (torch writes <name>/data.pkl, ...)"
                    )))
                }
            };
            match &prefix {
                None => prefix = Some(top.to_string()),
                Some(p) if p == top => {}
                Some(p) => {
                    return Err(PtError::Archive(format!(
                        "records under two top folders, {p:?} and {top:?}"
                    )))
                }
            }
        }
        let prefix = prefix.ok_or_else(|| PtError::Archive("the archive is empty".into()))?;
        let mut archive = Archive {
            zip,
            prefix: format!("{prefix}/"),
            file_len,
            big_endian: false,
            byteorder_recorded: false,
            loaded_bytes: 0,
            skip_crc32: false,
        };
        if archive.has_record("byteorder") {
            archive.byteorder_recorded = true;
            let b = archive.read_small_record("byteorder")?;
            archive.big_endian = match b.as_slice() {
                b"little" => false,
                b"big" => true,
                other => {
                    return Err(PtError::Archive(format!(
                        "byteorder record holds {:?}, expected 'little' or 'big'",
                        String::from_utf8_lossy(other)
                    )))
                }
            };
        }
        Ok(archive)
    }

    /// The top folder with its trailing `/`.
    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// For an archive without a `byteorder` record, the byte order to read
    /// its storages in (torch's `set_default_load_endianness`); a recorded
    /// byte order always wins, as in torch.
    pub(crate) fn assume_byte_order(&mut self, big_endian: bool) {
        if !self.byteorder_recorded {
            self.big_endian = big_endian;
        }
    }

    /// Reads storage records without checking their CRC-32
    /// (`LoadOptions::skip_crc32`; small records such as the pickle are
    /// always checked when the archive records a CRC).
    pub(crate) fn skip_storage_crc32(&mut self, skip: bool) {
        self.skip_crc32 = skip;
    }

    pub(crate) fn big_endian(&self) -> bool {
        self.big_endian
    }

    pub(crate) fn has_record(&self, name: &str) -> bool {
        self.zip
            .index_for_name(&format!("{}{name}", self.prefix))
            .is_some()
    }

    fn full(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// Checks a record is stored and lies inside the file; returns where.
    pub(crate) fn span(&mut self, name: &str) -> Result<RecordSpan> {
        let full = self.full(name);
        let file_len = self.file_len;
        let f = self.zip.by_name(&full).map_err(|e| match e {
            zip::result::ZipError::FileNotFound => {
                PtError::Archive(format!("record {full:?} is missing"))
            }
            other => zip_err(other),
        })?;
        if f.compression() != CompressionMethod::Stored {
            return Err(PtError::Archive(format!(
                "record {full:?} is compressed ({:?}); torch stores every record uncompressed, \
                 and compressed records are refused",
                f.compression()
            )));
        }
        let len = f.size();
        if f.compressed_size() != len {
            return Err(PtError::Zip(format!(
                "record {full:?}: stored record with compressed size {} != size {len}",
                f.compressed_size()
            )));
        }
        let data_start = f
            .data_start()
            .ok_or_else(|| PtError::Zip(format!("record {full:?}: no data offset")))?;
        if data_start.checked_add(len).is_none_or(|end| end > file_len) {
            return Err(PtError::Zip(format!(
                "record {full:?} ({len} bytes at {data_start}) reaches past the end of the file ({file_len} bytes): truncated archive"
            )));
        }
        Ok(RecordSpan {
            data_start,
            len,
            crc32: f.crc32(),
        })
    }

    /// Reads a whole small record (the pickle, `byteorder`, ...), checking
    /// its CRC.
    pub(crate) fn read_small_record(&mut self, name: &str) -> Result<Vec<u8>> {
        let span = self.span(name)?;
        if span.len > MAX_SMALL_RECORD {
            return Err(PtError::Archive(format!(
                "record {name:?} is {} bytes, more than the {MAX_SMALL_RECORD} accepted",
                span.len
            )));
        }
        self.count(name, span.len)?;
        let full = self.full(name);
        let opts = ZipReadOptions::new().ignore_crc32(!span.check_crc(false));
        let mut f = self
            .zip
            .by_name_with_options(&full, opts)
            .map_err(zip_err)?;
        // The length was checked against the file's size above.
        let mut buf = Vec::with_capacity(span.len as usize);
        f.read_to_end(&mut buf)
            .map_err(|e| PtError::Zip(format!("reading record {full:?}: {e}")))?;
        Ok(buf)
    }

    fn count(&mut self, name: &str, len: u64) -> Result<()> {
        self.loaded_bytes = self.loaded_bytes.saturating_add(len);
        if self.loaded_bytes > self.file_len {
            return Err(PtError::Zip(format!(
                "record {name:?}: the records read so far ({} bytes) exceed the file ({} bytes): overlapping records",
                self.loaded_bytes, self.file_len
            )));
        }
        Ok(())
    }

    /// Reads the first `nbytes` of record `data/<key>` into a new CPU
    /// storage (64-byte aligned), checking the record's CRC and
    /// byte-swapping big-endian data to `dtype`'s native order.
    pub(crate) fn read_storage(
        &mut self,
        key: &str,
        nbytes: usize,
        dtype: ScalarType,
    ) -> Result<Storage> {
        let name = format!("data/{key}");
        let span = self.check_storage_span(&name, key, nbytes, dtype)?;
        self.count(&name, span.len)?;
        let full = self.full(&name);
        let storage = alloc_cpu::empty_storage(nbytes)?;
        {
            let opts = ZipReadOptions::new().ignore_crc32(!span.check_crc(self.skip_crc32));
            let mut f = self
                .zip
                .by_name_with_options(&full, opts)
                .map_err(zip_err)?;
            let mut guard = storage.write()?;
            let bytes = guard.bytes_mut()?;
            f.read_exact(bytes)
                .map_err(|e| PtError::Zip(format!("reading record {full:?}: {e}")))?;
            // Read to the end (through the CRC check).
            std::io::copy(&mut f, &mut std::io::sink())
                .map_err(|e| PtError::Zip(format!("reading record {full:?}: {e}")))?;
            if self.big_endian {
                swap_to_native(bytes, dtype);
            }
        }
        Ok(storage)
    }

    /// Checks record `name` can hold storage `key` of `nbytes`.
    pub(crate) fn check_storage_span(
        &mut self,
        name: &str,
        key: &str,
        nbytes: usize,
        dtype: ScalarType,
    ) -> Result<RecordSpan> {
        let span = self.span(name)?;
        if span.len < nbytes as u64 {
            return Err(PtError::Tensor(format!(
                "record {:?} holds {} bytes, but storage '{key}' needs {nbytes} ({dtype:?} elements)",
                self.full(name),
                span.len
            )));
        }
        Ok(span)
    }

    /// Notes that `len` bytes of record `name` were used without reading
    /// them through the ZIP reader (memory mapping, positioned reads).
    pub(crate) fn count_mapped(&mut self, name: &str, len: u64) -> Result<()> {
        self.count(name, len)
    }

    /// The full name of record `name` (with the top folder), for messages.
    pub(crate) fn full_name(&self, name: &str) -> String {
        self.full(name)
    }
}

/// Refuses record names that could escape a folder or confuse a reader.
fn check_record_name(name: &str) -> Result<()> {
    let bad = name.starts_with('/')
        || name.contains('\\')
        || name.contains('\0')
        || name.split('/').any(|c| c == "..");
    if bad {
        return Err(PtError::Archive(format!(
            "record name {name:?} is not a plain relative path (absolute, '..', '\\' or NUL)"
        )));
    }
    Ok(())
}

/// Reverses the bytes of every element (every component of a complex
/// element) of `dtype` in `bytes`.
pub(crate) fn swap_to_native(bytes: &mut [u8], dtype: ScalarType) {
    let size = if dtype.is_complex() {
        dtype.itemsize() / 2
    } else {
        dtype.itemsize()
    };
    if size > 1 {
        for chunk in bytes.chunks_exact_mut(size) {
            chunk.reverse();
        }
    }
}
