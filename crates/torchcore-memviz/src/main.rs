//! `torchcore-memviz SNAPSHOT.pickle [-o OUT.html] [--title TITLE]`: writes
//! the HTML picture of a `_dump_snapshot` pickle (ours or PyTorch's).

use std::process::ExitCode;

use torchcore_memviz::{load_snapshot, render_html, HtmlOptions};

const USAGE: &str = "usage: torchcore-memviz SNAPSHOT.pickle [-o OUT.html] [--title TITLE]";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut input = None;
    let mut output = None;
    let mut title = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "-o" | "--output" => output = args.next(),
            "--title" => title = args.next(),
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            _ if input.is_none() => input = Some(a),
            _ => {
                eprintln!("unexpected argument {a:?}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(input) = input else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let output = output.unwrap_or_else(|| "memory.html".to_string());
    let snap = match load_snapshot(&input) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let opts = HtmlOptions {
        title: title.unwrap_or_else(|| format!("Memory snapshot: {input}")),
        ..HtmlOptions::default()
    };
    if let Err(e) = std::fs::write(&output, render_html(&snap, &opts)) {
        eprintln!("error: {output}: {e}");
        return ExitCode::FAILURE;
    }
    println!("wrote {output}");
    ExitCode::SUCCESS
}
