//! Runs the fidelity corpus (`data/fidelity.jsonl`, generated with real
//! PyTorch 2.15 by `tools/gen_fidelity.py`): every case must match PyTorch
//! or differ only by a deliberate difference listed in
//! `docs/pytorch-map.md`.

#[test]
fn fidelity_corpus_matches_pytorch() {
    let report =
        shape_conformance::fidelity::run_file(&shape_conformance::fidelity::default_path());
    for line in &report.failures {
        eprintln!("{line}");
    }
    eprintln!("{}", report.summary_line());
    assert!(report.passed > 7000, "only {} cases passed", report.passed);
    assert_eq!(
        report.failed, 0,
        "{} cases differ from PyTorch (see above)",
        report.failed
    );
}
