//! Shared definitions for the benchmark target `benches/shape.rs` and for the
//! report that `cargo xtask bench` writes (`docs/benchmarks.md`).
//!
//! The suite compares torchcore with candle, ndarray and (through the C++
//! harness in `benches/torch/bench.cpp`) libtorch on the same cases. Case
//! names are shared by every side: a criterion group is named after its
//! case (`view`, `contig_t4096`, ...), each peer is a function in that group
//! (`ours`, `candle`, `ndarray_arc`, `ndarray_view`, `memcpy`), and the C++
//! harness prints the same case names. Keeping the shapes here, in one
//! place, is what makes the ratios meaningful.

/// `M` of the peer table: a 1024 x 1024 matrix.
pub const M: [usize; 2] = [1024, 1024];
/// `K3`: a KV cache, `[8, 528, 64]`, narrowed to 512 positions.
pub const K3: [usize; 3] = [8, 528, 64];
/// `P4`: the 4-d tensor permuted `(0, 2, 1, 3)`.
pub const P4: [usize; 4] = [8, 16, 32, 64];
/// Side of the large transposed matrix (`4096 x 4096` f32, 64 MiB).
pub const BIG: usize = 4096;
/// Elements of the 64 MiB contiguous tensor cloned by `clone_64mib`.
pub const CLONE_ELEMS: usize = 16 << 20;
/// Sides of the square f32 matrices of the copy-scaling table: 4 KiB
/// (32 x 32) to 256 MiB (8192 x 8192), a factor 4 apart.
pub const SCALE_SIDES: [usize; 9] = [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192];
/// Ranks of the view-op scaling table (5 and below are stored inline, 6 and
/// above on the heap).
pub const SCALE_RANKS: [usize; 8] = [1, 2, 3, 4, 5, 6, 7, 8];

/// Converts `usize` dims to torchcore's `i64` sizes.
pub fn dims(d: &[usize]) -> Vec<i64> {
    d.iter().map(|&x| x as i64).collect()
}

/// Bytes of an f32 tensor with these dims.
pub fn f32_bytes(d: &[usize]) -> u64 {
    d.iter().product::<usize>() as u64 * 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(f32_bytes(&[BIG, BIG]), 64 << 20);
        assert_eq!(CLONE_ELEMS as u64 * 4, 64 << 20);
        assert_eq!(f32_bytes(&[32, 32]), 4 << 10);
        assert_eq!(f32_bytes(&[8192, 8192]), 256 << 20);
        assert_eq!(dims(&K3), vec![8, 528, 64]);
    }
}
