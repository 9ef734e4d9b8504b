//! Runs the symbolic-shapes corpus (`data/symbolic.jsonl`, generated with
//! real PyTorch 2.15 by `tools/gen_symbolic.py`) semantically: results
//! equal PyTorch's wherever both guard sets accept, equal the concrete
//! ops wherever the Rust guards accept, and the guard sets accept the
//! same assignments except for the known differences listed in
//! `shape_conformance::symbolic::KNOWN_GUARD_DIFFERENCES`.

#[test]
fn symbolic_corpus_matches_pytorch() {
    // SYMBOLIC_CORPUS=path runs another file (e.g. one generated with
    // `tools/gen_symbolic.py --no-specialize-zero-one`).
    let path = std::env::var_os("SYMBOLIC_CORPUS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(shape_conformance::symbolic::default_path);
    let report = shape_conformance::symbolic::run_file(&path);
    for line in &report.failures {
        eprintln!("{line}");
    }
    eprintln!("{}", report.summary_line());
    assert!(report.passed > 500, "only {} cases passed", report.passed);
    assert!(
        report.failures.is_empty(),
        "{} cases failed (see above)",
        report.failures.len()
    );
}

/// The targeted cases (`data/symbolic-targeted.jsonl`, from
/// `tools/gen_symbolic.py --targeted`): replacements from solved
/// equality guards, unbacked sizes, channels-last contiguity, and
/// `specialize_zero_one=False`.
#[test]
fn symbolic_targeted_cases_match_pytorch() {
    let path =
        shape_conformance::symbolic::default_path().with_file_name("symbolic-targeted.jsonl");
    let report = shape_conformance::symbolic::run_file(&path);
    for line in &report.failures {
        eprintln!("{line}");
    }
    eprintln!("{}", report.summary_line());
    assert!(report.passed > 20, "only {} cases passed", report.passed);
    assert!(
        report.failures.is_empty(),
        "{} cases failed (see above)",
        report.failures.len()
    );
}

/// A sample of 400 steps (`data/symbolic-independent.jsonl`) from an
/// independent random generator (another op mix and seed than
/// `tools/gen_symbolic.py`: symbolic narrow starts, select indices and
/// slice bounds, `split_with_sizes`, in-place `resize_`/`as_strided_`,
/// `view(dtype)`, `new_*`, unbacked inputs, `specialize_zero_one=False`),
/// one case per chain prefix, PyTorch 2.15's fake-path results and
/// guards. The generator's failing steps (documented classes, see
/// `docs/symbolic-shapes.md`) are not in the sample.
#[test]
fn symbolic_independent_sample_matches_pytorch() {
    let path =
        shape_conformance::symbolic::default_path().with_file_name("symbolic-independent.jsonl");
    let report = shape_conformance::symbolic::run_file(&path);
    for line in &report.failures {
        eprintln!("{line}");
    }
    eprintln!("{}", report.summary_line());
    assert!(report.passed > 300, "only {} cases passed", report.passed);
    assert!(
        report.failures.is_empty(),
        "{} cases failed (see above)",
        report.failures.len()
    );
}

/// A sample of about 400 steps (`data/symbolic-walk.jsonl`, whole
/// chains) from a third random generator, `tools/gen_symbolic_walk.py
/// --seed 555` (random walks of two to five steps, `SymInt` arguments
/// drawn from the current sizes wherever PyTorch takes one, including
/// symbolic slice steps; 8% unbacked inputs, 12% without 0/1
/// specialisation), PyTorch 2.15's fake-path results and guards. The
/// generator's failing steps (documented classes, see
/// `docs/symbolic-shapes.md`) are not in the sample.
#[test]
fn symbolic_walk_sample_matches_pytorch() {
    let path = shape_conformance::symbolic::default_path().with_file_name("symbolic-walk.jsonl");
    let report = shape_conformance::symbolic::run_file(&path);
    for line in &report.failures {
        eprintln!("{line}");
    }
    eprintln!("{}", report.summary_line());
    assert!(report.passed > 350, "only {} cases passed", report.passed);
    assert!(
        report.failures.is_empty(),
        "{} cases failed (see above)",
        report.failures.len()
    );
}

/// The example: `x[..., 2:]` of a 4-d input whose last size has
/// the hint 2, then `view(0, -1, 3)`. The recorded
/// `Eq(s0*s1*s2*(s3 - 2), 0)` is solved into `s3 = 2`, so the element
/// count is 0 and the error is PyTorch's, word for word (not a division
/// by a zero hint).
#[test]
fn solved_zero_size_gives_pytorchs_ambiguous_reshape_error() {
    use aten_shape::generic::Geometry;
    use c10_core::sym::{ShapeEnv, SymInt};
    let env = ShapeEnv::new();
    let x = Geometry::symbolic(&env, &[4, 6, 8, 2], "x").unwrap();
    let y = x.slice(3, Some(&SymInt::from(2)), None, 1).unwrap();
    let err = y
        .view(&[SymInt::from(0), SymInt::from(-1), SymInt::from(3)])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot reshape tensor of 0 elements into shape [0, -1, 3] because the unspecified dimension size -1 can be any value and is ambiguous"
    );
    let guards: Vec<String> = env.guards().iter().map(|g| g.to_string()).collect();
    assert_eq!(guards, ["Eq(s0*s1*s2*s3 - 2*s0*s1*s2, 0)"]);
    assert_eq!(env.replacements()[0].1.as_const(), Some(2));
    assert_eq!(env.produce_guards_python()[0], "x.size(3) == 2");
}
