//! Runs the whole PyTorch-generated corpus; every case must pass.

#[test]
fn whole_corpus_passes() {
    let report = shape_conformance::run_file(&shape_conformance::default_corpus_path());
    for line in &report.failures {
        eprintln!("{line}");
    }
    eprintln!("{}", report.message_line());
    eprintln!("{}", report.summary_line());
    assert!(report.passed > 0, "no cases ran");
    assert_eq!(
        report.failed, 0,
        "{} cases failed (see above)",
        report.failed
    );
}

/// Extra cases generated with real PyTorch 2.15 by `tools/gen_conformance.py 2
/// 2000` (ops the public corpus lacks, and extreme arguments).
#[test]
fn extra_corpus_passes() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/extra-ops.jsonl");
    let report = shape_conformance::run_file(&path);
    for line in &report.failures {
        eprintln!("{line}");
    }
    eprintln!("{}", report.summary_line());
    assert_eq!(report.passed, 2000);
    assert_eq!(
        report.failed, 0,
        "{} cases failed (see above)",
        report.failed
    );
}

/// JSONL needs one case per line.
fn one_line(s: &str) -> String {
    s.replace('\n', " ")
}

#[test]
fn unknown_ops_and_arguments_are_failures() {
    let case = |op: &str, args: &str| {
        one_line(&format!(
            r#"{{"id": "x", "base": {{"sizes": [2, 3], "strides": [3, 1], "offset": 0, "storage_numel": 6, "dtype": "float32"}},
               "steps": [{{"op": "{op}", "args": {args}, "expect": {{"sizes": [3, 2], "strides": [1, 3], "offset": 0}}}}]}}"#
        ))
    };
    let r = shape_conformance::run_corpus_text(&case("frobnicate", "{}"));
    assert_eq!((r.passed, r.failed), (0, 1));
    let r = shape_conformance::run_corpus_text(&case(
        "transpose",
        r#"{"dim0": 0, "dim1": 1, "bogus": 1}"#,
    ));
    assert_eq!((r.passed, r.failed), (0, 1));
    let r = shape_conformance::run_corpus_text(&case("transpose", r#"{"dim0": 0, "dim1": 1}"#));
    assert_eq!((r.passed, r.failed), (1, 0));
    let r = shape_conformance::run_corpus_text("{not json");
    assert_eq!((r.passed, r.failed), (0, 1));
}

#[test]
fn wrong_expectations_fail_with_a_fail_line() {
    let line = r#"{"id": "w", "base": {"sizes": [2, 3], "strides": [3, 1], "offset": 0, "storage_numel": 6, "dtype": "int64"},
      "steps": [{"op": "t", "args": {}, "expect": {"sizes": [3, 2], "strides": [3, 1], "offset": 0}}]}"#;
    let r = shape_conformance::run_corpus_text(&one_line(line));
    assert_eq!(r.failed, 1);
    assert_eq!(
        r.failures[0],
        "FAIL w step 0 (t): expected strides=[3, 1], got strides=[1, 3]"
    );
    // A step PyTorch failed must fail here too.
    let line = r#"{"id": "e", "base": {"sizes": [2, 3], "strides": [3, 1], "offset": 0, "storage_numel": 6, "dtype": "int64"},
      "steps": [{"op": "t", "args": {}, "expect": {"error": "RuntimeError", "message": "nope"}}]}"#;
    let r = shape_conformance::run_corpus_text(&one_line(line));
    assert_eq!(r.failed, 1);
}
