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
