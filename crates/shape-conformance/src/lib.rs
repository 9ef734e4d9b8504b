//! # shape-conformance
//!
//! Runs the PyTorch-generated shape-op corpus (`data/shape-ops.jsonl`, see
//! `data/README.md` for the format) against
//! `aten-shape`: every case builds its base tensor, applies its steps in
//! order, and compares **every** recorded field of every step with what
//! PyTorch 2.15 returned.
//!
//! * A step PyTorch completed must succeed here with the same sizes,
//!   strides, storage offset, `is_contiguous`, `aliases_base`,
//!   `is_channels_last` (4-d results) and values. (`aliases_base` follows
//!   the generator's data-pointer comparison; see `aliases`.)
//! * A step PyTorch failed must fail here too. Matching PyTorch's message
//!   (first line, word for word) and exception kind is counted separately
//!   ([`Report::messages_matched`], [`Report::kinds_matched`]) but a
//!   different message is not a failure.
//! * An op or argument the runner does not understand, a case that does not
//!   parse, and a panic are failures, never skips.
//!
//! `data/extra-ops.jsonl` holds more cases in the same format, generated
//! with real PyTorch by `tools/gen_conformance.py` (ops the public corpus lacks,
//! such as `split_with_sizes`, `tensor_split`, `unbind`, `mT`, `T`, `ravel`,
//! `alias`, and extreme arguments); the runner understands those ops too.
//!
//! ```
//! let line = r#"{"id": "doc-1", "base": {"sizes": [2, 3], "strides": [3, 1], "offset": 1,
//!   "storage_numel": 8, "dtype": "float32"},
//!   "steps": [{"op": "transpose", "args": {"dim0": 0, "dim1": 1},
//!     "expect": {"sizes": [3, 2], "strides": [1, 3], "offset": 1, "is_contiguous": false,
//!                "aliases_base": true, "values": [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]}}]}"#;
//! let report = shape_conformance::run_corpus_text(&line.replace('\n', " ")); // one case per line
//! assert_eq!((report.passed, report.failed), (1, 0));
//! ```

pub mod fidelity;
pub mod indexing;
pub mod join;
pub mod op_table;
pub mod symbolic;

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use aten_shape::copy;
use aten_shape::views::ViewOps;
use c10_core::geometry::fmt_list;
use c10_core::{Element, MemoryFormat, Tensor, TensorError};
use serde::Deserialize;
use serde_json::{Map, Value};

/// One conformance case: a base tensor and the steps applied to it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Case id, e.g. `public-1-7`.
    pub id: String,
    /// The base tensor.
    pub base: Base,
    /// Steps, each applied to the previous step's result.
    pub steps: Vec<Step>,
}

/// A base tensor: `as_strided(sizes, strides, offset)` over a storage of
/// `storage_numel` elements holding `0, 1, 2, ...` cast to `dtype`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Base {
    /// Sizes of the base view.
    pub sizes: Vec<i64>,
    /// Strides of the base view.
    pub strides: Vec<i64>,
    /// Storage offset of the base view.
    pub offset: i64,
    /// Elements in the storage.
    pub storage_numel: i64,
    /// PyTorch dtype name (`float32`, `int64`, `bool`, ...).
    pub dtype: String,
}

/// One op applied to the previous result, and what PyTorch returned.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// PyTorch op name (`view`, `slice`, ...).
    pub op: String,
    /// Its arguments by name.
    #[serde(default)]
    pub args: Map<String, Value>,
    /// PyTorch's result.
    pub expect: Expect,
}

/// What PyTorch returned for a step: either the result's metadata (and
/// values), or an error.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Result sizes.
    pub sizes: Option<Vec<i64>>,
    /// Result strides.
    pub strides: Option<Vec<i64>>,
    /// Result storage offset.
    pub offset: Option<i64>,
    /// `is_contiguous()`.
    pub is_contiguous: Option<bool>,
    /// The result still uses the base's storage.
    pub aliases_base: Option<bool>,
    /// `is_contiguous(memory_format=channels_last)` (4-d results).
    pub is_channels_last: Option<bool>,
    /// Logical elements in row-major order (at most 64).
    pub values: Option<Vec<f64>>,
    /// Exception type (`RuntimeError`, `IndexError`, ...).
    pub error: Option<String>,
    /// First line of the exception message.
    pub message: Option<String>,
}

/// Why a case failed, at which step.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// Case id.
    pub id: String,
    /// Step index (0-based), or `None` for the base tensor.
    pub step: Option<usize>,
    /// The step's op (`base` for the base tensor).
    pub op: String,
    /// What PyTorch did.
    pub expected: String,
    /// What we did.
    pub got: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let step = match self.step {
            Some(k) => k.to_string(),
            None => "base".to_string(),
        };
        write!(
            f,
            "FAIL {} step {} ({}): expected {}, got {}",
            self.id, step, self.op, self.expected, self.got
        )
    }
}

/// Outcome of one case.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CaseOutcome {
    /// The failure, if any.
    pub failure: Option<Failure>,
    /// Error steps that PyTorch raised and we raised too.
    pub errors_compared: usize,
    /// Of those, how many had PyTorch's first message line word for word.
    pub messages_matched: usize,
    /// Of those, how many had PyTorch's exception kind (`IndexError` vs
    /// `RuntimeError`/`ValueError`).
    pub kinds_matched: usize,
    /// Mismatched messages, as `(id, expected, got)`.
    pub message_mismatches: Vec<(String, String, String)>,
}

/// Totals over a corpus.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed (including lines that did not parse).
    pub failed: usize,
    /// One `FAIL ...` line per failed case.
    pub failures: Vec<String>,
    /// Error steps compared (PyTorch and we both raised).
    pub errors_compared: usize,
    /// Of those, messages identical to PyTorch's first line.
    pub messages_matched: usize,
    /// Of those, exception kinds identical to PyTorch's.
    pub kinds_matched: usize,
    /// Mismatched messages, as `(id, expected, got)`.
    pub message_mismatches: Vec<(String, String, String)>,
}

impl Report {
    /// Adds another report's counts to this one.
    pub fn merge(&mut self, other: Report) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.failures.extend(other.failures);
        self.errors_compared += other.errors_compared;
        self.messages_matched += other.messages_matched;
        self.kinds_matched += other.kinds_matched;
        self.message_mismatches.extend(other.message_mismatches);
    }

    fn add(&mut self, outcome: CaseOutcome) {
        self.errors_compared += outcome.errors_compared;
        self.messages_matched += outcome.messages_matched;
        self.kinds_matched += outcome.kinds_matched;
        self.message_mismatches.extend(outcome.message_mismatches);
        match outcome.failure {
            None => self.passed += 1,
            Some(f) => {
                self.failed += 1;
                self.failures.push(f.to_string());
            }
        }
    }

    /// The message-match statistic line.
    pub fn message_line(&self) -> String {
        format!(
            "error messages: {} of {} match PyTorch's first line word for word; exception kinds: {} of {} match",
            self.messages_matched, self.errors_compared, self.kinds_matched, self.errors_compared
        )
    }

    /// The final summary line, `N passed, M failed`.
    pub fn summary_line(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failed)
    }
}

/// Parses a JSONL corpus: one result per non-blank line, with the line
/// number (1-based) in parse errors.
pub fn parse_corpus(text: &str) -> Vec<Result<Case, String>> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str::<Case>(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// Runs every case of a JSONL corpus.
pub fn run_corpus_text(text: &str) -> Report {
    let mut report = Report::default();
    for (i, parsed) in parse_corpus(text).into_iter().enumerate() {
        match parsed {
            Ok(case) => report.add(run_case(&case)),
            Err(e) => report.add(CaseOutcome {
                failure: Some(Failure {
                    id: format!("#{}", i + 1),
                    step: None,
                    op: "parse".into(),
                    expected: "a valid case".into(),
                    got: e,
                }),
                ..CaseOutcome::default()
            }),
        }
    }
    report
}

/// Runs every case of a JSONL corpus file.
pub fn run_file(path: &std::path::Path) -> Report {
    match std::fs::read_to_string(path) {
        Ok(text) => run_corpus_text(&text),
        Err(e) => {
            let mut r = Report::default();
            r.add(CaseOutcome {
                failure: Some(Failure {
                    id: path.display().to_string(),
                    step: None,
                    op: "read".into(),
                    expected: "a readable corpus file".into(),
                    got: e.to_string(),
                }),
                ..CaseOutcome::default()
            });
            r
        }
    }
}

/// The default corpus shipped with this crate.
pub fn default_corpus_path() -> std::path::PathBuf {
    std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/data/shape-ops.jsonl"))
}

/// Runs one case; a panic anywhere is reported as a failure.
pub fn run_case(case: &Case) -> CaseOutcome {
    match catch_unwind(AssertUnwindSafe(|| run_case_inner(case))) {
        Ok(outcome) => outcome,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            CaseOutcome {
                failure: Some(Failure {
                    id: case.id.clone(),
                    step: None,
                    op: "any".into(),
                    expected: "no panic".into(),
                    got: format!("panic: {msg}"),
                }),
                ..CaseOutcome::default()
            }
        }
    }
}

fn storage_of<T: Element>(n: i64) -> Result<Tensor, TensorError> {
    let v: Vec<T> = (0..n).map(T::from_i64).collect();
    Tensor::from_vec(v, &[n])
}

/// Builds a case's base tensor.
pub fn build_base(base: &Base) -> Result<Tensor, String> {
    let n = base.storage_numel;
    if n < 0 {
        return Err(format!("negative storage_numel {n}"));
    }
    let storage = match base.dtype.as_str() {
        "float32" => storage_of::<f32>(n),
        "float64" => storage_of::<f64>(n),
        "float16" => storage_of::<half::f16>(n),
        "bfloat16" => storage_of::<half::bf16>(n),
        "int64" => storage_of::<i64>(n),
        "int32" => storage_of::<i32>(n),
        "int16" => storage_of::<i16>(n),
        "int8" => storage_of::<i8>(n),
        "uint8" => storage_of::<u8>(n),
        "uint16" => storage_of::<u16>(n),
        "uint32" => storage_of::<u32>(n),
        "uint64" => storage_of::<u64>(n),
        "bool" => storage_of::<bool>(n),
        other => return Err(format!("unsupported dtype {other:?}")),
    }
    .map_err(|e| e.to_string())?;
    storage
        .as_strided(&base.sizes, &base.strides, Some(base.offset))
        .map_err(|e| e.to_string())
}

/// Typed access to a step's arguments that records which ones were read,
/// so that unknown arguments are reported.
struct Args<'a> {
    map: &'a Map<String, Value>,
    used: Vec<&'static str>,
}

impl<'a> Args<'a> {
    fn new(map: &'a Map<String, Value>) -> Args<'a> {
        Args {
            map,
            used: Vec::new(),
        }
    }

    fn get(&mut self, key: &'static str) -> Option<&'a Value> {
        self.used.push(key);
        self.map.get(key)
    }

    fn as_int(key: &str, v: &Value) -> Result<i64, String> {
        v.as_i64()
            .ok_or_else(|| format!("argument {key} = {v} is not an integer"))
    }

    fn int(&mut self, key: &'static str) -> Result<i64, String> {
        match self.get(key) {
            Some(v) => Self::as_int(key, v),
            None => Err(format!("missing argument {key}")),
        }
    }

    fn int_or(&mut self, key: &'static str, default: i64) -> Result<i64, String> {
        Ok(self.opt_int(key)?.unwrap_or(default))
    }

    /// Absent or `null` is `None`.
    fn opt_int(&mut self, key: &'static str) -> Result<Option<i64>, String> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => Self::as_int(key, v).map(Some),
        }
    }

    /// A list of integers; a single integer is a list of one.
    fn ints(&mut self, key: &'static str) -> Result<Vec<i64>, String> {
        match self.get(key) {
            Some(Value::Array(a)) => a.iter().map(|v| Self::as_int(key, v)).collect(),
            Some(v @ Value::Number(_)) => Ok(vec![Self::as_int(key, v)?]),
            Some(v) => Err(format!("argument {key} = {v} is not an integer list")),
            None => Err(format!("missing argument {key}")),
        }
    }

    fn finish(self) -> Result<(), String> {
        for k in self.map.keys() {
            if !self.used.contains(&k.as_str()) {
                return Err(format!("unknown argument {k}"));
            }
        }
        Ok(())
    }
}

/// Picks piece `index` (Python indexing: negative counts from the end).
fn pick(pieces: Vec<Tensor>, index: i64) -> Result<Tensor, TensorError> {
    let n = pieces.len() as i64;
    let i = if index < 0 { index + n } else { index };
    if i < 0 || i >= n {
        return Err(TensorError::Index("tuple index out of range".into()));
    }
    pieces
        .into_iter()
        .nth(i as usize)
        .ok_or_else(|| TensorError::Index("tuple index out of range".into()))
}

/// Applies one op. The outer error means the runner does not understand
/// the op or its arguments; the inner result is the op's own.
pub fn apply_op(
    t: &Tensor,
    op: &str,
    args: &Map<String, Value>,
) -> Result<Result<Tensor, TensorError>, String> {
    let mut a = Args::new(args);
    let r = match op {
        "view" => {
            let shape = a.ints("shape")?;
            t.view(&shape)
        }
        "reshape" => {
            let shape = a.ints("shape")?;
            t.reshape(&shape)
        }
        "as_strided" => {
            let (size, stride, offset) = (a.ints("size")?, a.ints("stride")?, a.opt_int("offset")?);
            t.as_strided(&size, &stride, offset)
        }
        "transpose" => {
            let (d0, d1) = (a.int("dim0")?, a.int("dim1")?);
            t.transpose(d0, d1)
        }
        "swapaxes" | "swapdims" => {
            let (d0, d1) = (a.int("dim0")?, a.int("dim1")?);
            t.swapaxes(d0, d1)
        }
        "t" => t.t(),
        "mT" | "mt" => t.mt(),
        "T" | "numpy_T" => t.numpy_t(),
        "permute" => {
            let dims = a.ints("dims")?;
            t.permute(&dims)
        }
        "expand" | "broadcast_to" => {
            let size = a.ints("size")?;
            t.expand(&size)
        }
        "squeeze" | "unsqueeze" => apply_squeeze_op(t, op, &mut a)?,
        "flatten" => {
            let (s, e) = (a.int_or("start_dim", 0)?, a.int_or("end_dim", -1)?);
            t.flatten(s, e)
        }
        "unflatten" => {
            let (d, sizes) = (a.int("dim")?, a.ints("sizes")?);
            t.unflatten(d, &sizes)
        }
        "narrow" => {
            let (d, s, l) = (a.int("dim")?, a.int("start")?, a.int("length")?);
            t.narrow(d, s, l)
        }
        "slice" => {
            let d = a.int_or("dim", 0)?;
            let (s, e, step) = (a.opt_int("start")?, a.opt_int("end")?, a.int_or("step", 1)?);
            t.slice(d, s, e, step)
        }
        "select" => {
            let (d, i) = (a.int("dim")?, a.int("index")?);
            t.select(d, i)
        }
        "diagonal" => {
            let (o, d1, d2) = (
                a.int_or("offset", 0)?,
                a.int_or("dim1", 0)?,
                a.int_or("dim2", 1)?,
            );
            t.diagonal(o, d1, d2)
        }
        "unfold" => {
            let (d, s, st) = (a.int("dimension")?, a.int("size")?, a.int("step")?);
            t.unfold(d, s, st)
        }
        "movedim" | "moveaxis" => {
            let (s, d) = (a.ints("source")?, a.ints("destination")?);
            t.movedim(&s, &d)
        }
        "contiguous" => copy::contiguous(t, MemoryFormat::Contiguous),
        "clone" => copy::clone(t, MemoryFormat::Preserve),
        "ravel" => t.ravel(),
        "alias" => t.alias(),
        "detach" => Ok(t.detach()),
        "split" | "split_with_sizes" | "chunk" | "tensor_split" | "unbind" | "hsplit"
        | "vsplit" | "dsplit" => apply_split_op(t, op, &mut a)?,
        "view_as_real" | "view_as_complex" | "real" | "imag" | "conj" | "_conj" | "conj_view"
        | "_neg_view" | "neg_view" | "resolve_conj" | "resolve_neg" | "conj_physical"
        | "adjoint" | "mH" | "mh" | "H" | "h" => apply_complex_op(t, op),
        other => return Err(format!("unknown op {other:?}")),
    };
    a.finish()?;
    Ok(r)
}

/// `squeeze` (all size-1 dims, one dim or a list) and `unsqueeze`.
fn apply_squeeze_op(
    t: &Tensor,
    op: &str,
    a: &mut Args<'_>,
) -> Result<Result<Tensor, TensorError>, String> {
    if op == "unsqueeze" {
        return Ok(t.unsqueeze(a.int("dim")?));
    }
    Ok(match a.get("dim") {
        None | Some(Value::Null) => t.squeeze(),
        Some(Value::Array(_)) => {
            let dims = a.ints("dim")?;
            t.squeeze_dims(&dims)
        }
        Some(v) => t.squeeze_dim(Args::as_int("dim", v)?),
    })
}

/// The ops of [`apply_op`] that split `t` into pieces: the case's
/// `index` picks the piece compared.
fn apply_split_op(
    t: &Tensor,
    op: &str,
    a: &mut Args<'_>,
) -> Result<Result<Tensor, TensorError>, String> {
    Ok(match op {
        "split" => {
            let (s, d, i) = (a.int("split_size")?, a.int_or("dim", 0)?, a.int("index")?);
            t.split(s, d).and_then(|p| pick(p, i))
        }
        "split_with_sizes" => {
            let (s, d, i) = (a.ints("split_sizes")?, a.int_or("dim", 0)?, a.int("index")?);
            t.split_with_sizes(&s, d).and_then(|p| pick(p, i))
        }
        "chunk" => {
            let (c, d, i) = (a.int("chunks")?, a.int_or("dim", 0)?, a.int("index")?);
            t.chunk(c, d).and_then(|p| pick(p, i))
        }
        "tensor_split" => {
            let (s, d, i) = (a.int("sections")?, a.int_or("dim", 0)?, a.int("index")?);
            t.tensor_split(s, d).and_then(|p| pick(p, i))
        }
        "unbind" => {
            let (d, i) = (a.int_or("dim", 0)?, a.int("index")?);
            t.unbind(d).and_then(|p| pick(p, i))
        }
        "hsplit" | "vsplit" | "dsplit" => {
            let i = a.int("index")?;
            let pieces = match a.get("indices") {
                Some(Value::Array(_)) => {
                    let idx = a.ints("indices")?;
                    match op {
                        "hsplit" => t.hsplit_indices(&idx),
                        "vsplit" => t.vsplit_indices(&idx),
                        _ => t.dsplit_indices(&idx),
                    }
                }
                _ => {
                    let s = a.int("sections")?;
                    match op {
                        "hsplit" => t.hsplit(s),
                        "vsplit" => t.vsplit(s),
                        _ => t.dsplit(s),
                    }
                }
            };
            pieces.and_then(|p| pick(p, i))
        }
        other => return Err(format!("unknown op {other:?}")),
    })
}

/// The ops of [`apply_op`] on complex and conjugate/negative views, which
/// take no argument.
fn apply_complex_op(t: &Tensor, op: &str) -> Result<Tensor, TensorError> {
    match op {
        "view_as_real" => t.view_as_real(),
        "view_as_complex" => t.view_as_complex(),
        "real" => t.real(),
        "imag" => t.imag(),
        "conj" => t.conj(),
        "_conj" | "conj_view" => t.conj_view(),
        "_neg_view" | "neg_view" => t.neg_view(),
        "resolve_conj" => t.resolve_conj(),
        "resolve_neg" => t.resolve_neg(),
        "conj_physical" => t.conj_physical(),
        "adjoint" => t.adjoint(),
        "mH" | "mh" => t.mh(),
        "H" | "h" => t.h(),
        other => Err(TensorError::runtime(format!(
            "not a complex-view op: {other}"
        ))),
    }
}

fn kind_of(e: &TensorError) -> &'static str {
    e.kind().python_exception()
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn fmt_values(v: &[f64]) -> String {
    let parts: Vec<String> = v.iter().map(|x| format!("{x}")).collect();
    format!("[{}]", parts.join(", "))
}

fn same_f64(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// `aliases_base` as the corpus generator computed it: the result's storage
/// data pointer equals the base's. That is `is_alias_of`, plus one quirk:
/// two zero-byte CPU storages both have the null data pointer, so a copy of
/// a tensor over a zero-byte storage (which is zero bytes too) "aliases" it.
fn aliases(got: &Tensor, base: &Tensor) -> bool {
    got.is_alias_of(base) || (got.storage().nbytes() == 0 && base.storage().nbytes() == 0)
}

/// Compares a successful result with PyTorch's; returns the mismatched
/// fields as `(expected, got)` descriptions.
fn compare(exp: &Expect, got: &Tensor, base: &Tensor) -> Option<(String, String)> {
    let mut e_parts = Vec::new();
    let mut g_parts = Vec::new();
    let mut check = |name: &str, e: String, g: String| {
        if e != g {
            e_parts.push(format!("{name}={e}"));
            g_parts.push(format!("{name}={g}"));
        }
    };
    if let Some(s) = &exp.sizes {
        check("sizes", fmt_list(s), fmt_list(got.sizes()));
    }
    if let Some(s) = &exp.strides {
        check("strides", fmt_list(s), fmt_list(got.strides()));
    }
    if let Some(o) = exp.offset {
        check("offset", o.to_string(), got.storage_offset().to_string());
    }
    if let Some(c) = exp.is_contiguous {
        check(
            "is_contiguous",
            c.to_string(),
            got.is_contiguous().to_string(),
        );
    }
    if let Some(a) = exp.aliases_base {
        check(
            "aliases_base",
            a.to_string(),
            aliases(got, base).to_string(),
        );
    }
    if let Some(c) = exp.is_channels_last {
        let g = got.is_contiguous_in(MemoryFormat::ChannelsLast);
        check("is_channels_last", c.to_string(), g.to_string());
    }
    if let Some(v) = &exp.values {
        match got.to_f64_vec() {
            Ok(g) => {
                let same = v.len() == g.len() && v.iter().zip(&g).all(|(&a, &b)| same_f64(a, b));
                if !same {
                    check("values", fmt_values(v), fmt_values(&g));
                }
            }
            Err(err) => check("values", fmt_values(v), format!("error {err:?}")),
        }
    }
    if e_parts.is_empty() {
        None
    } else {
        Some((e_parts.join(", "), g_parts.join(", ")))
    }
}

fn describe_success(t: &Tensor) -> String {
    format!(
        "success sizes={} strides={} offset={}",
        fmt_list(t.sizes()),
        fmt_list(t.strides()),
        t.storage_offset()
    )
}

fn describe_expected_success(e: &Expect) -> String {
    let opt = |v: &Option<Vec<i64>>| {
        v.as_ref()
            .map(|v| fmt_list(v))
            .unwrap_or_else(|| "?".into())
    };
    format!(
        "success sizes={} strides={} offset={}",
        opt(&e.sizes),
        opt(&e.strides),
        e.offset
            .map(|o| o.to_string())
            .unwrap_or_else(|| "?".into())
    )
}

/// Counts an error PyTorch also raised (of class `kind`, with `message`)
/// into `out`: compared, message matched (first lines), class matched.
fn count_error(
    out: &mut CaseOutcome,
    id: &str,
    kind: &str,
    message: Option<&str>,
    e: &TensorError,
) {
    let expected_msg = message.unwrap_or_default().to_string();
    let ours = e.to_string();
    out.errors_compared += 1;
    if first_line(&ours) == first_line(&expected_msg) {
        out.messages_matched += 1;
    } else {
        out.message_mismatches
            .push((id.to_string(), expected_msg, first_line(&ours).to_string()));
    }
    let kind_ok = match kind {
        "IndexError" => kind_of(e) == "IndexError",
        _ => kind_of(e) == "RuntimeError",
    };
    if kind_ok {
        out.kinds_matched += 1;
    }
}

fn run_case_inner(case: &Case) -> CaseOutcome {
    let mut out = CaseOutcome::default();
    let fail = |step: Option<usize>, op: &str, expected: String, got: String| Failure {
        id: case.id.clone(),
        step,
        op: op.to_string(),
        expected,
        got,
    };
    let base = match build_base(&case.base) {
        Ok(b) => b,
        Err(e) => {
            out.failure = Some(fail(None, "base", "a valid base tensor".into(), e));
            return out;
        }
    };
    if case.steps.is_empty() {
        out.failure = Some(fail(
            None,
            "base",
            "at least one step".into(),
            "none".into(),
        ));
        return out;
    }
    let mut cur = base.clone();
    for (k, step) in case.steps.iter().enumerate() {
        let exp = &step.expect;
        let result = match apply_op(&cur, &step.op, &step.args) {
            Ok(r) => r,
            Err(why) => {
                out.failure = Some(fail(Some(k), &step.op, "a supported op".into(), why));
                return out;
            }
        };
        match (&exp.error, result) {
            (Some(kind), Ok(t)) => {
                let msg = exp.message.clone().unwrap_or_default();
                out.failure = Some(fail(
                    Some(k),
                    &step.op,
                    format!("{kind}: {msg}"),
                    describe_success(&t),
                ));
                return out;
            }
            (Some(kind), Err(e)) => {
                count_error(&mut out, &case.id, kind, exp.message.as_deref(), &e);
                // An error ends the case.
                if k + 1 != case.steps.len() {
                    out.failure = Some(fail(
                        Some(k),
                        &step.op,
                        "the last step to be the failing one".into(),
                        format!("{} more steps", case.steps.len() - k - 1),
                    ));
                }
                return out;
            }
            (None, Err(e)) => {
                out.failure = Some(fail(
                    Some(k),
                    &step.op,
                    describe_expected_success(exp),
                    format!("{}: {}", kind_of(&e), first_line(&e.to_string())),
                ));
                return out;
            }
            (None, Ok(t)) => {
                if exp.sizes.is_none() && exp.strides.is_none() && exp.offset.is_none() {
                    out.failure = Some(fail(
                        Some(k),
                        &step.op,
                        "an expectation".into(),
                        "none recorded".into(),
                    ));
                    return out;
                }
                if let Some((e, g)) = compare(exp, &t, &base) {
                    out.failure = Some(fail(Some(k), &step.op, e, g));
                    return out;
                }
                cur = t;
            }
        }
    }
    out
}
