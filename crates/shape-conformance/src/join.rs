//! Runs the `cat`/`stack` corpus (`data/join.jsonl`, generated with real
//! PyTorch 2.15 by `tools/gen_join.py`) against `aten_shape::join`.
//!
//! Every case must match PyTorch exactly: a result's sizes, strides, dtype
//! and values (as `f64`, real part for complex dtypes), or an error's
//! Python exception class (through [`ErrorKind::python_exception`]) and
//! message (first line, word for word). A case that does not parse or panics is a failure.
//!
//! ```
//! let line = r#"{"id": "doc", "op": "cat", "dim": 0, "inputs": [
//!   {"sizes": [2], "dtype": "int64", "layout": "contiguous", "start": 0},
//!   {"sizes": [1], "dtype": "float32", "layout": "contiguous", "start": 5}],
//!   "expect": {"sizes": [3], "strides": [1], "dtype": "float32", "values": [0.0, 1.0, 5.0]}}"#;
//! let report = shape_conformance::join::run_text(&line.replace('\n', " "));
//! assert_eq!((report.passed, report.failed), (1, 0));
//! ```

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use aten_shape::{copy, join, views};
#[cfg(doc)]
use c10_core::ErrorKind;
use c10_core::{MemoryFormat, ScalarType, Tensor, TensorError};
use serde::Deserialize;

/// One `cat` or `stack` call and PyTorch's answer (one line of the
/// corpus).
///
/// ```
/// use shape_conformance::join::JoinCase;
/// let c: JoinCase = serde_json::from_str(r#"{"id": "x", "op": "cat", "dim": 5,
///   "inputs": [{"sizes": [2], "dtype": "bool", "layout": "contiguous", "start": 0}],
///   "expect": {"error": "IndexError",
///     "message": "Dimension out of range (expected to be in range of [-1, 0], but got 5)"}}"#).unwrap();
/// assert_eq!((c.op.as_str(), c.inputs[0].sizes.as_slice()), ("cat", &[2i64][..]));
/// assert_eq!(c.expect.error.as_deref(), Some("IndexError"));
/// assert_eq!(shape_conformance::join::run_case(&c), Ok(()));
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JoinCase {
    /// Case id (`cat-17`, `promote-int64-float32`, ...).
    pub id: String,
    /// `cat` or `stack`.
    pub op: String,
    /// The `dim` argument.
    pub dim: i64,
    /// The input tensors, in order.
    pub inputs: Vec<JoinInput>,
    /// PyTorch's result or error.
    pub expect: JoinExpect,
}

/// An input: `arange(start, start + numel)` in float64 converted to
/// `dtype`, shaped to `sizes` with `layout` (`contiguous`, `transposed`:
/// last two dims laid out swapped, `channels_last`: 4-d NHWC).
///
/// ```
/// use shape_conformance::join::JoinInput;
/// let i: JoinInput = serde_json::from_str(
///     r#"{"sizes": [2, 3], "dtype": "int64", "layout": "transposed", "start": 4}"#,
/// ).unwrap();
/// assert_eq!((i.layout.as_str(), i.start), ("transposed", 4));
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JoinInput {
    /// Sizes.
    pub sizes: Vec<i64>,
    /// PyTorch dtype name.
    pub dtype: String,
    /// Memory layout.
    pub layout: String,
    /// First element's value.
    pub start: i64,
}

/// PyTorch's result (all of `sizes`, `strides`, `dtype`, `values`) or
/// error (`error` and `message`).
///
/// ```
/// use shape_conformance::join::JoinExpect;
/// let e: JoinExpect = serde_json::from_str(
///     r#"{"sizes": [0], "strides": [1], "dtype": "float32", "values": []}"#,
/// ).unwrap();
/// assert!(e.error.is_none() && e.values == Some(vec![]));
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JoinExpect {
    /// Result sizes.
    pub sizes: Option<Vec<i64>>,
    /// Result strides.
    pub strides: Option<Vec<i64>>,
    /// Result dtype name.
    pub dtype: Option<String>,
    /// Result elements, row-major, as f64.
    pub values: Option<Vec<f64>>,
    /// Python exception class name.
    pub error: Option<String>,
    /// First line of the exception message.
    pub message: Option<String>,
}

/// Outcome of a run.
///
/// ```
/// let r = shape_conformance::join::run_text("not json\n");
/// assert_eq!((r.passed, r.failed), (0, 1));
/// assert!(r.failures[0].contains("does not parse"));
/// ```
#[derive(Debug, Default)]
pub struct JoinReport {
    /// Cases that matched PyTorch.
    pub passed: usize,
    /// Cases that did not.
    pub failed: usize,
    /// One line per failed case.
    pub failures: Vec<String>,
}

/// The corpus shipped with the crate.
///
/// ```
/// assert!(shape_conformance::join::default_path().ends_with("data/join.jsonl"));
/// ```
pub fn default_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/join.jsonl")
}

/// Runs every case of a corpus file (an unreadable file is one failure).
///
/// ```
/// let r = shape_conformance::join::run_file(std::path::Path::new("/nonexistent.jsonl"));
/// assert_eq!(r.failed, 1);
/// ```
pub fn run_file(path: &Path) -> JoinReport {
    match std::fs::read_to_string(path) {
        Ok(text) => run_text(&text),
        Err(e) => JoinReport {
            passed: 0,
            failed: 1,
            failures: vec![format!("{}: {e}", path.display())],
        },
    }
}

/// Runs every non-empty line of `text` as one case (see the module docs).
pub fn run_text(text: &str) -> JoinReport {
    let mut report = JoinReport::default();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let outcome = match serde_json::from_str::<JoinCase>(line) {
            Err(e) => Err(format!("line {}: does not parse: {e}", n + 1)),
            Ok(case) => {
                let id = case.id.clone();
                match catch_unwind(AssertUnwindSafe(|| run_case(&case))) {
                    Ok(r) => r.map_err(|e| format!("{id}: {e}")),
                    Err(_) => Err(format!("{id}: panicked")),
                }
            }
        };
        match outcome {
            Ok(()) => report.passed += 1,
            Err(e) => {
                report.failed += 1;
                report.failures.push(e);
            }
        }
    }
    report
}

fn dtype(name: &str) -> Result<ScalarType, String> {
    ScalarType::from_torch_name(name).map_err(|e| e.to_string())
}

fn build(input: &JoinInput) -> Result<Tensor, TensorError> {
    let n: i64 = input.sizes.iter().product();
    let vals: Vec<f64> = (0..n).map(|i| (input.start + i) as f64).collect();
    let flat = Tensor::from(vals);
    let dt = ScalarType::from_torch_name(&input.dtype)
        .map_err(|e| TensorError::Runtime(e.to_string()))?;
    let flat = copy::to_dtype(&flat, dt)?;
    let sizes = &input.sizes;
    match input.layout.as_str() {
        "transposed" if sizes.len() >= 2 => {
            let mut sw = sizes.clone();
            let k = sw.len();
            sw.swap(k - 1, k - 2);
            views::transpose(&views::view(&flat, &sw)?, -1, -2)
        }
        "channels_last" => {
            copy::contiguous(&views::view(&flat, sizes)?, MemoryFormat::ChannelsLast)
        }
        _ => views::view(&flat, sizes),
    }
}

/// Runs one case; `Err` describes the first difference from PyTorch.
///
/// ```
/// use shape_conformance::join::{run_case, JoinCase};
/// let case: JoinCase = serde_json::from_str(r#"{"id": "e", "op": "stack", "dim": 0,
///   "inputs": [], "expect": {"error": "RuntimeError",
///   "message": "stack expects a non-empty TensorList"}}"#).unwrap();
/// assert_eq!(run_case(&case), Ok(()));
/// ```
pub fn run_case(case: &JoinCase) -> Result<(), String> {
    let inputs = case
        .inputs
        .iter()
        .map(build)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("could not build the inputs: {e}"))?;
    let got = match case.op.as_str() {
        "cat" => join::cat(&inputs, case.dim),
        "stack" => join::stack(&inputs, case.dim),
        other => return Err(format!("unknown op {other}")),
    };
    let e = &case.expect;
    match (got, &e.error) {
        (Err(err), Some(kind)) => {
            if err.kind().python_exception() != kind {
                return Err(format!("PyTorch raised {kind}, we gave {err:?}"));
            }
            let msg = err.to_string();
            if Some(&msg) != e.message.as_ref() {
                return Err(format!("message {msg:?}, PyTorch: {:?}", e.message));
            }
            Ok(())
        }
        (Err(err), None) => Err(format!("failed ({err}) where PyTorch succeeded")),
        (Ok(t), Some(kind)) => Err(format!(
            "succeeded (sizes {:?}) where PyTorch raised {kind}: {:?}",
            t.sizes(),
            e.message
        )),
        (Ok(t), None) => {
            let want_dtype = dtype(e.dtype.as_deref().unwrap_or(""))?;
            if t.dtype() != want_dtype {
                return Err(format!("dtype {}, PyTorch {want_dtype}", t.dtype()));
            }
            if Some(t.sizes()) != e.sizes.as_deref() {
                return Err(format!("sizes {:?}, PyTorch {:?}", t.sizes(), e.sizes));
            }
            if Some(t.strides()) != e.strides.as_deref() {
                return Err(format!(
                    "strides {:?}, PyTorch {:?}",
                    t.strides(),
                    e.strides
                ));
            }
            let vals = t.to_f64_vec().map_err(|e| e.to_string())?;
            if Some(&vals) != e.values.as_ref() {
                return Err(format!("values {vals:?}, PyTorch {:?}", e.values));
            }
            Ok(())
        }
    }
}
