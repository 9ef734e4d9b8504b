//! Describing a checkpoint's tensors without touching their data.
