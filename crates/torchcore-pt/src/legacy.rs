//! Reading the legacy format: what PyTorch before 1.6 wrote, and what
//! `torch.save(..., _use_new_zipfile_serialization=False)` still writes.
//!
//! It is not a ZIP archive but five pickles back to back, then the raw
//! storages:
//!
//! 1. the magic number `0x1950a86a20f9469cfc6c` (a `LONG1`);
//! 2. the protocol version, `1001`;
//! 3. a `sys_info` dict (`protocol_version`, `little_endian`, `type_sizes`);
//! 4. the saved object, whose storages are persistent ids
//!    `('storage', <Type>Storage, key, location, numel, view_metadata)`;
//! 5. the list of storage keys, in the order their data follows;
//!
//! then, for each key of that list, an 8-byte little-endian element count
//! followed by the storage's bytes (little-endian elements; bytes for
//! `UntypedStorage`).
//!
//! The same weights-only VM runs all five pickles, so the same allowlist
//! applies. The storages named by the object are allocated while the
//! object is unpickled (their bytes come later in the file), so their
//! total size is checked against the file's length first: a small file
//! cannot make the loader allocate much more memory than it holds.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};

use c10_core::{ScalarType, Storage};

use crate::archive::swap_to_native;
use crate::error::{PtError, Result};
use crate::inspect::{stand_in, Seen};
use crate::load::{check_location, LoadOptions};
use crate::remap::{self, Recording};
use crate::unpickle::{unpickle_prefix, StorageRecord, StorageSource};
use crate::value::Value;

/// The magic number of pickle 1.
const MAGIC: i128 = 0x1950a86a20f9469cfc6c;
/// The protocol version of pickle 2.
const PROTOCOL_VERSION: i64 = 1001;
/// How much of the file is read first to find the pickles; doubled
/// (up to the whole file) while the pickles run past it.
const FIRST_READ: u64 = 1 << 20;

/// Whether `head`, the first bytes of a file, open a legacy checkpoint:
/// `PROTO 2`, then `LONG1` of 10 bytes holding the magic number.
pub(crate) fn is_legacy(head: &[u8]) -> bool {
    head.len() >= 14
        && head[0] == 0x80
        && head[2] == 0x8a
        && head[3] == 10
        && head[4..14] == MAGIC.to_le_bytes()[..10]
}

/// One storage named by the object, waiting for its bytes.
struct Pending {
    storage: Storage,
    nbytes: usize,
    dtype: ScalarType,
    filled: bool,
}

/// Allocates each storage the object names, within the file's size.
struct LegacySource<'a> {
    opts: &'a LoadOptions,
    file_len: u64,
    declared: u64,
    pending: HashMap<String, Pending>,
}

impl StorageSource for LegacySource<'_> {
    fn load_storage(&mut self, rec: &StorageRecord<'_>) -> Result<Storage> {
        let StorageRecord {
            key, nbytes, dtype, ..
        } = *rec;
        check_location(key, rec.location, self.opts)?;
        declare(&mut self.declared, self.file_len, rec)?;
        let storage = alloc_cpu::empty_storage(nbytes)?;
        self.pending.insert(
            key.to_string(),
            Pending {
                storage: storage.clone(),
                nbytes,
                dtype,
                filled: false,
            },
        );
        Ok(storage)
    }

    fn legacy_ids(&self) -> bool {
        true
    }
}

/// Adds the bytes of storage `rec` to the `declared` total of the storages
/// named so far: each storage's bytes follow the pickles, after an 8-byte
/// count, so the total must fit in the file's `file_len` bytes.
fn declare(declared: &mut u64, file_len: u64, rec: &StorageRecord<'_>) -> Result<()> {
    *declared = declared.saturating_add(rec.nbytes as u64 + 8);
    if *declared > file_len {
        return Err(PtError::Tensor(format!(
            "storage '{}' ({} bytes) takes the storages named so far to {} bytes, \
             more than the whole file ({} bytes): truncated or corrupt legacy checkpoint",
            rec.key, rec.nbytes, *declared, file_len
        )));
    }
    Ok(())
}

/// Serves the pickles that must not name any storage.
struct NoStorages;

impl StorageSource for NoStorages {
    fn load_storage(&mut self, rec: &StorageRecord<'_>) -> Result<Storage> {
        Err(PtError::Archive(format!(
            "storage '{}' named in a header pickle of a legacy checkpoint",
            rec.key
        )))
    }
}

/// What the five pickles hold.
struct Pickles {
    object: Value,
    /// The storages loaded, for the storage map.
    seen: Vec<(String, String, Storage)>,
    keys: Vec<String>,
    pending: HashMap<String, Pending>,
    /// Where the storage bytes start.
    data_start: usize,
}

/// Runs the three header pickles (magic number, protocol version,
/// `sys_info`) over `head` and returns where the object's pickle starts.
fn header_end(head: &[u8]) -> Result<usize> {
    let (magic, mut pos) = unpickle_prefix(head, &mut NoStorages)?;
    let magic_ok = match magic {
        Value::BigInt(m) => m == MAGIC,
        _ => false,
    };
    if !magic_ok {
        return Err(PtError::NotACheckpoint {
            reason: "invalid magic number; corrupt legacy checkpoint".into(),
        });
    }
    let mut next = || -> Result<Value> {
        let rest = head.get(pos..).unwrap_or_default();
        let (v, used) = unpickle_prefix(rest, &mut NoStorages)?;
        pos += used;
        Ok(v)
    };
    match next()? {
        Value::Int(PROTOCOL_VERSION) => {}
        Value::Int(v) => {
            return Err(PtError::Archive(format!(
                "legacy checkpoint has protocol version {v}, expected {PROTOCOL_VERSION}"
            )))
        }
        other => {
            return Err(PtError::Archive(format!(
                "legacy checkpoint: the protocol version is a {}, not an int",
                other.type_name()
            )))
        }
    }
    let sys_info = next()?;
    if sys_info.dict_items().is_none() {
        return Err(PtError::Archive(format!(
            "legacy checkpoint: sys_info is a {}, not a dict",
            sys_info.type_name()
        )));
    }
    Ok(pos)
}

/// Runs the five pickles over `head` (the start of the file).
fn run_pickles(head: &[u8], file_len: u64, opts: &LoadOptions) -> Result<Pickles> {
    let mut pos = header_end(head)?;
    let mut next = |source: &mut dyn StorageSource| -> Result<Value> {
        let rest = head.get(pos..).unwrap_or_default();
        let (v, used) = unpickle_prefix(rest, source)?;
        pos += used;
        Ok(v)
    };
    let mut source = LegacySource {
        opts,
        file_len,
        declared: 0,
        pending: HashMap::new(),
    };
    let mut rec = Recording::new(&mut source, opts);
    let object = next(&mut rec)?;
    let seen = rec.seen;
    let keys = match next(&mut NoStorages)? {
        Value::List(items) => items
            .into_iter()
            .map(|k| match k {
                Value::Str(s) => Ok(s),
                other => Err(PtError::Archive(format!(
                    "legacy checkpoint: storage key is a {}, not a str",
                    other.type_name()
                ))),
            })
            .collect::<Result<Vec<_>>>()?,
        other => {
            return Err(PtError::Archive(format!(
                "legacy checkpoint: the storage key list is a {}, not a list",
                other.type_name()
            )))
        }
    };
    Ok(Pickles {
        object,
        seen,
        keys,
        pending: source.pending,
        data_start: pos,
    })
}

/// Whether `e` says only that a pickle ran past the bytes read so far.
fn ran_out(e: &PtError) -> bool {
    matches!(e, PtError::Pickle { msg, .. } if msg.starts_with("pickle truncated"))
}

/// Loads a legacy checkpoint from `reader`, whose first bytes
/// [`is_legacy`] accepted.
pub(crate) fn load_legacy<R: Read + Seek>(mut reader: R, opts: &LoadOptions) -> Result<Value> {
    let io = |e| PtError::io("the checkpoint", e);
    let file_len = reader.seek(SeekFrom::End(0)).map_err(io)?;
    let pickles = with_head(&mut reader, file_len, |head| {
        run_pickles(head, file_len, opts)
    })?;
    reader
        .seek(SeekFrom::Start(pickles.data_start as u64))
        .map_err(io)?;
    let mut pending = pickles.pending;
    for key in &pickles.keys {
        let p = pending.get_mut(key).ok_or_else(|| {
            PtError::Archive(format!(
                "legacy checkpoint: storage '{key}' has data but no tensor names it"
            ))
        })?;
        if p.filled {
            return Err(PtError::Archive(format!(
                "legacy checkpoint: storage '{key}' is listed twice"
            )));
        }
        read_storage(&mut reader, key, p)?;
        p.filled = true;
    }
    if let Some((key, _)) = pending.iter().find(|(_, p)| !p.filled) {
        return Err(PtError::Archive(format!(
            "legacy checkpoint: storage '{key}' is named by a tensor but has no data"
        )));
    }
    remap::apply(pickles.object, pickles.seen, opts)
}

/// Runs `run` over the start of the file, read from its beginning: the
/// pickles are small next to the data, so a first slice of the file is
/// read, and more (doubling, up to the whole file) only while `run` says
/// a pickle ran past it.
fn with_head<R: Read + Seek, T>(
    reader: &mut R,
    file_len: u64,
    mut run: impl FnMut(&[u8]) -> Result<T>,
) -> Result<T> {
    let io = |e| PtError::io("the checkpoint", e);
    reader.seek(SeekFrom::Start(0)).map_err(io)?;
    let mut head = Vec::new();
    let mut want = FIRST_READ.min(file_len);
    loop {
        let have = head.len() as u64;
        reader
            .take(want - have)
            .read_to_end(&mut head)
            .map_err(io)?;
        match run(&head) {
            Err(e) if ran_out(&e) && want < file_len => want = want.saturating_mul(2).min(file_len),
            other => return other,
        }
    }
}

/// What [`inspect_legacy`] finds without reading any storage's bytes.
pub(crate) struct LegacyView {
    /// The object's pickle (up to the end of the bytes read).
    pub(crate) object_pickle: Vec<u8>,
    /// The object, or why it does not load.
    pub(crate) result: Result<Value>,
    /// Every storage named: key, bytes, dtype, location, a stand-in.
    pub(crate) storages: Vec<(String, usize, ScalarType, String, Storage)>,
}

/// Stands in for every storage with an untouched allocation, within the
/// file's size.
struct LazyLegacy {
    file_len: u64,
    declared: u64,
    seen: Seen,
}

impl StorageSource for LazyLegacy {
    fn load_storage(&mut self, rec: &StorageRecord<'_>) -> Result<Storage> {
        declare(&mut self.declared, self.file_len, rec)?;
        stand_in(rec, &mut self.seen)
    }

    fn legacy_ids(&self) -> bool {
        true
    }
}

/// Runs the header pickles and the object's pickle of a legacy file
/// without reading storage data (for [`crate::inspect`]).
pub(crate) fn inspect_legacy<R: Read + Seek>(mut reader: R) -> Result<LegacyView> {
    let io = |e| PtError::io("the checkpoint", e);
    let file_len = reader.seek(SeekFrom::End(0)).map_err(io)?;
    with_head(&mut reader, file_len, |head| {
        let pos = header_end(head)?;
        let rest = head.get(pos..).unwrap_or_default();
        let mut source = LazyLegacy {
            file_len,
            declared: 0,
            seen: Vec::new(),
        };
        let result = match unpickle_prefix(rest, &mut source) {
            Err(e) if ran_out(&e) => return Err(e),
            r => r.map(|(v, _)| v),
        };
        Ok(LegacyView {
            object_pickle: rest.to_vec(),
            result,
            storages: source.seen,
        })
    })
}

/// Reads one storage's element count and bytes into its storage.
fn read_storage<R: Read>(reader: &mut R, key: &str, p: &Pending) -> Result<()> {
    let truncated = |e: std::io::Error| {
        PtError::Zip(format!(
            "legacy checkpoint: reading storage '{key}': {e} (truncated file)"
        ))
    };
    let mut count = [0u8; 8];
    reader.read_exact(&mut count).map_err(truncated)?;
    let count = u64::from_le_bytes(count);
    let expected = (p.nbytes / p.dtype.itemsize()) as u64;
    if count != expected {
        return Err(PtError::Tensor(format!(
            "legacy checkpoint: storage '{key}' has {count} elements in the file, \
             but the tensors name it with {expected} ({:?})",
            p.dtype
        )));
    }
    let mut guard = p.storage.write()?;
    let bytes = guard.bytes_mut()?;
    reader.read_exact(bytes).map_err(truncated)?;
    if cfg!(target_endian = "big") {
        swap_to_native(bytes, p.dtype);
    }
    Ok(())
}
