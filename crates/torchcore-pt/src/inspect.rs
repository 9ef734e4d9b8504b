//! Describing a checkpoint's tensors without reading their data: what the
//! `torchcore inspect` command prints.
//!
//! [`inspect`] runs the same weights-only VM as [`load`](crate::load), but
//! its storages are never read: each is checked against its record (it
//! must be stored, inside the file and long enough) and stands in as an
//! untouched, lazily zero-filled allocation, so the work is proportional to
//! the number of tensors. It also lists every global the pickle names
//! (found by walking the opcodes without running them), allowed or not, so
//! a file that `load` refuses can still be described.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::Path;

use c10_core::{ScalarType, Storage};

use crate::archive::Archive;
use crate::error::{PtError, Result};
use crate::unpickle::{unpickle, StorageRecord, StorageSource};

/// One tensor of a checkpoint.
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("x.pt");
/// # let t = c10_core::Tensor::zeros(&[2, 3], c10_core::ScalarType::Float)?;
/// # torchcore_pt::save(&torchcore_pt::Value::List(vec![torchcore_pt::Value::Tensor(t)]), &path)?;
/// let report = torchcore_pt::inspect::inspect(&path)?;
/// let t = &report.tensors[0];
/// assert_eq!((t.name.as_str(), t.shape.as_slice(), t.storage.as_str(), t.nbytes), ("0", &[2, 3][..], "0", 24));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInfo {
    /// Its path in the saved object (a state dict's key).
    pub name: String,
    /// Its dtype.
    pub dtype: ScalarType,
    /// Sizes.
    pub shape: Vec<i64>,
    /// Strides, in elements.
    pub strides: Vec<i64>,
    /// Storage offset, in elements.
    pub offset: i64,
    /// The storage's key (its record is `data/<key>`).
    pub storage: String,
    /// Whether it is a parameter, or requires grad.
    pub requires_grad: bool,
    /// Bytes the tensor's elements span (`numel * itemsize`).
    pub nbytes: usize,
}

/// One storage record of a checkpoint.
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("x.pt");
/// # let t = c10_core::Tensor::zeros(&[2, 3], c10_core::ScalarType::Float)?;
/// # torchcore_pt::save(&torchcore_pt::Value::List(vec![torchcore_pt::Value::Tensor(t)]), &path)?;
/// let report = torchcore_pt::inspect::inspect(&path)?;
/// let s = &report.storages[0];
/// assert_eq!((s.key.as_str(), s.nbytes, s.location.as_str()), ("0", 24, "cpu"));
/// assert_eq!(s.tensors, ["0"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct StorageInfo {
    /// The key.
    pub key: String,
    /// Its size in bytes.
    pub nbytes: usize,
    /// The dtype of its storage class (`uint8` for `UntypedStorage`).
    pub dtype: ScalarType,
    /// The location tag (`cpu`, `cuda:0`).
    pub location: String,
    /// The tensors over it, by name.
    pub tensors: Vec<String>,
}

/// A global the pickle names.
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("x.pt");
/// # let t = c10_core::Tensor::zeros(&[2, 3], c10_core::ScalarType::Float)?;
/// # torchcore_pt::save(&torchcore_pt::Value::List(vec![torchcore_pt::Value::Tensor(t)]), &path)?;
/// let report = torchcore_pt::inspect::inspect(&path)?;
/// assert!(report.globals.iter().any(|g| g.name == "torch._utils._rebuild_tensor_v2" && g.allowed));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobalInfo {
    /// `module.name`.
    pub name: String,
    /// Whether the weights-only loader accepts it.
    pub allowed: bool,
}

/// What [`inspect`] found.
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("x.pt");
/// # let t = c10_core::Tensor::zeros(&[2, 3], c10_core::ScalarType::Float)?;
/// # torchcore_pt::save(&torchcore_pt::Value::List(vec![torchcore_pt::Value::Tensor(t)]), &path)?;
/// let report = torchcore_pt::inspect::inspect(&path)?;
/// assert!(report.error.is_none());
/// assert!(report.to_string().contains("total: 1 tensors over 1 storages"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Inspection {
    /// The archive's top folder.
    pub archive: String,
    /// `byteorder`.
    pub big_endian: bool,
    /// Whether the file is in the legacy (pre-1.6, non-ZIP) format (then
    /// `archive` is empty: the format has no top folder).
    pub legacy: bool,
    /// The pickle protocol (from `PROTO`), if given.
    pub protocol: Option<u8>,
    /// Every tensor, in order.
    pub tensors: Vec<TensorInfo>,
    /// Every storage, in order of first use.
    pub storages: Vec<StorageInfo>,
    /// Every distinct global the pickle names, in order.
    pub globals: Vec<GlobalInfo>,
    /// Why the checkpoint does not load, if it does not (the tensors are
    /// then empty).
    pub error: Option<PtError>,
}

impl Inspection {
    /// Total bytes of storage data.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("x.pt");
    /// # let t = c10_core::Tensor::zeros(&[2, 3], c10_core::ScalarType::Float)?;
    /// # torchcore_pt::save(&torchcore_pt::Value::List(vec![torchcore_pt::Value::Tensor(t)]), &path)?;
    /// let report = torchcore_pt::inspect::inspect(&path)?;
    /// assert_eq!(report.total_bytes(), 24);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn total_bytes(&self) -> usize {
        self.storages.iter().map(|s| s.nbytes).sum()
    }

    /// The globals the loader refuses.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("x.pt");
    /// # let t = c10_core::Tensor::zeros(&[2, 3], c10_core::ScalarType::Float)?;
    /// # torchcore_pt::save(&torchcore_pt::Value::List(vec![torchcore_pt::Value::Tensor(t)]), &path)?;
    /// let report = torchcore_pt::inspect::inspect(&path)?;
    /// assert_eq!(report.refused_globals().count(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn refused_globals(&self) -> impl Iterator<Item = &str> {
        self.globals
            .iter()
            .filter(|g| !g.allowed)
            .map(|g| g.name.as_str())
    }
}

struct LazySource<'a, R: Read + Seek> {
    archive: &'a mut Archive<R>,
    seen: Seen,
}

impl<R: Read + Seek> StorageSource for LazySource<'_, R> {
    fn load_storage(&mut self, rec: &StorageRecord<'_>) -> Result<Storage> {
        let name = format!("data/{}", rec.key);
        let span = self
            .archive
            .check_storage_span(&name, rec.key, rec.nbytes, rec.dtype)?;
        self.archive.count_mapped(&name, span.len)?;
        stand_in(rec, &mut self.seen)
    }
}

/// Every storage a lazy source was asked for: key, bytes, dtype, location,
/// the stand-in it returned.
pub(crate) type Seen = Vec<(String, usize, ScalarType, String, Storage)>;

/// Stands in for the storage `rec` names with an allocation that is never
/// touched (no byte of it is read or filled), and notes it in `seen`.
pub(crate) fn stand_in(rec: &StorageRecord<'_>, seen: &mut Seen) -> Result<Storage> {
    let storage = Storage::new_uninit(rec.nbytes, alloc_cpu::cpu_allocator(), false)?;
    seen.push((
        rec.key.to_string(),
        rec.nbytes,
        rec.dtype,
        rec.location.to_string(),
        storage.clone(),
    ));
    Ok(storage)
}

/// Describes the checkpoint at `path`.
///
/// ```
/// use torchcore_pt::{inspect::inspect, save, Value, OrderedDict};
/// use c10_core::{Tensor, ScalarType};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("sd.pt");
/// let w = Tensor::zeros(&[4, 3], ScalarType::Float)?;
/// let row = w.as_strided(&[3], &[1], Some(3))?;
/// let mut sd = OrderedDict::default();
/// sd.insert("w", Value::Tensor(w));
/// sd.insert("row", Value::Tensor(row));
/// save(&Value::OrderedDict(sd), &path)?;
/// let report = inspect(&path)?;
/// assert_eq!(report.tensors.len(), 2);
/// assert_eq!(report.storages.len(), 1);
/// assert_eq!(report.storages[0].tensors, ["w", "row"]);
/// assert_eq!(report.total_bytes(), 48);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn inspect(path: impl AsRef<Path>) -> Result<Inspection> {
    let path = path.as_ref();
    let f = File::open(path).map_err(|e| PtError::io_path(path, e))?;
    inspect_reader(BufReader::new(f))
}

/// [`inspect`] on a seekable reader.
///
/// ```
/// use torchcore_pt::{inspect::inspect_reader, save_to_writer, Value};
/// let bytes = save_to_writer(&Value::Int(1), std::io::Cursor::new(Vec::new()))?.into_inner();
/// let report = inspect_reader(std::io::Cursor::new(bytes))?;
/// assert_eq!((report.archive.as_str(), report.tensors.len()), ("archive", 0));
/// # Ok::<(), torchcore_pt::PtError>(())
/// ```
pub fn inspect_reader<R: Read + Seek>(mut reader: R) -> Result<Inspection> {
    if crate::load::starts_legacy(&mut reader)? {
        let view = crate::legacy::inspect_legacy(reader)?;
        let (protocol, globals) = scan_globals(&view.object_pickle);
        let out = Inspection {
            archive: String::new(),
            legacy: true,
            big_endian: false,
            protocol,
            tensors: Vec::new(),
            storages: Vec::new(),
            globals,
            error: None,
        };
        return Ok(describe(out, view.storages, view.result));
    }
    let mut archive = Archive::open(reader)?;
    let pickle = archive.read_small_record("data.pkl")?;
    let (protocol, globals) = scan_globals(&pickle);
    let mut source = LazySource {
        archive: &mut archive,
        seen: Vec::new(),
    };
    let result = unpickle(&pickle, &mut source);
    let seen = std::mem::take(&mut source.seen);
    let out = Inspection {
        archive: archive.prefix().trim_end_matches('/').to_string(),
        legacy: false,
        big_endian: archive.big_endian(),
        protocol,
        tensors: Vec::new(),
        storages: Vec::new(),
        globals,
        error: None,
    };
    Ok(describe(out, seen, result))
}

/// Fills `out`'s storages and tensors from what the VM loaded.
fn describe(mut out: Inspection, seen: Seen, result: Result<crate::Value>) -> Inspection {
    let key_of: HashMap<usize, usize> = seen
        .iter()
        .enumerate()
        .map(|(i, s)| (s.4.id(), i))
        .collect();
    out.storages = seen
        .iter()
        .map(|(key, nbytes, dtype, location, _)| StorageInfo {
            key: key.clone(),
            nbytes: *nbytes,
            dtype: *dtype,
            location: location.clone(),
            tensors: Vec::new(),
        })
        .collect();
    match result {
        Ok(v) => {
            for (name, t) in v.tensors() {
                let idx = key_of.get(&t.storage().id()).copied();
                let name = if name.is_empty() {
                    "<root>".to_string()
                } else {
                    name
                };
                if let Some(i) = idx {
                    out.storages[i].tensors.push(name.clone());
                }
                out.tensors.push(TensorInfo {
                    name,
                    dtype: t.dtype(),
                    shape: t.sizes().to_vec(),
                    strides: t.strides().to_vec(),
                    offset: t.storage_offset(),
                    storage: idx.map(|i| out.storages[i].key.clone()).unwrap_or_default(),
                    requires_grad: t.requires_grad(),
                    nbytes: t.nbytes(),
                });
            }
            drop(v);
        }
        Err(e) => out.error = Some(e),
    }
    out
}

fn allowed(module: &str, name: &str) -> bool {
    crate::unpickle::is_allowed_global(module, name)
}

/// Walks the opcodes (without running them) and collects the protocol
/// and every distinct global named by `GLOBAL` or `STACK_GLOBAL` (whose
/// two strings are resolved when they were pushed directly or through the
/// memo).
fn scan_globals(p: &[u8]) -> (Option<u8>, Vec<GlobalInfo>) {
    let mut protocol = None;
    let mut out: Vec<GlobalInfo> = Vec::new();
    let mut strs: Vec<Option<String>> = Vec::new();
    let mut memo: HashMap<u32, String> = HashMap::new();
    let mut memo_len = 0u32;
    let mut i = 0usize;
    while i < p.len() {
        let op = p[i];
        i += 1;
        let rest = &p[i..];
        let sized = |w: usize| -> Option<(usize, usize)> {
            let n = le_usize(rest.get(..w)?);
            Some((w, n))
        };
        // (header bytes, payload bytes) of the argument.
        let arg: Option<(usize, usize)> = match op {
            0x80 => {
                protocol = rest.first().copied();
                Some((1, 0))
            }
            0x95 | b'G' => Some((8, 0)),
            b'J' | b'r' | b'j' => Some((4, 0)),
            b'K' | b'q' | b'h' | 0x82 => Some((1, 0)),
            b'M' | 0x83 => Some((2, 0)),
            0x84 => Some((4, 0)),
            0x8a | 0x8c | b'U' | b'C' => sized(1),
            0x8b | b'X' | b'T' | b'B' => sized(4),
            0x8d | 0x8e | 0x96 => sized(8),
            b'c' | b'i' => {
                let mut lines = rest.splitn(3, |&b| b == b'\n');
                match (lines.next(), lines.next()) {
                    (Some(m), Some(n)) if rest.len() > m.len() + n.len() + 1 => {
                        let (m, n) = (String::from_utf8_lossy(m), String::from_utf8_lossy(n));
                        add_global(&m, &n, &mut out);
                        Some((m.len() + n.len() + 2, 0))
                    }
                    _ => None,
                }
            }
            b'I' | b'L' | b'F' | b'S' | b'V' | b'P' | b'g' | b'p' => {
                rest.iter().position(|&b| b == b'\n').map(|n| (n + 1, 0))
            }
            _ => Some((0, 0)),
        };
        let Some((head, len)) = arg else { break };
        let Some(end) = head.checked_add(len).filter(|&e| e <= rest.len()) else {
            break;
        };
        match op {
            b'X' | 0x8c | 0x8d => {
                strs.push(Some(String::from_utf8_lossy(&rest[head..end]).into_owned()))
            }
            b'q' | b'r' | 0x94 => {
                let idx = match op {
                    b'q' => u32::from(rest[0]),
                    b'r' => u32::try_from(le_usize(&rest[..4])).unwrap_or(u32::MAX),
                    _ => memo_len,
                };
                memo_len = memo_len.saturating_add(1);
                if let Some(Some(s)) = strs.last() {
                    memo.insert(idx, s.clone());
                }
            }
            b'h' | b'j' => {
                let idx = if op == b'h' {
                    u32::from(rest[0])
                } else {
                    u32::try_from(le_usize(&rest[..4])).unwrap_or(u32::MAX)
                };
                strs.push(memo.get(&idx).cloned());
            }
            0x93 => {
                let n = strs.pop().flatten();
                let m = strs.pop().flatten();
                match (m, n) {
                    (Some(m), Some(n)) => add_global(&m, &n, &mut out),
                    _ => add_global("<unresolved STACK_GLOBAL>", "?", &mut out),
                }
            }
            b'.' => break,
            _ => strs.push(None),
        }
        i += end;
    }
    (protocol, out)
}

/// Notes global `m.n` in `out` once, with whether the allowlist admits it.
fn add_global(m: &str, n: &str, out: &mut Vec<GlobalInfo>) {
    let name = format!("{m}.{n}");
    if !out.iter().any(|g| g.name == name) {
        out.push(GlobalInfo {
            allowed: allowed(m, n),
            name,
        });
    }
}

/// The little-endian unsigned integer of up to 8 bytes `b` (saturated to
/// `usize::MAX` where it does not fit).
fn le_usize(b: &[u8]) -> usize {
    let mut a = [0u8; 8];
    a[..b.len()].copy_from_slice(b);
    usize::try_from(u64::from_le_bytes(a)).unwrap_or(usize::MAX)
}

impl Inspection {
    /// One row of the tensor table per tensor: name, dtype, shape, stride,
    /// offset, storage, the other tensors sharing it, bytes.
    fn tensor_rows(&self) -> Vec<[String; 8]> {
        self.tensors
            .iter()
            .map(|t| {
                let sharing: Vec<&str> = self
                    .storages
                    .iter()
                    .find(|s| s.key == t.storage)
                    .map(|s| {
                        s.tensors
                            .iter()
                            .filter(|n| **n != t.name)
                            .map(String::as_str)
                            .collect()
                    })
                    .unwrap_or_default();
                [
                    t.name.clone(),
                    t.dtype.torch_name().to_string(),
                    format!("{:?}", t.shape),
                    format!("{:?}", t.strides),
                    t.offset.to_string(),
                    t.storage.clone(),
                    if sharing.is_empty() {
                        "-".into()
                    } else {
                        sharing.join(",")
                    },
                    t.nbytes.to_string(),
                ]
            })
            .collect()
    }
}

/// Writes `rows` under `header` in columns as wide as their widest cell
/// (the last column right-aligned); nothing when there is no row.
fn write_table(f: &mut fmt::Formatter<'_>, header: [&str; 8], rows: &[[String; 8]]) -> fmt::Result {
    let mut w = header.map(str::len);
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |f: &mut fmt::Formatter<'_>, cells: &[&str]| -> fmt::Result {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i == cells.len() - 1 {
                s.push_str(&format!("{c:>width$}", width = w[i]));
            } else {
                s.push_str(&format!("{c:<width$}  ", width = w[i]));
            }
        }
        writeln!(f, "{}", s.trim_end())
    };
    if !rows.is_empty() {
        line(f, &header)?;
        for r in rows {
            line(f, &r.iter().map(String::as_str).collect::<Vec<_>>())?;
        }
    }
    Ok(())
}

impl fmt::Display for Inspection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let protocol = self.protocol.map_or("?".to_string(), |p| p.to_string());
        if self.legacy {
            writeln!(
                f,
                "PyTorch legacy (pre-1.6, non-ZIP) format, little-endian, pickle protocol {protocol}"
            )?;
        } else {
            writeln!(
                f,
                "archive '{}': PyTorch ZIP format, byteorder {}, pickle protocol {protocol}",
                self.archive,
                if self.big_endian { "big" } else { "little" },
            )?;
        }
        let header = [
            "name",
            "dtype",
            "shape",
            "stride",
            "offset",
            "storage",
            "shared with",
            "bytes",
        ];
        write_table(f, header, &self.tensor_rows())?;
        let shared = self.storages.iter().filter(|s| s.tensors.len() > 1).count();
        writeln!(
            f,
            "total: {} tensors over {} storages ({} shared by several tensors), {} bytes of storage data",
            self.tensors.len(),
            self.storages.len(),
            shared,
            self.total_bytes()
        )?;
        let locations: Vec<&str> = {
            let mut l: Vec<&str> = self.storages.iter().map(|s| s.location.as_str()).collect();
            l.sort_unstable();
            l.dedup();
            l
        };
        if !locations.is_empty() {
            writeln!(f, "locations: {}", locations.join(", "))?;
        }
        let refused: Vec<&str> = self.refused_globals().collect();
        if !refused.is_empty() {
            writeln!(
                f,
                "refused globals (not in the weights-only allowlist): {}",
                refused.join(", ")
            )?;
        }
        if let Some(e) = &self.error {
            writeln!(f, "does not load: {e}")?;
        }
        Ok(())
    }
}
