//! The value tree a checkpoint loads into, and that [`save`](crate::save)
//! writes.

use c10_core::{ScalarType, Storage, Tensor};

/// A `collections.OrderedDict`: its items in order, plus the attributes
/// set on it (a `state_dict()` carries `_metadata` this way).
///
/// ```
/// use torchcore_pt::{OrderedDict, Value};
/// let mut d = OrderedDict::default();
/// d.insert("lr", Value::Float(0.1));
/// assert_eq!(d.get("lr"), Some(&Value::Float(0.1)));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OrderedDict {
    /// The items, in insertion order (keys are unique).
    pub items: Vec<(Value, Value)>,
    /// Attributes set on the dict object (`BUILD` state), e.g. `_metadata`.
    pub attrs: Vec<(String, Value)>,
}

impl OrderedDict {
    /// Appends an item with a string key (replacing an equal key, as a dict
    /// does).
    pub fn insert(&mut self, key: impl Into<String>, value: Value) {
        let key = Value::Str(key.into());
        if let Some(slot) = self.items.iter_mut().find(|(k, _)| *k == key) {
            slot.1 = value;
        } else {
            self.items.push((key, value));
        }
    }

    /// The value under a string key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.items
            .iter()
            .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
            .map(|(_, v)| v)
    }
}

/// A storage on its own (a `torch.save` of a storage, not of a tensor).
#[derive(Debug, Clone)]
pub struct StorageValue {
    /// The bytes.
    pub storage: Storage,
    /// The dtype of the typed storage class it was saved as (`Byte` for
    /// `UntypedStorage`).
    pub dtype: ScalarType,
}

/// One loaded (or to-be-saved) Python value: what the weights-only
/// unpickler understands.
///
/// Tensors compare by identity (`is`), everything else by value.
///
/// ```
/// use torchcore_pt::Value;
/// let v = Value::List(vec![Value::Int(1), Value::Str("a".into()), Value::None]);
/// assert_eq!(v.type_name(), "list");
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Value {
    /// `None`.
    None,
    /// A `bool`.
    Bool(bool),
    /// An `int` that fits in 64 bits.
    Int(i64),
    /// An `int` outside the 64-bit range that fits in 128 bits (Python
    /// ints are unbounded; larger ones are refused at load).
    BigInt(i128),
    /// A `float`.
    Float(f64),
    /// A `complex`.
    Complex(f64, f64),
    /// A `str`.
    Str(String),
    /// `bytes` (or `bytearray`).
    Bytes(Vec<u8>),
    /// A `list`.
    List(Vec<Value>),
    /// A `tuple`.
    Tuple(Vec<Value>),
    /// A `set` or `frozenset` (in pickle order).
    Set(Vec<Value>),
    /// A plain `dict`, in insertion order.
    Dict(Vec<(Value, Value)>),
    /// A `collections.OrderedDict`.
    OrderedDict(OrderedDict),
    /// A `torch.Size`.
    Size(Vec<i64>),
    /// A `torch.dtype`.
    Dtype(ScalarType),
    /// A `torch.device`, as its string (`"cpu"`, `"cuda:0"`).
    Device(String),
    /// A `torch.Tensor`.
    Tensor(Tensor),
    /// A `torch.nn.Parameter` (its `requires_grad` is the tensor's).
    Parameter(Tensor),
    /// A bare storage.
    Storage(StorageValue),
    /// An object only Python can pickle, as the pickle opcodes that
    /// rebuild it (protocol 2, without the `PROTO` header and the `STOP`,
    /// and without memo opcodes): `save` writes them as they are (what
    /// `torch.save` writes for such an object). `load` never produces it:
    /// the weights-only VM refuses the globals these opcodes name.
    ///
    /// ```
    /// use torchcore_pt::{load_from_reader, save_to_writer, Value};
    /// // GLOBAL builtins.print, EMPTY_TUPLE, REDUCE
    /// let v = Value::Pickled(b"cbuiltins\nprint\n)R".to_vec());
    /// assert_eq!(v.type_name(), "object");
    /// let bytes = save_to_writer(&Value::List(vec![v]), std::io::Cursor::new(Vec::new()))?.into_inner();
    /// let err = load_from_reader(std::io::Cursor::new(bytes)).unwrap_err();
    /// assert!(err.to_string().contains("GLOBAL print"));
    /// # Ok::<(), torchcore_pt::PtError>(())
    /// ```
    Pickled(Vec<u8>),
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (None, None) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (BigInt(a), BigInt(b)) => a == b,
            (Float(a), Float(b)) => a == b,
            (Complex(a, b), Complex(c, d)) => a == c && b == d,
            (Str(a), Str(b)) => a == b,
            (Bytes(a), Bytes(b)) => a == b,
            (List(a), List(b)) | (Tuple(a), Tuple(b)) | (Set(a), Set(b)) => a == b,
            (Dict(a), Dict(b)) => a == b,
            (OrderedDict(a), OrderedDict(b)) => a == b,
            (Size(a), Size(b)) => a == b,
            (Dtype(a), Dtype(b)) => a == b,
            (Device(a), Device(b)) => a == b,
            (Tensor(a), Tensor(b)) | (Parameter(a), Parameter(b)) => a.is_same(b),
            (Storage(a), Storage(b)) => a.storage.is_alias_of(&b.storage) && a.dtype == b.dtype,
            (Pickled(a), Pickled(b)) => a == b,
            _ => false,
        }
    }
}

impl Value {
    /// The Python type name (`"dict"`, `"Tensor"`, ...), for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::None => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "int",
            Value::Float(_) => "float",
            Value::Complex(..) => "complex",
            Value::Str(_) => "str",
            Value::Bytes(_) => "bytes",
            Value::List(_) => "list",
            Value::Tuple(_) => "tuple",
            Value::Set(_) => "set",
            Value::Dict(_) => "dict",
            Value::OrderedDict(_) => "OrderedDict",
            Value::Size(_) => "torch.Size",
            Value::Dtype(_) => "torch.dtype",
            Value::Device(_) => "torch.device",
            Value::Tensor(_) => "Tensor",
            Value::Parameter(_) => "Parameter",
            Value::Storage(_) => "Storage",
            Value::Pickled(_) => "object",
        }
    }

    /// The tensor, if this is a tensor or a parameter.
    ///
    /// ```
    /// use torchcore_pt::Value;
    /// assert!(Value::Int(3).as_tensor().is_none());
    /// ```
    pub fn as_tensor(&self) -> Option<&Tensor> {
        match self {
            Value::Tensor(t) | Value::Parameter(t) => Some(t),
            _ => None,
        }
    }

    /// The items of a dict or an `OrderedDict`.
    pub fn dict_items(&self) -> Option<&[(Value, Value)]> {
        match self {
            Value::Dict(items) => Some(items),
            Value::OrderedDict(d) => Some(&d.items),
            _ => None,
        }
    }

    /// Every tensor in the tree with a dotted path to it (dict keys, list
    /// and tuple indices), depth first in order. A state dict's paths are
    /// its keys.
    ///
    /// ```
    /// use torchcore_pt::Value;
    /// use c10_core::{Tensor, ScalarType};
    /// let t = Tensor::zeros(&[2], ScalarType::Float)?;
    /// let v = Value::List(vec![Value::Int(1), Value::Tensor(t)]);
    /// let found = v.tensors();
    /// assert_eq!(found[0].0, "1");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn tensors(&self) -> Vec<(String, &Tensor)> {
        let mut out = Vec::new();
        collect_tensors(self, &mut String::new(), &mut out);
        out
    }
}

fn key_text(k: &Value) -> String {
    match k {
        Value::Str(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::BigInt(i) => i.to_string(),
        Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        Value::None => "None".to_string(),
        other => format!("<{}>", other.type_name()),
    }
}

fn collect_tensors<'a>(v: &'a Value, path: &mut String, out: &mut Vec<(String, &'a Tensor)>) {
    let mut child = |name: String, v: &'a Value, out: &mut Vec<(String, &'a Tensor)>| {
        let len = path.len();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(&name);
        collect_tensors(v, path, out);
        path.truncate(len);
    };
    match v {
        Value::Tensor(t) | Value::Parameter(t) => out.push((path.clone(), t)),
        Value::List(xs) | Value::Tuple(xs) | Value::Set(xs) => {
            for (i, x) in xs.iter().enumerate() {
                child(i.to_string(), x, out);
            }
        }
        Value::Dict(items) => {
            for (k, x) in items {
                child(key_text(k), x, out);
            }
        }
        Value::OrderedDict(d) => {
            for (k, x) in &d.items {
                child(key_text(k), x, out);
            }
        }
        _ => {}
    }
}
