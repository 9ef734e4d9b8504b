//! Pure layout arithmetic for the copy paths: dim coalescing, the kernel's
//! by-value layout struct, dense checks, spans, memset patterns and the
//! host-side strided copy. Nothing here calls the driver, so it is unit
//! tested on any machine.

use c10_core::access::element_offset_range;

/// Most dims the NVRTC kernels take (after coalescing).
pub const MAX_KERNEL_DIMS: usize = 12;

/// The layout argument of the copy and fill kernels, passed **by value**
/// (`struct Layout` in [`KERNEL_SOURCE`](crate::cuda::KERNEL_SOURCE)):
/// sizes and the two stride lists in elements, innermost dim last, the
/// number of dims and of elements. All 64-bit, so indices past 2³¹ work.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelLayout {
    /// Sizes (first `ndim` entries used).
    pub sizes: [i64; MAX_KERNEL_DIMS],
    /// Destination strides in elements.
    pub dst_strides: [i64; MAX_KERNEL_DIMS],
    /// Source strides in elements (ignored by the fill kernel).
    pub src_strides: [i64; MAX_KERNEL_DIMS],
    /// Number of dims in use.
    pub ndim: i64,
    /// Number of elements.
    pub numel: i64,
}

impl KernelLayout {
    /// The element offsets `(dst, src)` the kernel computes for linear
    /// index `i` (row-major over `sizes`): the same arithmetic as the CUDA
    /// source, for tests.
    pub fn offsets(&self, i: i64) -> (i64, i64) {
        let (mut rem, mut d, mut s) = (i, 0i64, 0i64);
        for k in (0..self.ndim as usize).rev() {
            let n = self.sizes[k];
            let q = rem / n;
            let idx = rem - q * n;
            rem = q;
            d += idx * self.dst_strides[k];
            s += idx * self.src_strides[k];
        }
        (d, s)
    }
}

/// A copy between two layouts of equal sizes, simplified: size-1 dims
/// dropped, dims ordered by destination stride (outermost first) and
/// neighbours merged where both sides are contiguous across them.
/// Strides are in elements, relative to each side's first element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub(crate) sizes: Vec<i64>,
    pub(crate) dst: Vec<i64>,
    pub(crate) src: Vec<i64>,
}

/// Simplifies a copy of `sizes` elements from `src_strides` to
/// `dst_strides` (see [`Plan`]). Every size must be positive.
pub(crate) fn coalesce(sizes: &[i64], dst_strides: &[i64], src_strides: &[i64]) -> Plan {
    // The same simplification as the CPU copy engine's (one rule, in c10).
    let dims = c10_core::geometry::coalesce_copy_dims(sizes, dst_strides, src_strides);
    Plan {
        sizes: dims.iter().map(|d| d.0).collect(),
        dst: dims.iter().map(|d| d.1).collect(),
        src: dims.iter().map(|d| d.2).collect(),
    }
}

impl Plan {
    /// Number of elements.
    pub(crate) fn numel(&self) -> i64 {
        self.sizes.iter().product()
    }

    /// Whether the copy is one contiguous run on both sides (a `memcpy`).
    pub(crate) fn is_memcpy(&self) -> bool {
        match self.sizes.len() {
            0 => true,
            1 => self.dst[0] == 1 && self.src[0] == 1,
            _ => false,
        }
    }

    /// The same copy on bytes: strides times `itemsize` and one more
    /// innermost dim of `itemsize` bytes (coalesced again).
    pub(crate) fn as_bytes(&self, itemsize: usize) -> Plan {
        let e = itemsize as i64;
        let mut sizes = self.sizes.clone();
        let mut dst: Vec<i64> = self.dst.iter().map(|s| s * e).collect();
        let mut src: Vec<i64> = self.src.iter().map(|s| s * e).collect();
        sizes.push(e);
        dst.push(1);
        src.push(1);
        coalesce(&sizes, &dst, &src)
    }

    /// The kernel argument, or `None` with more than [`MAX_KERNEL_DIMS`]
    /// dims.
    pub(crate) fn kernel_layout(&self) -> Option<KernelLayout> {
        let n = self.sizes.len();
        if n > MAX_KERNEL_DIMS {
            return None;
        }
        let mut l = KernelLayout {
            ndim: n as i64,
            numel: self.numel(),
            ..KernelLayout::default()
        };
        l.sizes[..n].copy_from_slice(&self.sizes);
        l.dst_strides[..n].copy_from_slice(&self.dst);
        l.src_strides[..n].copy_from_slice(&self.src);
        Some(l)
    }
}

/// Row-major (contiguous) strides for `sizes`.
pub(crate) fn row_major(sizes: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; sizes.len()];
    let mut acc = 1i64;
    for (s, &n) in strides.iter_mut().zip(sizes).rev() {
        *s = acc;
        acc = acc.saturating_mul(n.max(1));
    }
    strides
}

/// c10's `is_non_overlapping_and_dense`: some order of the dims is
/// contiguous (size-1 dims ignored).
pub(crate) fn is_dense(sizes: &[i64], strides: &[i64]) -> bool {
    let mut dims: Vec<(i64, i64)> = sizes
        .iter()
        .zip(strides)
        .filter(|&(&n, _)| n != 1)
        .map(|(&n, &s)| (n, s))
        .collect();
    dims.sort_by_key(|&(_, s)| s);
    let mut expected = 1i64;
    for (n, s) in dims {
        if s != expected {
            return false;
        }
        expected = expected.saturating_mul(n);
    }
    true
}

/// The smallest and largest element offset, relative to the first element
/// (`(0, 0)` when there are no elements).
pub(crate) fn span(sizes: &[i64], strides: &[i64]) -> (i64, i64) {
    match element_offset_range(sizes, strides, 0) {
        Some((lo, hi)) => (lo as i64, hi as i64),
        None => (0, 0),
    }
}

/// A fill that the driver's memset can do: the element's bytes repeat a
/// 1-, 2- or 4-byte pattern (and the address is aligned for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Memset {
    /// `cuMemsetD8` of `count` bytes.
    D8(u8, usize),
    /// `cuMemsetD16` of `count` 2-byte words.
    D16(u16, usize),
    /// `cuMemsetD32` of `count` 4-byte words.
    D32(u32, usize),
}

/// The memset that writes `numel` elements of `value` starting at `addr`,
/// if one exists.
pub(crate) fn memset_for(value: &[u8], numel: usize, addr: u64) -> Option<Memset> {
    let e = value.len();
    if e == 0 {
        return None;
    }
    let bytes = numel.checked_mul(e)?;
    if value.iter().all(|&b| b == value[0]) {
        return Some(Memset::D8(value[0], bytes));
    }
    let repeats = |w: usize| e.is_multiple_of(w) && value.chunks(w).all(|c| c == &value[..w]);
    if repeats(2) && addr.is_multiple_of(2) {
        return Some(Memset::D16(
            u16::from_ne_bytes([value[0], value[1]]),
            bytes / 2,
        ));
    }
    if repeats(4) && addr.is_multiple_of(4) {
        return Some(Memset::D32(
            u32::from_ne_bytes([value[0], value[1], value[2], value[3]]),
            bytes / 4,
        ));
    }
    None
}

/// Calls `f(dst_offset, src_offset)` (in elements) for every element of
/// `plan`, with the innermost dim handed over as whole runs:
/// `f(d, s, run)` where `run` elements follow with the innermost strides.
fn for_each_run(plan: &Plan, mut f: impl FnMut(i64, i64, i64)) {
    let n = plan.sizes.len();
    if n == 0 {
        f(0, 0, 1);
        return;
    }
    let inner = plan.sizes[n - 1];
    let outer = &plan.sizes[..n - 1];
    let mut idx = vec![0i64; outer.len()];
    let (mut d, mut s) = (0i64, 0i64);
    loop {
        f(d, s, inner);
        // Odometer over the outer dims.
        let mut k = outer.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            d += plan.dst[k];
            s += plan.src[k];
            if idx[k] < outer[k] {
                break;
            }
            d -= plan.dst[k] * outer[k];
            s -= plan.src[k] * outer[k];
            idx[k] = 0;
        }
    }
}

/// Copies every element of `plan` from `src` to `dst` on the host.
///
/// # Safety
///
/// For every element, `dst + d·itemsize` must be valid for writes and
/// `src + s·itemsize` for reads of `itemsize` bytes (`d`, `s` the plan's
/// offsets, relative to the pointers given), and the two sides must not
/// overlap.
pub(crate) unsafe fn host_copy(plan: &Plan, itemsize: usize, dst: *mut u8, src: *const u8) {
    let e = itemsize as isize;
    let n = plan.sizes.len();
    let (di, si) = if n == 0 {
        (1, 1)
    } else {
        (plan.dst[n - 1], plan.src[n - 1])
    };
    for_each_run(plan, |d, s, run| {
        // SAFETY: every offset visited is an element of the plan, valid by
        // the caller's contract; the sides do not overlap.
        unsafe {
            let (dp, sp) = (dst.offset(d as isize * e), src.offset(s as isize * e));
            if di == 1 && si == 1 {
                std::ptr::copy_nonoverlapping(sp, dp, run as usize * itemsize);
            } else {
                for k in 0..run as isize {
                    std::ptr::copy_nonoverlapping(
                        sp.offset(k * si as isize * e),
                        dp.offset(k * di as isize * e),
                        itemsize,
                    );
                }
            }
        }
    });
}

/// Writes `value` (one element's bytes) to every element of `plan`'s
/// destination side on the host.
///
/// # Safety
///
/// For every element, `dst + d·value.len()` must be valid for writes of
/// `value.len()` bytes.
pub(crate) unsafe fn host_fill(plan: &Plan, value: &[u8], dst: *mut u8) {
    let e = value.len() as isize;
    let n = plan.sizes.len();
    let di = if n == 0 { 1 } else { plan.dst[n - 1] };
    for_each_run(plan, |d, _, run| {
        for k in 0..run as isize {
            // SAFETY: an element of the plan (caller's contract); `value`
            // is a separate buffer.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    value.as_ptr(),
                    dst.offset((d as isize + k * di as isize) * e),
                    value.len(),
                )
            };
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use c10_core::StridedOffsets;

    fn pairs(sizes: &[i64], ds: &[i64], ss: &[i64]) -> Vec<(i64, i64)> {
        let mut v: Vec<(i64, i64)> = StridedOffsets::new(sizes, ds, 0)
            .unwrap()
            .zip(StridedOffsets::new(sizes, ss, 0).unwrap())
            .collect();
        v.sort_unstable();
        v
    }

    fn plan_pairs(p: &Plan) -> Vec<(i64, i64)> {
        let l = p.kernel_layout().expect("few dims");
        let mut v: Vec<(i64, i64)> = (0..l.numel).map(|i| l.offsets(i)).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn coalesce_merges_contiguous_and_keeps_pairs() {
        let p = coalesce(&[2, 3, 4], &[12, 4, 1], &[12, 4, 1]);
        assert_eq!(
            p,
            Plan {
                sizes: vec![24],
                dst: vec![1],
                src: vec![1]
            }
        );
        assert!(p.is_memcpy());
        // Transpose: nothing merges; dst-major order.
        let p = coalesce(&[3, 4], &[4, 1], &[1, 3]);
        assert_eq!(p.sizes, vec![3, 4]);
        assert_eq!(p.dst, vec![4, 1]);
        assert!(!p.is_memcpy());
        assert_eq!(plan_pairs(&p), pairs(&[3, 4], &[4, 1], &[1, 3]));
        // Size-1 dims vanish; expanded source keeps stride 0.
        let p = coalesce(&[1, 5, 1, 3], &[15, 3, 3, 1], &[0, 0, 7, 1]);
        assert_eq!(p.sizes, vec![5, 3]);
        assert_eq!(p.src, vec![0, 1]);
        // A 0-dim copy is one element.
        let p = coalesce(&[], &[], &[]);
        assert!(p.is_memcpy());
        assert_eq!(p.kernel_layout().map(|l| (l.ndim, l.numel)), Some((0, 1)));
    }

    #[test]
    fn kernel_offsets_match_strided_offsets() {
        let cases: &[(&[i64], &[i64], &[i64])] = &[
            (&[4, 6], &[6, 1], &[1, 4]),
            (&[2, 3, 4, 5], &[60, 20, 5, 1], &[1, 2, 6, 24]),
            (&[3, 4], &[4, 1], &[0, 1]),
            (&[5, 2, 3], &[1, 15, 5], &[6, 3, 1]),
            (&[7], &[3], &[2]),
        ];
        for &(sizes, ds, ss) in cases {
            let p = coalesce(sizes, ds, ss);
            assert_eq!(
                plan_pairs(&p),
                pairs(sizes, ds, ss),
                "{sizes:?} {ds:?} {ss:?}"
            );
            let b = p.as_bytes(4);
            let mut want: Vec<(i64, i64)> = pairs(sizes, ds, ss)
                .into_iter()
                .flat_map(|(d, s)| (0..4).map(move |k| (d * 4 + k, s * 4 + k)))
                .collect();
            want.sort_unstable();
            assert_eq!(plan_pairs(&b), want);
        }
    }

    #[test]
    fn kernel_layout_is_by_value_c_layout() {
        assert_eq!(
            std::mem::size_of::<KernelLayout>(),
            (3 * MAX_KERNEL_DIMS + 2) * 8
        );
        assert_eq!(std::mem::align_of::<KernelLayout>(), 8);
        let many = Plan {
            sizes: vec![2; 13],
            dst: (0..13).map(|k| 1 << (13 - k)).collect(),
            src: (0..13).map(|k| 1 << (13 - k)).collect(),
        };
        assert!(many.kernel_layout().is_none());
        // 64-bit numel.
        let p = coalesce(&[1 << 20, 1 << 12], &[1 << 12, 1], &[0, 1]);
        let l = p.kernel_layout().expect("2 dims");
        assert_eq!(l.numel, 1i64 << 32);
        assert_eq!(
            l.offsets((1i64 << 32) - 1),
            ((1i64 << 32) - 1, (1 << 12) - 1)
        );
    }

    #[test]
    fn dense_and_span() {
        assert!(is_dense(&[3, 4], &[4, 1]));
        assert!(is_dense(&[3, 4], &[1, 3]));
        assert!(is_dense(&[3, 1, 4], &[4, 99, 1]));
        assert!(!is_dense(&[3, 4], &[8, 2]));
        assert!(!is_dense(&[3, 4], &[0, 1]));
        assert_eq!(span(&[3, 4], &[8, 2]), (0, 22));
        assert_eq!(span(&[3, 0], &[8, 2]), (0, 0));
        assert_eq!(row_major(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(row_major(&[]), Vec::<i64>::new());
    }

    #[test]
    fn memset_patterns() {
        assert_eq!(memset_for(&[0; 8], 3, 0), Some(Memset::D8(0, 24)));
        assert_eq!(
            memset_for(&[1, 2], 5, 2),
            Some(Memset::D16(u16::from_ne_bytes([1, 2]), 5))
        );
        assert_eq!(memset_for(&[1, 2], 5, 1), None);
        let f = 1.5f32.to_ne_bytes();
        assert_eq!(
            memset_for(&f, 4, 0),
            Some(Memset::D32(u32::from_ne_bytes(f), 4))
        );
        let d = 1.5f64.to_ne_bytes();
        assert_eq!(memset_for(&d, 4, 0), None);
        let mut two = [0u8; 8];
        two[..4].copy_from_slice(&f);
        two[4..].copy_from_slice(&f);
        assert_eq!(
            memset_for(&two, 2, 8),
            Some(Memset::D32(u32::from_ne_bytes(f), 4))
        );
    }

    #[test]
    fn host_copy_and_fill_follow_the_plan() {
        // Transpose a 3x4 i32 matrix on the host.
        let src: Vec<i32> = (0..12).collect();
        let mut dst = vec![0i32; 12];
        let p = coalesce(&[4, 3], &[3, 1], &[1, 4]);
        // SAFETY: both buffers hold 12 i32 and every offset is below 12.
        unsafe { host_copy(&p, 4, dst.as_mut_ptr().cast(), src.as_ptr().cast()) };
        assert_eq!(dst, vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
        // Expanded (stride-0) source.
        let row = [7i64, 8, 9];
        let mut out = vec![0i64; 6];
        let p = coalesce(&[2, 3], &[3, 1], &[0, 1]);
        // SAFETY: offsets stay below 6 and 3.
        unsafe { host_copy(&p, 8, out.as_mut_ptr().cast(), row.as_ptr().cast()) };
        assert_eq!(out, vec![7, 8, 9, 7, 8, 9]);
        // Fill every other element.
        let mut buf = vec![0u16; 8];
        let p = coalesce(&[4], &[2], &[2]);
        // SAFETY: offsets 0, 2, 4, 6 of 8.
        unsafe { host_fill(&p, &5u16.to_ne_bytes(), buf.as_mut_ptr().cast()) };
        assert_eq!(buf, vec![5, 0, 5, 0, 5, 0, 5, 0]);
        // 0-dim.
        let mut one = [0u8; 2];
        // SAFETY: one 2-byte element.
        unsafe {
            host_copy(
                &coalesce(&[], &[], &[]),
                2,
                one.as_mut_ptr(),
                [3u8, 4].as_ptr(),
            )
        };
        assert_eq!(one, [3, 4]);
    }
}
