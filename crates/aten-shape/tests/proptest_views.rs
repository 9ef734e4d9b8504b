//! Property tests: random base layouts and random chains of view ops,
//! checked after every step against a tiny independent model.
//!
//! The model is an explicit index map: for each logical element (row-major
//! order) the storage element it lives in. Each op is defined on the model
//! from first principles ("element (i, j) of the transpose is element (j, i)
//! of the input", "a view keeps the row-major element sequence", ...), never
//! through strides. The storage holds `0, 1, 2, ...`, so an element's value
//! is also its storage index: results that alias are checked through
//! `Tensor::offsets()` and values, copies (a `reshape` that cannot view)
//! through values.

use aten_shape::views::ViewOps;
use c10_core::{ScalarType, Tensor};
use proptest::prelude::*;

#[derive(Clone, Debug, PartialEq)]
struct Model {
    sizes: Vec<i64>,
    /// Storage index of each logical element, row-major.
    map: Vec<i64>,
}

/// Every multi-index of `sizes`, row-major.
fn all_indices(sizes: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![vec![]];
    for &n in sizes {
        let mut next = Vec::new();
        for prefix in &out {
            for i in 0..n {
                let mut p = prefix.clone();
                p.push(i);
                next.push(p);
            }
        }
        out = next;
    }
    out
}

/// Row-major position of `idx` in `sizes`.
fn flat(sizes: &[i64], idx: &[i64]) -> usize {
    let mut f = 0i64;
    for (&n, &i) in sizes.iter().zip(idx) {
        assert!(0 <= i && i < n, "model index {idx:?} outside {sizes:?}");
        f = f * n + i;
    }
    f as usize
}

impl Model {
    fn from_layout(sizes: &[i64], strides: &[i64], offset: i64) -> Model {
        let map = all_indices(sizes)
            .iter()
            .map(|idx| offset + idx.iter().zip(strides).map(|(i, s)| i * s).sum::<i64>())
            .collect();
        Model {
            sizes: sizes.to_vec(),
            map,
        }
    }

    fn numel(&self) -> i64 {
        self.sizes.iter().product()
    }

    /// Element `new` of the result is element `f(new)` of `self`.
    fn gather(&self, new_sizes: Vec<i64>, f: impl Fn(&[i64]) -> Vec<i64>) -> Model {
        let map = all_indices(&new_sizes)
            .iter()
            .map(|idx| self.map[flat(&self.sizes, &f(idx))])
            .collect();
        Model {
            sizes: new_sizes,
            map,
        }
    }

    fn with_sizes(&self, sizes: Vec<i64>) -> Model {
        Model {
            sizes,
            map: self.map.clone(),
        }
    }

    fn transpose(&self, a: usize, b: usize) -> Model {
        let mut s = self.sizes.clone();
        s.swap(a, b);
        self.gather(s, |idx| {
            let mut o = idx.to_vec();
            o.swap(a, b);
            o
        })
    }

    fn permute(&self, p: &[usize]) -> Model {
        let s = p.iter().map(|&d| self.sizes[d]).collect();
        self.gather(s, |idx| {
            let mut o = vec![0; p.len()];
            for (i, &d) in p.iter().enumerate() {
                o[d] = idx[i];
            }
            o
        })
    }

    /// Positions `sel` along dim `d`.
    fn pick(&self, d: usize, sel: Vec<i64>) -> Model {
        let mut s = self.sizes.clone();
        s[d] = sel.len() as i64;
        self.gather(s, |idx| {
            let mut o = idx.to_vec();
            o[d] = sel[idx[d] as usize];
            o
        })
    }

    fn select(&self, d: usize, i: i64) -> Model {
        let mut s = self.sizes.clone();
        s.remove(d);
        self.gather(s, |idx| {
            let mut o = idx.to_vec();
            o.insert(d, i);
            o
        })
    }

    fn expand(&self, target: &[i64]) -> Model {
        let lead = target.len() - self.sizes.len();
        let old = self.sizes.clone();
        self.gather(target.to_vec(), |idx| {
            (0..old.len())
                .map(|k| if old[k] == 1 { 0 } else { idx[k + lead] })
                .collect()
        })
    }

    fn unsqueeze(&self, d: usize) -> Model {
        let mut s = self.sizes.clone();
        s.insert(d, 1);
        self.gather(s, |idx| {
            let mut o = idx.to_vec();
            o.remove(d);
            o
        })
    }

    fn drop_dims(&self, drop: &[usize]) -> Model {
        let keep: Vec<usize> = (0..self.sizes.len())
            .filter(|d| !drop.contains(d))
            .collect();
        let s = keep.iter().map(|&d| self.sizes[d]).collect();
        let n = self.sizes.len();
        self.gather(s, |idx| {
            let mut o = vec![0; n];
            for (i, &d) in keep.iter().enumerate() {
                o[d] = idx[i];
            }
            o
        })
    }

    fn diagonal(&self, off: i64, d1: usize, d2: usize) -> Model {
        let (r1, r2) = (off.min(0).abs(), off.max(0));
        let mut len = 0;
        while len + r1 < self.sizes[d1] && len + r2 < self.sizes[d2] {
            len += 1;
        }
        let others: Vec<usize> = (0..self.sizes.len())
            .filter(|&d| d != d1 && d != d2)
            .collect();
        let mut s: Vec<i64> = others.iter().map(|&d| self.sizes[d]).collect();
        s.push(len);
        let n = self.sizes.len();
        self.gather(s, |idx| {
            let mut o = vec![0; n];
            for (i, &d) in others.iter().enumerate() {
                o[d] = idx[i];
            }
            let k = idx[idx.len() - 1];
            o[d1] = k + r1;
            o[d2] = k + r2;
            o
        })
    }

    fn unfold(&self, d: usize, size: i64, step: i64) -> Model {
        let mut s = self.sizes.clone();
        s[d] = (s[d] - size) / step + 1;
        s.push(size);
        self.gather(s, |idx| {
            let mut o = idx[..idx.len() - 1].to_vec();
            o[d] = idx[d] * step + idx[idx.len() - 1];
            o
        })
    }

    /// Whether some affine layout produces this element sequence (what a
    /// `view` needs when there are elements).
    fn is_affine(&self) -> bool {
        if self.numel() == 0 {
            return true;
        }
        let n = self.sizes.len();
        let base = self.map[0];
        let strides: Vec<i64> = (0..n)
            .map(|k| {
                if self.sizes[k] > 1 {
                    let mut e = vec![0; n];
                    e[k] = 1;
                    self.map[flat(&self.sizes, &e)] - base
                } else {
                    0
                }
            })
            .collect();
        all_indices(&self.sizes)
            .iter()
            .zip(&self.map)
            .all(|(idx, &m)| base + idx.iter().zip(&strides).map(|(i, s)| i * s).sum::<i64>() == m)
    }
}

/// Wraps a raw number into a dim of `n` (positive or negative form).
fn dim_of(raw: i64, n: usize) -> (i64, usize) {
    let n = n.max(1) as i64;
    let d = raw.rem_euclid(n);
    let form = if raw % 2 == 0 { d } else { d - n };
    (form, d as usize)
}

/// Splits `n` into a shape of up to 3 factors (using `raw` as entropy).
fn factor_shape(n: i64, raw: i64) -> Vec<i64> {
    if n == 0 {
        return match raw % 3 {
            0 => vec![0],
            1 => vec![2, 0],
            _ => vec![0, 3, 1],
        };
    }
    let mut out = Vec::new();
    let mut rem = n;
    let mut r = raw.unsigned_abs();
    for _ in 0..2 {
        let divs: Vec<i64> = (1..=rem).filter(|d| rem % d == 0).collect();
        let d = divs[(r % divs.len() as u64) as usize];
        r /= 7;
        out.push(d);
        rem /= d;
    }
    out.push(rem);
    if r.is_multiple_of(2) {
        out.retain(|&x| x != 1);
    }
    if r.is_multiple_of(3) && !out.is_empty() {
        let k = (r as usize / 3) % out.len();
        out[k] = -1;
    }
    out
}

#[derive(Clone, Debug)]
struct Step {
    kind: u8,
    a: i64,
    b: i64,
    c: i64,
}

fn step_strategy() -> impl Strategy<Value = Step> {
    (0u8..18, -8i64..8, -8i64..8, 0i64..64).prop_map(|(kind, a, b, c)| Step { kind, a, b, c })
}

fn layout_strategy() -> impl Strategy<Value = (Vec<i64>, Vec<i64>, i64)> {
    (0usize..5)
        .prop_flat_map(|n| {
            (
                proptest::collection::vec(0i64..5, n),
                proptest::collection::vec(0i64..7, n),
                0i64..4,
                any::<bool>(),
            )
        })
        .prop_map(|(sizes, strides, offset, contiguous)| {
            if contiguous {
                let mut st = vec![0; sizes.len()];
                let mut acc = 1;
                for d in (0..sizes.len()).rev() {
                    st[d] = acc;
                    acc *= sizes[d].max(1);
                }
                (sizes, st, offset)
            } else {
                (sizes, strides, offset)
            }
        })
}

/// What one step did, for checking.
enum Outcome {
    /// Result must alias the input with exactly the model's element map.
    View(Tensor, Model),
    /// Result may be a copy; its values must be the model's.
    ViewOrCopy(Tensor, Model),
    /// The op was not applicable (the model agrees it is illegal).
    Skip,
}

fn apply(t: &Tensor, m: &Model, s: &Step) -> Result<Outcome, TestCaseError> {
    let n = t.dim();
    let sizes = t.sizes().to_vec();
    let out = match s.kind {
        0 => {
            let (a, da) = dim_of(s.a, n);
            let (b, db) = dim_of(s.b, n);
            let r = t
                .transpose(a, b)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let want = if n == 0 {
                m.clone()
            } else {
                m.transpose(da, db)
            };
            Outcome::View(r, want)
        }
        1 => {
            // a permutation from the raw numbers
            let mut p: Vec<usize> = (0..n).collect();
            let mut r = s.c as usize;
            for i in (1..n).rev() {
                p.swap(i, r % (i + 1));
                r /= i + 1;
            }
            let dims: Vec<i64> = p
                .iter()
                .map(|&d| {
                    if s.a % 2 == 0 {
                        d as i64
                    } else {
                        d as i64 - n as i64
                    }
                })
                .collect();
            let res = t
                .permute(&dims)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            Outcome::View(res, m.permute(&p))
        }
        2 if n > 0 => {
            let (d, dd) = dim_of(s.a, n);
            let size = sizes[dd];
            let step = 1 + (s.c % 3);
            let start = if s.b % 3 == 0 { None } else { Some(s.b) };
            let end = if s.c % 5 == 0 {
                None
            } else {
                Some(s.b + s.c % 7 - 2)
            };
            // Python slice semantics, computed directly.
            let norm = |v: i64| {
                if v < 0 {
                    (v + size).max(0)
                } else {
                    v.min(size)
                }
            };
            let lo = start.map_or(0, norm);
            let hi = end.map_or(size, norm);
            let sel: Vec<i64> = (lo..hi).step_by(step as usize).collect();
            let r = t
                .slice(d, start, end, step)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            Outcome::View(r, m.pick(dd, sel))
        }
        3 if n > 0 => {
            let (d, dd) = dim_of(s.a, n);
            let size = sizes[dd];
            let len = s.c % (size + 1);
            let start_pos = if size - len == 0 {
                0
            } else {
                s.b.rem_euclid(size - len + 1)
            };
            let start = if s.b % 2 == 0 {
                start_pos
            } else {
                start_pos - size
            };
            let r = t
                .narrow(d, start, len)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            Outcome::View(r, m.pick(dd, (start_pos..start_pos + len).collect()))
        }
        4 if n > 0 => {
            let (d, dd) = dim_of(s.a, n);
            if sizes[dd] == 0 {
                prop_assert!(t.select(d, 0).is_err());
                return Ok(Outcome::Skip);
            }
            let i = s.c % sizes[dd];
            let idx = if s.b % 2 == 0 { i } else { i - sizes[dd] };
            let r = t
                .select(d, idx)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            Outcome::View(r, m.select(dd, i))
        }
        5 => {
            // expand: size-1 dims to 0..3, keep others (sometimes as -1), 0..2 leading dims
            let mut target: Vec<i64> = (0..(s.c % 3))
                .map(|k| (s.b + k).rem_euclid(3) + 1)
                .collect();
            for (k, &sz) in sizes.iter().enumerate() {
                target.push(if sz == 1 {
                    (s.a + k as i64).rem_euclid(4)
                } else if (s.c + k as i64) % 2 == 0 {
                    -1
                } else {
                    sz
                });
            }
            let r = t
                .expand(&target)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let lead = target.len() - n;
            let resolved: Vec<i64> = target
                .iter()
                .enumerate()
                .map(|(i, &v)| if v == -1 { sizes[i - lead] } else { v })
                .collect();
            Outcome::View(r, m.expand(&resolved))
        }
        6 => {
            let (d, dd) = dim_of(s.a, n + 1);
            let r = t
                .unsqueeze(d)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            Outcome::View(r, m.unsqueeze(dd))
        }
        7 => {
            let drop: Vec<usize> = (0..n).filter(|&d| sizes[d] == 1).collect();
            let r = t
                .squeeze()
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            Outcome::View(r, m.drop_dims(&drop))
        }
        8 => {
            let (d, dd) = dim_of(s.a, n);
            let r = t
                .squeeze_dim(d)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let want = if n > 0 && sizes[dd] == 1 {
                m.drop_dims(&[dd])
            } else {
                m.clone()
            };
            Outcome::View(r, want)
        }
        9 => {
            let shape = factor_shape(m.numel(), s.c + 64 * s.a);
            let resolved: Vec<i64> = if shape.contains(&-1) {
                let known: i64 = shape.iter().filter(|&&x| x != -1).product();
                if known == 0 {
                    prop_assert!(t.view(&shape).is_err());
                    return Ok(Outcome::Skip);
                }
                shape
                    .iter()
                    .map(|&x| if x == -1 { m.numel() / known } else { x })
                    .collect()
            } else {
                shape.clone()
            };
            let want = m.with_sizes(resolved);
            match t.view(&shape) {
                Ok(r) => Outcome::View(r, want),
                Err(e) => {
                    prop_assert!(
                        !want.is_affine(),
                        "view({shape:?}) failed ({e}) but the layout is affine"
                    );
                    return Ok(Outcome::Skip);
                }
            }
        }
        10 => {
            let shape = factor_shape(m.numel(), s.c + 64 * s.b);
            let resolved: Vec<i64> = if shape.contains(&-1) {
                let known: i64 = shape.iter().filter(|&&x| x != -1).product();
                if known == 0 {
                    prop_assert!(t.reshape(&shape).is_err());
                    return Ok(Outcome::Skip);
                }
                shape
                    .iter()
                    .map(|&x| if x == -1 { m.numel() / known } else { x })
                    .collect()
            } else {
                shape.clone()
            };
            let r = t
                .reshape(&shape)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            Outcome::ViewOrCopy(r, m.with_sizes(resolved))
        }
        11 if n >= 2 => {
            let (d1, dd1) = dim_of(s.a, n);
            let mut dd2 = dim_of(s.b, n).1;
            if dd2 == dd1 {
                dd2 = (dd1 + 1) % n;
            }
            let d2 = dd2 as i64;
            let off = s.c % 7 - 3;
            let r = t
                .diagonal(off, d1, d2)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            Outcome::View(r, m.diagonal(off, dd1, dd2))
        }
        12 if n > 0 => {
            let (d, dd) = dim_of(s.a, n);
            let size = s.c % (sizes[dd] + 1);
            let step = 1 + s.b.rem_euclid(3);
            let r = t
                .unfold(d, size, step)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            Outcome::View(r, m.unfold(dd, size, step))
        }
        13 if n > 0 => {
            let (src, ds) = dim_of(s.a, n);
            let (dst, dd) = dim_of(s.b, n);
            let r = t
                .movedim(&[src], &[dst])
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            // moving one dim: remove it, re-insert at the destination
            let mut order: Vec<usize> = (0..n).filter(|&d| d != ds).collect();
            order.insert(dd, ds);
            Outcome::View(r, m.permute(&order))
        }
        14 => {
            let (sd, s0) = dim_of(s.a, n);
            let (ed, e0) = dim_of(s.b, n);
            if s0 > e0 {
                prop_assert!(t.flatten(sd, ed).is_err());
                return Ok(Outcome::Skip);
            }
            let r = t
                .flatten(sd, ed)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let want = if n == 0 {
                m.with_sizes(vec![1])
            } else {
                let mut sz = sizes[..s0].to_vec();
                sz.push(sizes[s0..=e0].iter().product());
                sz.extend_from_slice(&sizes[e0 + 1..]);
                m.with_sizes(sz)
            };
            Outcome::ViewOrCopy(r, want)
        }
        15 if n > 0 => {
            let (d, dd) = dim_of(s.a, n);
            let parts = factor_shape(sizes[dd], s.c);
            let known: i64 = parts.iter().filter(|&&x| x != -1).product();
            let resolved: Vec<i64> = parts
                .iter()
                .map(|&x| {
                    if x == -1 && known != 0 {
                        sizes[dd] / known
                    } else {
                        x
                    }
                })
                .collect();
            let mut sz = sizes[..dd].to_vec();
            sz.extend_from_slice(&resolved);
            sz.extend_from_slice(&sizes[dd + 1..]);
            match t.unflatten(d, &parts) {
                Ok(r) => Outcome::View(r, m.with_sizes(sz)),
                Err(_) => {
                    prop_assert!(parts.is_empty() || (parts.contains(&-1) && known == 0));
                    return Ok(Outcome::Skip);
                }
            }
        }
        16 if n > 0 => {
            let (d, dd) = dim_of(s.a, n);
            let size = sizes[dd];
            let split = 1 + s.c % 4;
            let pieces = t
                .split(split, d)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let count = ((size + split - 1) / split).max(1);
            prop_assert_eq!(pieces.len() as i64, count);
            let k = s.b.rem_euclid(count);
            let lo = (k * split).min(size);
            let hi = ((k + 1) * split).min(size);
            Outcome::View(pieces[k as usize].clone(), m.pick(dd, (lo..hi).collect()))
        }
        17 if n > 0 => {
            let (d, dd) = dim_of(s.a, n);
            let size = sizes[dd];
            let chunks = 1 + s.c % 5;
            let pieces = t
                .chunk(chunks, d)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let per = (size + chunks - 1) / chunks;
            let expected_count = if per == 0 {
                chunks
            } else {
                ((size + per - 1) / per).max(1)
            };
            prop_assert_eq!(pieces.len() as i64, expected_count);
            let k = s.b.rem_euclid(pieces.len() as i64);
            let (lo, hi) = if per == 0 {
                (0, 0)
            } else {
                ((k * per).min(size), ((k + 1) * per).min(size))
            };
            Outcome::View(pieces[k as usize].clone(), m.pick(dd, (lo..hi).collect()))
        }
        _ => Outcome::Skip,
    };
    Ok(out)
}

fn check(base: &Tensor, r: &Tensor, want: &Model, must_alias: bool) -> Result<(), TestCaseError> {
    prop_assert_eq!(r.sizes(), &want.sizes[..]);
    let values = r
        .to_vec::<i64>()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&values, &want.map);
    if must_alias || r.is_alias_of(base) {
        prop_assert!(r.is_alias_of(base));
        prop_assert!(r.shares_version_counter_with(base));
        let offs: Vec<i64> = r.offsets().collect();
        prop_assert_eq!(&offs, &want.map);
    }
    Ok(())
}

#[cfg(not(miri))]
const CASES: u32 = 256;
#[cfg(miri)]
const CASES: u32 = 8;

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn view_chains_match_the_index_model(
        (sizes, strides, offset) in layout_strategy(),
        steps in proptest::collection::vec(step_strategy(), 1..7),
    ) {
        let needed = offset
            + sizes.iter().zip(&strides).map(|(&n, &s)| (n - 1).max(0) * s).sum::<i64>()
            + 1;
        let storage = Tensor::arange(0, needed, 1, ScalarType::Long).unwrap();
        let base = storage.as_strided(&sizes, &strides, Some(offset)).unwrap();
        let mut model = Model::from_layout(&sizes, &strides, offset);
        check(&storage, &base, &model, true)?;
        let mut cur = base;
        for s in &steps {
            match apply(&cur, &model, s)? {
                Outcome::View(r, want) => {
                    check(&storage, &r, &want, true)?;
                    cur = r;
                    model = want;
                }
                Outcome::ViewOrCopy(r, want) => {
                    // A copy must only happen when no view was possible.
                    if !r.is_alias_of(&storage) {
                        prop_assert!(!want.is_affine(), "copied although the layout is affine");
                    }
                    check(&storage, &r, &want, false)?;
                    if !r.is_alias_of(&storage) {
                        // Continue on the copy: its storage is new, so
                        // re-base the model on it.
                        return Ok(());
                    }
                    cur = r;
                    model = want;
                }
                Outcome::Skip => {}
            }
        }
    }
}
