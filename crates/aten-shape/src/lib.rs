//! # aten-shape
//!
//! ATen's shape layer (placeholder root; the view ops and the copy engine
//! are being written in `views.rs` and `copy.rs`).

pub mod copy;
pub mod infer;
pub mod views;

/// Everything needed to call the shape ops as methods on `Tensor`.
pub mod prelude {
    pub use crate::copy::CopyOps;
    pub use crate::views::ViewOps;
    pub use c10_core::{MemoryFormat, Tensor};
}
