//! `shape-conformance [FILE ...]`: runs PyTorch-generated shape-op cases
//! (default: this crate's `data/shape-ops.jsonl`) and prints one
//! `FAIL <id> step <k> (<op>): expected ..., got ...` line per failing case
//! (steps count from 0), a line with the error-message statistics, and
//! finally exactly one summary line `N passed, M failed`. Exits with status
//! 1 if any case failed.

use std::path::PathBuf;
use std::process::ExitCode;

use shape_conformance::{default_corpus_path, run_file, Report};

fn main() -> ExitCode {
    let files: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let files = if files.is_empty() {
        vec![default_corpus_path()]
    } else {
        files
    };
    let mut report = Report::default();
    for f in &files {
        report.merge(run_file(f));
    }
    for line in &report.failures {
        println!("{line}");
    }
    if std::env::var_os("SHAPE_CONFORMANCE_SHOW_MESSAGES").is_some() {
        for (id, expected, got) in &report.message_mismatches {
            println!("message {id}: expected {expected:?}, got {got:?}");
        }
    }
    println!("{}", report.message_line());
    println!("{}", report.summary_line());
    if report.failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
