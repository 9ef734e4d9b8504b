//! The `torchcore` command-line tool: look into PyTorch checkpoints and
//! convert them to and from safetensors, without Python or torch.
//!
//! ```text
//! torchcore inspect model.pt
//! torchcore convert model.pt model.safetensors
//! torchcore convert model.safetensors model.pt
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use c10_core::{Storage, Tensor};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use torchcore_pt::{LoadOptions, MapLocation, OrderedDict, Value};

/// Files at least this large get progress bars.
const LARGE: u64 = 64 << 20;

#[derive(Parser)]
#[command(
    name = "torchcore",
    version,
    about = "PyTorch checkpoint files without Python: inspect, convert"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Lists every tensor of a checkpoint (name, dtype, shape, strides,
    /// offset, storage and the tensors sharing it, bytes), the total, and
    /// any global the safe loader refuses. Reads no tensor data.
    Inspect {
        /// A `torch.save` file (`.pt`, `.pth`, `.bin`).
        file: PathBuf,
    },
    /// Converts a checkpoint to safetensors, or safetensors to a checkpoint
    /// (the direction follows OUT's extension: `.safetensors` or not).
    Convert {
        /// The input file.
        input: PathBuf,
        /// The output file.
        output: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect { file } => inspect(&file),
        Command::Convert { input, output } => {
            if is_safetensors(&output) {
                to_safetensors(&input, &output)
            } else if is_safetensors(&input) {
                from_safetensors(&input, &output)
            } else {
                Err("convert: one of the two files must end in .safetensors".to_string())
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("torchcore: {e}");
            ExitCode::FAILURE
        }
    }
}

fn is_safetensors(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "safetensors")
}

fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

fn spinner(msg: String, large: bool) -> ProgressBar {
    if !large {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner().with_message(msg);
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

fn inspect(file: &Path) -> Result<(), String> {
    let report =
        torchcore_pt::inspect::inspect(file).map_err(|e| format!("{}: {e}", file.display()))?;
    print!("{report}");
    if report.error.is_some() {
        return Err(format!("{} does not load (see above)", file.display()));
    }
    Ok(())
}

/// Every non-tensor leaf, with its path, for the report of what
/// safetensors cannot hold.
fn non_tensor_leaves(v: &Value, path: String, out: &mut Vec<String>) {
    let child = |k: String| {
        if path.is_empty() {
            k
        } else {
            format!("{path}.{k}")
        }
    };
    match v {
        Value::Tensor(_) | Value::Parameter(_) => {}
        Value::List(xs) | Value::Tuple(xs) | Value::Set(xs) => {
            for (i, x) in xs.iter().enumerate() {
                non_tensor_leaves(x, child(i.to_string()), out);
            }
        }
        Value::Dict(_) | Value::OrderedDict(_) => {
            for (k, x) in v.dict_items().unwrap_or_default() {
                let k = match k {
                    Value::Str(s) => s.clone(),
                    other => format!("{other:?}"),
                };
                non_tensor_leaves(x, child(k), out);
            }
        }
        other => out.push(format!("{path} ({})", other.type_name())),
    }
}

fn to_safetensors(input: &Path, output: &Path) -> Result<(), String> {
    let large = file_len(input) >= LARGE;
    let pb = spinner(format!("reading {}", input.display()), large);
    let opts = LoadOptions::default().map_location(MapLocation::Cpu);
    let v =
        torchcore_pt::load_with(input, &opts).map_err(|e| format!("{}: {e}", input.display()))?;
    pb.finish_and_clear();
    let tensors = v.tensors();
    if tensors.is_empty() {
        return Err(format!("{} holds no tensors", input.display()));
    }
    let mut names = std::collections::HashSet::new();
    for (name, _) in &tensors {
        if !names.insert(name.as_str()) {
            return Err(format!("two tensors are both named {name:?}"));
        }
    }
    // Storages shared by several tensors: safetensors has no views, so each
    // tensor is written as its own contiguous copy of its elements.
    let mut groups: Vec<(Storage, Vec<&str>)> = Vec::new();
    for (name, t) in &tensors {
        match groups.iter_mut().find(|(s, _)| s.is_alias_of(t.storage())) {
            Some((_, g)) => g.push(name),
            None => groups.push((t.storage().clone(), vec![name])),
        }
    }
    for (_, g) in groups.iter().filter(|(_, g)| g.len() > 1) {
        println!(
            "shared storage: {} view one storage; safetensors has no shared storage, so each is written as its own copy",
            g.join(", ")
        );
    }
    let mut dropped = Vec::new();
    non_tensor_leaves(&v, String::new(), &mut dropped);
    if !dropped.is_empty() {
        println!(
            "not tensors, left out (safetensors holds tensors only): {}",
            dropped.join(", ")
        );
    }
    let total: usize = tensors.iter().map(|(_, t)| t.nbytes()).sum();
    let pb = spinner(
        format!("writing {total} bytes to {}", output.display()),
        large,
    );
    torchcore_interop::safetensors::save(
        tensors.iter().map(|(n, t)| (n.as_str(), *t)),
        None,
        output,
    )
    .map_err(|e| format!("{}: {e}", output.display()))?;
    pb.finish_and_clear();
    println!(
        "wrote {} tensors ({total} bytes) to {}",
        tensors.len(),
        output.display()
    );
    Ok(())
}

/// A copy of contiguous `t` in its own storage.
fn own_copy(t: &Tensor) -> Result<Tensor, String> {
    let n = t.nbytes();
    let start = usize::try_from(t.storage_offset()).map_err(|e| e.to_string())? * t.element_size();
    let storage = alloc_cpu::empty_storage(n).map_err(|e| e.to_string())?;
    {
        let src = t.storage().read().map_err(|e| e.to_string())?;
        let src = src.bytes().map_err(|e| e.to_string())?;
        let mut dst = storage.write().map_err(|e| e.to_string())?;
        let bytes = src
            .get(start..start + n)
            .ok_or("tensor outside its storage")?;
        dst.bytes_mut()
            .map_err(|e| e.to_string())?
            .copy_from_slice(bytes);
    }
    let strides = c10_core::geometry::contiguous_strides(t.sizes()).map_err(|e| e.to_string())?;
    Tensor::from_storage(storage, t.dtype(), t.sizes(), &strides, 0).map_err(|e| e.to_string())
}

fn from_safetensors(input: &Path, output: &Path) -> Result<(), String> {
    let file = torchcore_interop::safetensors::load(input)
        .map_err(|e| format!("{}: {e}", input.display()))?;
    let mut d = OrderedDict::default();
    for (name, t) in file.tensors() {
        d.insert(name.clone(), Value::Tensor(own_copy(t)?));
    }
    let total: u64 = file.tensors().values().map(|t| t.nbytes() as u64).sum();
    let pb = if total >= LARGE {
        let pb = ProgressBar::new(total);
        if let Ok(style) =
            ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec}")
        {
            pb.set_style(style);
        }
        pb
    } else {
        ProgressBar::hidden()
    };
    let mut progress = |done: u64, _total: u64| pb.set_position(done);
    torchcore_pt::save_with_progress(&Value::OrderedDict(d), output, Some(&mut progress))
        .map_err(|e| format!("{}: {e}", output.display()))?;
    pb.finish_and_clear();
    println!(
        "wrote {} tensors ({total} bytes) to {}",
        file.len(),
        output.display()
    );
    Ok(())
}
