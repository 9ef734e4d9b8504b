//! Runs the indexing corpus (`data/indexing.jsonl`, generated with real
//! PyTorch 2.15 by `tools/gen_indexing.py`) against
//! [`aten_shape::indexing`]: Python's basic indexing `x[idx]` (sizes,
//! strides, storage offset and values of the view) and indexed assignment
//! `x[idx] = number` / `x[idx] = tensor` (the base's values afterwards and
//! its version counter). A case PyTorch failed must fail here with the same
//! exception kind ([`TensorError::kind`]'s Python exception: `IndexError`,
//! `ValueError`, `RuntimeError`) and the same message; every
//! difference, unparsable case or panic is a failure.
//!
//! ```
//! let line = r#"{"id": "doc", "dtype": "int64", "sizes": [2, 3], "perm": null,
//!   "index": [{"int": 1}, {"slice": [null, null, 2]}], "op": "get",
//!   "expect": {"sizes": [2], "strides": [2], "offset": 3, "values": [3, 5]}}"#;
//! let report = shape_conformance::indexing::run_text(&line.replace('\n', " "));
//! assert_eq!((report.passed, report.failed), (1, 0));
//! ```

use std::panic::{catch_unwind, AssertUnwindSafe};

use aten_shape::copy::copy_;
use aten_shape::indexing::{self, TensorIndex};
use aten_shape::views;
use c10_core::{ScalarType, Tensor, TensorError, TensorOptions};
use serde_json::Value;

/// The outcome of a corpus run.
///
/// ```
/// let r = shape_conformance::indexing::run_text("");
/// assert_eq!((r.passed, r.failed, r.failures.len()), (0, 0, 0));
/// ```
#[derive(Debug, Default)]
pub struct Report {
    /// Cases that matched PyTorch.
    pub passed: usize,
    /// Cases that did not (or did not parse, or panicked).
    pub failed: usize,
    /// One line per failed case.
    pub failures: Vec<String>,
}

/// Where the corpus lives.
///
/// ```
/// assert!(shape_conformance::indexing::default_path().ends_with("data/indexing.jsonl"));
/// ```
pub fn default_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/indexing.jsonl")
}

/// Runs every case of the file at `path` (a missing file is one failure).
///
/// ```
/// let r = shape_conformance::indexing::run_file(std::path::Path::new("/nonexistent.jsonl"));
/// assert_eq!(r.failed, 1);
/// ```
pub fn run_file(path: &std::path::Path) -> Report {
    match std::fs::read_to_string(path) {
        Ok(text) => run_text(&text),
        Err(e) => Report {
            passed: 0,
            failed: 1,
            failures: vec![format!("{}: {e}", path.display())],
        },
    }
}

/// Runs every case of a JSON-lines text (one case per non-empty line).
///
/// ```
/// let r = shape_conformance::indexing::run_text("{not json}");
/// assert_eq!((r.passed, r.failed), (0, 1));
/// ```
pub fn run_text(text: &str) -> Report {
    let mut report = Report::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let outcome = catch_unwind(AssertUnwindSafe(|| run_line(line)))
            .unwrap_or_else(|_| Err("panicked".to_string()));
        match outcome {
            Ok(()) => report.passed += 1,
            Err(why) => {
                report.failed += 1;
                let id = serde_json::from_str::<Value>(line)
                    .ok()
                    .and_then(|v| v["id"].as_str().map(str::to_string))
                    .unwrap_or_else(|| "?".to_string());
                report.failures.push(format!("{id}: {why}"));
            }
        }
    }
    report
}

type R<T> = std::result::Result<T, String>;

fn dtype(name: &str) -> R<ScalarType> {
    Ok(match name {
        "int64" => ScalarType::Long,
        "float32" => ScalarType::Float,
        "float64" => ScalarType::Double,
        "uint8" => ScalarType::Byte,
        other => return Err(format!("unknown dtype {other}")),
    })
}

fn ints(v: &Value) -> R<Vec<i64>> {
    v.as_array()
        .ok_or_else(|| format!("expected a list, got {v}"))?
        .iter()
        .map(|x| {
            x.as_i64()
                .ok_or_else(|| format!("expected an int, got {x}"))
        })
        .collect()
}

fn floats(v: &Value) -> R<Vec<f64>> {
    v.as_array()
        .ok_or_else(|| format!("expected a list, got {v}"))?
        .iter()
        .map(|x| {
            x.as_f64()
                .ok_or_else(|| format!("expected a number, got {x}"))
        })
        .collect()
}

fn te(e: TensorError) -> String {
    format!("unexpected error: {e}")
}

fn opt_int(v: &Value) -> R<Option<i64>> {
    if v.is_null() {
        Ok(None)
    } else {
        v.as_i64()
            .map(Some)
            .ok_or_else(|| format!("bad slice bound {v}"))
    }
}

fn entry(v: &Value) -> R<TensorIndex> {
    match v {
        Value::String(s) if s == "none" => Ok(TensorIndex::None),
        Value::String(s) if s == "ellipsis" => Ok(TensorIndex::Ellipsis),
        Value::Object(m) => {
            if let Some(i) = m.get("int") {
                return Ok(TensorIndex::Int(i.as_i64().ok_or("bad int")?));
            }
            if let Some(Value::Array(s)) = m.get("slice") {
                if s.len() == 3 {
                    return Ok(TensorIndex::slice(
                        opt_int(&s[0])?,
                        opt_int(&s[1])?,
                        s[2].as_i64().ok_or("bad step")?,
                    ));
                }
            }
            if let Some(i) = m.get("tensor0") {
                let t =
                    Tensor::from_vec(vec![i.as_i64().ok_or("bad tensor0")?], &[]).map_err(te)?;
                return Ok(TensorIndex::Tensor(t));
            }
            Err(format!("unknown index entry {v}"))
        }
        _ => Err(format!("unknown index entry {v}")),
    }
}

/// `values` (numbers) as a tensor of `dtype` with `sizes`.
fn tensor_of(values: Vec<f64>, sizes: &[i64], dt: ScalarType) -> R<Tensor> {
    let src = if dt.is_floating_point() {
        Tensor::from_vec(values, sizes)
    } else {
        Tensor::from_vec(values.into_iter().map(|v| v as i64).collect(), sizes)
    }
    .map_err(te)?;
    if src.dtype() == dt {
        return Ok(src);
    }
    let out = Tensor::empty(sizes, TensorOptions::new().dtype(dt)).map_err(te)?;
    copy_(&out, &src).map_err(te)?;
    Ok(out)
}

fn base(case: &Value) -> R<Tensor> {
    let dt = dtype(case["dtype"].as_str().ok_or("no dtype")?)?;
    let sizes = ints(&case["sizes"])?;
    let numel: i64 = sizes.iter().product();
    let vals: Vec<f64> = (0..numel).map(|v| (v % 256) as f64).collect();
    let vals = if dt == ScalarType::Byte {
        vals
    } else {
        (0..numel).map(|v| v as f64).collect()
    };
    match &case["perm"] {
        Value::Null => tensor_of(vals, &sizes, dt),
        p => {
            let perm = ints(p)?;
            let psizes: Vec<i64> = perm.iter().map(|&p| sizes[p as usize]).collect();
            let mut inv = vec![0i64; perm.len()];
            for (i, &p) in perm.iter().enumerate() {
                inv[p as usize] = i as i64;
            }
            let t = tensor_of(vals, &psizes, dt)?;
            views::permute(&t, &inv).map_err(te)
        }
    }
}

fn check_error(got: TensorError, want: &Value) -> R<()> {
    let kind = want["kind"].as_str().unwrap_or("");
    let msg = want["message"].as_str().unwrap_or("");
    let kind_ok = got.kind().python_exception() == kind;
    let got_msg = got.to_string();
    let got_msg = got_msg.lines().next().unwrap_or("");
    if !kind_ok || got_msg != msg {
        return Err(format!("expected {kind}: {msg:?}, got {got:?}"));
    }
    Ok(())
}

fn same_values(what: &str, got: &[f64], want: &[f64]) -> R<()> {
    let ok = got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(a, b)| a == b || (a.is_nan() && b.is_nan()));
    if ok {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, want {want:?}"))
    }
}

fn run_line(line: &str) -> R<()> {
    let case: Value = serde_json::from_str(line).map_err(|e| format!("bad JSON: {e}"))?;
    let x = base(&case)?;
    let idx: Vec<TensorIndex> = case["index"]
        .as_array()
        .ok_or("no index")?
        .iter()
        .map(entry)
        .collect::<R<_>>()?;
    let expect = &case["expect"];
    let v0 = x.version().map_err(te)?;
    let outcome = match case["op"].as_str().ok_or("no op")? {
        "get" => indexing::index(&x, &idx).map(Some),
        "set_scalar" => {
            let v = &case["value"];
            let r = if let Some(i) = v.as_i64() {
                indexing::index_put_scalar(&x, &idx, i)
            } else {
                indexing::index_put_scalar(&x, &idx, v.as_f64().ok_or("bad value")?)
            };
            r.map(|()| None)
        }
        "set_tensor" => {
            let s = &case["src"];
            let src = tensor_of(
                floats(&s["values"])?,
                &ints(&s["sizes"])?,
                dtype(s["dtype"].as_str().ok_or("no src dtype")?)?,
            )?;
            indexing::index_put_tensor(&x, &idx, &src).map(|()| None)
        }
        other => return Err(format!("unknown op {other}")),
    };
    match (outcome, expect.get("error")) {
        (Err(e), Some(want)) => check_error(e, want),
        (Ok(_), Some(want)) => Err(format!("succeeded, PyTorch raised {want}")),
        (Err(e), None) => Err(format!("failed ({e:?}), PyTorch succeeded")),
        (Ok(Some(r)), None) => {
            let got = (r.sizes().to_vec(), r.strides().to_vec(), r.storage_offset());
            let want = (
                ints(&expect["sizes"])?,
                ints(&expect["strides"])?,
                expect["offset"].as_i64().ok_or("no offset")?,
            );
            if got != want {
                return Err(format!(
                    "geometry (sizes, strides, offset): got {got:?}, want {want:?}"
                ));
            }
            if !r.is_alias_of(&x) && r.numel() > 0 {
                return Err("the result is not a view of the base".to_string());
            }
            same_values(
                "values",
                &r.to_f64_vec().map_err(te)?,
                &floats(&expect["values"])?,
            )
        }
        (Ok(None), None) => {
            same_values(
                "base after",
                &x.to_f64_vec().map_err(te)?,
                &floats(&expect["values"])?,
            )?;
            let delta = i64::from(x.version().map_err(te)?) - i64::from(v0);
            let want = expect["version_delta"].as_i64().ok_or("no version_delta")?;
            if delta != want {
                return Err(format!("version delta: got {delta}, want {want}"));
            }
            Ok(())
        }
    }
}
