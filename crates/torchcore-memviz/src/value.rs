//! [`Value`]: the plain Python data a snapshot is made of.

/// A Python value of the kinds a memory snapshot holds: `None`, `bool`,
/// `int`, `float`, `str`, `list`, `tuple` and `dict` (keys in insertion
/// order, as Python keeps them).
///
/// ```
/// use torchcore_memviz::Value;
/// let v = Value::dict([("size", Value::from(512u64)), ("state", Value::from("inactive"))]);
/// assert_eq!(v.get("size").and_then(Value::as_u64), Some(512));
/// assert_eq!(v.get("state").and_then(Value::as_str), Some("inactive"));
/// assert!(v.get("missing").is_none());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// An `int` (addresses and sizes fit easily).
    Int(i128),
    /// A `float`.
    Float(f64),
    /// A `str`.
    Str(String),
    /// A `list`.
    List(Vec<Value>),
    /// A `tuple`.
    Tuple(Vec<Value>),
    /// A `dict`, in insertion order.
    Dict(Vec<(Value, Value)>),
}

impl Value {
    /// A dict with string keys.
    pub fn dict<K: Into<String>>(items: impl IntoIterator<Item = (K, Value)>) -> Value {
        Value::Dict(
            items
                .into_iter()
                .map(|(k, v)| (Value::Str(k.into()), v))
                .collect(),
        )
    }

    /// The value under the string key `key` of a dict (`None` for other
    /// kinds or a missing key).
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Dict(items) => items
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets `key` in a dict (replacing an existing entry, else appending);
    /// does nothing to other kinds.
    ///
    /// ```
    /// use torchcore_memviz::Value;
    /// let mut d = Value::dict([("a", Value::from(1u64))]);
    /// d.set("a", Value::from(2u64));
    /// d.set("b", Value::None);
    /// assert_eq!(d, Value::dict([("a", Value::from(2u64)), ("b", Value::None)]));
    /// ```
    pub fn set(&mut self, key: &str, value: Value) {
        if let Value::Dict(items) = self {
            match items.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
                Some(slot) => slot.1 = value,
                None => items.push((Value::Str(key.to_string()), value)),
            }
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, if this is a non-negative one that fits a `u64`
    /// (`bool`s count as 0 and 1, as in Python).
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Int(i) => u64::try_from(*i).ok(),
            Value::Bool(b) => Some(u64::from(*b)),
            _ => None,
        }
    }

    /// The integer, if this is one that fits an `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => i64::try_from(*i).ok(),
            Value::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }

    /// The number as a float (ints included).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Float(f) => Some(*f),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }

    /// The items of a list or tuple.
    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(v) | Value::Tuple(v) => Some(v),
            _ => None,
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<u64> for Value {
    fn from(i: u64) -> Value {
        Value::Int(i128::from(i))
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i128::from(i))
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Value::Float(f)
    }
}

impl From<Vec<Value>> for Value {
    fn from(v: Vec<Value>) -> Value {
        Value::List(v)
    }
}
