//! The runners' op names, checked against the op table
//! ([`aten_shape::views::VIEW_OPS`], generated from the one list that
//! declares every view op's name and signature).
//!
//! The corpora name ops as PyTorch does (`mT`, `T`, `squeeze(dim)`,
//! `x[i]`), so a few corpus names differ from the table's Rust names;
//! [`CORPUS_NAMES`] lists those, and [`NOT_IN_RUNNERS`] the table ops no
//! runner replays, each with its reason. The tests below fail when the
//! table gains an op that no runner dispatches and no entry explains, or
//! when a runner dispatches a name that is neither a table op nor one of
//! its declared non-view ops.
//!
//! ```
//! use shape_conformance::op_table::{corpus_name, CORPUS_NAMES};
//! assert_eq!(corpus_name("mt"), "mT");
//! assert_eq!(corpus_name("view"), "view");
//! assert!(CORPUS_NAMES.iter().all(|(rust, _)| aten_shape::views::VIEW_OPS.iter().any(|op| op.name == *rust)));
//! ```

/// Table ops whose corpus op name differs: (table name, corpus name).
///
/// ```
/// assert!(shape_conformance::op_table::CORPUS_NAMES.contains(&("numpy_t", "T")));
/// ```
pub const CORPUS_NAMES: &[(&str, &str)] = &[
    ("mt", "mT"),
    ("numpy_t", "T"),
    ("squeeze_dim", "squeeze"),
    ("squeeze_dims", "squeeze"),
    ("squeeze_dims_", "squeeze_"),
    ("index_ints", "getitem"),
    ("set_to", "set_"),
    ("conj_view", "_conj"),
    ("neg_view", "_neg_view"),
    ("mh", "mH"),
    ("h", "H"),
    ("hsplit_indices", "hsplit"),
    ("vsplit_indices", "vsplit"),
    ("dsplit_indices", "dsplit"),
];

/// Table ops that no runner replays, with the reason.
///
/// ```
/// use shape_conformance::op_table::NOT_IN_RUNNERS;
/// assert!(NOT_IN_RUNNERS.iter().all(|(_, why)| !why.is_empty()));
/// ```
pub const NOT_IN_RUNNERS: &[(&str, &str)] = &[
    ("index", "the deprecated old name of index_ints"),
    (
        "view_as",
        "two-tensor op (view(other.sizes())); the corpora hold one-tensor chains",
    ),
    ("reshape_as", "two-tensor op (reshape(other.sizes()))"),
    ("expand_as", "two-tensor op (expand(other.sizes()))"),
    (
        "tensor_split_indices",
        "the corpus generator emits tensor_split with sections only",
    ),
    (
        "swapaxes_",
        "in-place alias of transpose_, which the fidelity corpus replays",
    ),
    (
        "swapdims_",
        "in-place alias of transpose_, which the fidelity corpus replays",
    ),
];

/// The corpus name of table op `name`.
///
/// ```
/// assert_eq!(shape_conformance::op_table::corpus_name("squeeze_dim"), "squeeze");
/// ```
pub fn corpus_name(name: &str) -> &str {
    CORPUS_NAMES
        .iter()
        .find(|(rust, _)| *rust == name)
        .map_or(name, |(_, corpus)| corpus)
}

/// Non-view ops the runners also dispatch (copies, autograd, factories,
/// element writes): not in the view-op table by design.
///
/// ```
/// assert!(shape_conformance::op_table::NON_VIEW_OPS.contains(&"clone"));
/// ```
pub const NON_VIEW_OPS: &[&str] = &[
    "contiguous",
    "clone",
    "detach",
    "to",
    "is_contiguous",
    "is_channels_last_contiguous",
    "as_strided",
    "fill_",
    "zero_",
    "setitem",
    "copy_",
    "requires_grad_",
    "new_empty",
    "new_zeros",
    "new_empty_strided",
];

/// The factories the fidelity runner builds tensors with (non-view ops
/// too, listed apart because that runner dispatches them apart).
///
/// ```
/// assert!(shape_conformance::op_table::FACTORY_OPS.contains(&"arange"));
/// ```
pub const FACTORY_OPS: &[&str] = &[
    "tensor",
    "zeros",
    "empty",
    "ones",
    "full",
    "scalar_tensor",
    "arange",
    "linspace",
    "eye",
];

/// Whether `name` is a declared non-view op ([`NON_VIEW_OPS`] or
/// [`FACTORY_OPS`]).
///
/// ```
/// use shape_conformance::op_table::is_non_view_op;
/// assert!(is_non_view_op("clone") && is_non_view_op("eye") && !is_non_view_op("view"));
/// ```
pub fn is_non_view_op(name: &str) -> bool {
    NON_VIEW_OPS.contains(&name) || FACTORY_OPS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aten_shape::views::VIEW_OPS;
    use c10_core::{ScalarType, Tensor};
    use serde_json::{Map, Value};

    fn is_table_or_non_view(corpus: &str) -> bool {
        is_non_view_op(corpus)
            || VIEW_OPS
                .iter()
                .any(|op| op.name == corpus || corpus_name(op.name) == corpus)
    }

    /// Every table op runs in some runner (or is listed as not replayed).
    #[test]
    fn every_table_op_is_dispatched_by_a_runner() {
        let t = Tensor::zeros(&[2, 3], ScalarType::Float).unwrap();
        let no_args = Map::new();
        for op in VIEW_OPS {
            if NOT_IN_RUNNERS.iter().any(|(n, _)| *n == op.name) {
                continue;
            }
            let name = corpus_name(op.name);
            let in_views = match crate::apply_op(&t, name, &no_args) {
                Err(e) => !e.starts_with("unknown op"),
                Ok(_) => true,
            };
            let in_fidelity = crate::fidelity::dispatches(name);
            assert!(
                in_views || in_fidelity,
                "table op {} (corpus name {name}) is dispatched by no runner; \
                 add it to a runner or to NOT_IN_RUNNERS with a reason",
                op.name
            );
        }
    }

    /// The symbolic runner's ops are table ops (or declared non-view ops),
    /// and each of them dispatches.
    #[test]
    fn the_symbolic_runners_ops_are_table_ops() {
        for name in crate::symbolic::RUNNER_OPS {
            assert!(
                is_table_or_non_view(name),
                "symbolic runner op {name} is not in the table"
            );
            assert!(
                crate::symbolic::dispatches(name),
                "symbolic runner does not run {name}"
            );
        }
        assert!(!crate::symbolic::dispatches("no_such_op"));
    }

    /// Every name the fidelity runner's in-place list holds is a table
    /// op or a declared non-view op.
    #[test]
    fn the_fidelity_runners_in_place_ops_are_table_ops() {
        for name in crate::fidelity::INPLACE_OPS {
            let table = VIEW_OPS
                .iter()
                .any(|op| op.in_place && corpus_name(op.name) == *name);
            assert!(
                table || is_non_view_op(name) || *name == "set_storage" || *name == "set_",
                "fidelity in-place op {name} is not in the table"
            );
        }
        let _ = Value::Null;
    }

    /// Every entry of the exception lists names a real table op.
    #[test]
    fn the_exception_lists_name_table_ops() {
        for (name, _) in CORPUS_NAMES.iter().chain(NOT_IN_RUNNERS) {
            assert!(
                VIEW_OPS.iter().any(|op| op.name == *name),
                "{name} is not a table op"
            );
        }
    }
}
