//! Runs the `cat`/`stack` corpus (`data/join.jsonl`, generated with real
//! PyTorch 2.15 by `tools/gen_join.py`): every case must match.

#[test]
fn join_corpus_matches_pytorch() {
    let report = shape_conformance::join::run_file(&shape_conformance::join::default_path());
    for line in &report.failures {
        eprintln!("{line}");
    }
    eprintln!("{} passed, {} failed", report.passed, report.failed);
    assert!(report.passed > 1500, "only {} cases passed", report.passed);
    assert_eq!(
        report.failed, 0,
        "{} cases differ from PyTorch",
        report.failed
    );
}
