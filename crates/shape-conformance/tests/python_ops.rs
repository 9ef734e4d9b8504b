//! The Python package's tensor methods, checked against the op table
//! (`aten_shape::views::VIEW_OPS`): every view op of the table has its
//! PyTorch-named method on `torchcore.Tensor` or function of `torchcore`
//! (read from the binding's sources, `crates/torchcore-py/src/*.rs`, so
//! this runs without building the extension), or is listed below as not
//! bound yet.

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
    ("hsplit_indices", "hsplit"),
    ("vsplit_indices", "vsplit"),
    ("dsplit_indices", "dsplit"),
    ("conj_view", "_conj"),
    ("neg_view", "_neg_view"),
    ("mh", "mH"),
    ("h", "H"),
];

/// Table ops without a Python method yet, with the reason.
const NOT_BOUND: &[(&str, &str)] = &[(
    "index",
    "deprecated Rust name of index_ints (Python: __getitem__)",
)];

#[test]
fn every_table_op_has_its_python_method() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../torchcore-py/src");
    let mut src = String::new();
    for entry in std::fs::read_dir(dir).expect("the binding's sources") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            src.push_str(&std::fs::read_to_string(&path).expect("a binding source"));
        }
    }
    let bound = |py: &str| {
        src.contains(&format!("fn {py}("))
            || src.contains(&format!("fn {py}<"))
            || src.contains(&format!("#[getter({py})]"))
            || src.contains(&format!("name = \"{py}\""))
            // An entry of `complex_views.rs`'s `unary_views!` list, which
            // generates the method and the module function.
            || src.contains(&format!("        {py}: derive"))
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
