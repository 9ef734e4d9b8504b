//! The semantic runner for the symbolic-shapes corpus
//! (`data/symbolic.jsonl`, generated with real PyTorch 2.15 by
//! `tools/gen_symbolic.py`).
//!
//! A case is an input shape whose every dim of size ≥ 2 is a symbol, a
//! chain of view ops, PyTorch's output sizes/strides/offsets as
//! expressions, and the guards PyTorch recorded. The runner replays the
//! chain with the ordinary view ops on a symbolic meta tensor in a fresh
//! [`ShapeEnv`] (the ops dispatch to their symbolic path), then compares *semantically*, never textually: under
//! many assignments of the symbols (the hints first, then random and
//! boundary values)
//!
//! * **results**: where both guard sets accept, PyTorch's and the Rust
//!   expressions evaluate to the same integers (and both error, or not);
//! * **soundness**: where the Rust guards accept, the Rust expressions
//!   equal what the same calls (the concrete path of the view ops, which
//!   the conformance corpora check against PyTorch) give on a meta tensor of those sizes, laid out
//!   as the symbolic input's strides say under that assignment (a trace
//!   assumes its inputs are laid out like the example);
//! * **guards**: the number of assignments one guard set accepts and the
//!   other rejects. Zero is parity; a non-zero count is a *guard
//!   difference*, allowed only for the ops listed in
//!   [`KNOWN_GUARD_DIFFERENCES`] (and `docs/pytorch-map.md`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use aten_shape::generic::Geometry;
use aten_shape::views::{self, ViewOps};
use c10_core::shape_arg::SliceBound;
use c10_core::sym::expr::SymbolId;
use c10_core::sym::expr::{py_floordiv, py_mod};
use c10_core::sym::{ShapeEnv, ShapeEnvConfig, SymInt};
use c10_core::{Device, DeviceType, ScalarType, Tensor, TensorOptions};
use serde_json::Value;

/// Ops whose guard sets may differ from PyTorch's (semantically: some
/// assignments accepted by one side and rejected by the other), with
/// the reason. Results and soundness must still hold.
pub const KNOWN_GUARD_DIFFERENCES: &[(&str, &str)] = &[
    (
        "unsqueeze",
        "PyTorch's fake-tensor path for unsqueeze computes is_contiguous() on its output \
         (recording Ne(size, 1) for sizes that could be 1); ATen's C++ unsqueeze, and ours, \
         decide nothing, so our guards accept more assignments (results checked sound)",
    ),
    (
        "expand",
        "as for unsqueeze: PyTorch's fake path computes is_contiguous() on the output of \
         expand; ATen's C++ inferExpandGeometry and ours do not",
    ),
];

/// The corpus path.
pub fn default_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/symbolic.jsonl")
}

/// What running the corpus found.
#[derive(Debug, Default)]
pub struct Report {
    /// Cases with equal results and equivalent guards.
    pub passed: usize,
    /// Cases with equal, sound results but a guard difference on a known op.
    pub known_guard_diffs: usize,
    /// Failing cases, one line each.
    pub failures: Vec<String>,
    /// Assignments checked in all.
    pub samples: usize,
    /// Guard disagreements by op (for the summary).
    pub diff_ops: std::collections::BTreeMap<String, usize>,
}

impl Report {
    /// One line for logs.
    pub fn summary_line(&self) -> String {
        format!(
            "symbolic corpus: {} passed, {} known guard differences, {} failed, {} assignments checked; guard differences by op: {:?}",
            self.passed,
            self.known_guard_diffs,
            self.failures.len(),
            self.samples,
            self.diff_ops
        )
    }
}

/// One output of a case: geometries, a bool, or an error.
#[derive(Clone, Debug, PartialEq)]
enum Out<T> {
    Geoms(Vec<(Vec<T>, Vec<T>, T)>),
    Bool(bool),
    Error(String),
}

// ---- PyTorch expressions (JSON trees) ----

fn eval_int(v: &Value, a: &[i64]) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::Object(o) => {
            let k = o.get("s")?.as_u64()? as usize;
            a.get(k).copied()
        }
        Value::Array(xs) => {
            let op = xs.first()?.as_str()?;
            let args: Vec<i64> = xs[1..]
                .iter()
                .map(|x| eval_int(x, a))
                .collect::<Option<_>>()?;
            match op {
                "Add" => args.iter().try_fold(0i64, |s, x| s.checked_add(*x)),
                "Mul" => args.iter().try_fold(1i64, |s, x| s.checked_mul(*x)),
                "Pow" => args[0].checked_pow(u32::try_from(args[1]).ok()?),
                "FloorDiv" => py_floordiv(args[0], args[1]),
                "Mod" => py_mod(args[0], args[1]),
                "Min" => args.iter().copied().min(),
                "Max" => args.iter().copied().max(),
                _ => None,
            }
        }
        _ => None,
    }
}

fn eval_bool(v: &Value, a: &[i64]) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Array(xs) => {
            let op = xs.first()?.as_str()?;
            match op {
                "And" => xs[1..]
                    .iter()
                    .try_fold(true, |s, x| Some(s & eval_bool(x, a)?)),
                "Or" => xs[1..]
                    .iter()
                    .try_fold(false, |s, x| Some(s | eval_bool(x, a)?)),
                "Not" => eval_bool(xs.get(1)?, a).map(|b| !b),
                _ => {
                    let l = eval_int(xs.get(1)?, a)?;
                    let r = eval_int(xs.get(2)?, a)?;
                    Some(match op {
                        "Eq" => l == r,
                        "Ne" => l != r,
                        "Lt" => l < r,
                        "Le" => l <= r,
                        "Gt" => l > r,
                        "Ge" => l >= r,
                        _ => return None,
                    })
                }
            }
        }
        _ => None,
    }
}

fn torch_out(v: &Value, a: &[i64]) -> Option<Out<i64>> {
    if let Some(e) = v.get("error") {
        return Some(Out::Error(e.as_str()?.to_string()));
    }
    if let Some(b) = v.get("bool") {
        return Some(Out::Bool(b.as_bool()?));
    }
    let list = v.as_array()?;
    let mut out = Vec::new();
    for g in list {
        let ints = |k: &str| -> Option<Vec<i64>> {
            g.get(k)?
                .as_array()?
                .iter()
                .map(|x| eval_int(x, a))
                .collect()
        };
        out.push((
            ints("sizes")?,
            ints("strides")?,
            eval_int(g.get("offset")?, a)?,
        ));
    }
    Some(Out::Geoms(out))
}

// ---- running a chain, generic over the integer type ----

/// An argument: an int, or the current tensor's size `k` plus `add`.
fn arg_int<T: c10_core::sym::ShapeInt>(v: &Value, sizes: &[T]) -> Result<T, String> {
    match v {
        Value::Number(n) => n.as_i64().map(T::from_i64).ok_or("bad int".into()),
        Value::Object(o) => {
            let k = o
                .get("size")
                .and_then(Value::as_u64)
                .ok_or("bad size arg")? as usize;
            let add = o.get("add").and_then(Value::as_i64).unwrap_or(0);
            let s = sizes.get(k).ok_or("size arg out of range")?;
            s.add(&T::from_i64(add)).map_err(|e| e.to_string())
        }
        _ => Err(format!("bad arg {v}")),
    }
}

fn arg_list<T: c10_core::sym::ShapeInt>(v: Option<&Value>, sizes: &[T]) -> Result<Vec<T>, String> {
    v.and_then(Value::as_array)
        .ok_or("missing list")?
        .iter()
        .map(|x| arg_int(x, sizes))
        .collect()
}

fn i(step: &Value, k: &str) -> Result<i64, String> {
    step.get(k)
        .and_then(Value::as_i64)
        .ok_or(format!("missing {k}"))
}

/// An optional argument (a slice bound, an offset): absent or `null` is
/// `None`, otherwise an [`arg_int`].
fn opt_arg(step: &Value, k: &str, sizes: &[SymInt]) -> Result<SliceBound, String> {
    match step.get(k) {
        None | Some(Value::Null) => Ok(SliceBound(None)),
        Some(v) => Ok(SliceBound(Some(arg_int(v, sizes)?))),
    }
}

/// A required scalar argument ([`arg_int`]).
fn req(step: &Value, k: &str, sizes: &[SymInt]) -> Result<SymInt, String> {
    arg_int(step.get(k).ok_or(format!("missing {k}"))?, sizes)
}

/// The dtype of a `view_dtype` step (PyTorch's name without `torch.`).
fn dtype_arg(step: &Value) -> Result<ScalarType, String> {
    Ok(
        match step
            .get("dtype")
            .and_then(Value::as_str)
            .ok_or("missing dtype")?
        {
            "float32" => ScalarType::Float,
            "float64" => ScalarType::Double,
            "float16" => ScalarType::Half,
            "bfloat16" => ScalarType::BFloat16,
            "int64" => ScalarType::Long,
            "int32" => ScalarType::Int,
            "int16" => ScalarType::Short,
            "int8" => ScalarType::Char,
            "uint8" => ScalarType::Byte,
            "bool" => ScalarType::Bool,
            "complex64" => ScalarType::ComplexFloat,
            "complex128" => ScalarType::ComplexDouble,
            other => return Err(format!("unknown dtype {other}")),
        },
    )
}

/// The memory format of a `resize_` step (`null`: none given).
fn format_arg(step: &Value) -> Result<Option<c10_core::MemoryFormat>, String> {
    use c10_core::MemoryFormat as F;
    Ok(match step.get("memory_format").and_then(Value::as_str) {
        None => None,
        Some("contiguous_format") => Some(F::Contiguous),
        Some("channels_last") => Some(F::ChannelsLast),
        Some("channels_last_3d") => Some(F::ChannelsLast3d),
        Some("preserve_format") => Some(F::Preserve),
        Some(other) => return Err(format!("unknown memory format {other}")),
    })
}

/// The in-place and factory steps (`resize_`, `as_strided_`, `set_`,
/// `new_empty`, `new_zeros`, `new_empty_strided`): `None` for other ops.
fn run_in_place(
    t: &mut Tensor,
    op: &str,
    step: &Value,
) -> Result<Option<c10_core::Result<()>>, String> {
    let cur = t.sym_sizes();
    let list = |k: &str| arg_list(step.get(k), &cur);
    Ok(Some(match op {
        "resize_" => t.resize_(list("sizes")?, format_arg(step)?),
        "as_strided_" => t.as_strided_(
            list("sizes")?,
            list("strides")?,
            opt_arg(step, "offset", &cur)?,
        ),
        "set_" => {
            // The tensor's own storage, with new geometry.
            let storage = t.storage().clone();
            t.set_(
                &storage,
                req(step, "offset", &cur)?,
                list("sizes")?,
                list("strides")?,
            )
        }
        "new_empty" | "new_zeros" | "new_empty_strided" => {
            let r = match op {
                "new_empty" => t.new_empty(list("sizes")?),
                "new_zeros" => t.new_zeros(list("sizes")?),
                _ => t.new_empty_strided(list("sizes")?, list("strides")?),
            };
            r.map(|n| *t = n)
        }
        _ => return Ok(None),
    }))
}

fn dims(step: &Value) -> Result<Vec<i64>, String> {
    step.get("dims")
        .and_then(Value::as_array)
        .ok_or("missing dims")?
        .iter()
        .map(|x| x.as_i64().ok_or("bad dim".to_string()))
        .collect()
}

/// The op names [`run_chain`] dispatches (checked against the op table
/// in [`crate::op_table`]).
pub(crate) const RUNNER_OPS: &[&str] = &[
    "view",
    "reshape",
    "transpose",
    "permute",
    "movedim",
    "narrow",
    "slice",
    "select",
    "expand",
    "squeeze",
    "squeeze_dim",
    "unsqueeze",
    "flatten",
    "unflatten",
    "diagonal",
    "unfold",
    "contiguous",
    "as_strided",
    "split",
    "split_with_sizes",
    "chunk",
    "is_contiguous",
    "is_channels_last_contiguous",
    "view_dtype",
    "resize_",
    "as_strided_",
    "set_",
    "new_empty",
    "new_zeros",
    "new_empty_strided",
];

/// Whether [`run_chain`] knows op `op` (a one-step chain without
/// arguments fails on them, not on the name).
#[cfg(test)]
pub(crate) fn dispatches(op: &str) -> bool {
    let Ok(x) = Tensor::empty(&[2, 3], meta()) else {
        return false;
    };
    let step = serde_json::json!({ "op": op });
    match run_chain(x, std::slice::from_ref(&step)) {
        Err(e) => !e.starts_with("unknown op"),
        Ok(_) => true,
    }
}

/// Runs the chain with the ordinary view ops on `x`, a symbolic or a
/// concrete meta tensor: the same calls for both (the ops dispatch on
/// the tensor and on their arguments), so the soundness check below
/// compares the ops' symbolic path with their concrete path. Arguments
/// that name a size (`{"size": k, "add": n}`) are that size of the
/// current tensor as a `SymInt`.
fn run_chain(x: Tensor, chain: &[Value]) -> Result<Out<SymInt>, String> {
    let geo = |t: &Tensor| (t.sym_sizes(), t.sym_strides(), t.sym_storage_offset());
    let mut t = x;
    for step in chain {
        let op = step.get("op").and_then(Value::as_str).ok_or("missing op")?;
        let cur = t.sym_sizes();
        let r: c10_core::Result<Tensor> = match op {
            "view" => t.view(arg_list(step.get("shape"), &cur)?),
            "reshape" => t.reshape(arg_list(step.get("shape"), &cur)?),
            "transpose" => {
                let d = dims(step)?;
                t.transpose(d[0], d[1])
            }
            "permute" => t.permute(&dims(step)?),
            "movedim" => {
                let d = dims(step)?;
                t.movedim(&d[..1], &d[1..2])
            }
            "narrow" => t.narrow(
                i(step, "dim")?,
                req(step, "start", &cur)?,
                req(step, "length", &cur)?,
            ),
            "slice" => index_slice(
                &t,
                i(step, "dim")?,
                opt_arg(step, "start", &cur)?,
                opt_arg(step, "end", &cur)?,
                req(step, "step", &cur)?,
            ),
            "select" => t.select(i(step, "dim")?, req(step, "index", &cur)?),
            "view_dtype" => t.view_dtype(dtype_arg(step)?),
            "expand" => t.expand(arg_list(step.get("sizes"), &cur)?),
            "squeeze" => t.squeeze(),
            "squeeze_dim" => t.squeeze_dim(i(step, "dim")?),
            "unsqueeze" => t.unsqueeze(i(step, "dim")?),
            "flatten" => t.flatten(i(step, "start")?, i(step, "end")?),
            "unflatten" => t.unflatten(i(step, "dim")?, arg_list(step.get("sizes"), &cur)?),
            "diagonal" => t.diagonal(i(step, "offset")?, i(step, "dim1")?, i(step, "dim2")?),
            "unfold" => t.unfold(i(step, "dim")?, i(step, "size")?, i(step, "step")?),
            "contiguous" => contiguous(&t),
            "as_strided" => views::as_strided(
                &t,
                arg_list(step.get("sizes"), &cur)?,
                arg_list(step.get("strides"), &cur)?,
                opt_arg(step, "offset", &cur)?,
            ),
            "split" | "chunk" | "split_with_sizes" => {
                let pieces = if op == "split" {
                    let size = arg_int(step.get("size").ok_or("size")?, &cur)?;
                    t.split(size, i(step, "dim")?)
                } else if op == "split_with_sizes" {
                    t.split_with_sizes(arg_list(step.get("sizes"), &cur)?, i(step, "dim")?)
                } else {
                    t.chunk(i(step, "chunks")?, i(step, "dim")?)
                };
                return Ok(match pieces {
                    Ok(p) => Out::Geoms(p.iter().map(geo).collect()),
                    Err(e) => Out::Error(e.to_string()),
                });
            }
            "is_contiguous" => {
                return Ok(match t.guard_is_contiguous() {
                    Ok(b) => Out::Bool(b),
                    Err(e) => Out::Error(e.to_string()),
                })
            }
            "is_channels_last_contiguous" => {
                return Ok(
                    match c10_core::sym::rules::is_channels_last_contiguous(
                        &t.sym_sizes(),
                        &t.sym_strides(),
                    ) {
                        Ok(b) => Out::Bool(b),
                        Err(e) => Out::Error(e.to_string()),
                    },
                )
            }
            other => match run_in_place(&mut t, other, step)? {
                Some(Ok(())) => continue,
                Some(Err(e)) => return Ok(Out::Error(e.to_string())),
                None => return Err(format!("unknown op {other} (known: {RUNNER_OPS:?})")),
            },
        };
        match r {
            Ok(n) => t = n,
            Err(e) => return Ok(Out::Error(e.to_string())),
        }
    }
    Ok(Out::Geoms(vec![geo(&t)]))
}

/// `contiguous()` of a concrete or symbolic meta tensor: itself when
/// `is_contiguous()` (a guarding decision on symbols), else a new
/// contiguous meta tensor of the same sizes.
fn contiguous(t: &Tensor) -> c10_core::Result<Tensor> {
    if !t.has_symbolic_sizes_strides() {
        return aten_shape::copy::contiguous(t, c10_core::MemoryFormat::Contiguous);
    }
    // ATen's `is_contiguous_or_false`: unbacked sizes that leave it open
    // copy.
    if t.cached_is_contiguous() == Some(true) || t.sym_is_contiguous()?.guard_or_false()? {
        return Ok(t.clone());
    }
    Tensor::empty_symint(&t.sym_sizes(), meta())
}

/// A `slice` step is Python indexing (`t[a:b:c]`), ATen's `applySlice`:
/// where the start is statically 0 and the end statically at least the
/// size, `step == 1` (a guarding decision) returns the tensor itself;
/// otherwise `aten::slice`.
fn index_slice(
    t: &Tensor,
    dim: i64,
    start: SliceBound,
    end: SliceBound,
    step: SymInt,
) -> c10_core::Result<Tensor> {
    let d = if dim < 0 { dim + t.dim() as i64 } else { dim };
    if let Ok(size) = t.sym_size(d) {
        let zero = SymInt::from(0);
        let first = start.0.clone().unwrap_or_else(|| zero.clone());
        let last = end.0.clone().unwrap_or(SymInt::from(i64::MAX));
        if first.sym_eq(&zero)?.statically_known_true()?
            && size.sym_le(&last)?.statically_known_true()?
            && step.sym_eq(&SymInt::from(1))?.guard_bool()?
        {
            return Ok(t.clone());
        }
    }
    t.slice(dim, start, end, step)
}

fn meta() -> TensorOptions {
    TensorOptions::default()
        .dtype(ScalarType::Float)
        .device(Device::new(DeviceType::Meta, -1))
}

/// The chain on a concrete meta tensor with the given input layout (the
/// symbolic input's strides evaluated under the assignment: a trace
/// assumes its inputs are laid out like the example).
fn run_concrete(sizes: &[i64], strides: &[i64], chain: &[Value]) -> Result<Out<i64>, String> {
    let t = Tensor::empty_strided(sizes, strides, meta()).map_err(|e| e.to_string())?;
    let concrete = |v: &[SymInt]| -> Result<Vec<i64>, String> {
        v.iter()
            .map(|x| {
                x.maybe_as_int()
                    .ok_or(format!("symbolic value {x} from a concrete tensor"))
            })
            .collect()
    };
    Ok(match run_chain(t, chain)? {
        Out::Error(e) => Out::Error(e),
        Out::Bool(b) => Out::Bool(b),
        Out::Geoms(gs) => Out::Geoms(
            gs.iter()
                .map(|(s, st, o)| {
                    Ok((
                        concrete(s)?,
                        concrete(st)?,
                        concrete(std::slice::from_ref(o))?[0],
                    ))
                })
                .collect::<Result<_, String>>()?,
        ),
    })
}

fn eval_sym(out: &Out<SymInt>, value: &dyn Fn(SymbolId) -> Option<i64>) -> Option<Out<i64>> {
    let ev = |s: &SymInt| s.expr()?.eval(value);
    Some(match out {
        Out::Error(e) => Out::Error(e.clone()),
        Out::Bool(b) => Out::Bool(*b),
        Out::Geoms(gs) => Out::Geoms(
            gs.iter()
                .map(|(s, st, o)| {
                    Some((
                        s.iter().map(ev).collect::<Option<Vec<_>>>()?,
                        st.iter().map(ev).collect::<Option<Vec<_>>>()?,
                        ev(o)?,
                    ))
                })
                .collect::<Option<Vec<_>>>()?,
        ),
    })
}

/// Equal outcomes: both errors (texts differ: symbol names), or equal
/// values, except that the storage offset of an output without elements
/// is not compared (it reaches no element; PyTorch's fake `diagonal`
/// adds the offset of an empty diagonal where eager ATen does not).
fn same(a: &Out<i64>, b: &Out<i64>) -> bool {
    same_with(a, b, false)
}

/// [`same`]; with `unit_strides_free`, the strides of size-1 dims are not
/// compared either (they address nothing else). The soundness check
/// against the concrete ops (eager ATen) uses it: PyTorch's fake path
/// gives a new leading size-1 dim of `expand` another stride than eager
/// ATen does, and the symbolic path follows the fake path.
fn same_with(a: &Out<i64>, b: &Out<i64>, unit_strides_free: bool) -> bool {
    match (a, b) {
        (Out::Error(_), Out::Error(_)) => true,
        (Out::Geoms(x), Out::Geoms(y)) => {
            x.len() == y.len()
                && x.iter().zip(y).all(|(p, q)| {
                    let empty = p.0.contains(&0);
                    let strides = p.1.len() == q.1.len()
                        && p.1
                            .iter()
                            .zip(&q.1)
                            .zip(&p.0)
                            .all(|((s, t), &n)| s == t || (unit_strides_free && n == 1));
                    p.0 == q.0 && strides && (empty || p.2 == q.2)
                })
        }
        _ => a == b,
    }
}

/// A small deterministic generator (xorshift), so the run is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Assignments of the symbolic dims: the hints first, then a mix of
/// uniform values and boundary values (2, 3, the hint and its
/// neighbours, another dim's value, small multiples).
fn assignments(hints: &[i64], sym_dims: &[usize], n: usize, seed: u64, lo: i64) -> Vec<Vec<i64>> {
    let mut rng = Rng(seed | 1);
    let cap: u64 = if sym_dims.len() >= 4 { 12 } else { 18 };
    let mut out = vec![hints.to_vec()];
    for _ in 1..n {
        let mut a = hints.to_vec();
        for (j, &d) in sym_dims.iter().enumerate() {
            a[d] = if rng.below(100) < 40 {
                let h = hints[d];
                let other = sym_dims
                    .get(rng.below(sym_dims.len() as u64) as usize)
                    .map_or(h, |&o| a[o]);
                let picks = [
                    lo,
                    lo + 1,
                    2,
                    3,
                    h,
                    h + 1,
                    (h - 1).max(lo),
                    other,
                    2 * h,
                    4,
                    8,
                    12,
                ];
                picks[rng.below(picks.len() as u64) as usize]
            } else {
                lo + rng.below(cap + 1 - lo as u64) as i64
            };
            let _ = j;
        }
        out.push(a);
    }
    out
}

/// The symbolic input `x` of a case: a contiguous geometry of symbols
/// with these `hints`, backed (duck-sized, as PyTorch's `DimDynamic.DYNAMIC`)
/// or, when `unbacked`, unbacked size-like symbols.
fn symbolic_input(
    env: &Arc<ShapeEnv>,
    hints: &[i64],
    unbacked: bool,
) -> Result<Geometry<SymInt>, String> {
    if !unbacked && !hints.contains(&0) {
        return Geometry::symbolic(env, hints, "x").map_err(|e| e.to_string());
    }
    // The example's strides (`torch.empty`'s, with `max(size, 1)`), from
    // which PyTorch derives the symbolic ones: with a size 0 they are not
    // the contiguous strides of the symbolic sizes.
    let mut strides = vec![0i64; hints.len()];
    let mut running = 1i64;
    for d in (0..hints.len()).rev() {
        strides[d] = running;
        running = running.saturating_mul(hints[d].max(1));
    }
    let dynamic = if unbacked {
        c10_core::sym::DimDynamic::Unbacked
    } else {
        c10_core::sym::DimDynamic::Dynamic
    };
    let (sizes, strides, offset) = env
        .create_symbolic_sizes_strides_storage_offset(hints, &strides, 0, "x", dynamic)
        .map_err(|e| e.to_string())?;
    Ok(Geometry {
        sizes,
        strides,
        offset,
    })
}

/// Soundness at assignment `a` (the `nd` input sizes, then the storage
/// offset): the symbolic result `rv`, evaluated, is what the concrete ops
/// give on the input of those sizes and the strides `input_strides`
/// evaluate to.
fn check_sound(
    rv: &Out<i64>,
    a: &[i64],
    nd: usize,
    input_strides: &[SymInt],
    value: &dyn Fn(SymbolId) -> Option<i64>,
    chain: &[Value],
) -> Result<(), String> {
    let strides: Vec<i64> = input_strides
        .iter()
        .map(|s| s.expr().and_then(|e| e.eval(value)))
        .collect::<Option<_>>()
        .ok_or("cannot evaluate an input stride")?;
    let truth = run_concrete(&a[..nd], &strides, chain)?;
    if !same_with(rv, &truth, true) {
        return Err(format!(
            "unsound at {a:?}: Rust gives {rv:?}, the concrete ops {truth:?}"
        ));
    }
    Ok(())
}

/// Runs one case; `Ok(disagreements)` or a failure message.
fn run_case(case: &Value, report: &mut Report) -> Result<usize, String> {
    let hints: Vec<i64> = case
        .get("sizes")
        .and_then(Value::as_array)
        .ok_or("missing sizes")?
        .iter()
        .map(|x| x.as_i64().ok_or("bad size"))
        .collect::<Result<_, _>>()?;
    let chain = case
        .get("chain")
        .and_then(Value::as_array)
        .ok_or("missing chain")?;
    let out_v = case.get("out").ok_or("missing out")?;
    let guards: &Vec<Value> = case
        .get("guards")
        .and_then(Value::as_array)
        .ok_or("missing guards")?;

    let szo = case
        .get("specialize_zero_one")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    // `"unbacked": true`: every dim an unbacked, size-like symbol
    // (PyTorch's `DimDynamic.UNBACKED`), sampled from 0.
    let unbacked = case
        .get("unbacked")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let env: Arc<ShapeEnv> = ShapeEnv::with_config(ShapeEnvConfig {
        specialize_zero_one: szo,
    });
    let g = symbolic_input(&env, &hints, unbacked)?;
    let input_strides = g.strides.clone();
    // The symbolic input as a tensor (a fake tensor of these sizes,
    // strides and storage offset), run through the ordinary ops.
    let mut x = Tensor::empty_strided_symint(&g.sizes, &g.strides, meta())
        .and_then(|base| g.view_of(&base))
        .map_err(|e| e.to_string())?;
    if !unbacked {
        // PyTorch decides a fake input's contiguity when it makes it,
        // with guards suppressed; later `is_contiguous()` queries (as
        // `reshape`'s) read that flag and record nothing.
        env.suppress_guards(|| x.guard_is_contiguous())
            .map_err(|e| e.to_string())?;
    }
    if !szo && !unbacked {
        // PyTorch's fake input without 0/1 specialisation keeps the
        // example's byte count as its storage size (`4*s0 <= 648`).
        let nbytes = hints.iter().product::<i64>().saturating_mul(4);
        x.edit_metadata()
            .set_sym_storage_nbytes(SymInt::from(nbytes));
    }
    let rust = run_chain(x, chain)?;
    let nd = hints.len();
    // Index nd is the input's storage offset (a symbol without 0/1
    // specialisation), always 0.
    let mut ids: Vec<Option<SymbolId>> = (0..nd)
        .map(|d| env.symbol_for_source(&format!("x.size({d})")))
        .collect();
    ids.push(env.symbol_for_source("x.storage_offset()"));
    let sym_dims: Vec<usize> = (0..nd).filter(|&d| ids[d].is_some()).collect();
    // Unbacked sizes are sampled from 2 too: size-oblivious decisions
    // (squeeze keeps an unbacked dim, strides skip the `max(size, 1)`)
    // are PyTorch's assumption that such a size is not 0 or 1.
    let lo = if szo || unbacked { 2 } else { 0 };
    let mut hints_ext = hints.clone();
    hints_ext.push(0);

    let seed = hints.iter().fold(0x9E37_79B9_7F4A_7C15u64, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x100_0000_01B3)
    }) ^ (chain.len() as u64);
    let mut disagreements = 0;
    for (k, a) in assignments(&hints_ext, &sym_dims, 40, seed, lo)
        .iter()
        .enumerate()
    {
        report.samples += 1;
        let value = |s: SymbolId| ids.iter().position(|x| *x == Some(s)).map(|d| a[d]);
        let p = guards.iter().all(|g| eval_bool(g, a) == Some(true));
        let r = env.evaluate_guards(&value).map_err(|e| e.to_string())?;
        // Unbacked inputs have no hints: both sets of runtime asserts may
        // reject the example (an error the chain ran into).
        if k == 0 && unbacked && !p && !r {
            continue;
        }
        if k == 0 && !(p && r) {
            return Err(format!("guards reject the hints (PyTorch {p}, Rust {r})"));
        }
        if p != r {
            disagreements += 1;
            // SYMBOLIC_DEBUG=1: show the first disagreement of each case.
            if disagreements == 1 && std::env::var_os("SYMBOLIC_DEBUG").is_some() {
                let ours: Vec<String> = env.guards().iter().map(|g| g.to_string()).collect();
                eprintln!("guard disagreement on {chain:?} at {a:?} (PyTorch {p}, Rust {r}); Rust guards {ours:?}; PyTorch guards {guards:?}");
            }
        }
        if !r {
            continue;
        }
        let rv = eval_sym(&rust, &value).ok_or("cannot evaluate a Rust expression")?;
        // On unbacked sizes an error is a refusal to decide (PyTorch's
        // data-dependent errors, or a view computeStride could not prove),
        // not a claim about the concrete op.
        let refused = unbacked && matches!(rv, Out::Error(_));
        // Without 0/1 specialisation PyTorch's size symbols are positive
        // by assumption (sympy's `positive=True`, followed here): the
        // trace holds for sizes of at least 1, and at a size 0 the
        // results are PyTorch's, compared below, not eager's.
        let assumed = szo || unbacked || sym_dims.iter().all(|&d| a[d] >= 1);
        if !refused && assumed {
            match check_sound(&rv, a, nd, &input_strides, &value, chain) {
                // PyTorch's unbacked reasoning is size-oblivious and
                // assumes indices in range (`select` records no runtime
                // assert; `squeeze` keeps a dim that may be 1): where
                // PyTorch's asserts hold, its result, compared below, is
                // the reference, not eager's.
                Err(_) if unbacked && p => {}
                other => other?,
            }
        }
        if p && r {
            let tv = torch_out(out_v, a).ok_or("cannot evaluate a PyTorch expression")?;
            if !same(&rv, &tv) {
                return Err(format!("at {a:?}: Rust gives {rv:?}, PyTorch {tv:?}"));
            }
        }
    }
    Ok(disagreements)
}

fn ops_of(case: &Value) -> Vec<String> {
    case.get("chain")
        .and_then(Value::as_array)
        .map(|c| {
            c.iter()
                .filter_map(|s| s.get("op").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Runs every case of the corpus at `path`.
pub fn run_file(path: &Path) -> Report {
    let mut report = Report::default();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            report
                .failures
                .push(format!("cannot read {}: {e}", path.display()));
            return report;
        }
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                report.failures.push(format!("bad line: {e}"));
                continue;
            }
        };
        let id = case
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        match run_case(&case, &mut report) {
            Ok(0) => report.passed += 1,
            Ok(n) => {
                let ops = ops_of(&case);
                for op in &ops {
                    *report.diff_ops.entry(op.clone()).or_default() += 1;
                }
                if ops
                    .iter()
                    .any(|op| KNOWN_GUARD_DIFFERENCES.iter().any(|(k, _)| k == op))
                {
                    report.known_guard_diffs += 1;
                } else {
                    report.failures.push(format!(
                        "{id} {ops:?}: guards disagree on {n} assignments ({})",
                        line.chars().take(400).collect::<String>()
                    ));
                }
            }
            Err(e) => report.failures.push(format!(
                "{id}: {e} ({})",
                line.chars().take(400).collect::<String>()
            )),
        }
    }
    report
}
