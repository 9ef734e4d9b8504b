//! A pickle writer and reader for plain [`Value`]s.
//!
//! The writer emits protocol 2 with the opcodes PyTorch's own snapshot
//! pickler uses for this data (`PROTO`, `EMPTY_DICT`/`EMPTY_LIST`, `MARK`,
//! `SETITEMS`/`APPENDS`, the `BININT*`/`LONG1` integers, `BINFLOAT`,
//! `BINUNICODE`, `NEWTRUE`/`NEWFALSE`, `NONE`, the tuple opcodes, `STOP`),
//! without a memo. Python's `pickle.load` reads it.
//!
//! The reader accepts protocols 2 to 5 as `pickle.dump` writes plain data
//! (frames, the memo with `MEMOIZE`/`BINPUT`/`BINGET`, short and long
//! strings); class instances (`GLOBAL`, `REDUCE`, ...) are refused.

use crate::value::Value;

/// Why a pickle could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PickleError {
    /// The data ended inside an opcode.
    #[error("pickle data is truncated")]
    Truncated,
    /// An opcode this reader does not handle (class instances and other
    /// non-plain data).
    #[error("unsupported pickle opcode {opcode:#04x} at byte {offset}")]
    Unsupported {
        /// The opcode byte.
        opcode: u8,
        /// Its position.
        offset: usize,
    },
    /// The opcodes do not form a valid pickle (stack underflow, a missing
    /// mark, a dangling memo reference, invalid UTF-8, ...).
    #[error("malformed pickle: {0}")]
    Malformed(String),
    /// The data refers to itself, nests too deeply or expands to too many
    /// values through shared references.
    #[error("pickle is too deep or too large to read as plain values")]
    TooLarge,
}

// Opcodes.
const PROTO: u8 = 0x80;
const FRAME: u8 = 0x95;
const STOP: u8 = b'.';
const NONE: u8 = b'N';
const NEWTRUE: u8 = 0x88;
const NEWFALSE: u8 = 0x89;
const INT: u8 = b'I';
const BININT: u8 = b'J';
const BININT1: u8 = b'K';
const BININT2: u8 = b'M';
const LONG1: u8 = 0x8a;
const LONG4: u8 = 0x8b;
const BINFLOAT: u8 = b'G';
const BINUNICODE: u8 = b'X';
const SHORT_BINUNICODE: u8 = 0x8c;
const BINUNICODE8: u8 = 0x8d;
const EMPTY_LIST: u8 = b']';
const EMPTY_DICT: u8 = b'}';
const EMPTY_TUPLE: u8 = b')';
const MARK: u8 = b'(';
const APPEND: u8 = b'a';
const APPENDS: u8 = b'e';
const SETITEM: u8 = b's';
const SETITEMS: u8 = b'u';
const TUPLE: u8 = b't';
const TUPLE1: u8 = 0x85;
const TUPLE2: u8 = 0x86;
const TUPLE3: u8 = 0x87;
const BINPUT: u8 = b'q';
const LONG_BINPUT: u8 = b'r';
const MEMOIZE: u8 = 0x94;
const BINGET: u8 = b'h';
const LONG_BINGET: u8 = b'j';
const POP: u8 = b'0';
const POP_MARK: u8 = b'1';
const DUP: u8 = b'2';

/// Items per `APPENDS`/`SETITEMS` batch (as Python's pickler).
const BATCH: usize = 1000;

/// Pickles `value` (protocol 2).
///
/// ```
/// use torchcore_memviz::{from_pickle, to_pickle, Value};
/// let v = Value::dict([("segments", Value::List(vec![])), ("n", Value::from(70000u64))]);
/// let bytes = to_pickle(&v);
/// assert_eq!(&bytes[..2], b"\x80\x02");
/// assert_eq!(from_pickle(&bytes)?, v);
/// # Ok::<(), torchcore_memviz::PickleError>(())
/// ```
pub fn to_pickle(value: &Value) -> Vec<u8> {
    let mut out = vec![PROTO, 2];
    write_value(&mut out, value);
    out.push(STOP);
    out
}

fn write_int(out: &mut Vec<u8>, i: i128) {
    if (0..=0xff).contains(&i) {
        out.push(BININT1);
        out.push(i as u8);
    } else if (0..=0xffff).contains(&i) {
        out.push(BININT2);
        out.extend_from_slice(&(i as u16).to_le_bytes());
    } else if let Ok(v) = i32::try_from(i) {
        out.push(BININT);
        out.extend_from_slice(&v.to_le_bytes());
    } else {
        // Minimal two's complement, little-endian: the magnitude's bits
        // (of `!i` for a negative `i`) and a sign bit, in whole bytes.
        let bytes = i.to_le_bytes();
        let magnitude = if i < 0 { !i } else { i };
        let n = (128 - magnitude.leading_zeros() as usize) / 8 + 1;
        out.push(LONG1);
        out.push(n as u8);
        out.extend_from_slice(&bytes[..n]);
    }
}

fn write_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::None => out.push(NONE),
        Value::Bool(true) => out.push(NEWTRUE),
        Value::Bool(false) => out.push(NEWFALSE),
        Value::Int(i) => write_int(out, *i),
        Value::Float(f) => {
            out.push(BINFLOAT);
            out.extend_from_slice(&f.to_be_bytes());
        }
        Value::Str(s) => {
            out.push(BINUNICODE);
            // Strings over 4 GiB cannot occur in a snapshot; clamp the
            // length field rather than panic (the reader then rejects it).
            let n = u32::try_from(s.len()).unwrap_or(u32::MAX);
            out.extend_from_slice(&n.to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        Value::List(items) => {
            out.push(EMPTY_LIST);
            for chunk in items.chunks(BATCH) {
                out.push(MARK);
                for it in chunk {
                    write_value(out, it);
                }
                out.push(APPENDS);
            }
        }
        Value::Tuple(items) => match items.len() {
            0 => out.push(EMPTY_TUPLE),
            1..=3 => {
                for it in items {
                    write_value(out, it);
                }
                out.push([TUPLE1, TUPLE2, TUPLE3][items.len() - 1]);
            }
            _ => {
                out.push(MARK);
                for it in items {
                    write_value(out, it);
                }
                out.push(TUPLE);
            }
        },
        Value::Dict(items) => {
            out.push(EMPTY_DICT);
            for chunk in items.chunks(BATCH) {
                out.push(MARK);
                for (k, val) in chunk {
                    write_value(out, k);
                    write_value(out, val);
                }
                out.push(SETITEMS);
            }
        }
    }
}

/// A node of the object graph being read (containers are filled in place,
/// so that memo references see their final contents).
enum Node {
    Leaf(Value),
    List(Vec<usize>),
    Tuple(Vec<usize>),
    Dict(Vec<(usize, usize)>),
}

enum Item {
    Mark,
    Obj(usize),
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], PickleError> {
        let end = self.pos.checked_add(n).ok_or(PickleError::Truncated)?;
        let s = self.data.get(self.pos..end).ok_or(PickleError::Truncated)?;
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, PickleError> {
        Ok(self.take(1)?[0])
    }
    fn arr<const N: usize>(&mut self) -> Result<[u8; N], PickleError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn len_u32(&mut self) -> Result<usize, PickleError> {
        usize::try_from(u32::from_le_bytes(self.arr()?)).map_err(|_| PickleError::TooLarge)
    }
    fn len_u64(&mut self) -> Result<usize, PickleError> {
        usize::try_from(u64::from_le_bytes(self.arr()?)).map_err(|_| PickleError::TooLarge)
    }
    fn line(&mut self) -> Result<&'a [u8], PickleError> {
        let rest = self.data.get(self.pos..).ok_or(PickleError::Truncated)?;
        let n = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or(PickleError::Truncated)?;
        self.pos += n + 1;
        Ok(&rest[..n])
    }
}

fn malformed(msg: &str) -> PickleError {
    PickleError::Malformed(msg.to_string())
}

fn long_from_le(bytes: &[u8]) -> Result<Value, PickleError> {
    if bytes.is_empty() {
        return Ok(Value::Int(0));
    }
    if bytes.len() > 16 {
        return Err(PickleError::TooLarge);
    }
    let neg = bytes[bytes.len() - 1] & 0x80 != 0;
    let mut buf = [if neg { 0xff } else { 0 }; 16];
    buf[..bytes.len()].copy_from_slice(bytes);
    Ok(Value::Int(i128::from_le_bytes(buf)))
}

/// Reads a pickle of plain data (see the module docs for what is
/// accepted).
///
/// ```
/// use torchcore_memviz::{from_pickle, Value};
/// // pickle.dumps({"a": [1, True, None]}, protocol=4)
/// let b = b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x01a\x94]\x94(K\x01\x88Nes.";
/// let v = from_pickle(b)?;
/// assert_eq!(v, Value::dict([("a", Value::List(vec![Value::Int(1), Value::Bool(true), Value::None]))]));
/// assert!(from_pickle(b"\x80\x02c__main__\nX\n.").is_err());
/// # Ok::<(), torchcore_memviz::PickleError>(())
/// ```
pub fn from_pickle(data: &[u8]) -> Result<Value, PickleError> {
    let mut r = Reader { data, pos: 0 };
    let mut m = Machine::default();
    loop {
        let offset = r.pos;
        let op = r.u8()?;
        match op {
            PROTO => {
                r.u8()?;
            }
            FRAME => {
                r.take(8)?;
            }
            STOP => break,
            _ => match read_leaf(op, &mut r)? {
                Some(v) => m.push(Node::Leaf(v)),
                None => m.step(op, offset, &mut r)?,
            },
        }
    }
    let root = m.pop_obj()?;
    let mut budget: usize = 50_000_000;
    materialize(&m.nodes, root, 0, &mut budget)
}

/// The value of a leaf opcode (`None`, booleans, integers, floats,
/// strings) with its operand read from `r`; `None` for other opcodes.
fn read_leaf(op: u8, r: &mut Reader<'_>) -> Result<Option<Value>, PickleError> {
    Ok(Some(match op {
        NONE => Value::None,
        NEWTRUE => Value::Bool(true),
        NEWFALSE => Value::Bool(false),
        INT => {
            let l = r.line()?;
            match l {
                b"00" => Value::Bool(false),
                b"01" => Value::Bool(true),
                _ => Value::Int(
                    std::str::from_utf8(l)
                        .ok()
                        .and_then(|s| s.trim().parse().ok())
                        .ok_or_else(|| malformed("bad INT"))?,
                ),
            }
        }
        BININT => Value::Int(i32::from_le_bytes(r.arr()?).into()),
        BININT1 => Value::Int(r.u8()?.into()),
        BININT2 => Value::Int(u16::from_le_bytes(r.arr()?).into()),
        LONG1 => {
            let n = usize::from(r.u8()?);
            long_from_le(r.take(n)?)?
        }
        LONG4 => {
            let n = r.len_u32()?;
            long_from_le(r.take(n)?)?
        }
        BINFLOAT => Value::Float(f64::from_be_bytes(r.arr()?)),
        BINUNICODE | SHORT_BINUNICODE | BINUNICODE8 => {
            let n = match op {
                BINUNICODE => r.len_u32()?,
                SHORT_BINUNICODE => usize::from(r.u8()?),
                _ => r.len_u64()?,
            };
            let s = std::str::from_utf8(r.take(n)?).map_err(|_| malformed("bad UTF-8"))?;
            Value::Str(s.to_string())
        }
        _ => return Ok(None),
    }))
}

/// The unpickler's state: the object graph, the stack and the memo.
#[derive(Default)]
struct Machine {
    nodes: Vec<Node>,
    stack: Vec<Item>,
    memo: std::collections::HashMap<u64, usize>,
}

impl Machine {
    fn push(&mut self, n: Node) {
        self.nodes.push(n);
        self.stack.push(Item::Obj(self.nodes.len() - 1));
    }

    fn pop_obj(&mut self) -> Result<usize, PickleError> {
        match self.stack.pop() {
            Some(Item::Obj(i)) => Ok(i),
            _ => Err(malformed("stack underflow")),
        }
    }

    fn pop_mark(&mut self) -> Result<Vec<usize>, PickleError> {
        let m = self
            .stack
            .iter()
            .rposition(|i| matches!(i, Item::Mark))
            .ok_or_else(|| malformed("no mark"))?;
        let items = self
            .stack
            .drain(m..)
            .skip(1)
            .filter_map(|i| match i {
                Item::Obj(o) => Some(o),
                Item::Mark => None,
            })
            .collect();
        Ok(items)
    }

    fn top(&self) -> Result<usize, PickleError> {
        match self.stack.last() {
            Some(Item::Obj(i)) => Ok(*i),
            _ => Err(malformed("stack underflow")),
        }
    }

    /// Runs one container, memo or stack opcode (`offset`: its position,
    /// for the error on an unsupported one).
    fn step(&mut self, op: u8, offset: usize, r: &mut Reader<'_>) -> Result<(), PickleError> {
        match op {
            EMPTY_LIST => self.push(Node::List(Vec::new())),
            EMPTY_DICT => self.push(Node::Dict(Vec::new())),
            EMPTY_TUPLE => self.push(Node::Tuple(Vec::new())),
            MARK => self.stack.push(Item::Mark),
            APPEND | APPENDS => {
                let items = if op == APPEND {
                    vec![self.pop_obj()?]
                } else {
                    self.pop_mark()?
                };
                let l = self.top()?;
                match self.nodes.get_mut(l) {
                    Some(Node::List(v)) => v.extend(items),
                    _ => return Err(malformed("append to a non-list")),
                }
            }
            SETITEM | SETITEMS => {
                let items = if op == SETITEM {
                    let v = self.pop_obj()?;
                    let k = self.pop_obj()?;
                    vec![k, v]
                } else {
                    self.pop_mark()?
                };
                if items.len() % 2 != 0 {
                    return Err(malformed("odd number of dict items"));
                }
                let d = self.top()?;
                match self.nodes.get_mut(d) {
                    Some(Node::Dict(v)) => {
                        v.extend(items.chunks_exact(2).map(|c| (c[0], c[1])));
                    }
                    _ => return Err(malformed("setitem on a non-dict")),
                }
            }
            TUPLE => {
                let items = self.pop_mark()?;
                self.push(Node::Tuple(items));
            }
            TUPLE1 | TUPLE2 | TUPLE3 => {
                let n = usize::from(op - TUPLE1 + 1);
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.pop_obj()?);
                }
                items.reverse();
                self.push(Node::Tuple(items));
            }
            BINPUT | LONG_BINPUT | MEMOIZE => {
                let key = match op {
                    BINPUT => u64::from(r.u8()?),
                    LONG_BINPUT => u64::from(u32::from_le_bytes(r.arr()?)),
                    _ => self.memo.len() as u64,
                };
                let top = self.top()?;
                self.memo.insert(key, top);
            }
            BINGET | LONG_BINGET => {
                let key = if op == BINGET {
                    u64::from(r.u8()?)
                } else {
                    u64::from(u32::from_le_bytes(r.arr()?))
                };
                let i = *self
                    .memo
                    .get(&key)
                    .ok_or_else(|| malformed("unknown memo key"))?;
                self.stack.push(Item::Obj(i));
            }
            POP => {
                self.stack
                    .pop()
                    .ok_or_else(|| malformed("stack underflow"))?;
            }
            POP_MARK => {
                self.pop_mark()?;
            }
            DUP => {
                let i = self.top()?;
                self.stack.push(Item::Obj(i));
            }
            _ => return Err(PickleError::Unsupported { opcode: op, offset }),
        }
        Ok(())
    }
}

fn materialize(
    nodes: &[Node],
    i: usize,
    depth: usize,
    budget: &mut usize,
) -> Result<Value, PickleError> {
    if depth > 500 || *budget == 0 {
        return Err(PickleError::TooLarge);
    }
    *budget -= 1;
    let rec = |j: usize, budget: &mut usize| materialize(nodes, j, depth + 1, budget);
    Ok(
        match nodes.get(i).ok_or_else(|| malformed("bad reference"))? {
            Node::Leaf(v) => v.clone(),
            Node::List(items) => Value::List(
                items
                    .iter()
                    .map(|&j| rec(j, budget))
                    .collect::<Result<_, _>>()?,
            ),
            Node::Tuple(items) => Value::Tuple(
                items
                    .iter()
                    .map(|&j| rec(j, budget))
                    .collect::<Result<_, _>>()?,
            ),
            Node::Dict(items) => Value::Dict(
                items
                    .iter()
                    .map(|&(k, v)| Ok((rec(k, budget)?, rec(v, budget)?)))
                    .collect::<Result<_, PickleError>>()?,
            ),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_round_trip_at_every_width() {
        for i in [
            0i128,
            1,
            255,
            256,
            65535,
            65536,
            -1,
            -129,
            i32::MAX as i128,
            i32::MIN as i128,
            1 << 31,
            1 << 40,
            -(1 << 40),
            i64::MAX as i128,
            u64::MAX as i128,
            0x7f_0000_0000,
        ] {
            let v = Value::Int(i);
            assert_eq!(from_pickle(&to_pickle(&v)), Ok(v), "{i}");
        }
    }

    /// Integers beyond `i32` take Python's shortest `LONG1` (bytes from
    /// `pickle.dumps(v, 2)` of CPython).
    #[test]
    fn long_integers_take_pythons_shortest_encoding() {
        for (i, hex) in [
            (1i128 << 31, "8a050000008000"),
            (-(1i128 << 31) - 1, "8a05ffffff7fff"),
            (1 << 40, "8a06000000000001"),
            (-(1 << 40), "8a060000000000ff"),
            (i64::MAX as i128, "8a08ffffffffffffff7f"),
            (1 << 63, "8a09000000000000008000"),
            (i64::MIN as i128 - 1, "8a09ffffffffffffff7fff"),
            (i128::MAX, "8a10ffffffffffffffffffffffffffffff7f"),
            (i128::MIN, "8a1000000000000000000000000000000080"),
        ] {
            let b = to_pickle(&Value::Int(i));
            let body: String = b[2..b.len() - 1]
                .iter()
                .map(|x| format!("{x:02x}"))
                .collect();
            assert_eq!(body, hex, "{i}");
        }
    }

    #[test]
    fn long_lists_and_dicts_are_batched() {
        let v = Value::List((0..2500u64).map(Value::from).collect());
        let b = to_pickle(&v);
        // Three batches: 1000 + 1000 + 500 (items 0..256 are 2 bytes,
        // the rest 3, plus MARK and APPENDS per batch).
        assert_eq!(b.len(), 2 + 1 + 3 * 2 + 256 * 2 + (2500 - 256) * 3 + 1);
        assert_eq!(from_pickle(&b), Ok(v));
        let d = Value::Dict(
            (0..1001u64)
                .map(|i| (Value::from(i), Value::from(format!("{i}"))))
                .collect(),
        );
        assert_eq!(from_pickle(&to_pickle(&d)), Ok(d));
    }

    #[test]
    fn memo_references_see_final_contents() {
        // [x, x] where x = [1] is memoized empty and filled afterwards.
        let b = b"\x80\x04]\x94(]\x94K\x01ah\x01e.";
        assert_eq!(
            from_pickle(b),
            Ok(Value::List(vec![
                Value::List(vec![Value::Int(1)]),
                Value::List(vec![Value::Int(1)])
            ]))
        );
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        for b in [
            &b""[..],
            b"\x80",
            b"e.",
            b"K",
            b"X\xff\xff\xff\xff",
            b"h\x05.",
            b"(u.",
        ] {
            assert!(from_pickle(b).is_err(), "{b:?}");
        }
        // A self-referencing list.
        assert_eq!(from_pickle(b"]q\x00h\x00a."), Err(PickleError::TooLarge));
    }

    /// The opcodes of our pickles, walked with their argument lengths.
    fn opcodes(b: &[u8]) -> Vec<u8> {
        let mut ops = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let op = b[i];
            ops.push(op);
            i += 1 + match op {
                PROTO | BININT1 => 1,
                BININT2 => 2,
                BININT => 4,
                BINFLOAT => 8,
                LONG1 => 1 + usize::from(b[i + 1]),
                BINUNICODE => 4 + u32::from_le_bytes(b[i + 1..i + 5].try_into().unwrap()) as usize,
                _ => 0,
            };
        }
        ops
    }

    #[test]
    fn only_opcodes_the_interactive_viewer_reads() {
        // The opcodes the unpickler of PyTorch's MemoryViz.js (the viewer
        // behind pytorch.org/memory_viz and `trace_plot`) handles; it also
        // refuses protocols other than 2 to 4.
        let viewer: &[u8] = &[
            APPENDS,
            BINGET,
            BININT,
            BININT1,
            BININT2,
            EMPTY_DICT,
            EMPTY_LIST,
            FRAME,
            LONG1,
            LONG_BINGET,
            MARK,
            MEMOIZE,
            PROTO,
            SETITEMS,
            SHORT_BINUNICODE,
            STOP,
            TUPLE2,
            APPEND,
            NEWFALSE,
            BINPUT,
            BINUNICODE,
            EMPTY_TUPLE,
            NEWTRUE,
            NONE,
            BINFLOAT,
            TUPLE,
            TUPLE1,
            TUPLE3,
            LONG_BINPUT,
            b'l',
            b'd',
            SETITEM,
        ];
        let v = Value::dict([
            (
                "i",
                Value::List((0..1200).map(|i| Value::Int(i * 977 - 5000)).collect()),
            ),
            ("big", Value::Int(0x7f00_0000_0000)),
            ("f", Value::from(0.25)),
            ("s", Value::from("segment")),
            (
                "b",
                Value::List(vec![Value::Bool(true), Value::Bool(false), Value::None]),
            ),
            (
                "t",
                Value::List(
                    (0..5)
                        .map(|n| Value::Tuple(vec![Value::Int(1); n]))
                        .collect(),
                ),
            ),
        ]);
        let b = to_pickle(&v);
        assert_eq!(&b[..2], &[PROTO, 2]);
        for op in opcodes(&b) {
            assert!(
                viewer.contains(&op),
                "opcode {op:#04x} is not read by the viewer"
            );
        }
        assert_eq!(from_pickle(&b), Ok(v));
    }

    #[test]
    fn tuples_floats_and_strings() {
        let v = Value::Tuple(vec![
            Value::Tuple(vec![]),
            Value::Tuple(vec![Value::from(1.5)]),
            Value::Tuple(vec![Value::from("é"), Value::None]),
            Value::Tuple(vec![Value::Bool(false); 5]),
        ]);
        assert_eq!(from_pickle(&to_pickle(&v)), Ok(v));
    }
}
