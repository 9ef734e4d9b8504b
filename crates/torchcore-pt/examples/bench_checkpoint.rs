//! Times checkpoint I/O on a large state dict (default 256 MiB: 64 float32
//! tensors of 4 MiB), all with a warm page cache:
//! `save` vs writing the same bytes to a plain file, `load` vs reading the
//! file, and `load_mmap`. Prints one line per measurement (best of N).
//!
//! ```sh
//! cargo run --release -p torchcore-pt --example bench_checkpoint -- [MiB] [OUT.pt] [TENSORS]
//! ```
//! It also prints, for one load and one `load_mmap`, the bytes copied out
//! of the file by `read(2)` and the page faults taken (from `/proc/self`;
//! zeros where that does not exist).
//! `tools/bench_checkpoint.py OUT.pt` times torch on the file it leaves.

use std::io::Write;
use std::time::Instant;

use c10_core::{ScalarType, Tensor};
use torchcore_pt::{
    load, load_mmap, load_with, save, save_with, LoadOptions, SaveOptions, StateDict,
};

fn best<T>(n: usize, mut f: impl FnMut() -> T) -> f64 {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            let r = f();
            let s = t.elapsed().as_secs_f64();
            drop(r);
            s
        })
        .fold(f64::INFINITY, f64::min)
}

/// This process's minor page faults so far (Linux; 0 elsewhere): field 10
/// of `/proc/self/stat`.
fn minor_faults() -> u64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let after = s.rsplit_once(')')?.1.to_string();
            after.split_whitespace().nth(7)?.parse().ok()
        })
        .unwrap_or(0)
}

/// Bytes this process has copied out of files through `read(2)` so far
/// (Linux; 0 elsewhere): `rchar` of `/proc/self/io`.
fn bytes_read() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("rchar: "))?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// Runs `f` once and returns (page faults, bytes read) it caused.
fn costs<T>(f: impl FnOnce() -> T) -> (u64, u64) {
    let (f0, r0) = (minor_faults(), bytes_read());
    drop(f());
    (minor_faults() - f0, bytes_read() - r0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = |i: usize| std::env::args().nth(i);
    let mib: usize = arg(1).map(|s| s.parse()).transpose()?.unwrap_or(256);
    let dir = tempfile::tempdir()?;
    let path = arg(2)
        .filter(|s| s != "-")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| dir.path().join("bench.pt"));
    let n_tensors: usize = arg(3).map(|s| s.parse()).transpose()?.unwrap_or(64);
    let per = (mib * (1 << 20) / 4 / n_tensors).max(1);
    let mut sd = StateDict::default();
    for i in 0..n_tensors {
        sd.insert(
            format!("layer{i}.weight"),
            Tensor::full(&[per as i64], i as f64, ScalarType::Float)?,
        );
    }
    if let Ok(n) = std::env::var("BENCH_LOADS_ONLY") {
        // Profiling aid: save once, then only load, n times.
        save(&sd.to_value(), &path)?;
        drop(sd);
        for _ in 0..n.parse::<usize>()? {
            let (t, f0) = (Instant::now(), minor_faults());
            let v = if std::env::var_os("BENCH_ZIP_READER").is_some() {
                // The generic path (any `Read + Seek`): through the ZIP
                // reader into zero-filled storages.
                let f = std::io::BufReader::new(std::fs::File::open(&path)?);
                torchcore_pt::load_from_reader(f)?
            } else {
                load(&path)?
            };
            let ms = t.elapsed().as_secs_f64() * 1e3;
            println!("load {ms:.1} ms, {} page faults", minor_faults() - f0);
            drop(v);
        }
        return Ok(());
    }
    let value = sd.to_value();
    let bytes = (per * 4 * n_tensors) as f64;
    let gib = |s: f64| bytes / s / (1u64 << 30) as f64;

    let t_save = best(3, || save(&value, &path).map(|_| ()));
    let raw = dir.path().join("raw.bin");
    let blob = vec![1u8; per * 4 * n_tensors];
    let t_write = best(3, || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&raw)?;
        f.write_all(&blob)?;
        f.sync_all()
    });
    let no_crc = SaveOptions::default().crc32(false);
    let t_save_nocrc = best(3, || save_with(&value, &path, None, &no_crc).map(|_| ()));
    save(&value, &path)?;
    // Free what the loads do not need, as tools/bench_checkpoint.py loads
    // before it holds anything: memory freed at the top of the heap goes
    // back to the kernel, memory below live blocks is reused.
    drop(blob);
    drop(value);
    drop(sd);
    // The first load of the process, into memory never used before (page
    // faults included, as for any real first load).
    let t_first = best(1, || load(&path).map(|v| v.tensors().len()));
    let t_load = best(5, || load(&path).map(|v| v.tensors().len()));
    let skip = LoadOptions::default().skip_crc32(true);
    let t_load_nocrc = best(5, || load_with(&path, &skip).map(|v| v.tensors().len()));
    let t_read = best(5, || std::fs::read(&path).map(|v| v.len()));
    let t_mmap = best(5, || {
        // SAFETY: the benchmark's own file, not written while mapped.
        unsafe { load_mmap(&path, &LoadOptions::default()) }.map(|v| v.tensors().len())
    });
    let (load_faults, load_read) = costs(|| load(&path));
    let (mmap_faults, mmap_read) = costs(|| {
        // SAFETY: the benchmark's own file, not written while mapped.
        unsafe { load_mmap(&path, &LoadOptions::default()) }
    });
    let file_len = std::fs::metadata(&path)?.len();
    println!("state dict: {n_tensors} float32 tensors, {mib} MiB");
    println!(
        "save (torchcore)           {:8.1} ms  {:5.2} GiB/s",
        t_save * 1e3,
        gib(t_save)
    );
    println!(
        "save (torchcore, no CRC)   {:8.1} ms  {:5.2} GiB/s",
        t_save_nocrc * 1e3,
        gib(t_save_nocrc)
    );
    println!(
        "plain write + fsync        {:8.1} ms  {:5.2} GiB/s",
        t_write * 1e3,
        gib(t_write)
    );
    println!(
        "first load (torchcore)     {:8.1} ms  {:5.2} GiB/s",
        t_first * 1e3,
        gib(t_first)
    );
    println!(
        "load (torchcore, copying)  {:8.1} ms  {:5.2} GiB/s",
        t_load * 1e3,
        gib(t_load)
    );
    println!(
        "load (torchcore, no CRC)   {:8.1} ms  {:5.2} GiB/s",
        t_load_nocrc * 1e3,
        gib(t_load_nocrc)
    );
    println!(
        "std::fs::read of the file   {:8.1} ms  {:5.2} GiB/s",
        t_read * 1e3,
        gib(t_read)
    );
    println!("load_mmap (torchcore)      {:8.3} ms", t_mmap * 1e3);
    println!("file: {file_len} bytes");
    println!("one load:      {load_read:>12} bytes read, {load_faults:>8} page faults");
    println!("one load_mmap: {mmap_read:>12} bytes read, {mmap_faults:>8} page faults");
    Ok(())
}
