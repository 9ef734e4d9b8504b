//! A weights-only pickle VM.
//!
//! It executes the opcodes of pickle protocols 2 to 5 (the binary ones;
//! the text opcodes of protocols 0 and 1 are refused) over a small set of
//! values, and resolves `GLOBAL`/`STACK_GLOBAL` against a fixed allowlist:
//! the tensor and parameter rebuild functions, the storage classes, the
//! dtypes, `torch.Size`, `torch.device`, `collections.OrderedDict`, and the
//! builtins `set`, `frozenset`, `complex`, `bytearray` and
//! `_codecs.encode`. Nothing is imported and nothing is called: each
//! allowed global is a variant of a private enum, and `REDUCE` on it runs this
//! crate's own code. Any other global is an error that names it.
//!
//! Hostile input is bounded: every opcode reads lengths that are checked
//! against the remaining input before anything is allocated, the memo is a
//! map (huge indices cost nothing), tuples may nest at most [`MAX_DEPTH`]
//! deep, and turning the VM's shared objects into a [`Value`] tree is
//! limited in depth, refuses cycles, and may produce at most a budget of
//! nodes proportional to the pickle's length.

use std::collections::HashMap;
use std::rc::Rc;

use c10_core::{ScalarType, Storage, Tensor};

use crate::error::{PtError, Result};
use crate::value::{OrderedDict, StorageValue, Value};

/// How deep containers may nest in a loaded value.
pub const MAX_DEPTH: usize = 256;

/// One storage a pickle names: what the VM asks
/// [`StorageSource::load_storage`] for.
///
/// ```
/// use torchcore_pt::unpickle::StorageRecord;
/// use c10_core::ScalarType;
/// let rec = StorageRecord { key: "0", nbytes: 8, location: "cpu", dtype: ScalarType::Float };
/// assert_eq!(rec.nbytes / rec.dtype.itemsize(), 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StorageRecord<'a> {
    /// The record name, validated by the VM: ASCII letters, digits, `_`,
    /// `-`, `.`, not `.` or `..`.
    pub key: &'a str,
    /// Its length in bytes.
    pub nbytes: usize,
    /// The device tag it was saved on (`cpu`, `cuda:0`, ...).
    pub location: &'a str,
    /// The type of its elements.
    pub dtype: ScalarType,
}

/// What the VM asks of the archive: the bytes of one storage record.
///
/// ```
/// use torchcore_pt::unpickle::{StorageRecord, StorageSource};
/// use c10_core::{ScalarType, Storage};
/// /// Serves every storage zero-filled (for tests).
/// struct Zeros;
/// impl StorageSource for Zeros {
///     fn load_storage(&mut self, rec: &StorageRecord<'_>) -> Result<Storage, torchcore_pt::PtError> {
///         Ok(alloc_cpu::empty_storage(rec.nbytes)?)
///     }
/// }
/// let rec = StorageRecord { key: "0", nbytes: 8, location: "cpu", dtype: ScalarType::Float };
/// let s = Zeros.load_storage(&rec)?;
/// assert_eq!(s.nbytes(), 8);
/// # Ok::<(), torchcore_pt::PtError>(())
/// ```
pub trait StorageSource {
    /// Loads the storage `rec` names.
    ///
    /// ```
    /// # use torchcore_pt::unpickle::{StorageRecord, StorageSource};
    /// # use c10_core::{ScalarType, Storage};
    /// struct Refuse;
    /// impl StorageSource for Refuse {
    ///     fn load_storage(&mut self, rec: &StorageRecord<'_>) -> Result<Storage, torchcore_pt::PtError> {
    ///         Err(torchcore_pt::PtError::Archive(format!("no record for {}", rec.key)))
    ///     }
    /// }
    /// let rec = StorageRecord { key: "7", nbytes: 4, location: "cpu", dtype: ScalarType::Int };
    /// assert!(Refuse.load_storage(&rec).is_err());
    /// ```
    fn load_storage(&mut self, rec: &StorageRecord<'_>) -> Result<Storage>;

    /// Whether persistent ids may carry the legacy format's sixth item,
    /// `view_metadata` (accepted only when it is `None`). The ZIP format
    /// has five items; the default is `false`.
    ///
    /// ```
    /// # use torchcore_pt::unpickle::{StorageRecord, StorageSource};
    /// # use c10_core::{ScalarType, Storage};
    /// struct Zip;
    /// impl StorageSource for Zip {
    ///     fn load_storage(&mut self, rec: &StorageRecord<'_>) -> Result<Storage, torchcore_pt::PtError> {
    ///         Err(torchcore_pt::PtError::Archive(format!("no record for {}", rec.key)))
    ///     }
    /// }
    /// assert!(!Zip.legacy_ids());
    /// ```
    fn legacy_ids(&self) -> bool {
        false
    }

    /// How Python 2 strings (`BINSTRING`, `SHORT_BINSTRING`) are read;
    /// the default is Latin-1 text.
    ///
    /// ```
    /// # use torchcore_pt::unpickle::{StorageRecord, StorageSource};
    /// # use c10_core::{ScalarType, Storage};
    /// struct Zip;
    /// impl StorageSource for Zip {
    ///     fn load_storage(&mut self, rec: &StorageRecord<'_>) -> Result<Storage, torchcore_pt::PtError> {
    ///         Err(torchcore_pt::PtError::Archive(format!("no record for {}", rec.key)))
    ///     }
    /// }
    /// assert_eq!(Zip.py2_strings(), torchcore_pt::Py2Strings::Latin1);
    /// ```
    fn py2_strings(&self) -> crate::load::Py2Strings {
        crate::load::Py2Strings::Latin1
    }
}

/// What a storage's persistent id says.
struct PersistentId {
    /// The element type; `None` for an untyped storage (read as bytes).
    dtype: Option<ScalarType>,
    key: Rc<str>,
    location: Rc<str>,
    numel: u64,
    /// The legacy format's `view_metadata`: (view key, element offset,
    /// element count) of a view of storage `key`.
    view: Option<(Rc<str>, u64, u64)>,
}

/// An allowed global.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Global {
    OrderedDict,
    Set,
    FrozenSet,
    Complex,
    ByteArray,
    CodecsEncode,
    Size,
    Device,
    RebuildTensorV2,
    RebuildTensorV3,
    RebuildParameter,
    RebuildParameterWithState,
    /// `torch._utils._rebuild_meta_tensor_no_storage`: what `torch.save`
    /// writes for a meta tensor.
    RebuildMetaTensor,
    /// A storage class; `None` for `UntypedStorage`.
    StorageType(Option<ScalarType>),
}

/// The legacy typed-storage class names and their dtypes.
pub(crate) const STORAGE_CLASSES: &[(&str, ScalarType)] = &[
    ("ByteStorage", ScalarType::Byte),
    ("CharStorage", ScalarType::Char),
    ("ShortStorage", ScalarType::Short),
    ("IntStorage", ScalarType::Int),
    ("LongStorage", ScalarType::Long),
    ("HalfStorage", ScalarType::Half),
    ("FloatStorage", ScalarType::Float),
    ("DoubleStorage", ScalarType::Double),
    ("ComplexHalfStorage", ScalarType::ComplexHalf),
    ("ComplexFloatStorage", ScalarType::ComplexFloat),
    ("ComplexDoubleStorage", ScalarType::ComplexDouble),
    ("BoolStorage", ScalarType::Bool),
    ("BFloat16Storage", ScalarType::BFloat16),
    ("QInt8Storage", ScalarType::QInt8),
    ("QUInt8Storage", ScalarType::QUInt8),
    ("QInt32Storage", ScalarType::QInt32),
    ("QUInt4x2Storage", ScalarType::QUInt4x2),
    ("QUInt2x4Storage", ScalarType::QUInt2x4),
];

/// The typed-storage class name torch writes for `dtype`, if it has one
/// (dtypes without one are saved as `UntypedStorage` with
/// `_rebuild_tensor_v3`).
pub(crate) fn storage_class_of(dtype: ScalarType) -> Option<&'static str> {
    if dtype == ScalarType::ComplexHalf {
        // torch 2.15 saves complex32 through UntypedStorage.
        return None;
    }
    STORAGE_CLASSES
        .iter()
        .find(|(_, d)| *d == dtype)
        .map(|(n, _)| *n)
}

fn resolve_global(module: &str, name: &str) -> Result<Node> {
    let g = match (module, name) {
        ("collections", "OrderedDict") => Global::OrderedDict,
        ("builtins" | "__builtin__", "set") => Global::Set,
        ("builtins" | "__builtin__", "frozenset") => Global::FrozenSet,
        ("builtins" | "__builtin__", "complex") => Global::Complex,
        ("builtins" | "__builtin__", "bytearray") => Global::ByteArray,
        ("_codecs", "encode") => Global::CodecsEncode,
        ("torch", "Size") => Global::Size,
        ("torch", "device") => Global::Device,
        ("torch._utils", "_rebuild_tensor_v2") => Global::RebuildTensorV2,
        ("torch._utils", "_rebuild_tensor_v3") => Global::RebuildTensorV3,
        ("torch._utils", "_rebuild_parameter") => Global::RebuildParameter,
        ("torch._utils", "_rebuild_parameter_with_state") => Global::RebuildParameterWithState,
        ("torch._utils", "_rebuild_meta_tensor_no_storage") => Global::RebuildMetaTensor,
        ("torch.storage" | "torch", "UntypedStorage") => Global::StorageType(None),
        ("torch", n) => {
            if let Some((_, d)) = STORAGE_CLASSES.iter().find(|(c, _)| *c == n) {
                Global::StorageType(Some(*d))
            } else if let Some(d) = dtype_global(n) {
                return Ok(Node::Dtype(d));
            } else {
                return Err(unsupported(module, name));
            }
        }
        _ => return Err(unsupported(module, name)),
    };
    Ok(Node::Global(g))
}

/// Whether the weights-only VM accepts global `module.name`.
pub(crate) fn is_allowed_global(module: &str, name: &str) -> bool {
    resolve_global(module, name).is_ok()
}

fn dtype_global(name: &str) -> Option<ScalarType> {
    if name == "undefined" || name.starts_with("torch.") {
        return None;
    }
    ScalarType::from_torch_name(name).ok()
}

fn unsupported(module: &str, name: &str) -> PtError {
    PtError::UnsupportedGlobal {
        module: module.to_string(),
        name: name.to_string(),
    }
}

#[derive(Debug)]
struct TupleNode {
    items: Vec<Node>,
    depth: usize,
}

#[derive(Debug)]
struct StorageNode {
    storage: Storage,
    dtype: ScalarType,
    untyped: bool,
    key: String,
    numel: u64,
    /// For a storage view of the legacy format (`view_metadata` set,
    /// files written before torch 1.0): the element offset of the view
    /// in `storage` (the root storage). Its `numel` is the view's.
    view_base: Option<u64>,
    /// For a storage view: the storage slice over its bytes (made once
    /// per view key, as torch makes one `TypedStorage` per view key), the
    /// value a bare view loads as.
    slice: Option<Storage>,
}

/// A value on the VM's stack. Cheap to clone; mutable containers live in
/// the arena and are referred to by index.
#[derive(Debug, Clone)]
enum Node {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Complex(f64, f64),
    Str(Rc<str>),
    Bytes(Rc<[u8]>),
    Tuple(Rc<TupleNode>),
    Obj(usize),
    Global(Global),
    Storage(Rc<StorageNode>),
    Tensor(Tensor),
    Parameter(Tensor),
    Size(Rc<[i64]>),
    Dtype(ScalarType),
    Device(Rc<str>),
}

impl Node {
    fn type_name(&self, vm: &Vm<'_>) -> &'static str {
        match self {
            Node::None => "NoneType",
            Node::Bool(_) => "bool",
            Node::Int(_) => "int",
            Node::Float(_) => "float",
            Node::Complex(..) => "complex",
            Node::Str(_) => "str",
            Node::Bytes(_) => "bytes",
            Node::Tuple(_) => "tuple",
            Node::Obj(i) => match vm.arena.get(*i) {
                Some(Container::List(_)) => "list",
                Some(Container::Dict(..)) => "dict",
                Some(Container::Set(_)) => "set",
                Some(Container::OrderedDict(..)) => "OrderedDict",
                None => "object",
            },
            Node::Global(_) => "global",
            Node::Storage(_) => "storage",
            Node::Tensor(_) => "Tensor",
            Node::Parameter(_) => "Parameter",
            Node::Size(_) => "torch.Size",
            Node::Dtype(_) => "torch.dtype",
            Node::Device(_) => "torch.device",
        }
    }

    fn depth(&self) -> usize {
        match self {
            Node::Tuple(t) => t.depth,
            _ => 0,
        }
    }
}

/// A dict key, hashed as Python would compare it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    None,
    Int(i128),
    Float(u64),
    Complex(u64, u64),
    Str(Rc<str>),
    Bytes(Rc<[u8]>),
    Tuple(Vec<Key>),
    Dtype(ScalarType),
    Device(Rc<str>),
    Size(Rc<[i64]>),
}

#[derive(Debug, Default)]
struct DictBody {
    items: Vec<(Node, Node)>,
    index: HashMap<Key, usize>,
}

#[derive(Debug)]
enum Container {
    List(Vec<Node>),
    Dict(DictBody),
    Set(Vec<Node>),
    OrderedDict(DictBody, Vec<(String, Node)>),
}

struct Vm<'a> {
    data: &'a [u8],
    pos: usize,
    op_pos: usize,
    stack: Vec<Node>,
    marks: Vec<usize>,
    memo: HashMap<u32, Node>,
    arena: Vec<Container>,
    storages: HashMap<String, Rc<StorageNode>>,
    /// The legacy format's storage views, by view key.
    views: HashMap<String, Rc<StorageNode>>,
    source: &'a mut dyn StorageSource,
}

/// Runs the weights-only VM over `pickle`, loading storages through
/// `source`, and returns the value the pickle builds.
///
/// ```
/// use torchcore_pt::unpickle::{unpickle, StorageRecord, StorageSource};
/// use torchcore_pt::{PtError, Value};
/// struct NoStorages;
/// impl StorageSource for NoStorages {
///     fn load_storage(&mut self, rec: &StorageRecord<'_>) -> Result<c10_core::Storage, PtError> {
///         Err(PtError::Archive(format!("no storage {}", rec.key)))
///     }
/// }
/// // PROTO 2, EMPTY_LIST, BININT1 7, APPEND, STOP
/// let v = unpickle(b"\x80\x02]K\x07a.", &mut NoStorages)?;
/// assert_eq!(v, Value::List(vec![Value::Int(7)]));
/// // A global outside the allowlist is refused, by name.
/// let err = unpickle(b"\x80\x02cos\nsystem\n.", &mut NoStorages).unwrap_err();
/// assert!(err.to_string().contains("Unsupported global: GLOBAL os.system"));
/// # Ok::<(), PtError>(())
/// ```
pub fn unpickle(pickle: &[u8], source: &mut dyn StorageSource) -> Result<Value> {
    unpickle_prefix(pickle, source).map(|(v, _)| v)
}

/// Runs the VM over the first pickle in `data` and returns its value and
/// the offset just past its `STOP` (the legacy format is several pickles
/// back to back, followed by raw storage bytes).
pub(crate) fn unpickle_prefix(
    pickle: &[u8],
    source: &mut dyn StorageSource,
) -> Result<(Value, usize)> {
    let mut vm = Vm {
        data: pickle,
        pos: 0,
        op_pos: 0,
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
        arena: Vec::new(),
        storages: HashMap::new(),
        views: HashMap::new(),
        source,
    };
    let root = vm.run()?;
    let end = vm.pos;
    let mut budget = end.saturating_mul(16).saturating_add(4096);
    let mut on_path = vec![false; vm.arena.len()];
    Ok((vm.to_value(&root, 0, &mut budget, &mut on_path)?, end))
}

impl<'a> Vm<'a> {
    fn err(&self, msg: impl Into<String>) -> PtError {
        PtError::Pickle {
            pos: self.op_pos,
            msg: msg.into(),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let data: &'a [u8] = self.data;
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| {
                self.err(format!(
                    "pickle truncated: {n} bytes needed, {} left",
                    data.len() - self.pos
                ))
            })?;
        let s = &data[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    fn len_u64(&mut self) -> Result<usize> {
        let n = self.u64()?;
        usize::try_from(n).map_err(|_| self.err(format!("length {n} does not fit in memory")))
    }

    fn line(&mut self) -> Result<&'a str> {
        let data: &'a [u8] = self.data;
        let rest = &data[self.pos..];
        let nl = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| self.err("GLOBAL: no newline before the end of the pickle"))?;
        self.pos += nl + 1;
        std::str::from_utf8(&rest[..nl]).map_err(|_| self.err("GLOBAL: name is not UTF-8"))
    }

    fn utf8(&mut self, n: usize) -> Result<Node> {
        let b = self.take(n)?;
        let s = std::str::from_utf8(b)
            .map_err(|e| self.err(format!("invalid UTF-8 in string: {e}")))?;
        Ok(Node::Str(Rc::from(s)))
    }

    fn push(&mut self, n: Node) {
        self.stack.push(n);
    }

    fn pop(&mut self) -> Result<Node> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.err("stack underflow (pop past the last MARK or an empty stack)"));
        }
        self.stack.pop().ok_or_else(|| self.err("stack underflow"))
    }

    fn top(&self) -> Result<&Node> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.err("stack underflow (no object before the opcode)"));
        }
        self.stack.last().ok_or_else(|| self.err("stack underflow"))
    }

    fn pop_mark(&mut self) -> Result<Vec<Node>> {
        let m = self
            .marks
            .pop()
            .ok_or_else(|| self.err("MARK expected but none on the stack"))?;
        Ok(self.stack.split_off(m))
    }

    fn tuple(&self, items: Vec<Node>) -> Result<Node> {
        let depth = 1 + items.iter().map(Node::depth).max().unwrap_or(0);
        if depth > MAX_DEPTH {
            return Err(self.err(format!("tuples nested more than {MAX_DEPTH} deep")));
        }
        Ok(Node::Tuple(Rc::new(TupleNode { items, depth })))
    }

    fn new_obj(&mut self, c: Container) -> Node {
        self.arena.push(c);
        Node::Obj(self.arena.len() - 1)
    }

    fn memo_get(&self, i: u32) -> Result<Node> {
        self.memo.get(&i).cloned().ok_or_else(|| {
            self.err(format!(
                "memo key {i} was never stored (BINGET before BINPUT)"
            ))
        })
    }

    fn memo_put(&mut self, i: u32) -> Result<()> {
        let v = self.top()?.clone();
        self.memo.insert(i, v);
        Ok(())
    }

    /// Runs the opcodes up to `STOP` and returns what it pops.
    fn run(&mut self) -> Result<Node> {
        loop {
            self.op_pos = self.pos;
            let op = self.u8()?;
            if op == b'.' {
                return self.pop();
            }
            if !self.scalar_op(op)? && !self.container_op(op)? {
                self.object_op(op)?;
            }
        }
    }

    /// The opcodes of the values that hold no other value (none, bools,
    /// ints, floats, strings, bytes), and the protocol's own (`PROTO`,
    /// `FRAME`); `false` for any other.
    fn scalar_op(&mut self, op: u8) -> Result<bool> {
        match op {
            0x80 => {
                let p = self.u8()?;
                if p > 5 {
                    return Err(self.err(format!(
                        "unsupported pickle protocol {p} (0 to 5 are known)"
                    )));
                }
            }
            0x95 => {
                // FRAME: a length hint only.
                self.u64()?;
            }
            b'N' => self.push(Node::None),
            0x88 => self.push(Node::Bool(true)),
            0x89 => self.push(Node::Bool(false)),
            b'J' => {
                let b = self.take(4)?;
                self.push(Node::Int(
                    i32::from_le_bytes([b[0], b[1], b[2], b[3]]).into(),
                ));
            }
            b'K' => {
                let v = self.u8()?;
                self.push(Node::Int(v.into()));
            }
            b'M' => {
                let v = self.u16()?;
                self.push(Node::Int(v.into()));
            }
            0x8a => {
                let n = usize::from(self.u8()?);
                let v = self.long(n)?;
                self.push(v);
            }
            0x8b => {
                let n = self.u32()?;
                let n = usize::try_from(n).map_err(|_| self.err("LONG4 length too large"))?;
                let v = self.long(n)?;
                self.push(v);
            }
            b'G' => {
                let b = self.take(8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                self.push(Node::Float(f64::from_be_bytes(a)));
            }
            b'X' => {
                let n = self.u32()? as usize;
                let s = self.utf8(n)?;
                self.push(s);
            }
            0x8c => {
                let n = usize::from(self.u8()?);
                let s = self.utf8(n)?;
                self.push(s);
            }
            0x8d => {
                let n = self.len_u64()?;
                let s = self.utf8(n)?;
                self.push(s);
            }
            b'T' | b'U' => {
                // Python 2 `str`: read as Latin-1 text (what
                // `encoding='latin1'` does).
                let n = if op == b'T' {
                    let b = self.take(4)?;
                    let n = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    usize::try_from(n)
                        .map_err(|_| self.err(format!("BINSTRING with negative length {n}")))?
                } else {
                    usize::from(self.u8()?)
                };
                let b = self.take(n)?;
                let node = self.py2_string(b)?;
                self.push(node);
            }
            b'B' | b'C' | 0x8e | 0x96 => {
                let n = match op {
                    b'B' => self.u32()? as usize,
                    b'C' => usize::from(self.u8()?),
                    _ => self.len_u64()?,
                };
                let b = self.take(n)?;
                self.push(Node::Bytes(Rc::from(b)));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The opcodes of the stack (`MARK`, `POP`, `POP_MARK`, `DUP`) and
    /// those that build and fill containers (tuples, lists, dicts, sets);
    /// `false` for any other.
    fn container_op(&mut self, op: u8) -> Result<bool> {
        match op {
            b'(' => self.marks.push(self.stack.len()),
            b'0' => {
                self.pop()?;
            }
            b'1' => {
                self.pop_mark()?;
            }
            b'2' => {
                let v = self.top()?.clone();
                self.push(v);
            }
            b'}' => {
                let d = self.new_obj(Container::Dict(DictBody::default()));
                self.push(d);
            }
            b']' => {
                let l = self.new_obj(Container::List(Vec::new()));
                self.push(l);
            }
            b')' => {
                let t = self.tuple(Vec::new())?;
                self.push(t);
            }
            0x8f => {
                let s = self.new_obj(Container::Set(Vec::new()));
                self.push(s);
            }
            b't' => {
                let items = self.pop_mark()?;
                let t = self.tuple(items)?;
                self.push(t);
            }
            0x85..=0x87 => {
                let n = usize::from(op - 0x84);
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.pop()?);
                }
                items.reverse();
                let t = self.tuple(items)?;
                self.push(t);
            }
            b'l' => {
                let items = self.pop_mark()?;
                let l = self.new_obj(Container::List(items));
                self.push(l);
            }
            b'd' => {
                let items = self.pop_mark()?;
                let d = self.new_obj(Container::Dict(DictBody::default()));
                self.set_items(&d, items)?;
                self.push(d);
            }
            0x91 => {
                let items = self.pop_mark()?;
                let s = self.new_obj(Container::Set(items));
                self.push(s);
            }
            b'a' => {
                let v = self.pop()?;
                let l = self.top()?.clone();
                self.append(&l, vec![v])?;
            }
            b'e' => {
                let items = self.pop_mark()?;
                let l = self.top()?.clone();
                self.append(&l, items)?;
            }
            b's' => {
                let v = self.pop()?;
                let k = self.pop()?;
                let d = self.top()?.clone();
                self.set_items(&d, vec![k, v])?;
            }
            b'u' => {
                let items = self.pop_mark()?;
                let d = self.top()?.clone();
                self.set_items(&d, items)?;
            }
            0x90 => {
                let items = self.pop_mark()?;
                let s = self.top()?.clone();
                match s {
                    Node::Obj(i) => match self.arena.get_mut(i) {
                        Some(Container::Set(v)) => v.extend(items),
                        _ => return Err(self.err("ADDITEMS on something that is not a set")),
                    },
                    _ => return Err(self.err("ADDITEMS on something that is not a set")),
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The memo, globals, calls, persistent ids and `BUILD`, and the
    /// refusal of every opcode not handled elsewhere.
    fn object_op(&mut self, op: u8) -> Result<()> {
        match op {
            b'q' => {
                let i = self.u8()?;
                self.memo_put(i.into())?;
            }
            b'r' => {
                let i = self.u32()?;
                self.memo_put(i)?;
            }
            0x94 => {
                let i = u32::try_from(self.memo.len()).map_err(|_| self.err("memo full"))?;
                self.memo_put(i)?;
            }
            b'h' => {
                let i = self.u8()?;
                let v = self.memo_get(i.into())?;
                self.push(v);
            }
            b'j' => {
                let i = self.u32()?;
                let v = self.memo_get(i)?;
                self.push(v);
            }
            b'c' => {
                let module = self.line()?;
                let name = self.line()?;
                let g = resolve_global(module, name)?;
                self.push(g);
            }
            0x93 => {
                let name = self.pop()?;
                let module = self.pop()?;
                match (&module, &name) {
                    (Node::Str(m), Node::Str(n)) => {
                        let g = resolve_global(m, n)?;
                        self.push(g);
                    }
                    _ => return Err(self.err("STACK_GLOBAL needs two strings")),
                }
            }
            b'R' | 0x81 => {
                let args = self.pop()?;
                let callable = self.pop()?;
                let v = self.call(callable, args)?;
                self.push(v);
            }
            0x92 => {
                let kwargs = self.pop()?;
                let args = self.pop()?;
                let cls = self.pop()?;
                if !self.is_empty_mapping(&kwargs) {
                    return Err(self.err("NEWOBJ_EX with keyword arguments is not supported"));
                }
                let v = self.call(cls, args)?;
                self.push(v);
            }
            b'Q' => {
                let pid = self.pop()?;
                let v = self.persistent_load(pid)?;
                self.push(v);
            }
            b'b' => {
                let state = self.pop()?;
                let inst = self.top()?.clone();
                self.build(inst, state)?;
            }
            0x82..=0x84 => return Err(self.err("EXT opcodes (the copyreg extension registry) are not supported")),
            0x97 | 0x98 => return Err(self.err("out-of-band buffers (NEXT_BUFFER, READONLY_BUFFER) are not supported")),
            b'I' | b'L' | b'F' | b'S' | b'V' | b'P' | b'g' | b'p' | b'i' | b'o' => {
                return Err(self.err(format!(
                    "text opcode {:?} (pickle protocol 0/1) is not supported; torch writes protocol 2",
                    char::from(op)
                )))
            }
            _ => return Err(self.err(format!("unknown opcode 0x{op:02x}"))),
        }
        Ok(())
    }

    fn long(&mut self, n: usize) -> Result<Node> {
        let b = self.take(n)?;
        if n == 0 {
            return Ok(Node::Int(0));
        }
        if n > 16 {
            // A longer encoding may still be a small number padded with
            // sign bytes; check the padding.
            let neg = b[n - 1] & 0x80 != 0;
            let pad = if neg { 0xff } else { 0 };
            if b[16..].iter().any(|&x| x != pad) || ((b[15] & 0x80 != 0) != neg) {
                return Err(self.err(format!(
                    "integer of {n} bytes is too big (torchcore reads ints of up to 128 bits)"
                )));
            }
        }
        let neg = b[n - 1] & 0x80 != 0;
        let mut a = [if neg { 0xffu8 } else { 0 }; 16];
        let m = n.min(16);
        a[..m].copy_from_slice(&b[..m]);
        Ok(Node::Int(i128::from_le_bytes(a)))
    }

    /// A Python 2 `str` as `LoadOptions::py2_strings` says (torch's
    /// `encoding=`): Latin-1, UTF-8 or ASCII text, or bytes.
    fn py2_string(&self, b: &[u8]) -> Result<Node> {
        use crate::load::Py2Strings;
        Ok(match self.source.py2_strings() {
            Py2Strings::Latin1 => {
                let s: String = b.iter().map(|&c| char::from(c)).collect();
                Node::Str(Rc::from(s))
            }
            Py2Strings::Utf8 => match std::str::from_utf8(b) {
                Ok(s) => Node::Str(Rc::from(s)),
                Err(e) => {
                    return Err(self.err(format!(
                        "'utf-8' codec can't decode a Python 2 string: {e}"
                    )))
                }
            },
            Py2Strings::Ascii => match b.iter().position(|&c| c > 127) {
                None => Node::Str(Rc::from(b.iter().map(|&c| char::from(c)).collect::<String>())),
                Some(i) => {
                    return Err(self.err(format!(
                        "'ascii' codec can't decode byte {:#04x} in position {i}: ordinal not in range(128)",
                        b[i]
                    )))
                }
            },
            Py2Strings::Bytes => Node::Bytes(Rc::from(b)),
        })
    }

    /// The text of a `str`, or of ASCII `bytes` (persistent ids of Python 2
    /// pickles read with `encoding='bytes'`, as torch decodes them).
    fn text(&self, n: &Node) -> Option<Rc<str>> {
        match n {
            Node::Str(s) => Some(s.clone()),
            Node::Bytes(b) if b.is_ascii() => std::str::from_utf8(b).ok().map(Rc::from),
            _ => None,
        }
    }

    fn is_empty_mapping(&self, n: &Node) -> bool {
        match n {
            Node::Obj(i) => match self.arena.get(*i) {
                Some(Container::Dict(d)) | Some(Container::OrderedDict(d, _)) => d.items.is_empty(),
                _ => false,
            },
            Node::None => true,
            _ => false,
        }
    }

    fn key_of(&self, n: &Node) -> Result<Option<Key>> {
        Ok(Some(match n {
            Node::None => Key::None,
            Node::Bool(b) => Key::Int(i128::from(*b)),
            Node::Int(i) => Key::Int(*i),
            Node::Float(f) => {
                if f.fract() == 0.0 && f.abs() < 1e30 {
                    // 1.0 == 1 in Python; the cast is exact in this range.
                    Key::Int(*f as i128)
                } else {
                    Key::Float(f.to_bits())
                }
            }
            Node::Complex(a, b) => Key::Complex(a.to_bits(), b.to_bits()),
            Node::Str(s) => Key::Str(s.clone()),
            Node::Bytes(b) => Key::Bytes(b.clone()),
            Node::Dtype(d) => Key::Dtype(*d),
            Node::Device(d) => Key::Device(d.clone()),
            Node::Size(s) => Key::Size(s.clone()),
            Node::Tuple(t) => {
                let mut ks = Vec::with_capacity(t.items.len());
                for x in &t.items {
                    match self.key_of(x)? {
                        Some(k) => ks.push(k),
                        None => return Ok(None),
                    }
                }
                Key::Tuple(ks)
            }
            Node::Obj(_) => {
                return Err(self.err(format!(
                    "unhashable type: '{}' used as a dict key",
                    n.type_name(self)
                )))
            }
            // Hashed by identity in Python: never equal to another key here.
            _ => return Ok(None),
        }))
    }

    fn set_items(&mut self, d: &Node, items: Vec<Node>) -> Result<()> {
        if !items.len().is_multiple_of(2) {
            return Err(self.err("SETITEMS with an odd number of items"));
        }
        let idx = match d {
            Node::Obj(i) => *i,
            other => {
                return Err(self.err(format!(
                    "SETITEM(S) on a {}, not a dict",
                    other.type_name(self)
                )))
            }
        };
        let mut keyed = Vec::with_capacity(items.len() / 2);
        let mut it = items.into_iter();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            let key = self.key_of(&k)?;
            keyed.push((key, k, v));
        }
        let body = match self.arena.get_mut(idx) {
            Some(Container::Dict(b)) | Some(Container::OrderedDict(b, _)) => b,
            _ => return Err(self.err("SETITEM(S) on something that is not a dict")),
        };
        for (key, k, v) in keyed {
            match key {
                Some(key) => match body.index.get(&key) {
                    Some(&pos) => body.items[pos].1 = v,
                    None => {
                        body.index.insert(key, body.items.len());
                        body.items.push((k, v));
                    }
                },
                None => body.items.push((k, v)),
            }
        }
        Ok(())
    }

    fn append(&mut self, l: &Node, items: Vec<Node>) -> Result<()> {
        if let Node::Obj(i) = l {
            if let Some(Container::List(v)) = self.arena.get_mut(*i) {
                v.extend(items);
                return Ok(());
            }
        }
        Err(self.err(format!("APPEND(S) on a {}, not a list", l.type_name(self))))
    }

    fn build(&mut self, inst: Node, state: Node) -> Result<()> {
        if let Node::None = state {
            return Ok(());
        }
        let idx = match inst {
            Node::Obj(i) if matches!(self.arena.get(i), Some(Container::OrderedDict(..))) => i,
            other => {
                return Err(self.err(format!(
                    "BUILD (setting state) on a {} is not supported",
                    other.type_name(self)
                )))
            }
        };
        let items = match state {
            Node::Obj(s) => match self.arena.get(s) {
                Some(Container::Dict(b)) => b.items.clone(),
                _ => return Err(self.err("BUILD state of an OrderedDict must be a dict")),
            },
            _ => return Err(self.err("BUILD state of an OrderedDict must be a dict")),
        };
        let mut attrs = Vec::with_capacity(items.len());
        for (k, v) in items {
            match k {
                Node::Str(s) => attrs.push((s.to_string(), v)),
                _ => return Err(self.err("BUILD state keys must be strings")),
            }
        }
        if let Some(Container::OrderedDict(_, a)) = self.arena.get_mut(idx) {
            a.extend(attrs);
        }
        Ok(())
    }

    fn int_arg(&self, n: &Node, what: &str) -> Result<i64> {
        match n {
            Node::Int(i) => i64::try_from(*i)
                .map_err(|_| self.err(format!("{what}: {i} does not fit in 64 bits"))),
            Node::Bool(b) => Ok(i64::from(*b)),
            other => Err(self.err(format!(
                "{what}: expected an int, got {}",
                other.type_name(self)
            ))),
        }
    }

    fn int_tuple(&self, n: &Node, what: &str) -> Result<Vec<i64>> {
        match n {
            Node::Tuple(t) => t.items.iter().map(|x| self.int_arg(x, what)).collect(),
            Node::Size(s) => Ok(s.to_vec()),
            Node::Obj(i) => match self.arena.get(*i) {
                Some(Container::List(v)) => v.iter().map(|x| self.int_arg(x, what)).collect(),
                _ => Err(self.err(format!("{what}: expected a tuple of ints"))),
            },
            other => Err(self.err(format!(
                "{what}: expected a tuple of ints, got {}",
                other.type_name(self)
            ))),
        }
    }

    fn seq_items(&self, n: &Node) -> Option<Vec<Node>> {
        match n {
            Node::Tuple(t) => Some(t.items.clone()),
            Node::Obj(i) => match self.arena.get(*i) {
                Some(Container::List(v)) | Some(Container::Set(v)) => Some(v.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    fn float_arg(&self, n: &Node) -> Result<f64> {
        match n {
            Node::Float(f) => Ok(*f),
            // Ints as floats, as Python's complex() takes them (rounded).
            Node::Int(i) => Ok(*i as f64),
            Node::Bool(b) => Ok(f64::from(u8::from(*b))),
            other => Err(self.err(format!(
                "complex() argument must be a number, not {}",
                other.type_name(self)
            ))),
        }
    }

    fn call(&mut self, callable: Node, args: Node) -> Result<Node> {
        let g = match callable {
            Node::Global(g) => g,
            other => {
                return Err(self.err(format!(
                    "REDUCE/NEWOBJ on a {} (only allowed globals can be called)",
                    other.type_name(self)
                )))
            }
        };
        let args = match args {
            Node::Tuple(t) => t.items.clone(),
            other => {
                return Err(self.err(format!(
                    "REDUCE arguments must be a tuple, got {}",
                    other.type_name(self)
                )))
            }
        };
        let nargs = args.len();
        let bad_args =
            |vm: &Self, name: &str| vm.err(format!("{name}: unexpected arguments ({nargs} given)"));
        match g {
            Global::OrderedDict => {
                if !args.is_empty() {
                    return Err(bad_args(self, "OrderedDict"));
                }
                Ok(self.new_obj(Container::OrderedDict(DictBody::default(), Vec::new())))
            }
            Global::Set | Global::FrozenSet => {
                let items = match args.as_slice() {
                    [] => Vec::new(),
                    [x] => self.seq_items(x).ok_or_else(|| bad_args(self, "set"))?,
                    _ => return Err(bad_args(self, "set")),
                };
                Ok(self.new_obj(Container::Set(items)))
            }
            Global::Complex => match args.as_slice() {
                [re] => Ok(Node::Complex(self.float_arg(re)?, 0.0)),
                [re, im] => Ok(Node::Complex(self.float_arg(re)?, self.float_arg(im)?)),
                _ => Err(bad_args(self, "complex")),
            },
            Global::ByteArray => match args.as_slice() {
                [] => Ok(Node::Bytes(Rc::from(&[][..]))),
                [Node::Bytes(b)] => Ok(Node::Bytes(b.clone())),
                _ => Err(bad_args(self, "bytearray")),
            },
            Global::CodecsEncode => match args.as_slice() {
                [Node::Str(s), Node::Str(enc)] => {
                    let bytes: Vec<u8> = match enc.to_ascii_lowercase().replace('_', "-").as_str() {
                        "latin1" | "latin-1" | "iso-8859-1" => s
                            .chars()
                            .map(|c| u8::try_from(u32::from(c)))
                            .collect::<std::result::Result<_, _>>()
                            .map_err(|_| self.err("_codecs.encode: character outside Latin-1"))?,
                        "utf-8" | "utf8" => s.as_bytes().to_vec(),
                        other => {
                            return Err(
                                self.err(format!("_codecs.encode: unsupported encoding '{other}'"))
                            )
                        }
                    };
                    Ok(Node::Bytes(Rc::from(bytes)))
                }
                _ => Err(bad_args(self, "_codecs.encode")),
            },
            Global::Size => match args.as_slice() {
                [] => Ok(Node::Size(Rc::from(Vec::new()))),
                [x] => Ok(Node::Size(Rc::from(self.int_tuple(x, "torch.Size")?))),
                _ => Err(bad_args(self, "torch.Size")),
            },
            Global::Device => match args.as_slice() {
                [Node::Str(s)] => Ok(Node::Device(s.clone())),
                [Node::Str(s), idx] => {
                    let i = self.int_arg(idx, "torch.device index")?;
                    Ok(Node::Device(Rc::from(format!("{s}:{i}"))))
                }
                _ => Err(bad_args(self, "torch.device")),
            },
            Global::RebuildTensorV2 | Global::RebuildTensorV3 => self.rebuild_tensor(g, &args),
            Global::RebuildMetaTensor => self.rebuild_meta_tensor(&args),
            Global::RebuildParameter | Global::RebuildParameterWithState => {
                self.rebuild_parameter(g, &args)
            }
            Global::StorageType(_) => {
                Err(self.err("storage classes cannot be called; storages come from BINPERSID"))
            }
        }
    }

    /// `torch._utils._rebuild_parameter(data, requires_grad, hooks)` and
    /// `_rebuild_parameter_with_state(.., state)`: a parameter of the
    /// tensor `data` (detached), with no hooks and no attributes.
    fn rebuild_parameter(&mut self, g: Global, args: &[Node]) -> Result<Node> {
        let (data, rg, hooks, state) = match args {
            [d, r, h] if g == Global::RebuildParameter => (d, r, h, None),
            [d, r, h, s] if g == Global::RebuildParameterWithState => (d, r, h, Some(s)),
            _ => {
                return Err(self.err(format!(
                    "_rebuild_parameter: unexpected arguments ({} given)",
                    args.len()
                )))
            }
        };
        if !self.is_empty_mapping(hooks) {
            return Err(self.err("_rebuild_parameter: backward hooks are not supported"));
        }
        if let Some(s) = state {
            if !self.is_empty_mapping(s) {
                return Err(self
                    .err("_rebuild_parameter_with_state: parameter attributes are not supported"));
            }
        }
        let requires_grad = match rg {
            Node::Bool(b) => *b,
            other => {
                return Err(self.err(format!(
                    "_rebuild_parameter: requires_grad must be a bool, got {}",
                    other.type_name(self)
                )))
            }
        };
        let mut t = match data {
            Node::Tensor(t) | Node::Parameter(t) => t.detach(),
            other => {
                return Err(self.err(format!(
                    "_rebuild_parameter: data must be a tensor, got {}",
                    other.type_name(self)
                )))
            }
        };
        t.set_requires_grad(requires_grad)?;
        Ok(Node::Parameter(t))
    }

    /// `torch._utils._rebuild_meta_tensor_no_storage(dtype, size, stride,
    /// requires_grad)`: a meta tensor (`empty_strided` on the meta
    /// device), whatever the map location, as torch's.
    fn rebuild_meta_tensor(&mut self, args: &[Node]) -> Result<Node> {
        const NAME: &str = "_rebuild_meta_tensor_no_storage";
        let [dtype, size, stride, requires_grad] = args else {
            return Err(self.err(format!("{NAME}: expected 4 arguments, got {}", args.len())));
        };
        let dtype = match dtype {
            Node::Dtype(d) if *d != ScalarType::Undefined => *d,
            other => {
                return Err(self.err(format!(
                    "{NAME}: dtype must be a torch.dtype, got {}",
                    other.type_name(self)
                )))
            }
        };
        let sizes = self.int_tuple(size, "size")?;
        let strides = self.int_tuple(stride, "stride")?;
        let Node::Bool(requires_grad) = requires_grad else {
            return Err(self.err(format!(
                "{NAME}: requires_grad must be a bool, got {}",
                requires_grad.type_name(self)
            )));
        };
        let o = c10_core::TensorOptions::new()
            .dtype(dtype)
            .device(c10_core::Device::META);
        let mut t = Tensor::empty_strided(&sizes, &strides, o).map_err(|e| {
            PtError::Tensor(format!(
                "meta tensor with size {sizes:?}, stride {strides:?}, dtype {dtype:?}: {e}"
            ))
        })?;
        if *requires_grad {
            t.set_requires_grad(true)?;
        }
        Ok(Node::Tensor(t))
    }

    fn rebuild_tensor(&mut self, g: Global, args: &[Node]) -> Result<Node> {
        let v3 = g == Global::RebuildTensorV3;
        let name = if v3 {
            "_rebuild_tensor_v3"
        } else {
            "_rebuild_tensor_v2"
        };
        let fixed = if v3 { 7 } else { 6 };
        if args.len() != fixed && args.len() != fixed + 1 {
            return Err(self.err(format!(
                "{name}: expected {fixed} or {} arguments, got {}",
                fixed + 1,
                args.len()
            )));
        }
        let st = match &args[0] {
            Node::Storage(s) => s.clone(),
            other => {
                return Err(self.err(format!(
                    "{name}: first argument must be a storage, got {}",
                    other.type_name(self)
                )))
            }
        };
        let offset = self.int_arg(&args[1], "storage offset")?;
        let sizes = self.int_tuple(&args[2], "size")?;
        let strides = self.int_tuple(&args[3], "stride")?;
        let offset = match st.view_base {
            Some(base) => view_offset(&st, base, offset, &sizes, &strides)?,
            None => offset,
        };
        let requires_grad = match &args[4] {
            Node::Bool(b) => *b,
            other => {
                return Err(self.err(format!(
                    "{name}: requires_grad must be a bool, got {}",
                    other.type_name(self)
                )))
            }
        };
        if !self.is_empty_mapping(&args[5]) {
            return Err(self.err(format!("{name}: backward hooks are not supported")));
        }
        let dtype = if v3 {
            match &args[6] {
                Node::Dtype(d) => *d,
                other => {
                    return Err(self.err(format!(
                        "{name}: dtype must be a torch.dtype, got {}",
                        other.type_name(self)
                    )))
                }
            }
        } else {
            st.dtype
        };
        let (conj, neg) = match args.get(fixed) {
            Some(meta) => self.math_bits(meta, name)?,
            None => (false, false),
        };
        if v3 && !st.untyped && st.dtype != dtype {
            return Err(PtError::Tensor(format!(
                "storage '{}' is a {:?} storage but _rebuild_tensor_v3 asks for {dtype:?}",
                st.key, st.dtype
            )));
        }
        if dtype == ScalarType::Undefined {
            return Err(PtError::Tensor("tensor with an undefined dtype".into()));
        }
        let mut t = Tensor::from_storage(st.storage.clone(), dtype, &sizes, &strides, offset).map_err(|e| {
            PtError::Tensor(format!(
                "tensor over storage '{}' ({} bytes) with size {sizes:?}, stride {strides:?}, offset {offset}, dtype {dtype:?}: {e}",
                st.key,
                st.storage.nbytes()
            ))
        })?;
        if conj || neg {
            // torch's `_set_tensor_metadata`: the bits say how to read the
            // stored values (lazy conjugate / negative views); the bytes stay.
            let mut m = t.edit_metadata();
            m.set_conj(conj);
            m.set_neg(neg);
        }
        if requires_grad {
            t.set_requires_grad(true)?;
        }
        Ok(Node::Tensor(t))
    }

    /// The tensor metadata dict `_rebuild_tensor_v2/v3` may end with (what
    /// torch's `_get_tensor_metadata` gives): only the math bits `conj`
    /// and `neg` (bools) are known; anything else is refused, naming it.
    fn math_bits(&self, meta: &Node, name: &str) -> Result<(bool, bool)> {
        if self.is_empty_mapping(meta) {
            return Ok((false, false));
        }
        let items = match meta {
            Node::Obj(i) => match self.arena.get(*i) {
                Some(Container::Dict(d)) | Some(Container::OrderedDict(d, _)) => &d.items,
                _ => return Err(self.err(format!("{name}: tensor metadata must be a dict"))),
            },
            _ => return Err(self.err(format!("{name}: tensor metadata must be a dict"))),
        };
        let (mut conj, mut neg) = (false, false);
        for (k, v) in items {
            let bit = match v {
                Node::Bool(b) => *b,
                _ => return Err(self.err(format!("{name}: tensor metadata values must be bools"))),
            };
            match k {
                Node::Str(s) if &**s == "conj" => conj = bit,
                Node::Str(s) if &**s == "neg" => neg = bit,
                other => {
                    return Err(self.err(format!(
                        "{name}: tensor metadata {} is not supported (only 'conj' and 'neg')",
                        match other {
                            Node::Str(s) => format!("{:?}", &**s),
                            o => o.type_name(self).to_string(),
                        }
                    )))
                }
            }
        }
        Ok((conj, neg))
    }

    /// torch's `persistent_load`: the storage a persistent id names,
    /// loaded once per key (a key seen again must name the same storage).
    fn persistent_load(&mut self, pid: Node) -> Result<Node> {
        let PersistentId {
            dtype,
            key,
            location,
            numel,
            view,
        } = self.persistent_id(&pid)?;
        let untyped = dtype.is_none();
        let dtype = dtype.unwrap_or(ScalarType::Byte);
        if let Some(s) = self.storages.get(&*key) {
            if s.dtype != dtype || s.untyped != untyped || s.numel != numel {
                return Err(PtError::Tensor(format!(
                    "storage '{key}' appears twice with different types: {:?} x {} and {:?} x {numel}",
                    s.dtype, s.numel, dtype
                )));
            }
            let s = s.clone();
            return match view {
                Some(view) => self.storage_view(&s, view),
                None => Ok(Node::Storage(s)),
            };
        }
        if !valid_key(&key) {
            return Err(PtError::Archive(format!(
                "invalid storage key {key:?} (keys name records: letters, digits, '_', '-', '.')"
            )));
        }
        let nbytes = usize::try_from(numel)
            .ok()
            .and_then(|n| n.checked_mul(dtype.itemsize()))
            .ok_or_else(|| {
                PtError::Tensor(format!(
                    "storage '{key}': {numel} elements of {dtype:?} overflow the address space"
                ))
            })?;
        let storage = self.source.load_storage(&StorageRecord {
            key: &key,
            nbytes,
            location: &location,
            dtype,
        })?;
        let node = Rc::new(StorageNode {
            storage,
            dtype,
            untyped,
            key: key.to_string(),
            numel,
            view_base: None,
            slice: None,
        });
        self.storages.insert(key.to_string(), node.clone());
        match view {
            Some(view) => self.storage_view(&node, view),
            None => Ok(Node::Storage(node)),
        }
    }

    /// A storage view of the legacy format: elements `offset ..
    /// offset + size` of `root`, made once per view key (as torch, a key
    /// seen again gives the first view). Tensors over it are rebuilt over
    /// the root storage with the view's offset added, so they share its
    /// memory (torch shares it too, through a storage slice).
    fn storage_view(&mut self, root: &Rc<StorageNode>, view: (Rc<str>, u64, u64)) -> Result<Node> {
        let (view_key, offset, size) = view;
        if let Some(v) = self.views.get(&*view_key) {
            return Ok(Node::Storage(v.clone()));
        }
        if offset.checked_add(size).is_none_or(|end| end > root.numel) {
            return Err(PtError::Tensor(format!(
                "storage view '{view_key}' (elements {offset}..+{size}) reaches past its storage '{}' ({} elements)",
                root.key, root.numel
            )));
        }
        if self.views.len() >= self.storages.len().saturating_mul(64).max(1 << 16) {
            return Err(PtError::Tensor("too many storage views".into()));
        }
        // Bytes `offset * itemsize ..` of the root: inside it (checked
        // above against its element count, whose byte size was allocated).
        let item = root.dtype.itemsize();
        let bytes = |n: u64| usize::try_from(n).ok().and_then(|n| n.checked_mul(item));
        let (Some(start), Some(len)) = (bytes(offset), bytes(size)) else {
            return Err(PtError::Tensor(format!(
                "storage view '{view_key}' (elements {offset}..+{size}) overflows the address space"
            )));
        };
        let slice = root.storage.slice(start..start.saturating_add(len))?;
        let node = Rc::new(StorageNode {
            storage: root.storage.clone(),
            dtype: root.dtype,
            untyped: root.untyped,
            key: root.key.clone(),
            numel: size,
            view_base: Some(offset),
            slice: Some(slice),
        });
        self.views.insert(view_key.to_string(), node.clone());
        Ok(Node::Storage(node))
    }

    /// Reads the five items of a storage's persistent id, `('storage',
    /// type, key, location, numel)` (six in the legacy format, whose
    /// `view_metadata` must be `None`).
    fn persistent_id(&self, pid: &Node) -> Result<PersistentId> {
        let items = match pid {
            Node::Tuple(t) => t.items.clone(),
            other => {
                return Err(self.err(format!(
                    "persistent id must be a tuple, got {}",
                    other.type_name(self)
                )))
            }
        };
        let (items, view) = match items.as_slice() {
            [first @ .., view_metadata] if first.len() == 5 && self.source.legacy_ids() => {
                (first, self.view_metadata(view_metadata)?)
            }
            all => (all, None),
        };
        let [tag, ty, key, location, numel] = items else {
            return Err(self.err(format!(
                "persistent id must have 5 items ('storage', type, key, location, numel), got {}",
                items.len()
            )));
        };
        match self.text(tag) {
            Some(s) if &*s == "storage" => {}
            _ => return Err(self.err("persistent id does not start with 'storage'")),
        }
        let dtype = match ty {
            Node::Global(Global::StorageType(d)) => *d,
            Node::Dtype(_) | Node::Global(_) => {
                return Err(PtError::Tensor(
                    "unknown storage type in persistent id (not a torch storage class)".into(),
                ))
            }
            other => {
                return Err(PtError::Tensor(format!(
                    "unknown storage type in persistent id: a {}",
                    other.type_name(self)
                )))
            }
        };
        let key = match self.text(key) {
            Some(s) => s,
            None => {
                let other = key;
                return Err(self.err(format!(
                    "storage key must be a str, got {}",
                    other.type_name(self)
                )));
            }
        };
        let location = match self.text(location) {
            Some(s) => s,
            None => {
                let other = location;
                return Err(self.err(format!(
                    "storage location must be a str, got {}",
                    other.type_name(self)
                )));
            }
        };
        let numel = match numel {
            Node::Int(n) => u64::try_from(*n).map_err(|_| {
                PtError::Tensor(format!("storage '{key}' has invalid element count {n}"))
            })?,
            other => {
                return Err(self.err(format!(
                    "storage numel must be an int, got {}",
                    other.type_name(self)
                )))
            }
        };
        Ok(PersistentId {
            dtype,
            key,
            location,
            numel,
            view,
        })
    }

    /// The legacy format's `view_metadata`: `None`, or `(view key,
    /// offset, size)` in elements (files written before torch 1.0).
    fn view_metadata(&self, meta: &Node) -> Result<Option<(Rc<str>, u64, u64)>> {
        let items = match meta {
            Node::None => return Ok(None),
            Node::Tuple(t) => &t.items,
            other => {
                return Err(self.err(format!(
                    "view_metadata must be None or a tuple, got {}",
                    other.type_name(self)
                )))
            }
        };
        let [key, offset, size] = items.as_slice() else {
            return Err(self.err(format!(
                "view_metadata must have 3 items (view key, offset, size), got {}",
                items.len()
            )));
        };
        let key = self
            .text(key)
            .ok_or_else(|| self.err("a storage view's key must be a str"))?;
        let count = |n: &Node, what: &str| match n {
            Node::Int(n) => u64::try_from(*n).map_err(|_| {
                PtError::Tensor(format!("storage view '{key}' has invalid {what} {n}"))
            }),
            other => Err(self.err(format!(
                "a storage view's {what} must be an int, got {}",
                other.type_name(self)
            ))),
        };
        Ok(Some((
            key.clone(),
            count(offset, "offset")?,
            count(size, "size")?,
        )))
    }

    fn to_value(
        &self,
        n: &Node,
        depth: usize,
        budget: &mut usize,
        on_path: &mut [bool],
    ) -> Result<Value> {
        if depth > MAX_DEPTH {
            return Err(PtError::PickleValue(format!(
                "containers nested more than {MAX_DEPTH} deep"
            )));
        }
        *budget = budget.checked_sub(1).ok_or_else(|| PtError::PickleValue("the pickle expands to far more values than its size allows (shared containers repeated)".into()))?;
        let seq = |xs: &[Node], budget: &mut usize, on_path: &mut [bool]| -> Result<Vec<Value>> {
            xs.iter()
                .map(|x| self.to_value(x, depth + 1, budget, on_path))
                .collect()
        };
        Ok(match n {
            Node::None => Value::None,
            Node::Bool(b) => Value::Bool(*b),
            Node::Int(i) => match i64::try_from(*i) {
                Ok(v) => Value::Int(v),
                Err(_) => Value::BigInt(*i),
            },
            Node::Float(f) => Value::Float(*f),
            Node::Complex(a, b) => Value::Complex(*a, *b),
            Node::Str(s) => Value::Str(s.to_string()),
            Node::Bytes(b) => Value::Bytes(b.to_vec()),
            Node::Tuple(t) => Value::Tuple(seq(&t.items, budget, on_path)?),
            Node::Size(s) => Value::Size(s.to_vec()),
            Node::Dtype(d) => Value::Dtype(*d),
            Node::Device(d) => Value::Device(d.to_string()),
            Node::Tensor(t) => Value::Tensor(t.clone()),
            Node::Parameter(t) => Value::Parameter(t.clone()),
            // A legacy storage view loads as a slice of its root storage
            // (shared bytes), as torch's `TypedStorage` over an
            // `UntypedStorage` slice.
            Node::Storage(s) => Value::Storage(StorageValue {
                storage: s.slice.as_ref().unwrap_or(&s.storage).clone(),
                dtype: s.dtype,
            }),
            Node::Global(_) => {
                return Err(PtError::PickleValue(
                    "a class or function object (not a value) in the result".into(),
                ))
            }
            Node::Obj(i) => {
                let i = *i;
                if on_path.get(i).copied().unwrap_or(false) {
                    return Err(PtError::PickleValue(
                        "self-referencing container (a list or dict that contains itself)".into(),
                    ));
                }
                if let Some(p) = on_path.get_mut(i) {
                    *p = true;
                }
                let pairs = |b: &DictBody,
                             budget: &mut usize,
                             on_path: &mut [bool]|
                 -> Result<Vec<(Value, Value)>> {
                    b.items
                        .iter()
                        .map(|(k, v)| {
                            Ok((
                                self.to_value(k, depth + 1, budget, on_path)?,
                                self.to_value(v, depth + 1, budget, on_path)?,
                            ))
                        })
                        .collect()
                };
                let v = match self.arena.get(i) {
                    Some(Container::List(xs)) => Value::List(seq(xs, budget, on_path)?),
                    Some(Container::Set(xs)) => Value::Set(seq(xs, budget, on_path)?),
                    Some(Container::Dict(b)) => Value::Dict(pairs(b, budget, on_path)?),
                    Some(Container::OrderedDict(b, attrs)) => {
                        let items = pairs(b, budget, on_path)?;
                        let attrs = attrs
                            .iter()
                            .map(|(k, v)| {
                                Ok((k.clone(), self.to_value(v, depth + 1, budget, on_path)?))
                            })
                            .collect::<Result<Vec<_>>>()?;
                        Value::OrderedDict(OrderedDict { items, attrs })
                    }
                    None => Value::None,
                };
                if let Some(p) = on_path.get_mut(i) {
                    *p = false;
                }
                v
            }
        })
    }
}

/// Whether `key` is a safe record name: non-empty, at most 255 bytes of
/// ASCII letters, digits, `_`, `-` and `.`, and not `.` or `..`.
pub(crate) fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 255
        && key != "."
        && key != ".."
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

/// The offset, in the root storage, of a tensor at `offset` in a legacy
/// storage view starting at element `base`: the tensor must lie inside
/// the view (as torch checks against its storage slice).
fn view_offset(
    st: &StorageNode,
    base: u64,
    offset: i64,
    sizes: &[i64],
    strides: &[i64],
) -> Result<i64> {
    let bad = || {
        PtError::Tensor(format!(
            "tensor with size {sizes:?}, stride {strides:?}, offset {offset} reaches past its storage view \
             ({} elements at {base} of storage '{}')",
            st.numel, st.key
        ))
    };
    let mut extent: i128 = 1;
    for (&n, &s) in sizes.iter().zip(strides) {
        if n < 0 || s < 0 {
            return Err(bad());
        }
        if n == 0 {
            extent = 0;
            break;
        }
        extent += i128::from(n - 1) * i128::from(s);
    }
    if offset < 0 || sizes.len() != strides.len() {
        return Err(bad());
    }
    if extent > 0 && i128::from(offset) + extent > i128::from(st.numel) {
        return Err(bad());
    }
    i64::try_from(i128::from(offset) + i128::from(base)).map_err(|_| bad())
}
