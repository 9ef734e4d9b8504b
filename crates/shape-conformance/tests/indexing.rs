//! Runs the indexing corpus (`data/indexing.jsonl`, generated with real
//! PyTorch 2.15 by `tools/gen_indexing.py`): every case must match.

#[test]
fn indexing_corpus_matches_pytorch() {
    let report =
        shape_conformance::indexing::run_file(&shape_conformance::indexing::default_path());
    for line in report.failures.iter().take(60) {
        eprintln!("{line}");
    }
    eprintln!(
        "indexing corpus: {} passed, {} failed",
        report.passed, report.failed
    );
    assert!(report.passed >= 4000, "only {} cases passed", report.passed);
    assert_eq!(
        report.failed, 0,
        "{} cases differ from PyTorch",
        report.failed
    );
}
