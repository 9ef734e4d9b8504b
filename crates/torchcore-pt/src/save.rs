//! `torch.save` for torchcore: archives `torch.load(weights_only=True)`
//! reads back bit-exactly.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Seek, Write};
use std::path::Path;

use c10_core::{DeviceType, ScalarType, Storage, Tensor};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipWriter};

use crate::error::{PtError, Result};
use crate::unpickle::storage_class_of;
use crate::value::{OrderedDict, Value};

/// The alignment of every record's data in the file (what torch 2.15
/// writes in `.storage_alignment`, and what makes memory mapping work).
pub const STORAGE_ALIGNMENT: u16 = 64;

/// Deepest value tree [`save`] writes (deeper trees are refused rather
/// than risk the stack).
const MAX_SAVE_DEPTH: usize = 1000;

/// A storage to write, in order of first use.
struct StorageEntry {
    storage: Storage,
    dtype: ScalarType,
}

struct Pickler {
    out: Vec<u8>,
    globals: HashMap<&'static str, u32>,
    next_memo: u32,
    storages: Vec<StorageEntry>,
    storage_keys: HashMap<usize, usize>,
    /// Persistent ids of the legacy format: a sixth item, `view_metadata`
    /// (`None`).
    legacy: bool,
}

impl Pickler {
    fn op(&mut self, b: u8) {
        self.out.push(b);
    }

    fn global(&mut self, full: &'static str) {
        if let Some(&i) = self.globals.get(full) {
            if let Ok(i) = u8::try_from(i) {
                self.out.extend_from_slice(&[b'h', i]);
            } else {
                self.out.push(b'j');
                self.out.extend_from_slice(&i.to_le_bytes());
            }
            return;
        }
        let (module, name) = full.split_once(' ').unwrap_or(("torch", full));
        self.out.push(b'c');
        self.out.extend_from_slice(module.as_bytes());
        self.out.push(b'\n');
        self.out.extend_from_slice(name.as_bytes());
        self.out.push(b'\n');
        let i = self.next_memo;
        self.next_memo += 1;
        if let Ok(b) = u8::try_from(i) {
            self.out.extend_from_slice(&[b'q', b]);
        } else {
            self.out.push(b'r');
            self.out.extend_from_slice(&i.to_le_bytes());
        }
        self.globals.insert(full, i);
    }

    fn int(&mut self, v: i128) {
        if (0..=0xff).contains(&v) {
            self.out.extend_from_slice(&[b'K', v as u8]);
        } else if (0..=0xffff).contains(&v) {
            self.out.push(b'M');
            self.out.extend_from_slice(&(v as u16).to_le_bytes());
        } else if let Ok(v) = i32::try_from(v) {
            self.out.push(b'J');
            self.out.extend_from_slice(&v.to_le_bytes());
        } else {
            // LONG1: the shortest little-endian two's complement.
            let bytes = v.to_le_bytes();
            let mut n = 16;
            while n > 1 {
                let top = bytes[n - 1];
                let next_sign = bytes[n - 2] & 0x80;
                if (top == 0 && next_sign == 0) || (top == 0xff && next_sign != 0) {
                    n -= 1;
                } else {
                    break;
                }
            }
            self.out.extend_from_slice(&[0x8a, n as u8]);
            self.out.extend_from_slice(&bytes[..n]);
        }
    }

    fn str(&mut self, s: &str) {
        self.out.push(b'X');
        // Strings longer than 4 GiB are refused earlier (value_len).
        self.out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        self.out.extend_from_slice(s.as_bytes());
    }

    fn tuple_of(&mut self, n: usize) {
        match n {
            0 => self.op(b')'),
            1 => self.op(0x85),
            2 => self.op(0x86),
            3 => self.op(0x87),
            _ => self.op(b't'),
        }
    }

    fn ints_tuple(&mut self, xs: &[i64]) {
        if xs.len() > 3 {
            self.op(b'(');
        }
        for &x in xs {
            self.int(x.into());
        }
        self.tuple_of(xs.len());
    }

    /// The metadata dict torch appends to the rebuild arguments of a lazy
    /// conjugate or negative view (`{'neg': True, 'conj': True}`, keys in
    /// torch's order, only the bits set); nothing for other tensors, as torch.
    fn math_bits(&mut self, t: &Tensor) {
        if !(t.is_conj() || t.is_neg()) {
            return;
        }
        self.op(b'}');
        self.op(b'(');
        if t.is_neg() {
            self.str("neg");
            self.op(0x88);
        }
        if t.is_conj() {
            self.str("conj");
            self.op(0x88);
        }
        self.op(b'u');
    }

    fn empty_ordered_dict(&mut self) {
        self.global("collections OrderedDict");
        self.op(b')');
        self.op(b'R');
    }

    fn value(&mut self, v: &Value, depth: usize) -> Result<()> {
        if depth > MAX_SAVE_DEPTH {
            return Err(PtError::Save(format!(
                "values nested more than {MAX_SAVE_DEPTH} deep"
            )));
        }
        match v {
            Value::None => self.op(b'N'),
            Value::Bool(b) => self.op(if *b { 0x88 } else { 0x89 }),
            Value::Int(i) => self.int((*i).into()),
            Value::BigInt(i) => self.int(*i),
            Value::Float(f) => {
                self.op(b'G');
                self.out.extend_from_slice(&f.to_be_bytes());
            }
            Value::Complex(re, im) => {
                self.global("__builtin__ complex");
                self.value(&Value::Float(*re), depth + 1)?;
                self.value(&Value::Float(*im), depth + 1)?;
                self.op(0x86);
                self.op(b'R');
            }
            Value::Str(s) => {
                check_len(s.len(), "str")?;
                self.str(s);
            }
            Value::Bytes(b) => {
                // Protocol 2 has no bytes opcode: torch (and pickle) write
                // `_codecs.encode(latin-1 text, 'latin1')`.
                check_len(b.len().saturating_mul(2), "bytes")?;
                self.global("_codecs encode");
                let text: String = b.iter().map(|&c| char::from(c)).collect();
                self.str(&text);
                self.str("latin1");
                self.op(0x86);
                self.op(b'R');
            }
            Value::List(xs) => {
                self.op(b']');
                self.items(xs, b'e', depth)?;
            }
            Value::Tuple(xs) => {
                if xs.len() > 3 {
                    self.op(b'(');
                }
                for x in xs {
                    self.value(x, depth + 1)?;
                }
                self.tuple_of(xs.len());
            }
            Value::Set(xs) => {
                self.global("__builtin__ set");
                self.op(b']');
                self.items(xs, b'e', depth)?;
                self.op(0x85);
                self.op(b'R');
            }
            Value::Dict(items) => {
                self.op(b'}');
                self.pairs(items, depth)?;
            }
            Value::OrderedDict(d) => self.ordered_dict(d, depth)?,
            Value::Size(s) => {
                self.global("torch Size");
                self.ints_tuple(s);
                self.op(0x85);
                self.op(b'R');
            }
            Value::Dtype(d) => self.dtype(*d)?,
            Value::Device(d) => {
                self.global("torch device");
                self.str(d);
                self.op(0x85);
                self.op(b'R');
            }
            Value::Tensor(t) => self.tensor(t)?,
            Value::Parameter(t) => self.parameter(t)?,
            Value::Storage(s) => {
                self.storage(&s.storage, s.dtype, storage_class_of(s.dtype).is_none())?
            }
            Value::Pickled(ops) => self.out.extend_from_slice(ops),
        }
        Ok(())
    }

    /// An `OrderedDict`: its items, then its attributes (`_metadata`) set
    /// with `BUILD`.
    fn ordered_dict(&mut self, d: &OrderedDict, depth: usize) -> Result<()> {
        self.empty_ordered_dict();
        self.pairs(&d.items, depth)?;
        if !d.attrs.is_empty() {
            self.op(b'}');
            self.op(b'(');
            for (k, x) in &d.attrs {
                self.str(k);
                self.value(x, depth + 1)?;
            }
            self.op(b'u');
            self.op(b'b');
        }
        Ok(())
    }

    /// A `Parameter`: torch's `_rebuild_parameter(tensor, requires_grad,
    /// OrderedDict())`.
    fn parameter(&mut self, t: &Tensor) -> Result<()> {
        self.global("torch._utils _rebuild_parameter");
        self.tensor(t)?;
        self.op(if t.requires_grad() { 0x88 } else { 0x89 });
        self.empty_ordered_dict();
        self.op(0x87);
        self.op(b'R');
        Ok(())
    }

    fn items(&mut self, xs: &[Value], op: u8, depth: usize) -> Result<()> {
        for chunk in xs.chunks(1000) {
            self.op(b'(');
            for x in chunk {
                self.value(x, depth + 1)?;
            }
            self.op(op);
        }
        Ok(())
    }

    fn pairs(&mut self, items: &[(Value, Value)], depth: usize) -> Result<()> {
        for chunk in items.chunks(1000) {
            self.op(b'(');
            for (k, x) in chunk {
                self.value(k, depth + 1)?;
                self.value(x, depth + 1)?;
            }
            self.op(b'u');
        }
        Ok(())
    }

    fn dtype(&mut self, d: ScalarType) -> Result<()> {
        if d == ScalarType::Undefined {
            return Err(PtError::Save("the undefined dtype".into()));
        }
        let full: &'static str = dtype_global_name(d);
        self.global(full);
        Ok(())
    }

    /// Emits `BINPERSID` of the storage's persistent id, registering the
    /// storage on first use.
    fn storage(&mut self, storage: &Storage, dtype: ScalarType, untyped: bool) -> Result<()> {
        if storage.device().device_type() != DeviceType::Cpu {
            return Err(PtError::Save(format!(
                "a storage on {:?}: torchcore saves CPU storages (copy the tensor to the CPU first)",
                storage.device()
            )));
        }
        let written_dtype = if untyped { ScalarType::Byte } else { dtype };
        let idx = match self.storage_keys.get(&storage.id()) {
            Some(&i) if self.storages[i].dtype != written_dtype && storage.nbytes() == 0 => {
                // An empty storage viewed as two types holds no data to
                // disagree about (torch checks only storages with data): the
                // second type gets an empty record of its own.
                self.storages.push(StorageEntry {
                    storage: storage.clone(),
                    dtype: written_dtype,
                });
                self.storages.len() - 1
            }
            Some(&i) => {
                if self.storages[i].dtype != written_dtype {
                    return Err(PtError::Save(format!(
                        "Cannot save multiple tensors or storages that view the same data as different types \
                         ({:?} and {:?})",
                        self.storages[i].dtype, written_dtype
                    )));
                }
                i
            }
            None => {
                self.storages.push(StorageEntry {
                    storage: storage.clone(),
                    dtype: written_dtype,
                });
                self.storage_keys
                    .insert(storage.id(), self.storages.len() - 1);
                self.storages.len() - 1
            }
        };
        let numel = storage.nbytes() / written_dtype.itemsize().max(1);
        self.op(b'(');
        self.str("storage");
        match storage_class_of(written_dtype).filter(|_| !untyped) {
            Some(class) => self.global(storage_class_global(class)),
            None => self.global("torch.storage UntypedStorage"),
        }
        self.str(&idx.to_string());
        self.str("cpu");
        self.int(numel as i128);
        if self.legacy {
            self.op(b'N');
        }
        self.op(b't');
        self.op(b'Q');
        Ok(())
    }

    fn tensor(&mut self, t: &Tensor) -> Result<()> {
        let dtype = t.dtype();
        if dtype.is_quantized() {
            return Err(PtError::Save(format!(
                "quantized tensors ({dtype:?}) are not supported"
            )));
        }
        if t.device().is_meta() {
            // torch's `Tensor.__reduce_ex__` of a meta tensor: no storage.
            self.global("torch._utils _rebuild_meta_tensor_no_storage");
            self.op(b'(');
            self.dtype(dtype)?;
            self.ints_tuple(t.sizes());
            self.ints_tuple(t.strides());
            self.op(if t.requires_grad() { 0x88 } else { 0x89 });
            self.op(b't');
            self.op(b'R');
            return Ok(());
        }
        let v2 = storage_class_of(dtype).is_some();
        self.global(if v2 {
            "torch._utils _rebuild_tensor_v2"
        } else {
            "torch._utils _rebuild_tensor_v3"
        });
        self.op(b'(');
        self.storage(t.storage(), dtype, !v2)?;
        self.int(t.storage_offset().into());
        self.ints_tuple(t.sizes());
        self.ints_tuple(t.strides());
        self.op(if t.requires_grad() { 0x88 } else { 0x89 });
        self.empty_ordered_dict();
        if !v2 {
            self.dtype(dtype)?;
        }
        self.math_bits(t);
        self.op(b't');
        self.op(b'R');
        Ok(())
    }
}

fn check_len(n: usize, what: &str) -> Result<()> {
    if n > u32::MAX as usize {
        return Err(PtError::Save(format!(
            "a {what} of {n} bytes (protocol 2 strings are at most 4 GiB)"
        )));
    }
    Ok(())
}

fn storage_class_global(class: &'static str) -> &'static str {
    crate::unpickle::STORAGE_CLASSES
        .iter()
        .position(|(c, _)| *c == class)
        .map(|i| STORAGE_GLOBALS[i])
        .unwrap_or("torch.storage UntypedStorage")
}

/// `torch <Class>` for each of [`crate::unpickle::STORAGE_CLASSES`], in order.
const STORAGE_GLOBALS: [&str; 18] = [
    "torch ByteStorage",
    "torch CharStorage",
    "torch ShortStorage",
    "torch IntStorage",
    "torch LongStorage",
    "torch HalfStorage",
    "torch FloatStorage",
    "torch DoubleStorage",
    "torch ComplexHalfStorage",
    "torch ComplexFloatStorage",
    "torch ComplexDoubleStorage",
    "torch BoolStorage",
    "torch BFloat16Storage",
    "torch QInt8Storage",
    "torch QUInt8Storage",
    "torch QInt32Storage",
    "torch QUInt4x2Storage",
    "torch QUInt2x4Storage",
];

/// `torch <dtype name>`: the global torch pickles a dtype as.
fn dtype_global_name(d: ScalarType) -> &'static str {
    macro_rules! names {
        ($($t:ident => $n:literal),* $(,)?) => {
            match d {
                $(ScalarType::$t => concat!("torch ", $n),)*
            }
        };
    }
    names! {
        Byte => "uint8", Char => "int8", Short => "int16", Int => "int32", Long => "int64",
        Half => "float16", Float => "float32", Double => "float64", ComplexHalf => "complex32",
        ComplexFloat => "complex64", ComplexDouble => "complex128", Bool => "bool",
        QInt8 => "qint8", QUInt8 => "quint8", QInt32 => "qint32", BFloat16 => "bfloat16",
        QUInt4x2 => "quint4x2", QUInt2x4 => "quint2x4", Bits1x8 => "bits1x8", Bits2x4 => "bits2x4",
        Bits4x2 => "bits4x2", Bits8 => "bits8", Bits16 => "bits16", Float8_e5m2 => "float8_e5m2",
        Float8_e4m3fn => "float8_e4m3fn", Float8_e5m2fnuz => "float8_e5m2fnuz",
        Float8_e4m3fnuz => "float8_e4m3fnuz", UInt16 => "uint16", UInt32 => "uint32",
        UInt64 => "uint64", UInt1 => "uint1", UInt2 => "uint2", UInt3 => "uint3", UInt4 => "uint4",
        UInt5 => "uint5", UInt6 => "uint6", UInt7 => "uint7", Int1 => "int1", Int2 => "int2",
        Int3 => "int3", Int4 => "int4", Int5 => "int5", Int6 => "int6", Int7 => "int7",
        Float8_e8m0fnu => "float8_e8m0fnu", Float4_e2m1fn_x2 => "float4_e2m1fn_x2",
        BComplex32 => "bcomplex32", Undefined => "undefined",
    }
}

/// Pickles `value` (protocol 2, as torch writes) and collects the
/// storages it uses.
fn pickle(value: &Value) -> Result<(Vec<u8>, Vec<StorageEntry>)> {
    pickle_as(value, false)
}

fn pickle_as(value: &Value, legacy: bool) -> Result<(Vec<u8>, Vec<StorageEntry>)> {
    let mut p = Pickler {
        out: vec![0x80, 2],
        globals: HashMap::new(),
        next_memo: 0,
        storages: Vec::new(),
        storage_keys: HashMap::new(),
        legacy,
    };
    p.value(value, 0)?;
    p.op(b'.');
    Ok((p.out, p.storages))
}

fn zip_io(e: zip::result::ZipError) -> PtError {
    match e {
        zip::result::ZipError::Io(io) => PtError::io("the checkpoint being written", io),
        other => PtError::Zip(other.to_string()),
    }
}

/// Called with (bytes written, total bytes) as storages are written.
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);

/// Options for saving.
///
/// ```
/// use torchcore_pt::SaveOptions;
/// assert!(SaveOptions::default().crc32);
/// assert!(!SaveOptions::default().crc32(false).crc32);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SaveOptions {
    /// Compute each record's CRC-32 (default `true`). `false` is torch's
    /// `serialization.set_crc32_options(False)`: every CRC field of the
    /// archive holds 0, as torch then writes, and saving skips the
    /// checksum pass. `torch.load` reads such archives (it checks no
    /// CRCs), and so does [`crate::load`] (a record whose CRC field is 0
    /// is not checked).
    pub crc32: bool,
    /// Write every storage record as zeros of the storage's length instead
    /// of its bytes (default `false`): torch's
    /// `serialization.skip_data()` context manager at save, which writes
    /// the archive's layout and pickle without the tensor data. Loading
    /// such an archive gives tensors of the saved sizes, strides, dtypes
    /// and sharing, filled with zeros.
    pub skip_data: bool,
}

impl Default for SaveOptions {
    fn default() -> Self {
        SaveOptions {
            crc32: true,
            skip_data: false,
        }
    }
}

impl SaveOptions {
    /// Sets [`SaveOptions::crc32`].
    ///
    /// ```
    /// use torchcore_pt::{load_from_reader, save_to_writer_with, SaveOptions, Value};
    /// let opts = SaveOptions::default().crc32(false);
    /// let bytes = save_to_writer_with(&Value::Int(7), std::io::Cursor::new(Vec::new()), &opts)?;
    /// assert_eq!(load_from_reader(std::io::Cursor::new(bytes.into_inner()))?, Value::Int(7));
    /// # Ok::<(), torchcore_pt::PtError>(())
    /// ```
    pub fn crc32(mut self, on: bool) -> SaveOptions {
        self.crc32 = on;
        self
    }

    /// Sets [`SaveOptions::skip_data`].
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// use torchcore_pt::{load_from_reader, save_to_writer_with, SaveOptions, Value};
    /// let t = Tensor::ones(&[3], ScalarType::Float)?;
    /// let opts = SaveOptions::default().skip_data(true);
    /// let bytes = save_to_writer_with(&Value::Tensor(t), std::io::Cursor::new(Vec::new()), &opts)?;
    /// let Value::Tensor(back) = load_from_reader(std::io::Cursor::new(bytes.into_inner()))? else {
    ///     unreachable!()
    /// };
    /// assert_eq!(back.sizes(), &[3]);
    /// assert_eq!(back.to_vec::<f32>()?, vec![0.0; 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn skip_data(mut self, on: bool) -> SaveOptions {
        self.skip_data = on;
        self
    }
}

/// Bytes checksummed then written at a time: the CRC reads each chunk
/// just before the write copies it, while it is in the cache.
const SAVE_CHUNK: usize = 1 << 20;

/// Writes one stored, 64-byte aligned record. The bytes go straight to
/// the archive's writer (large `write_all`s, so a `BufWriter` passes them
/// through without copying), the CRC-32 computed in the same pass (or not
/// at all, with `crc32` off: the record's CRC field then holds 0, as
/// torch writes); the ZIP writer is then told the length and CRC. Returns
/// the CRC (for the serialization id).
fn put_record<W: Write + Seek>(
    zw: &mut ZipWriter<W>,
    full_name: String,
    bytes: &[u8],
    crc32: bool,
) -> Result<u32> {
    let io = |e| PtError::io("the checkpoint being written", e);
    let opts = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Stored)
        .last_modified_time(DateTime::default())
        .unix_permissions(0o644)
        .with_alignment(STORAGE_ALIGNMENT)
        .large_file(bytes.len() as u64 >= u64::from(u32::MAX));
    zw.start_file(full_name, opts).map_err(zip_io)?;
    let mut crc = crc32fast::Hasher::new();
    {
        // SAFETY: (a contract on the archive's consistency, not on memory)
        // the record was just started, stored uncompressed, so its data
        // go to the underlying writer at its current position; this block
        // only appends the record's bytes there, and `set_file_metadata`
        // below gives the ZIP writer their exact length.
        let w = unsafe { zw.get_mut() }
            .ok_or_else(|| PtError::Save("the ZIP writer is closed".into()))?;
        if crc32 {
            for chunk in bytes.chunks(SAVE_CHUNK) {
                crc.update(chunk);
                w.write_all(chunk).map_err(io)?;
            }
        } else {
            w.write_all(bytes).map_err(io)?;
        }
    }
    let value = if crc32 { crc.finalize() } else { 0 };
    // SAFETY: a record is open (started above); `bytes.len()` bytes of it
    // were written to the underlying writer, and `value` is their CRC-32,
    // or 0 when the options ask for no CRC (torch's
    // `set_crc32_options(False)`: a field readers that check CRCs treat as
    // "not recorded"; it only concerns the archive's metadata).
    unsafe { zw.set_file_metadata(bytes.len() as u64, value) }.map_err(zip_io)?;
    Ok(value)
}

fn write_archive<W: Write + Seek>(
    value: &Value,
    writer: W,
    name: &str,
    progress: Option<Progress<'_>>,
    opts: &SaveOptions,
) -> Result<W> {
    let (pkl, storages) = pickle(value)?;
    let mut zw = ZipWriter::new(writer);
    let mut crcs: Vec<(u32, u64)> = Vec::new();
    let put = |zw: &mut ZipWriter<W>,
               crcs: &mut Vec<(u32, u64)>,
               rec: &str,
               bytes: &[u8]|
     -> Result<()> {
        let crc = put_record(zw, format!("{name}/{rec}"), bytes, opts.crc32)?;
        crcs.push((crc, bytes.len() as u64));
        Ok(())
    };
    put(&mut zw, &mut crcs, "data.pkl", &pkl)?;
    put(&mut zw, &mut crcs, ".format_version", b"1")?;
    let alignment = STORAGE_ALIGNMENT.to_string();
    put(
        &mut zw,
        &mut crcs,
        ".storage_alignment",
        alignment.as_bytes(),
    )?;
    put(&mut zw, &mut crcs, "byteorder", little_or_big())?;
    let total: u64 = storages.iter().map(|s| s.storage.nbytes() as u64).sum();
    let mut done = 0u64;
    let mut progress = progress;
    for (key, s) in storages.iter().enumerate() {
        if opts.skip_data {
            let zeros = vec![0u8; s.storage.nbytes()];
            put(&mut zw, &mut crcs, &format!("data/{key}"), &zeros)?;
        } else {
            let guard = s.storage.read()?;
            put(&mut zw, &mut crcs, &format!("data/{key}"), guard.bytes()?)?;
        }
        done += s.storage.nbytes() as u64;
        if let Some(p) = progress.as_mut() {
            p(done, total);
        }
    }
    put(&mut zw, &mut crcs, "version", b"3\n")?;
    // Without CRCs the id still differs between contents: the pickle's
    // bytes (which name every storage and its size) go in too.
    if !opts.crc32 {
        crcs.push((crc32fast::hash(&pkl), pkl.len() as u64));
    }
    let id = serialization_id(&crcs);
    put(&mut zw, &mut crcs, ".data/serialization_id", id.as_bytes())?;
    zw.finish().map_err(zip_io)
}

fn little_or_big() -> &'static [u8] {
    if cfg!(target_endian = "big") {
        b"big"
    } else {
        b"little"
    }
}

/// 40 decimal digits derived from the records' CRCs and lengths:
/// deterministic, and different for different contents.
fn serialization_id(records: &[(u32, u64)]) -> String {
    let mut a: u64 = 0xcbf2_9ce4_8422_2325;
    let mut b: u64 = 0x9e37_79b9_7f4a_7c15;
    for &(crc, len) in records {
        for x in [u64::from(crc), len] {
            a = (a ^ x).wrapping_mul(0x0100_0000_01b3);
            b = (b ^ x.rotate_left(17)).wrapping_mul(0xff51_afd7_ed55_8ccd);
        }
    }
    format!("{a:020}{b:020}")
}

/// Saves `value` to `path` as `torch.save` does (the ZIP format, every
/// record 64-byte aligned, shared storages written once, views as
/// storage + offset + strides); the archive's top folder is the file's
/// stem. The output depends only on `value`.
///
/// ```
/// use torchcore_pt::{load, save, Value};
/// use c10_core::{Tensor, ScalarType};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("numbers.pt");
/// let numbers = Tensor::arange(1, 10, 1, ScalarType::Long)?;
/// let evens = numbers.as_strided(&[4], &[2], Some(1))?;
/// save(&Value::List(vec![Value::Tensor(numbers), Value::Tensor(evens)]), &path)?;
/// let Value::List(back) = load(&path)? else { panic!() };
/// let (n, e) = (back[0].as_tensor().unwrap(), back[1].as_tensor().unwrap());
/// assert!(n.storage().is_alias_of(e.storage())); // one storage again
/// assert_eq!(e.to_vec::<i64>()?, [2, 4, 6, 8]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save(value: &Value, path: impl AsRef<Path>) -> Result<()> {
    save_with_progress(value, path, None)
}

/// [`save`], calling `progress(bytes written, total)` after each storage.
pub fn save_with_progress(
    value: &Value,
    path: impl AsRef<Path>,
    progress: Option<Progress<'_>>,
) -> Result<()> {
    save_with(value, path, progress, &SaveOptions::default())
}

/// [`save`] with options, calling `progress(bytes written, total)` (if
/// given) after each storage.
///
/// ```
/// use torchcore_pt::{load, save_with, SaveOptions, Value};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("nocrc.pt");
/// save_with(&Value::Int(3), &path, None, &SaveOptions::default().crc32(false))?;
/// assert_eq!(load(&path)?, Value::Int(3));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save_with(
    value: &Value,
    path: impl AsRef<Path>,
    progress: Option<Progress<'_>>,
    opts: &SaveOptions,
) -> Result<()> {
    let path = path.as_ref();
    let name = crate::load::archive_name_for(path);
    let f = File::create(path).map_err(|e| PtError::io_path(path, e))?;
    let w = write_archive(value, BufWriter::new(f), &name, progress, opts)?;
    let f = w
        .into_inner()
        .map_err(|e| PtError::io_path(path, e.into_error()))?;
    f.sync_all().map_err(|e| PtError::io_path(path, e))?;
    Ok(())
}

/// Saves `value` into a seekable writer (top folder `archive`, as torch
/// uses for file objects) and returns the writer.
///
/// ```
/// use torchcore_pt::{save_to_writer, Value};
/// let bytes = save_to_writer(&Value::Str("hi".into()), std::io::Cursor::new(Vec::new()))?.into_inner();
/// assert_eq!(&bytes[..4], b"PK\x03\x04");
/// # Ok::<(), torchcore_pt::PtError>(())
/// ```
pub fn save_to_writer<W: Write + Seek>(value: &Value, writer: W) -> Result<W> {
    save_to_writer_with(value, writer, &SaveOptions::default())
}

/// [`save_to_writer`] with options (see [`SaveOptions`]).
///
/// ```
/// use torchcore_pt::{save_to_writer_with, SaveOptions, Value};
/// let opts = SaveOptions::default().crc32(false);
/// let bytes = save_to_writer_with(&Value::Int(1), std::io::Cursor::new(Vec::new()), &opts)?;
/// assert_eq!(&bytes.into_inner()[..4], b"PK\x03\x04");
/// # Ok::<(), torchcore_pt::PtError>(())
/// ```
pub fn save_to_writer_with<W: Write + Seek>(
    value: &Value,
    writer: W,
    opts: &SaveOptions,
) -> Result<W> {
    write_archive(value, writer, "archive", None, opts)
}

/// Saves `value` in the legacy (pre-1.6, non-ZIP) format, what
/// `torch.save(obj, f, _use_new_zipfile_serialization=False)` writes: the
/// magic number, the protocol version and `sys_info` pickles, the object
/// (storages as six-item persistent ids), the storage keys, then each
/// storage as an 8-byte little-endian element count and its bytes. Prefer
/// [`save`]: this format cannot be memory-mapped.
///
/// ```
/// use torchcore_pt::{load_from_reader, save_legacy_to_writer, Value};
/// use c10_core::{Tensor, ScalarType};
/// let t = Tensor::arange(0, 3, 1, ScalarType::Long)?;
/// let bytes = save_legacy_to_writer(&Value::Tensor(t), Vec::new())?;
/// let back = load_from_reader(std::io::Cursor::new(bytes))?;
/// assert_eq!(back.as_tensor().unwrap().to_vec::<i64>()?, [0, 1, 2]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save_legacy_to_writer<W: Write>(value: &Value, mut writer: W) -> Result<W> {
    if cfg!(target_endian = "big") {
        return Err(PtError::Save(
            "the legacy format stores little-endian data; this machine is big-endian".into(),
        ));
    }
    let io = |e| PtError::io("the checkpoint being written", e);
    let (obj, storages) = pickle_as(value, true)?;
    let mut head = vec![0x80, 2, 0x8a, 10];
    head.extend_from_slice(&0x1950a86a20f9469cfc6c_u128.to_le_bytes()[..10]);
    head.push(b'.');
    head.extend_from_slice(&[0x80, 2, b'M', 0xe9, 0x03, b'.']); // 1001
    let s = |x: &str| Value::Str(x.to_string());
    let sys_info = Value::Dict(vec![
        (s("protocol_version"), Value::Int(1001)),
        (s("little_endian"), Value::Bool(true)),
        (
            s("type_sizes"),
            Value::Dict(vec![
                (s("short"), Value::Int(2)),
                (s("int"), Value::Int(4)),
                (s("long"), Value::Int(4)),
            ]),
        ),
    ]);
    head.extend(pickle(&sys_info)?.0);
    head.extend(obj);
    let keys = Value::List((0..storages.len()).map(|i| s(&i.to_string())).collect());
    head.extend(pickle(&keys)?.0);
    writer.write_all(&head).map_err(io)?;
    for e in &storages {
        let guard = e.storage.read()?;
        let bytes = guard.bytes()?;
        let count = (bytes.len() / e.dtype.itemsize().max(1)) as u64;
        writer.write_all(&count.to_le_bytes()).map_err(io)?;
        writer.write_all(bytes).map_err(io)?;
    }
    writer.flush().map_err(io)?;
    Ok(writer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// The records go straight to the underlying writer (`put_record`'s
    /// unsafe blocks): with and without CRCs, the archive reads back, and
    /// its CRC fields are the data's CRC-32 or 0.
    #[test]
    fn records_written_directly_read_back_with_and_without_crcs() {
        let t = Tensor::arange(0, 5, 1, c10_core::ScalarType::Int).unwrap();
        let v = Value::List(vec![Value::Tensor(t), Value::Str("x".into())]);
        for crc32 in [true, false] {
            let opts = SaveOptions::default().crc32(crc32);
            let bytes = save_to_writer_with(&v, Cursor::new(Vec::new()), &opts)
                .unwrap()
                .into_inner();
            let mut z = zip::ZipArchive::new(Cursor::new(&bytes)).unwrap();
            for i in 0..z.len() {
                let f = z.by_index_raw(i).unwrap();
                let start = usize::try_from(f.data_start().unwrap()).unwrap();
                let data = &bytes[start..start + usize::try_from(f.size()).unwrap()];
                let want = if crc32 { crc32fast::hash(data) } else { 0 };
                assert_eq!(f.crc32(), want, "{:?}", f.name());
                assert_eq!(start % usize::from(STORAGE_ALIGNMENT), 0);
            }
            let back = crate::load_from_reader(Cursor::new(bytes)).unwrap();
            let Value::List(xs) = back else { panic!() };
            assert_eq!(
                xs[0].as_tensor().unwrap().to_vec::<i32>().unwrap(),
                [0, 1, 2, 3, 4]
            );
        }
    }

    /// Opcodes of a `Value::Pickled` are spliced between the writer's own
    /// memoized values without disturbing the memo: a shared tensor around
    /// them still loads as one tensor over one storage.
    #[test]
    fn pickled_opcodes_splice_between_memoized_values() {
        let t = Tensor::arange(0, 4, 1, c10_core::ScalarType::Int).unwrap();
        let v = Value::List(vec![
            Value::Tensor(t.clone()),
            Value::Pickled(b"K\x07".to_vec()), // BININT1 7
            Value::Tensor(t),
        ]);
        let bytes = save_to_writer(&v, Cursor::new(Vec::new()))
            .unwrap()
            .into_inner();
        let Value::List(back) = crate::load_from_reader(Cursor::new(bytes)).unwrap() else {
            panic!("not a list")
        };
        assert_eq!(back[1], Value::Int(7));
        let (a, b) = (back[0].as_tensor().unwrap(), back[2].as_tensor().unwrap());
        assert!(a.storage().is_alias_of(b.storage()));
        assert_eq!(a.to_vec::<i32>().unwrap(), vec![0, 1, 2, 3]);
    }

    /// `skip_data` writes zeros of each storage's length, in the same
    /// layout: the archive has the same size and the same records.
    #[test]
    fn skip_data_writes_zeros_in_the_same_layout() {
        let t = Tensor::arange(1, 9, 1, c10_core::ScalarType::Long).unwrap();
        let v = Value::Tensor(t);
        let full = save_to_writer(&v, Cursor::new(Vec::new()))
            .unwrap()
            .into_inner();
        let opts = SaveOptions::default().skip_data(true);
        let skipped = save_to_writer_with(&v, Cursor::new(Vec::new()), &opts)
            .unwrap()
            .into_inner();
        assert_eq!(full.len(), skipped.len());
        let mut z = zip::ZipArchive::new(Cursor::new(&skipped)).unwrap();
        let name = "archive/data/0";
        let mut rec = Vec::new();
        std::io::Read::read_to_end(&mut z.by_name(name).unwrap(), &mut rec).unwrap();
        assert_eq!(rec, vec![0u8; 64]);
    }
}
