//! The fidelity corpus: what lies beyond view geometry, checked against
//! real PyTorch 2.15 (`data/fidelity.jsonl`, made by
//! `tools/gen_fidelity.py`).
//!
//! Each case is a short script. A step runs one operation (a factory, an
//! in-place op on a named tensor, or an op that makes a new tensor from
//! one) and compares what it gives with what PyTorch recorded: the
//! resulting tensor's dtype, sizes, strides, offset, values (bit for bit;
//! NaN equals NaN), version counter, `requires_grad`, `is_leaf` and
//! storage size, or the exception (kind and first line of the message,
//! word for word). Categories: `range` (c10's `checked_convert`), `infer`
//! (dtype inference of factories), `arange`, `linspace`, `eye`, `convert`
//! (every pair of dtypes), `version`, `resize_data`, `leaf`, `errors`,
//! `ops`.
//!
//! A mismatch is a failure unless it is one of the deliberate differences
//! listed in `docs/pytorch-map.md` ("Deliberate differences"); those are
//! counted apart, each with its reason ([`KNOWN_DIFFERENCES`]), so that a
//! new corpus never gives an unexplained red run.
//!
//! ```
//! let line = r#"{"id": "doc-1", "cat": "range", "steps": [
//!   {"op": "zeros", "args": {"size": [2], "dtype": "uint8"}, "expect": {"dtype": "uint8",
//!    "sizes": [2], "strides": [1], "offset": 0, "values": [0, 0], "version": 0}},
//!   {"op": "fill_", "args": {"value": {"int": 300}}, "expect": {"error": {"kind": "RuntimeError",
//!    "msg": "value cannot be converted to type uint8_t without overflow"}}}]}"#;
//! let report = shape_conformance::fidelity::run_text(&line.replace('\n', " "));
//! assert_eq!((report.passed, report.failed), (1, 0));
//! ```

use std::collections::{BTreeMap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};

use aten_shape::copy;
use aten_shape::views::ViewOps;
use c10_core::scalar_type::{Complex128, Complex64};
use c10_core::{
    Device, GradMode, InferenceMode, MemoryFormat, Scalar, ScalarType, Tensor, TensorError,
    TensorOptions,
};
use half::{bf16, f16};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::op_table::FACTORY_OPS;

/// One fidelity case.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Case id, e.g. `range-fill-uint8-10`.
    pub id: String,
    /// Category (`range`, `convert`, ...).
    pub cat: String,
    /// The script.
    pub steps: Vec<Step>,
}

/// One step of a case.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// PyTorch's name of the operation (`fill_`, `arange`, `to`, ...).
    pub op: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Map<String, Value>,
    /// The tensor it runs on (default `x`).
    #[serde(rename = "self")]
    pub self_: Option<String>,
    /// Where its result goes (default `x` for factories and in-place ops,
    /// `y` otherwise).
    pub out: Option<String>,
    /// `inference` or `no_grad`: the step runs in that mode.
    pub mode: Option<String>,
    /// What PyTorch gave: the observed fields, or `{"error": {kind, msg}}`.
    pub expect: Map<String, Value>,
}

/// A deliberate difference from PyTorch that the corpus may show.
#[derive(Debug, Clone, Copy)]
pub struct KnownDifference {
    /// Short name, as in `docs/pytorch-map.md`.
    pub name: &'static str,
    /// Why we differ.
    pub reason: &'static str,
}

/// Every deliberate difference the fidelity runner accepts (each is listed
/// in `docs/pytorch-map.md`, "Deliberate differences").
pub const KNOWN_DIFFERENCES: &[KnownDifference] = &[
    KnownDifference {
        name: "uint32-out-of-range-vectorised",
        reason: "a float out of uint32's range (NaN, the infinities, below -2^31 or from 2^32) \
                 converted to uint32 is undefined behaviour in C++: PyTorch's element-by-element \
                 loop goes through int64 (1e10 gives 1410065408), its vectorised loop over \
                 contiguous data gives other values that depend on the element's position; we \
                 always give the element-by-element result",
    },
    KnownDifference {
        name: "python-arg-parser",
        reason: "PyTorch's Python argument parser refuses a negative int for a uint64 value \
                 (OverflowError) before c10 sees it; the Rust API takes a Scalar and applies \
                 c10's own rule",
    },
    KnownDifference {
        name: "uninitialised-bytes",
        reason: "bytes that PyTorch leaves uninitialised (empty, the grown part of a storage \
                 after resize_ or set_) read as whatever memory held; ours read as zeros \
                 (safe code never sees uninitialised memory)",
    },
    KnownDifference {
        name: "view-op-names",
        reason: "for an in-place change of a view of a view made in no_grad mode, PyTorch names \
                 the view op (`Output 0 of Select is a view of a view which was created in \
                 no_grad mode ...`); we do not record which op made a view and give the \
                 message for a no_grad view",
    },
    KnownDifference {
        name: "no-autograd-engine",
        reason: "after an in-place change through a view made in no_grad mode, PyTorch's \
                 autograd engine fails when it rebuilds the view's grad_fn on reading \
                 requires_grad/is_leaf; this crate has no autograd engine and no grad_fn",
    },
];

/// What running the corpus gave.
#[derive(Debug, Default)]
pub struct Report {
    /// Cases that matched PyTorch in every recorded field.
    pub passed: usize,
    /// Cases that differ from PyTorch (unexplained).
    pub failed: usize,
    /// Cases that differ only by a deliberate difference, by its name.
    pub known: BTreeMap<&'static str, usize>,
    /// Failures by category.
    pub failed_by_cat: BTreeMap<String, usize>,
    /// One line per failure (capped).
    pub failures: Vec<String>,
}

impl Report {
    /// One-line summary.
    pub fn summary_line(&self) -> String {
        let known: usize = self.known.values().sum();
        format!(
            "fidelity: {} passed, {} failed, {} known differences {:?}; failures by category {:?}",
            self.passed, self.failed, known, self.known, self.failed_by_cat
        )
    }
}

/// Runs a corpus given as JSONL text.
pub fn run_text(text: &str) -> Report {
    let mut report = Report::default();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let case: Case = match serde_json::from_str(line) {
            Ok(c) => c,
            Err(e) => {
                report.failed += 1;
                *report.failed_by_cat.entry("parse".into()).or_default() += 1;
                report
                    .failures
                    .push(format!("line {}: does not parse: {e}", n + 1));
                continue;
            }
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| run_case(&case)))
            .unwrap_or_else(|_| Outcome::Fail("panicked".into()));
        match outcome {
            Outcome::Pass => report.passed += 1,
            Outcome::Known(name) => *report.known.entry(name).or_default() += 1,
            Outcome::Fail(why) => {
                report.failed += 1;
                *report.failed_by_cat.entry(case.cat.clone()).or_default() += 1;
                if report.failures.len() < 400 {
                    report.failures.push(format!("{}: {why}", case.id));
                }
            }
        }
    }
    report
}

/// Runs the corpus file at `path` (a missing file is one failure).
pub fn run_file(path: &std::path::Path) -> Report {
    match std::fs::read_to_string(path) {
        Ok(text) => run_text(&text),
        Err(e) => Report {
            failed: 1,
            failures: vec![format!("{}: {e}", path.display())],
            ..Report::default()
        },
    }
}

/// The corpus shipped with this crate.
pub fn default_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/fidelity.jsonl")
}

enum Outcome {
    Pass,
    Known(&'static str),
    Fail(String),
}

fn run_case(case: &Case) -> Outcome {
    let mut env: HashMap<String, Tensor> = HashMap::new();
    let mut known = None;
    for (k, step) in case.steps.iter().enumerate() {
        let got = {
            let _inference;
            let _no_grad;
            match step.mode.as_deref() {
                None => {}
                Some("inference") => _inference = InferenceMode::new(),
                Some("no_grad") => _no_grad = GradMode::disable(),
                Some(other) => return Outcome::Fail(format!("step {k}: unknown mode {other:?}")),
            }
            match apply(&step.op, &step.args, step.self_.as_deref(), &mut env) {
                Ok(r) => r,
                Err(Unsupported(why)) => {
                    return Outcome::Fail(format!("step {k} {}: unsupported: {why}", step.op))
                }
            }
        };
        let name = step
            .out
            .clone()
            .unwrap_or_else(|| default_out(&step.op).to_string());
        let observed = match got {
            Ok(t) => {
                let o = observe(&t);
                env.insert(name, t);
                o
            }
            Err(e) => json!({"error": {"kind": kind_of(&e), "msg": first_line(&e.to_string())}})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        };
        match compare(case, step, &step.expect, &observed) {
            Ok(None) => {}
            Ok(Some(k)) => known = Some(k),
            Err(why) => return Outcome::Fail(format!("step {k} {}: {why}", step.op)),
        }
        if step.expect.contains_key("error") {
            break;
        }
    }
    match known {
        Some(k) => Outcome::Known(k),
        None => Outcome::Pass,
    }
}

pub(crate) const INPLACE_OPS: &[&str] = &[
    "fill_",
    "zero_",
    "setitem",
    "copy_",
    "resize_",
    "set_",
    "set_storage",
    "t_",
    "transpose_",
    "squeeze_",
    "unsqueeze_",
    "as_strided_",
    "requires_grad_",
];

/// Whether [`apply`] knows op `op` (for the op-table check in
/// [`crate::op_table`]): called with no arguments, it fails on them, not
/// on the name.
#[cfg(test)]
pub(crate) fn dispatches(op: &str) -> bool {
    let mut env = HashMap::new();
    if let Ok(x) = Tensor::zeros(&[2, 3], ScalarType::Float) {
        env.insert("x".to_string(), x);
    }
    match apply(op, &Map::new(), None, &mut env) {
        Err(Unsupported(m)) => !m.starts_with("unknown op"),
        Ok(_) => true,
    }
}

fn default_out(op: &str) -> &'static str {
    if FACTORY_OPS.contains(&op) || INPLACE_OPS.contains(&op) {
        "x"
    } else {
        "y"
    }
}

/// An op or argument the runner cannot run (a failure, never a skip).
struct Unsupported(String);

type Applied = Result<Result<Tensor, TensorError>, Unsupported>;

/// Runs step `op` with arguments `a` on the tensor named `me` (default
/// `x`) of `env`: a factory, an in-place op (whose handle `env` then
/// holds changed) or an out-of-place op.
fn apply(
    op: &str,
    a: &Map<String, Value>,
    me: Option<&str>,
    env: &mut HashMap<String, Tensor>,
) -> Applied {
    let me = me.unwrap_or("x");
    if FACTORY_OPS.contains(&op) {
        return apply_factory(op, a);
    }
    let Some(mut x) = env.get(me).cloned() else {
        return Err(Unsupported(format!("no tensor named {me:?}")));
    };
    if INPLACE_OPS.contains(&op) {
        let r = apply_in_place(op, a, &mut x, env)?.map(|()| x.clone());
        // The in-place op changed this handle: later steps see the change.
        env.insert(me.to_string(), x);
        return Ok(r);
    }
    apply_out_of_place(op, a, &x)
}

/// The factories of [`FACTORY_OPS`].
fn apply_factory(op: &str, a: &Map<String, Value>) -> Applied {
    let opts = || -> Result<TensorOptions, Unsupported> {
        let mut o = TensorOptions::new();
        if let Some(d) = a.get("dtype").filter(|d| !d.is_null()) {
            o = o.dtype(dtype(d)?);
        }
        if let Some(Value::Bool(r)) = a.get("requires_grad") {
            o = o.requires_grad(*r);
        }
        match a.get("device").and_then(Value::as_str) {
            None | Some("cpu") => {}
            Some("meta") => o = o.device(Device::META),
            Some(other) => return Err(Unsupported(format!("device {other}"))),
        }
        Ok(o)
    };
    Ok(match op {
        "tensor" => make_tensor(a)?,
        "zeros" => Tensor::zeros(&ints(a, "size")?, opts()?),
        "empty" => Tensor::empty(&ints(a, "size")?, opts()?),
        "ones" => Tensor::ones(&ints(a, "size")?, opts()?),
        "full" => Tensor::full(&ints(a, "size")?, scalar(a, "value")?, opts()?),
        "scalar_tensor" => Tensor::scalar_tensor(scalar(a, "value")?, opts()?),
        "arange" => Tensor::arange(
            scalar(a, "start")?,
            scalar(a, "end")?,
            scalar(a, "step")?,
            opts()?,
        ),
        "linspace" => Tensor::linspace(
            scalar(a, "start")?,
            scalar(a, "end")?,
            int(a, "steps")?,
            opts()?,
        ),
        "eye" => {
            let m = match a.get("m") {
                None | Some(Value::Null) => None,
                Some(_) => Some(int(a, "m")?),
            };
            Tensor::eye(int(a, "n")?, m, opts()?)
        }
        #[allow(
            clippy::unreachable,
            reason = "only names in FACTORY_OPS reach this match; a name listed without an arm is a runner bug, and run_case reports the panic as a failure"
        )]
        _ => unreachable!("FACTORY_OPS"),
    })
}

/// The ops of [`INPLACE_OPS`], on `x`; tensor arguments name tensors of
/// `env`.
fn apply_in_place(
    op: &str,
    a: &Map<String, Value>,
    x: &mut Tensor,
    env: &HashMap<String, Tensor>,
) -> Result<Result<(), TensorError>, Unsupported> {
    let src = |key: &str| -> Result<Tensor, Unsupported> {
        let name = a
            .get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| Unsupported(format!("missing {key}")))?;
        env.get(name)
            .cloned()
            .ok_or_else(|| Unsupported(format!("no tensor named {name:?}")))
    };
    Ok(match op {
        "fill_" => x.fill_(scalar(a, "value")?),
        "zero_" => x.zero_(),
        "setitem" => {
            let v = scalar(a, "value")?;
            x.index_ints(&ints(a, "index")?)
                .and_then(|view| view.fill_(v))
        }
        "copy_" => copy::copy_(x, &src("src")?),
        // PyTorch's `memory_format=None` when the case names none.
        "resize_" => x.resize_(&ints(a, "size")?, memory_format(a)?),
        "set_" => {
            let s = src("source")?;
            if a.contains_key("size") {
                x.set_(
                    s.storage(),
                    int(a, "offset")?,
                    &ints(a, "size")?,
                    &ints(a, "stride")?,
                )
            } else {
                x.set_to(&s)
            }
        }
        "set_storage" => {
            let s = src("source")?;
            x.set_storage(s.storage())
        }
        "t_" => x.t_(),
        "transpose_" => x.transpose_(int(a, "dim0")?, int(a, "dim1")?),
        "squeeze_" => match a.get("dim") {
            None | Some(Value::Null) => x.squeeze_(None),
            Some(Value::Array(_)) => x.squeeze_dims_(&ints(a, "dim")?),
            Some(_) => x.squeeze_(Some(int(a, "dim")?)),
        },
        "unsqueeze_" => x.unsqueeze_(int(a, "dim")?),
        "as_strided_" => {
            let off = match a.get("offset") {
                None | Some(Value::Null) => None,
                Some(_) => Some(int(a, "offset")?),
            };
            x.as_strided_(&ints(a, "size")?, &ints(a, "stride")?, off)
        }
        "requires_grad_" => {
            let flag = a.get("flag").and_then(Value::as_bool).unwrap_or(true);
            x.requires_grad_(flag)
        }
        #[allow(
            clippy::unreachable,
            reason = "only names in INPLACE_OPS reach this match; a name listed without an arm is a runner bug, and run_case reports the panic as a failure"
        )]
        _ => unreachable!("INPLACE_OPS"),
    })
}

/// The out-of-place ops (copies and views) on `x`.
fn apply_out_of_place(op: &str, a: &Map<String, Value>, x: &Tensor) -> Applied {
    Ok(match op {
        "to" => copy::to_dtype(x, dtype(a.get("dtype").unwrap_or(&Value::Null))?),
        "clone" => copy::clone(x, memory_format(a)?.unwrap_or(MemoryFormat::Preserve)),
        "contiguous" => copy::contiguous(x, memory_format(a)?.unwrap_or(MemoryFormat::Contiguous)),
        "detach" => Ok(x.detach()),
        "t" => x.t(),
        "view" => x.view(&ints(a, "size")?),
        "view_dtype" => x.view_dtype(dtype(a.get("dtype").unwrap_or(&Value::Null))?),
        "select" => x.select(int(a, "dim")?, int(a, "index")?),
        "getitem" => x.index_ints(&ints(a, "index")?),
        "slice" => x.slice(
            0,
            Some(int(a, "start")?),
            Some(int(a, "end")?),
            int(a, "step")?,
        ),
        other => return Err(Unsupported(format!("unknown op {other:?}"))),
    })
}

fn dtype(v: &Value) -> Result<ScalarType, Unsupported> {
    let s = v
        .as_str()
        .ok_or_else(|| Unsupported(format!("dtype {v}")))?;
    ScalarType::from_torch_name(s).map_err(|e| Unsupported(format!("dtype {s}: {e}")))
}

/// The optional `memory_format` argument (`"contiguous_format"`,
/// `"channels_last"`, `"channels_last_3d"`, `"preserve_format"`, with or
/// without a `torch.` prefix); `None` when absent or null.
fn memory_format(a: &Map<String, Value>) -> Result<Option<MemoryFormat>, Unsupported> {
    let name = match a.get("memory_format") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) => s.strip_prefix("torch.").unwrap_or(s),
        Some(other) => return Err(Unsupported(format!("memory_format {other}"))),
    };
    Ok(Some(match name {
        "contiguous_format" => MemoryFormat::Contiguous,
        "channels_last" => MemoryFormat::ChannelsLast,
        "channels_last_3d" => MemoryFormat::ChannelsLast3d,
        "preserve_format" => MemoryFormat::Preserve,
        other => return Err(Unsupported(format!("memory_format {other:?}"))),
    }))
}

fn int(a: &Map<String, Value>, key: &str) -> Result<i64, Unsupported> {
    a.get(key)
        .and_then(Value::as_i64)
        .ok_or_else(|| Unsupported(format!("argument {key}: {:?}", a.get(key))))
}

fn ints(a: &Map<String, Value>, key: &str) -> Result<Vec<i64>, Unsupported> {
    match a.get(key) {
        Some(Value::Array(v)) => v
            .iter()
            .map(|x| x.as_i64().ok_or_else(|| Unsupported(format!("{key}: {x}"))))
            .collect(),
        other => Err(Unsupported(format!("argument {key}: {other:?}"))),
    }
}

fn num(v: &Value) -> Result<f64, Unsupported> {
    match v {
        Value::Number(n) => n.as_f64().ok_or_else(|| Unsupported(format!("number {n}"))),
        Value::String(s) => match s.as_str() {
            "nan" => Ok(f64::NAN),
            "inf" => Ok(f64::INFINITY),
            "-inf" => Ok(f64::NEG_INFINITY),
            _ => Err(Unsupported(format!("number {s:?}"))),
        },
        other => Err(Unsupported(format!("number {other}"))),
    }
}

fn scalar(a: &Map<String, Value>, key: &str) -> Result<Scalar, Unsupported> {
    let Some(Value::Object(m)) = a.get(key) else {
        return Err(Unsupported(format!("scalar {key}: {:?}", a.get(key))));
    };
    match m.iter().next() {
        Some((k, Value::Bool(b))) if k == "bool" => Ok(Scalar::Bool(*b)),
        Some((k, Value::Number(n))) if k == "int" => n
            .as_i64()
            .map(Scalar::Int)
            .ok_or_else(|| Unsupported(format!("int {n}"))),
        Some((k, v)) if k == "float" => Ok(Scalar::Float(num(v)?)),
        other => Err(Unsupported(format!("scalar {other:?}"))),
    }
}

/// `torch.tensor(data, dtype)`: built exactly (every value is representable
/// in `dtype`), through a wide type and one conversion.
fn make_tensor(a: &Map<String, Value>) -> Result<Result<Tensor, TensorError>, Unsupported> {
    let dt = dtype(a.get("dtype").unwrap_or(&Value::Null))?;
    let Some(Value::Array(data)) = a.get("data") else {
        return Err(Unsupported("tensor without data".into()));
    };
    let n = data.len() as i64;
    let wide = if dt == ScalarType::Bool {
        let v: Result<Vec<bool>, _> = data
            .iter()
            .map(|x| x.as_bool().ok_or_else(|| Unsupported(format!("bool {x}"))))
            .collect();
        Tensor::from_vec(v?, &[n])
    } else if dt.is_complex() {
        let v: Result<Vec<Complex128>, Unsupported> = data
            .iter()
            .map(|x| match x {
                Value::Array(p) if p.len() == 2 => Ok(Complex128 {
                    re: num(&p[0])?,
                    im: num(&p[1])?,
                }),
                other => Err(Unsupported(format!("complex {other}"))),
            })
            .collect();
        Tensor::from_vec(v?, &[n])
    } else if dt.is_floating_point() {
        let v: Result<Vec<f64>, _> = data.iter().map(num).collect();
        Tensor::from_vec(v?, &[n])
    } else if dt == ScalarType::UInt64 {
        let v: Result<Vec<u64>, _> = data
            .iter()
            .map(|x| x.as_u64().ok_or_else(|| Unsupported(format!("uint64 {x}"))))
            .collect();
        Tensor::from_vec(v?, &[n])
    } else {
        let v: Result<Vec<i64>, _> = data
            .iter()
            .map(|x| x.as_i64().ok_or_else(|| Unsupported(format!("int {x}"))))
            .collect();
        Tensor::from_vec(v?, &[n])
    };
    let mut t = match wide.and_then(|w| {
        if w.dtype() == dt {
            Ok(w)
        } else {
            copy::to_dtype(&w, dt)
        }
    }) {
        Ok(t) => t,
        Err(e) => return Ok(Err(e)),
    };
    if let Some(Value::Array(sizes)) = a.get("sizes") {
        let s: Result<Vec<i64>, _> = sizes
            .iter()
            .map(|x| x.as_i64().ok_or_else(|| Unsupported(format!("size {x}"))))
            .collect();
        t = match t.view(&s?) {
            Ok(t) => t,
            Err(e) => return Ok(Err(e)),
        };
    }
    if a.get("requires_grad").and_then(Value::as_bool) == Some(true) {
        if let Err(e) = t.requires_grad_(true) {
            return Ok(Err(e));
        }
    }
    Ok(Ok(t))
}

fn enc_f64(x: f64) -> Value {
    if x.is_nan() {
        json!("nan")
    } else if x.is_infinite() {
        json!(if x > 0.0 { "inf" } else { "-inf" })
    } else {
        json!(x)
    }
}

fn values(t: &Tensor) -> Result<Vec<Value>, TensorError> {
    macro_rules! ints {
        ($ty:ty) => {
            t.to_vec::<$ty>()?.into_iter().map(|v| json!(v)).collect()
        };
    }
    Ok(match t.dtype() {
        ScalarType::Bool => t.to_vec::<bool>()?.into_iter().map(|v| json!(v)).collect(),
        ScalarType::Byte => ints!(u8),
        ScalarType::Char => ints!(i8),
        ScalarType::Short => ints!(i16),
        ScalarType::Int => ints!(i32),
        ScalarType::Long => ints!(i64),
        ScalarType::UInt16 => ints!(u16),
        ScalarType::UInt32 => ints!(u32),
        ScalarType::UInt64 => ints!(u64),
        ScalarType::Half => t
            .to_vec::<f16>()?
            .into_iter()
            .map(|v| enc_f64(v.to_f64()))
            .collect(),
        ScalarType::BFloat16 => t
            .to_vec::<bf16>()?
            .into_iter()
            .map(|v| enc_f64(v.to_f64()))
            .collect(),
        ScalarType::Float => t
            .to_vec::<f32>()?
            .into_iter()
            .map(|v| enc_f64(f64::from(v)))
            .collect(),
        ScalarType::Double => t.to_vec::<f64>()?.into_iter().map(enc_f64).collect(),
        ScalarType::ComplexFloat => t
            .to_vec::<Complex64>()?
            .into_iter()
            .map(|v| json!([enc_f64(f64::from(v.re)), enc_f64(f64::from(v.im))]))
            .collect(),
        ScalarType::ComplexDouble => t
            .to_vec::<Complex128>()?
            .into_iter()
            .map(|v| json!([enc_f64(v.re), enc_f64(v.im)]))
            .collect(),
        other => return Err(TensorError::Runtime(format!("no values for {other}"))),
    })
}

fn observe(t: &Tensor) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("dtype".into(), json!(t.dtype().torch_name()));
    o.insert("sizes".into(), json!(t.sizes()));
    o.insert("strides".into(), json!(t.strides()));
    o.insert("offset".into(), json!(t.storage_offset()));
    o.insert(
        "device".into(),
        json!(if t.device().is_meta() { "meta" } else { "cpu" }),
    );
    if t.numel() <= 4096 && !t.device().is_meta() {
        match values(t) {
            Ok(v) => o.insert("values".into(), Value::Array(v)),
            Err(e) => o.insert("values".into(), json!(format!("error: {e}"))),
        };
    }
    o.insert("requires_grad".into(), json!(t.requires_grad()));
    o.insert("is_leaf".into(), json!(t.is_leaf()));
    o.insert("storage_nbytes".into(), json!(t.storage().nbytes()));
    o.insert(
        "version".into(),
        t.version().map(|v| json!(v)).unwrap_or(Value::Null),
    );
    o
}

fn kind_of(e: &TensorError) -> &'static str {
    e.kind().python_exception()
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// Two recorded values are equal: numbers by value (integers exactly,
/// floats bit for bit), strings (`nan`, `inf`) and the rest structurally.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(i), Some(j)) = (x.as_i64(), y.as_i64()) {
                return i == j;
            }
            if let (Some(i), Some(j)) = (x.as_u64(), y.as_u64()) {
                return i == j;
            }
            match (x.as_f64(), y.as_f64()) {
                (Some(p), Some(q)) => p.to_bits() == q.to_bits(),
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        _ => a == b,
    }
}

/// `Ok(None)`: matches; `Ok(Some(name))`: differs only by that known
/// difference; `Err`: an unexplained difference.
fn compare(
    case: &Case,
    step: &Step,
    expect: &Map<String, Value>,
    got: &Map<String, Value>,
) -> Result<Option<&'static str>, String> {
    if let Some(e) = expect.get("error") {
        let kind = e.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind == "OverflowError" && got.get("error").is_none() {
            return Ok(Some("python-arg-parser"));
        }
        let expected_msg = e.get("msg").and_then(Value::as_str).unwrap_or("");
        let got_msg = got
            .get("error")
            .and_then(|g| g.get("msg"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if expected_msg.starts_with("Output 0 of ")
            && expected_msg.contains("is a view of a view which was created in no_grad mode")
            && got_msg.starts_with("A view was created in no_grad mode")
        {
            return Ok(Some("view-op-names"));
        }
        return match got.get("error") {
            Some(g) if same(g, e) => Ok(None),
            Some(g) => Err(format!("expected error {e}, got error {g}")),
            None => Err(format!("expected error {e}, got success {}", brief(got))),
        };
    }
    if let Some(g) = got.get("error") {
        return Err(format!("expected success {}, got error {g}", brief(expect)));
    }
    let mut known = None;
    for (key, want) in expect {
        if key == "autograd_error" {
            known = Some("no-autograd-engine");
            continue;
        }
        let have = got.get(key).unwrap_or(&Value::Null);
        if same(want, have) {
            continue;
        }
        if key == "values"
            && matches!(step.op.as_str(), "empty" | "resize_" | "set_")
            && zeros_where_different(want, have)
        {
            known = Some("uninitialised-bytes");
            continue;
        }
        if key == "values" && case.cat == "convert" && uint32_out_of_range(case, step, want, have) {
            known = Some("uint32-out-of-range-vectorised");
            continue;
        }
        if let (Some(w), Some(h)) = (want.as_array(), have.as_array()) {
            if w.len() == h.len() {
                let diffs: Vec<String> = w
                    .iter()
                    .zip(h)
                    .enumerate()
                    .filter(|(_, (w, h))| !same(w, h))
                    .take(6)
                    .map(|(i, (w, h))| format!("[{i}] expected {w} got {h}"))
                    .collect();
                return Err(format!("{key}: {}", diffs.join(", ")));
            }
        }
        return Err(format!("{key}: expected {want}, got {have}"));
    }
    Ok(known)
}

/// Same length, and every element that differs is zero here (bytes that
/// PyTorch leaves uninitialised).
fn zeros_where_different(want: &Value, have: &Value) -> bool {
    let (Some(w), Some(h)) = (want.as_array(), have.as_array()) else {
        return false;
    };
    w.len() == h.len()
        && w.iter().zip(h).all(|(w, h)| {
            same(w, h) || h.as_f64() == Some(0.0) || h.as_bool() == Some(false) || {
                h.as_array()
                    .is_some_and(|p| p.iter().all(|x| x.as_f64() == Some(0.0)))
            }
        })
}

/// Every difference is a float out of uint32's range converted to uint32
/// by a contiguous (vectorised) copy (see [`KNOWN_DIFFERENCES`]).
fn uint32_out_of_range(case: &Case, step: &Step, want: &Value, have: &Value) -> bool {
    if step.args.get("dtype").and_then(Value::as_str) != Some("uint32")
        || case.id.ends_with("-strided")
    {
        return false;
    }
    let Some(src) = case
        .steps
        .first()
        .and_then(|s| s.args.get("data"))
        .and_then(Value::as_array)
    else {
        return false;
    };
    let (Some(w), Some(h)) = (want.as_array(), have.as_array()) else {
        return false;
    };
    if w.len() != h.len() || w.len() != src.len() {
        return false;
    }
    let out_of_range = |v: &Value| match v {
        Value::String(_) => true, // nan, inf, -inf
        Value::Number(n) => n
            .as_f64()
            .is_some_and(|x| !(x > -2_147_483_648.0 && x < 4_294_967_296.0)),
        _ => false,
    };
    w.iter().zip(h).zip(src).all(|((w, h), s)| {
        // A real value, or a complex one's parts (PyTorch's vectorised
        // complex loop converts both).
        let parts: Vec<Value> = match s {
            Value::Array(p) => p.clone(),
            other => vec![other.clone()],
        };
        same(w, h) || parts.iter().any(out_of_range)
    })
}

fn brief(m: &Map<String, Value>) -> String {
    let pick: Map<String, Value> = m
        .iter()
        .filter(|(k, _)| k.as_str() != "values")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Value::Object(pick).to_string()
}
