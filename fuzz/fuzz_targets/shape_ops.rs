//! Fuzz target 1: an arbitrary base layout (sizes, strides, offset, storage
//! size, dtype) and an arbitrary chain of shape ops with arbitrary
//! arguments.
//!
//! Checked for every step:
//! * nothing panics (errors are fine);
//! * every successful result's elements lie inside its storage;
//! * results agree with an independent index-map model: each tensor is
//!   modelled as the row-major list of *original storage element indices*
//!   it shows. The base storage (dtype `Long`) holds `i` at element `i`, so
//!   for a `Long` chain reading a result back must give exactly the model's
//!   list, whether the op aliased (views) or copied (`reshape`,
//!   `contiguous`). For views the model's list must also equal the
//!   offsets computed from the result's own geometry.
#![no_main]

use arbitrary::Arbitrary;
use aten_shape::prelude::*;
use c10_core::{ScalarType, Tensor};
use libfuzzer_sys::fuzz_target;

/// Enumeration cap: larger results are bounds-checked but not enumerated.
const MAX_ENUM: i64 = 1 << 14;
/// Ops that may copy (`reshape`, `flatten`, `contiguous`) are skipped on
/// sources larger than this: a huge expanded view is a legitimate request
/// for a huge buffer (PyTorch asks the allocator too), which the harness
/// must not make. Huge requests are covered by `tests/hostile_sizes.rs`.
const MAX_COPY: i64 = 1 << 20;

#[derive(Debug, Arbitrary)]
struct Input {
    dtype: u8,
    storage_elems: u16,
    sizes: Vec<Arg>,
    strides: Vec<Arg>,
    offset: Arg,
    ops: Vec<Op>,
}

/// A small value most of the time, an extreme one sometimes.
#[derive(Debug, Arbitrary, Clone, Copy)]
enum Arg {
    Small(i8),
    Big(i64),
}

impl Arg {
    fn get(self) -> i64 {
        match self {
            Arg::Small(v) => i64::from(v) % 9,
            Arg::Big(v) => v,
        }
    }
}

fn args(v: &[Arg]) -> Vec<i64> {
    v.iter().take(7).map(|a| a.get()).collect()
}

#[derive(Debug, Arbitrary)]
enum Op {
    View(u8, Vec<Arg>),
    Reshape(u8, Vec<Arg>),
    Flatten(u8, Arg, Arg),
    Unflatten(u8, Arg, Vec<Arg>),
    Squeeze(u8, Arg),
    Unsqueeze(u8, Arg),
    Permute(u8, Vec<Arg>),
    Transpose(u8, Arg, Arg),
    Movedim(u8, Vec<Arg>, Vec<Arg>),
    T(u8),
    Select(u8, Arg, Arg),
    Narrow(u8, Arg, Arg, Arg),
    Slice(u8, Arg, Option<Arg>, Option<Arg>, Arg),
    Expand(u8, Vec<Arg>),
    Diagonal(u8, Arg, Arg, Arg),
    Unfold(u8, Arg, Arg, Arg),
    AsStrided(u8, Vec<Arg>, Vec<Arg>, Option<Arg>),
    Contiguous(u8),
    Chunk(u8, Arg, Arg, u8),
    Unbind(u8, Arg, u8),
    Write(u8, u16, i64),
}

/// The model of one tensor: its shape and, row-major, the value each
/// element must read as (`None` when not known, for non-`Long` chains or
/// lists too long to enumerate).
#[derive(Clone, Debug)]
struct Model {
    shape: Vec<i64>,
    vals: Option<Vec<i64>>,
    /// The values of the tensor's whole storage, row-major by storage
    /// element, when known (base storage and `contiguous` copies).
    storage_vals: Option<std::rc::Rc<Vec<i64>>>,
}

fn numel(shape: &[i64]) -> Option<i64> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1i64, |acc, &s| acc.checked_mul(s))
}

fn wrap(dim: i64, ndim: usize) -> Option<usize> {
    let n = ndim.max(1) as i64;
    let d = if dim < 0 { dim.checked_add(n)? } else { dim };
    (0..n).contains(&d).then_some(d as usize)
}

/// Row-major multi-index of linear index `lin` in `shape`.
fn unravel(mut lin: i64, shape: &[i64], out: &mut Vec<i64>) {
    out.clear();
    out.resize(shape.len(), 0);
    for d in (0..shape.len()).rev() {
        out[d] = lin % shape[d];
        lin /= shape[d];
    }
}

fn ravel(idx: &[i64], shape: &[i64]) -> i64 {
    idx.iter().zip(shape).fold(0, |acc, (&i, &s)| acc * s + i)
}

/// `out[i] = in[f(out_idx)]` over `out_shape`.
fn gather(m: &Model, out_shape: Vec<i64>, f: impl Fn(&[i64], &mut Vec<i64>)) -> Model {
    let vals = match (&m.vals, numel(&out_shape)) {
        (Some(v), Some(n)) if n <= MAX_ENUM => {
            let mut out = Vec::with_capacity(n as usize);
            let (mut oi, mut ii) = (Vec::new(), Vec::new());
            for lin in 0..n {
                unravel(lin, &out_shape, &mut oi);
                f(&oi, &mut ii);
                out.push(v[ravel(&ii, &m.shape) as usize]);
            }
            Some(out)
        }
        _ => None,
    };
    Model {
        shape: out_shape,
        vals,
        storage_vals: m.storage_vals.clone(),
    }
}

fn permuted(m: &Model, perm: &[usize]) -> Model {
    let shape = perm.iter().map(|&p| m.shape[p]).collect();
    gather(m, shape, |o, i| {
        i.clear();
        i.resize(perm.len(), 0);
        for (k, &p) in perm.iter().enumerate() {
            i[p] = o[k];
        }
    })
}

/// Checks `t` against `m`: shape, storage bounds, geometry offsets for
/// aliases of `base_storage`, and values.
fn check(t: &Tensor, m: &Model, aliased: bool) {
    assert_eq!(t.sizes(), &m.shape[..], "shape differs from the model");
    assert_eq!(t.sizes().len(), t.strides().len());
    let n = t.numel();
    assert_eq!(Some(n), numel(t.sizes()));
    if n > 0 {
        // Every element inside the storage, computed in i128.
        let (mut lo, mut hi) = (
            i128::from(t.storage_offset()),
            i128::from(t.storage_offset()),
        );
        for (&s, &st) in t.sizes().iter().zip(t.strides()) {
            let ext = i128::from(s - 1) * i128::from(st);
            if ext < 0 {
                lo += ext
            } else {
                hi += ext
            }
        }
        let item = t.dtype().itemsize() as i128;
        assert!(lo >= 0, "element before the storage start");
        assert!(
            (hi + 1) * item <= t.storage().nbytes() as i128,
            "element past the storage end: {:?} {:?} +{} in {} bytes",
            t.sizes(),
            t.strides(),
            t.storage_offset(),
            t.storage().nbytes()
        );
    }
    let Some(vals) = &m.vals else { return };
    // Geometry offsets must match the model for aliases of a storage whose
    // contents are known.
    if aliased {
        if let Some(sv) = &m.storage_vals {
            let mut idx = Vec::new();
            for (lin, &want) in vals.iter().enumerate() {
                unravel(lin as i64, t.sizes(), &mut idx);
                let off: i64 = t.storage_offset()
                    + idx.iter().zip(t.strides()).map(|(i, s)| i * s).sum::<i64>();
                assert_eq!(sv[off as usize], want, "element {idx:?} maps elsewhere");
            }
        }
    }
    if t.dtype() == ScalarType::Long {
        let got = t.to_vec::<i64>().expect("reading a valid Long tensor");
        assert_eq!(&got, vals, "values differ from the model");
    }
}

const DTYPES: [ScalarType; 10] = [
    ScalarType::Long,
    ScalarType::Long,
    ScalarType::Long,
    ScalarType::Byte,
    ScalarType::Short,
    ScalarType::Float,
    ScalarType::Double,
    ScalarType::Bool,
    ScalarType::ComplexDouble,
    ScalarType::BFloat16,
];

fuzz_target!(|input: Input| {
    let dtype = DTYPES[usize::from(input.dtype) % DTYPES.len()];
    let elems = i64::from(input.storage_elems % 512);
    let Ok(storage) = alloc_cpu::empty_storage(elems as usize * dtype.itemsize()) else {
        return;
    };
    let storage_vals: Vec<i64> = (0..elems).collect();
    if dtype == ScalarType::Long {
        let mut g = storage.write().expect("fresh storage is writable");
        for (chunk, v) in g
            .bytes_mut()
            .expect("cpu")
            .chunks_exact_mut(8)
            .zip(&storage_vals)
        {
            chunk.copy_from_slice(&v.to_ne_bytes());
        }
    }
    let sizes = args(&input.sizes);
    let strides = args(&input.strides);
    let offset = input.offset.get();
    let Ok(base) = Tensor::from_storage(storage, dtype, &sizes, &strides, offset) else {
        return;
    };
    let sv = std::rc::Rc::new(storage_vals);
    let base_model = {
        let whole = Model {
            shape: vec![elems],
            vals: Some(sv.to_vec()),
            storage_vals: Some(sv.clone()),
        };
        // The base as an as_strided of the whole storage.
        as_strided_model(&whole, base.sizes(), base.strides(), base.storage_offset())
    };
    check(&base, &base_model, true);

    let mut stack: Vec<(Tensor, Model)> = vec![(base, base_model)];
    for op in input.ops.iter().take(24) {
        let pick = |i: u8| usize::from(i) % stack.len();
        let (res, model, aliased) = match op {
            Op::View(i, shape) => {
                let (t, m) = &stack[pick(*i)];
                let r = t.view(&args(shape));
                {
                    let mm = reshaped(m, &r);
                    (r, mm, true)
                }
            }
            Op::Reshape(i, shape) => {
                let (t, m) = &stack[pick(*i)];
                if t.numel() > MAX_COPY {
                    continue;
                }
                let r = t.reshape(&args(shape));
                let aliased = r.as_ref().is_ok_and(|r| r.is_alias_of(t));
                let mut mm = reshaped(m, &r);
                if !aliased {
                    mm.storage_vals = None;
                }
                (r, mm, aliased)
            }
            Op::Flatten(i, a, b) => {
                let (t, m) = &stack[pick(*i)];
                if t.numel() > MAX_COPY {
                    continue;
                }
                let r = t.flatten(a.get(), b.get());
                let aliased = r.as_ref().is_ok_and(|r| r.is_alias_of(t));
                let mut mm = reshaped(m, &r);
                if !aliased {
                    mm.storage_vals = None;
                }
                (r, mm, aliased)
            }
            Op::Unflatten(i, d, sz) => {
                let (t, m) = &stack[pick(*i)];
                let r = t.unflatten(d.get(), &args(sz));
                {
                    let mm = reshaped(m, &r);
                    (r, mm, true)
                }
            }
            Op::Squeeze(i, d) => {
                let (t, m) = &stack[pick(*i)];
                let r = t.squeeze_dim(d.get());
                {
                    let mm = reshaped(m, &r);
                    (r, mm, true)
                }
            }
            Op::Unsqueeze(i, d) => {
                let (t, m) = &stack[pick(*i)];
                let r = t.unsqueeze(d.get());
                {
                    let mm = reshaped(m, &r);
                    (r, mm, true)
                }
            }
            Op::Permute(i, dims) => {
                let (t, m) = &stack[pick(*i)];
                let dims = args(dims);
                let r = t.permute(&dims);
                let mm = r.is_ok().then(|| {
                    let perm: Vec<usize> = dims
                        .iter()
                        .map(|&d| wrap(d, m.shape.len()).expect("accepted dim"))
                        .collect();
                    permuted(m, &perm)
                });
                (r, mm.unwrap_or_else(|| m.clone()), true)
            }
            Op::Transpose(i, a, b) => {
                let (t, m) = &stack[pick(*i)];
                let r = t.transpose(a.get(), b.get());
                let mm = r.is_ok().then(|| {
                    let n = m.shape.len();
                    let mut perm: Vec<usize> = (0..n).collect();
                    if n > 0 {
                        perm.swap(
                            wrap(a.get(), n).expect("dim"),
                            wrap(b.get(), n).expect("dim"),
                        );
                    }
                    permuted(m, &perm)
                });
                (r, mm.unwrap_or_else(|| m.clone()), true)
            }
            Op::T(i) => {
                let (t, m) = &stack[pick(*i)];
                let r = t.t();
                let mm = r.is_ok().then(|| {
                    let perm: Vec<usize> = (0..m.shape.len()).rev().collect();
                    permuted(m, &perm)
                });
                (r, mm.unwrap_or_else(|| m.clone()), true)
            }
            Op::Movedim(i, src, dst) => {
                let (t, m) = &stack[pick(*i)];
                let (src, dst) = (args(src), args(dst));
                let r = t.movedim(&src, &dst);
                let mm = r.is_ok().then(|| {
                    let n = m.shape.len();
                    let mut perm: Vec<Option<usize>> = vec![None; n];
                    let mut used = vec![false; n];
                    for (&s, &d) in src.iter().zip(&dst) {
                        let (s, d) = (wrap(s, n).expect("src"), wrap(d, n).expect("dst"));
                        if n > 0 {
                            perm[d] = Some(s);
                            used[s] = true;
                        }
                    }
                    let mut rest = (0..n).filter(|&k| !used[k]);
                    let perm: Vec<usize> = perm
                        .into_iter()
                        .map(|p| p.or_else(|| rest.next()).expect("slot"))
                        .collect();
                    permuted(m, &perm)
                });
                (r, mm.unwrap_or_else(|| m.clone()), true)
            }
            Op::Select(i, d, idx) => {
                let (t, m) = &stack[pick(*i)];
                let r = t.select(d.get(), idx.get());
                let mm = r.is_ok().then(|| {
                    let d = wrap(d.get(), m.shape.len()).expect("dim");
                    let idx = if idx.get() < 0 {
                        idx.get() + m.shape[d]
                    } else {
                        idx.get()
                    };
                    let mut shape = m.shape.clone();
                    shape.remove(d);
                    gather(m, shape, |o, i| {
                        i.clear();
                        i.extend_from_slice(o);
                        i.insert(d, idx);
                    })
                });
                (r, mm.unwrap_or_else(|| m.clone()), true)
            }
            Op::Narrow(i, d, start, len) => {
                let (t, m) = &stack[pick(*i)];
                let r = t.narrow(d.get(), start.get(), len.get());
                let mm = r.is_ok().then(|| {
                    let d = wrap(d.get(), m.shape.len()).expect("dim");
                    let st = if start.get() < 0 {
                        start.get() + m.shape[d]
                    } else {
                        start.get()
                    };
                    let mut shape = m.shape.clone();
                    shape[d] = len.get();
                    gather(m, shape, |o, i| {
                        i.clear();
                        i.extend_from_slice(o);
                        i[d] += st;
                    })
                });
                (r, mm.unwrap_or_else(|| m.clone()), true)
            }
            Op::Slice(i, d, start, end, step) => {
                let (t, m) = &stack[pick(*i)];
                let (start, end) = (start.map(Arg::get), end.map(Arg::get));
                let r = t.slice(d.get(), start, end, step.get());
                let mm = r.is_ok().then(|| {
                    let d = wrap(d.get(), m.shape.len()).expect("dim");
                    let size = m.shape[d];
                    let clamp = |v: i64| {
                        let v = if v < 0 { v.saturating_add(size) } else { v };
                        v.clamp(0, size)
                    };
                    let s = clamp(start.unwrap_or(0));
                    let e = clamp(end.unwrap_or(size)).max(s);
                    let step = step.get();
                    let mut shape = m.shape.clone();
                    shape[d] = (e - s + step - 1) / step;
                    gather(m, shape, |o, i| {
                        i.clear();
                        i.extend_from_slice(o);
                        i[d] = s + o[d] * step;
                    })
                });
                (r, mm.unwrap_or_else(|| m.clone()), true)
            }
            Op::Expand(i, sz) => {
                let (t, m) = &stack[pick(*i)];
                let sz = args(sz);
                let r = t.expand(&sz);
                let mm = r.is_ok().then(|| {
                    let lead = sz.len() - m.shape.len();
                    let shape: Vec<i64> = sz
                        .iter()
                        .enumerate()
                        .map(|(k, &s)| {
                            if s == -1 && k >= lead {
                                m.shape[k - lead]
                            } else {
                                s
                            }
                        })
                        .collect();
                    let in_shape = m.shape.clone();
                    gather(m, shape, |o, i| {
                        i.clear();
                        for (k, &s) in in_shape.iter().enumerate() {
                            i.push(if s == 1 { 0 } else { o[k + lead] });
                        }
                    })
                });
                (r, mm.unwrap_or_else(|| m.clone()), true)
            }
            Op::Diagonal(i, off, a, b) => {
                let (t, m) = &stack[pick(*i)];
                let r = t.diagonal(off.get(), a.get(), b.get());
                let mm = r.is_ok().then(|| {
                    let n = m.shape.len();
                    let (d1, d2) = (wrap(a.get(), n).expect("d1"), wrap(b.get(), n).expect("d2"));
                    let off = off.get();
                    let (s1, s2) = (m.shape[d1], m.shape[d2]);
                    let len = if off >= 0 {
                        s1.min(s2.saturating_sub(off)).max(0)
                    } else {
                        s1.saturating_add(off).min(s2).max(0)
                    };
                    let mut shape: Vec<i64> = (0..n)
                        .filter(|&k| k != d1 && k != d2)
                        .map(|k| m.shape[k])
                        .collect();
                    shape.push(len);
                    gather(m, shape, |o, i| {
                        i.clear();
                        i.resize(n, 0);
                        let mut rest = o.iter();
                        for (k, slot) in i.iter_mut().enumerate() {
                            if k != d1 && k != d2 {
                                *slot = *rest.next().expect("rest");
                            }
                        }
                        let kk = o[o.len() - 1];
                        i[d1] = kk + (-off).max(0);
                        i[d2] = kk + off.max(0);
                    })
                });
                (r, mm.unwrap_or_else(|| m.clone()), true)
            }
            Op::Unfold(i, d, size, step) => {
                let (t, m) = &stack[pick(*i)];
                let r = t.unfold(d.get(), size.get(), step.get());
                let mm = r.is_ok().then(|| {
                    let n = m.shape.len();
                    let (size, step) = (size.get(), step.get());
                    let mut shape = m.shape.clone();
                    let d = if n == 0 {
                        None
                    } else {
                        Some(wrap(d.get(), n).expect("dim"))
                    };
                    match d {
                        Some(d) => shape[d] = (m.shape[d] - size) / step + 1,
                        None => {}
                    }
                    shape.push(size);
                    gather(m, shape, |o, i| {
                        i.clear();
                        i.extend_from_slice(&o[..n]);
                        if let Some(d) = d {
                            i[d] = o[d] * step + o[n];
                        }
                    })
                });
                (r, mm.unwrap_or_else(|| m.clone()), true)
            }
            Op::AsStrided(i, sz, st, off) => {
                let (t, m) = &stack[pick(*i)];
                let (sz, st) = (args(sz), args(st));
                let off = off.map(Arg::get);
                let r = t.as_strided(&sz, &st, off);
                let mm = r.as_ref().ok().map(|r| match &m.storage_vals {
                    Some(sv) => {
                        let whole = Model {
                            shape: vec![sv.len() as i64],
                            vals: Some(sv.to_vec()),
                            storage_vals: Some(sv.clone()),
                        };
                        as_strided_model(&whole, r.sizes(), r.strides(), r.storage_offset())
                    }
                    None => Model {
                        shape: sz.clone(),
                        vals: None,
                        storage_vals: None,
                    },
                });
                (r, mm.unwrap_or_else(|| m.clone()), true)
            }
            Op::Contiguous(i) => {
                let (t, m) = &stack[pick(*i)];
                if t.numel() > MAX_COPY {
                    continue;
                }
                let r = t.contiguous();
                let aliased = r.as_ref().is_ok_and(|r| r.is_alias_of(t));
                let mut mm = m.clone();
                if !aliased {
                    mm.storage_vals = mm.vals.clone().map(std::rc::Rc::new);
                }
                (r, mm, aliased)
            }
            Op::Chunk(i, chunks, d, k) => {
                let (t, m) = &stack[pick(*i)];
                // A zero-element tensor may have a dim of 2^40: a legitimate
                // request for that many pieces, which the harness must not make.
                if t.sizes().iter().any(|&n| n > 4096) {
                    continue;
                }
                // `chunk(n)` of an empty dim makes `n` empty views: a
                // legitimate request the harness keeps small.
                if chunks.get() > 4096 {
                    continue;
                }
                let r = t.chunk(chunks.get(), d.get());
                let (r, mm) = match r {
                    Ok(parts) if !parts.is_empty() => {
                        let dd = wrap(d.get(), m.shape.len()).expect("dim");
                        let k = usize::from(*k) % parts.len();
                        let mut start = 0;
                        for p in &parts[..k] {
                            start += p.sizes()[dd];
                        }
                        let part = parts[k].clone();
                        let mut shape = m.shape.clone();
                        shape[dd] = part.sizes()[dd];
                        let mm = gather(m, shape, |o, i| {
                            i.clear();
                            i.extend_from_slice(o);
                            i[dd] += start;
                        });
                        (Ok(part), mm)
                    }
                    Ok(_) => continue,
                    Err(e) => (Err(e), m.clone()),
                };
                (r, mm, true)
            }
            Op::Unbind(i, d, k) => {
                let (t, m) = &stack[pick(*i)];
                // A zero-element tensor may have a dim of 2^40: a legitimate
                // request for that many pieces, which the harness must not make.
                if t.sizes().iter().any(|&n| n > 4096) {
                    continue;
                }
                let r = t.unbind(d.get());
                let (r, mm) = match r {
                    Ok(parts) if !parts.is_empty() => {
                        let dd = wrap(d.get(), m.shape.len()).expect("dim");
                        let k = usize::from(*k) % parts.len();
                        let mut shape = m.shape.clone();
                        shape.remove(dd);
                        let mm = gather(m, shape, |o, i| {
                            i.clear();
                            i.extend_from_slice(o);
                            i.insert(dd, k as i64);
                        });
                        (Ok(parts[k].clone()), mm)
                    }
                    Ok(_) => continue,
                    Err(e) => (Err(e), m.clone()),
                };
                (r, mm, true)
            }
            Op::Write(i, at, v) => {
                // A write through one tensor; every alias must see it, so
                // the models of all tensors on that storage are updated.
                let (t, m) = &stack[pick(*i)];
                if t.dtype() != ScalarType::Long || t.numel() == 0 || t.numel() > MAX_ENUM {
                    continue;
                }
                let Some(vals) = &m.vals else { continue };
                let lin = i64::from(*at) % t.numel();
                let mut idx = Vec::new();
                unravel(lin, t.sizes(), &mut idx);
                let old = vals[lin as usize];
                t.set::<i64>(&idx, *v).expect("in-bounds write");
                assert_eq!(t.get::<i64>(&idx).expect("read back"), *v);
                // Restore, so the index-valued model stays exact.
                t.set::<i64>(&idx, old).expect("in-bounds write");
                continue;
            }
        };
        match res {
            Ok(r) => {
                check(&r, &model, aliased);
                if stack.len() < 8 {
                    stack.push((r, model));
                } else {
                    let k = stack.len() - 1;
                    stack[k] = (r, model);
                }
            }
            Err(e) => {
                // Errors must carry a message.
                assert!(!e.to_string().is_empty());
            }
        }
    }
});

/// The model of `as_strided(sizes, strides, offset)` over a storage whose
/// contents `whole` lists.
fn as_strided_model(whole: &Model, sizes: &[i64], strides: &[i64], offset: i64) -> Model {
    let sv = whole.storage_vals.clone();
    let vals = match (&whole.vals, numel(sizes)) {
        (Some(v), Some(n)) if n <= MAX_ENUM => {
            let mut out = Vec::with_capacity(n as usize);
            let mut idx = Vec::new();
            for lin in 0..n {
                unravel(lin, sizes, &mut idx);
                let off = offset + idx.iter().zip(strides).map(|(i, s)| i * s).sum::<i64>();
                // Out of range here means the library accepted an
                // out-of-bounds view; `check` reports it with detail.
                let Some(&x) = usize::try_from(off).ok().and_then(|o| v.get(o)) else {
                    return Model {
                        shape: sizes.to_vec(),
                        vals: None,
                        storage_vals: sv,
                    };
                };
                out.push(x);
            }
            Some(out)
        }
        _ => None,
    };
    Model {
        shape: sizes.to_vec(),
        vals,
        storage_vals: sv,
    }
}

/// The model of a shape-only change (view, reshape, flatten, squeeze...):
/// row-major order is kept.
fn reshaped(m: &Model, r: &c10_core::Result<Tensor>) -> Model {
    let mut mm = m.clone();
    if let Ok(r) = r {
        assert_eq!(numel(r.sizes()), numel(&m.shape), "a reshape changed numel");
        mm.shape = r.sizes().to_vec();
    }
    mm
}
