//! The Python package's tensor methods, checked against the op table
//! (`aten_shape::views::VIEW_OPS`): every view op of the table has its
//! PyTorch-named method on `torchcore.Tensor` (read from the binding's
//! source, `crates/torchcore-py/src/tensor.rs`, so this runs without
//! building the extension), or is listed below as not bound yet.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use aten_shape::views::VIEW_OPS;

/// Table ops whose Python name differs (PyTorch's spelling or overload).
const PYTHON_NAMES: &[(&str, &str)] = &[
    ("mt", "mT"),
    ("numpy_t", "T"),
    ("squeeze_dim", "squeeze"),
    ("squeeze_dims", "squeeze"),
    ("squeeze_dims_", "squeeze_"),
    ("index_ints", "__getitem__"),
    ("slice", "__getitem__"),
    ("view_dtype", "view"),
    ("tensor_split_indices", "tensor_split"),
    ("set_to", "set_"),
    ("set_storage", "set_"),
];

/// Table ops without a Python method yet, with the reason.
const NOT_BOUND: &[(&str, &str)] = &[
    (
        "index",
        "deprecated Rust name of index_ints (Python: __getitem__)",
    ),
    (
        "swapaxes_",
        "in-place alias added to the table after the binding; not bound yet",
    ),
    (
        "swapdims_",
        "in-place alias added to the table after the binding; not bound yet",
    ),
];

#[test]
fn every_table_op_has_its_python_method() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../torchcore-py/src/tensor.rs");
    let src = std::fs::read_to_string(path).expect("the binding's source");
    let bound = |py: &str| {
        src.contains(&format!("    fn {py}("))
            || src.contains(&format!("    fn {py}<"))
            || src.contains(&format!("#[getter({py})]"))
            || src.contains(&format!("name = \"{py}\""))
    };
    let mut missing = Vec::new();
    for op in VIEW_OPS {
        if NOT_BOUND.iter().any(|(n, _)| *n == op.name) {
            continue;
        }
        let py = PYTHON_NAMES
            .iter()
            .find(|(rust, _)| *rust == op.name)
            .map_or(op.name, |(_, py)| py);
        if !bound(py) {
            missing.push(format!("{} (Python {py})", op.name));
        }
    }
    assert!(
        missing.is_empty(),
        "table ops without a Python method (bind them or list them in NOT_BOUND): {missing:?}"
    );
}

#[test]
fn the_lists_name_table_ops() {
    for (name, _) in PYTHON_NAMES.iter().chain(NOT_BOUND) {
        assert!(
            VIEW_OPS.iter().any(|op| op.name == *name),
            "{name} is not a table op"
        );
    }
}
