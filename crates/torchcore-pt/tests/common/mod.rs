//! Shared by the integration tests: the same description of a loaded
//! value as `tools/pt_corpus.py` computes on the torch side.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(dead_code)]

use std::path::PathBuf;

use c10_core::Tensor;
use serde_json::{json, Value as Json};
use torchcore_pt::Value;

pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/torch-2.15")
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn fbits(x: f64) -> String {
    hex(&x.to_be_bytes())
}

#[derive(Default)]
pub struct Describer {
    groups: Vec<c10_core::Storage>,
}

impl Describer {
    fn group(&mut self, t: &Tensor) -> usize {
        if let Some(i) = self.groups.iter().position(|s| s.is_alias_of(t.storage())) {
            return i;
        }
        self.groups.push(t.storage().clone());
        self.groups.len() - 1
    }

    fn tensor(&mut self, t: &Tensor) -> Json {
        let st = t.storage();
        let bytes = st.read().unwrap();
        let storage = if st.nbytes() <= 1 << 20 {
            hex(bytes.bytes().unwrap())
        } else {
            format!("<{} bytes>", st.nbytes())
        };
        json!({
            "t": "tensor",
            "dtype": t.dtype().torch_name(),
            "size": t.sizes(),
            "stride": t.strides(),
            "offset": t.storage_offset(),
            "requires_grad": t.requires_grad(),
            "group": self.group(t),
            "storage": storage,
        })
    }

    pub fn describe(&mut self, v: &Value) -> Json {
        match v {
            Value::None => json!({"t": "none"}),
            Value::Bool(b) => json!({"t": "bool", "v": b}),
            Value::Int(i) => json!({"t": "int", "v": i.to_string()}),
            Value::BigInt(i) => json!({"t": "int", "v": i.to_string()}),
            Value::Float(f) => json!({"t": "float", "v": fbits(*f)}),
            Value::Complex(a, b) => json!({"t": "complex", "re": fbits(*a), "im": fbits(*b)}),
            Value::Str(s) => json!({"t": "str", "v": s}),
            Value::Bytes(b) => json!({"t": "bytes", "v": hex(b)}),
            Value::Size(s) => json!({"t": "size", "v": s}),
            Value::Dtype(d) => json!({"t": "dtype", "v": d.torch_name()}),
            Value::Device(d) => json!({"t": "device", "v": d}),
            Value::Parameter(t) => json!({"t": "param", "tensor": self.tensor(t)}),
            Value::Tensor(t) => self.tensor(t),
            Value::List(xs) => {
                json!({"t": "list", "items": xs.iter().map(|x| self.describe(x)).collect::<Vec<_>>()})
            }
            Value::Tuple(xs) => {
                json!({"t": "tuple", "items": xs.iter().map(|x| self.describe(x)).collect::<Vec<_>>()})
            }
            Value::Set(xs) => {
                json!({"t": "set", "items": xs.iter().map(|x| self.describe(x)).collect::<Vec<_>>()})
            }
            Value::Dict(items) => {
                json!({"t": "dict", "items": items.iter().map(|(k, x)| json!([self.describe(k), self.describe(x)])).collect::<Vec<_>>()})
            }
            Value::OrderedDict(d) => {
                let mut o = json!({"t": "odict", "items": d.items.iter().map(|(k, x)| json!([self.describe(k), self.describe(x)])).collect::<Vec<_>>()});
                if !d.attrs.is_empty() {
                    o["attrs"] = d
                        .attrs
                        .iter()
                        .map(|(k, x)| json!([k, self.describe(x)]))
                        .collect::<Vec<_>>()
                        .into();
                }
                o
            }
            other => json!({"t": format!("unsupported {}", other.type_name())}),
        }
    }
}

pub fn describe(v: &Value) -> Json {
    Describer::default().describe(v)
}

/// The Python with torch to run differential tests with, or `None` (and a
/// message) when there is none: CI has no torch.
pub fn torch_python() -> Option<PathBuf> {
    // TORCHCORE_TORCH_PYTHON, when set, is the only candidate.
    let candidates: Vec<PathBuf> = match std::env::var_os("TORCHCORE_TORCH_PYTHON") {
        Some(p) => vec![PathBuf::from(p)],
        None => vec![
            PathBuf::from("/work/torchvenv/bin/python"),
            PathBuf::from("python3"),
        ],
    };
    for c in candidates {
        let ok = std::process::Command::new(&c)
            .args(["-c", "import torch"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if ok {
            return Some(c);
        }
    }
    eprintln!(
        "SKIPPED: torch is not importable (set TORCHCORE_TORCH_PYTHON to a Python with torch)"
    );
    None
}

pub fn corpus_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tools/pt_corpus.py")
}
