//! Finding and loading NVRTC ourselves, by path, for CUDA 12 and 13.
//!
//! cudarc 0.19's NVRTC loader tries a fixed list of library *names* that
//! has no `libnvrtc.so.13`, and cannot be given a path, so a CUDA 13 PyTorch
//! install (whose only NVRTC is `site-packages/nvidia/cu13/lib/libnvrtc.so.13`)
//! was never found. NVRTC's C API is small and stable across 12 and 13, so
//! this module opens the library with `libloading` and calls the nine
//! functions the kernels need.
//!
//! Where it looks, in order ([`nvrtc_candidates`]):
//!
//! 1. `TORCHCORE_NVRTC=/path/libnvrtc.so.N` ([`NVRTC_ENV`]): that file and
//!    nothing else (an error if it cannot be loaded); `TORCHCORE_NVRTC=none`
//!    (or `0`, `off`) disables NVRTC, and so the kernels;
//! 2. `$CUDA_HOME`, `$CUDA_PATH`: their `lib64`, `lib` and
//!    `targets/*/lib` directories;
//! 3. the library path: `libnvrtc.so.13`, `libnvrtc.so.12`, `libnvrtc.so`
//!    through the dynamic loader (`LD_LIBRARY_PATH`, the `ldconfig` cache,
//!    and a copy already loaded into the process, e.g. by PyTorch);
//! 4. the `nvidia` wheels of a Python install (PyTorch's dependencies, or
//!    `pip install nvidia-cuda-nvrtc` / `nvidia-cuda-nvrtc-cu12`):
//!    `nvidia/cu13/lib`, `nvidia/cuda_nvrtc/lib` and `torch/lib` in the
//!    `site-packages`/`dist-packages` of `$PYTHONPATH`, `$VIRTUAL_ENV`,
//!    `$CONDA_PREFIX`, the `python3` on `$PATH`, `~/.local`, `/usr/local`
//!    and `/usr`;
//! 5. `/usr/local/cuda`.
//!
//! When the driver's CUDA version is known, a library newer than the driver
//! is passed over for an older one when there is one (PTX from NVRTC 13
//! does not load on a CUDA 12 driver). The library that was loaded, its
//! version and where it was found are reported by [`nvrtc_info`] and a
//! `tracing` info event.

use std::ffi::{c_char, c_int, c_void, CStr, CString, OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::error::CudaError;

/// The environment variable naming the NVRTC library to load (a path), or
/// `none` to disable NVRTC.
pub const NVRTC_ENV: &str = "TORCHCORE_NVRTC";

/// Where an NVRTC candidate came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NvrtcSource {
    /// `TORCHCORE_NVRTC`.
    Override,
    /// `$CUDA_HOME` or `$CUDA_PATH` (the variable's name).
    CudaHome(String),
    /// A bare library name resolved by the dynamic loader.
    LibraryPath,
    /// A Python `site-packages` directory (an `nvidia` wheel or `torch/lib`).
    PythonWheel,
    /// `/usr/local/cuda`.
    DefaultInstall,
}

impl std::fmt::Display for NvrtcSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NvrtcSource::Override => write!(f, "{NVRTC_ENV}"),
            NvrtcSource::CudaHome(v) => write!(f, "${v}"),
            NvrtcSource::LibraryPath => f.write_str("the library path"),
            NvrtcSource::PythonWheel => f.write_str("a Python wheel"),
            NvrtcSource::DefaultInstall => f.write_str("/usr/local/cuda"),
        }
    }
}

/// A library to try: a path, or a bare name for the dynamic loader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvrtcCandidate {
    /// The path (or, for [`NvrtcSource::LibraryPath`], the file name).
    pub path: PathBuf,
    /// Where it came from.
    pub source: NvrtcSource,
}

/// The NVRTC library in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvrtcInfo {
    /// What was passed to `dlopen` (a path, or a bare name).
    pub path: PathBuf,
    /// The file the dynamic loader actually mapped, when it can be told
    /// (from `/proc/self/maps`).
    pub resolved: Option<PathBuf>,
    /// `nvrtcVersion`: (major, minor).
    pub version: (i32, i32),
    /// Where it was found.
    pub source: NvrtcSource,
}

impl std::fmt::Display for NvrtcInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = self.resolved.as_ref().unwrap_or(&self.path);
        write!(
            f,
            "NVRTC {}.{} from {} (found via {})",
            self.version.0,
            self.version.1,
            shown.display(),
            self.source
        )
    }
}

/// The stack of the thread NVRTC compiles on (64 MiB).
pub const NVRTC_STACK: usize = 64 << 20;

/// The library names tried in each directory, newest first.
const NAMES: [&str; 3] = ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];

/// What `TORCHCORE_NVRTC` says.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Override {
    Unset,
    Disabled,
    Path(PathBuf),
}

fn override_of(v: Option<OsString>) -> Override {
    match v {
        None => Override::Unset,
        Some(v) if v.is_empty() => Override::Unset,
        Some(v) if ["0", "none", "off", "false"].iter().any(|d| v == **d) => Override::Disabled,
        Some(v) => Override::Path(PathBuf::from(v)),
    }
}

/// `site-packages`/`dist-packages` directories under a Python prefix.
fn site_dirs(prefix: &Path, out: &mut Vec<PathBuf>) {
    for lib in ["lib", "lib64"] {
        let Ok(entries) = std::fs::read_dir(prefix.join(lib)) else {
            continue;
        };
        let mut pythons: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path())
            .collect();
        pythons.sort();
        for p in pythons {
            for s in ["site-packages", "dist-packages"] {
                let d = p.join(s);
                if d.is_dir() && !out.contains(&d) {
                    out.push(d);
                }
            }
        }
    }
}

/// NVRTC libraries inside one `site-packages` directory.
fn wheel_libs(site: &Path, out: &mut Vec<PathBuf>) {
    for (dir, names) in [
        ("nvidia/cu13/lib", &["libnvrtc.so.13"][..]),
        (
            "nvidia/cuda_nvrtc/lib",
            &["libnvrtc.so.13", "libnvrtc.so.12"][..],
        ),
        ("nvidia/cu12/lib", &["libnvrtc.so.12"][..]),
    ] {
        for n in names {
            let p = site.join(dir).join(n);
            if p.is_file() {
                out.push(p);
            }
        }
    }
    // Some PyTorch builds bundle a renamed NVRTC (`libnvrtc-<hash>.so.N`).
    if let Ok(entries) = std::fs::read_dir(site.join("torch/lib")) {
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .map(OsStr::to_string_lossy)
                    .is_some_and(|n| n.starts_with("libnvrtc") && !n.contains("builtins"))
            })
            .collect();
        found.sort();
        out.extend(found);
    }
}

/// The NVRTC candidates for the environment given by `var` (a variable's
/// value by name), in the order they are tried (see the module
/// documentation); `None` when it disables NVRTC (`TORCHCORE_NVRTC=none`).
/// [`nvrtc_candidates`] is this for the process's environment.
///
/// ```
/// use std::ffi::OsString;
/// use alloc_cuda::cuda::{nvrtc_candidates_with, NvrtcSource};
/// let over = |v: &str| (v == "TORCHCORE_NVRTC").then(|| OsString::from("/opt/libnvrtc.so.13"));
/// let c = nvrtc_candidates_with(&over).expect("not disabled");
/// assert_eq!(c.len(), 1);
/// assert_eq!(c[0].source, NvrtcSource::Override);
/// let off = |v: &str| (v == "TORCHCORE_NVRTC").then(|| OsString::from("none"));
/// assert!(nvrtc_candidates_with(&off).is_none());
/// ```
pub fn nvrtc_candidates_with(
    var: &dyn Fn(&str) -> Option<OsString>,
) -> Option<Vec<NvrtcCandidate>> {
    candidates_from(var).ok()
}

/// [`nvrtc_candidates_with`]; `Err(())` means NVRTC is disabled.
fn candidates_from(var: &dyn Fn(&str) -> Option<OsString>) -> Result<Vec<NvrtcCandidate>, ()> {
    let mut out: Vec<NvrtcCandidate> = Vec::new();
    let mut push = |path: PathBuf, source: NvrtcSource| {
        if !out.iter().any(|c| c.path == path) {
            out.push(NvrtcCandidate { path, source });
        }
    };
    match override_of(var(NVRTC_ENV)) {
        Override::Disabled => return Err(()),
        Override::Path(p) => {
            push(p, NvrtcSource::Override);
            return Ok(out);
        }
        Override::Unset => {}
    }
    let in_dirs = |root: &Path| -> Vec<PathBuf> {
        let mut dirs = vec![root.join("lib64"), root.join("lib")];
        if let Ok(t) = std::fs::read_dir(root.join("targets")) {
            let mut ts: Vec<PathBuf> = t.flatten().map(|e| e.path().join("lib")).collect();
            ts.sort();
            dirs.extend(ts);
        }
        let mut found = Vec::new();
        for d in dirs {
            for n in NAMES {
                let p = d.join(n);
                if p.is_file() {
                    found.push(p);
                }
            }
        }
        found
    };
    for v in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = var(v).filter(|r| !r.is_empty()) {
            for p in in_dirs(Path::new(&root)) {
                push(p, NvrtcSource::CudaHome(v.to_owned()));
            }
        }
    }
    for n in NAMES {
        push(PathBuf::from(n), NvrtcSource::LibraryPath);
    }
    let mut sites: Vec<PathBuf> = Vec::new();
    if let Some(pp) = var("PYTHONPATH") {
        for d in std::env::split_paths(&pp) {
            if d.is_dir() && !sites.contains(&d) {
                sites.push(d);
            }
        }
    }
    let mut prefixes: Vec<PathBuf> = Vec::new();
    for v in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(p) = var(v).filter(|p| !p.is_empty()) {
            prefixes.push(PathBuf::from(p));
        }
    }
    if let Some(path) = var("PATH") {
        for d in std::env::split_paths(&path) {
            if ["python3", "python"].iter().any(|n| d.join(n).is_file()) {
                if let Some(prefix) = d.parent() {
                    prefixes.push(prefix.to_path_buf());
                }
                break;
            }
        }
    }
    if let Some(home) = var("HOME").filter(|h| !h.is_empty()) {
        prefixes.push(Path::new(&home).join(".local"));
    }
    prefixes.push(PathBuf::from("/usr/local"));
    prefixes.push(PathBuf::from("/usr"));
    for p in &prefixes {
        site_dirs(p, &mut sites);
    }
    let mut libs = Vec::new();
    for s in &sites {
        wheel_libs(s, &mut libs);
    }
    for p in libs {
        push(p, NvrtcSource::PythonWheel);
    }
    for p in in_dirs(Path::new("/usr/local/cuda")) {
        push(p, NvrtcSource::DefaultInstall);
    }
    Ok(out)
}

/// The NVRTC libraries this process would try, in order (see the module
/// documentation); `None` when `TORCHCORE_NVRTC=none` disables NVRTC.
/// Bare names ([`NvrtcSource::LibraryPath`]) are always listed; the others
/// only when the file exists.
///
/// ```
/// if let Some(c) = alloc_cuda::cuda::nvrtc_candidates() {
///     assert!(c.iter().any(|c| c.path.as_os_str() == "libnvrtc.so.13"));
/// }
/// ```
pub fn nvrtc_candidates() -> Option<Vec<NvrtcCandidate>> {
    candidates_from(&|v| std::env::var_os(v)).ok()
}

type Prog = *mut c_void;
type FnVersion = unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int;
type FnCreate = unsafe extern "C" fn(
    *mut Prog,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> c_int;
type FnCompile = unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> c_int;
type FnSize = unsafe extern "C" fn(Prog, *mut usize) -> c_int;
type FnGet = unsafe extern "C" fn(Prog, *mut c_char) -> c_int;
type FnDestroy = unsafe extern "C" fn(*mut Prog) -> c_int;
type FnErrorString = unsafe extern "C" fn(c_int) -> *const c_char;
type FnNumArchs = unsafe extern "C" fn(*mut c_int) -> c_int;
type FnArchs = unsafe extern "C" fn(*mut c_int) -> c_int;

/// An opened NVRTC library.
///
/// ```no_run
/// use alloc_cuda::cuda::{Nvrtc, KERNEL_SOURCE};
/// let nvrtc = Nvrtc::open("/opt/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13")?;
/// println!("NVRTC {:?}", nvrtc.version());
/// let ptx = nvrtc.compile_ptx(KERNEL_SOURCE, "k.cu", Some(90))?;
/// assert!(ptx.starts_with(b"//"));
/// # Ok::<(), String>(())
/// ```
pub struct Nvrtc {
    version: (i32, i32),
    path: PathBuf,
    create: FnCreate,
    compile: FnCompile,
    ptx_size: FnSize,
    ptx: FnGet,
    log_size: FnSize,
    log: FnGet,
    destroy: FnDestroy,
    error_string: Option<FnErrorString>,
    num_archs: Option<FnNumArchs>,
    archs: Option<FnArchs>,
    // Keeps the function pointers above valid; dropped last.
    _lib: libloading::Library,
}

impl std::fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nvrtc")
            .field("path", &self.path)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// Copies a function pointer out of `lib`.
///
/// # Safety
///
/// `T` must be the function's true type; the pointer is valid only while
/// `lib` stays loaded.
unsafe fn sym<T: Copy>(lib: &libloading::Library, name: &str) -> Result<T, String> {
    // SAFETY: the caller vouches for `T`.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| format!("no symbol {name}: {e}"))
}

impl Nvrtc {
    /// Opens the NVRTC library at `path` (a path, or a bare name for the
    /// dynamic loader's search) and checks its version. Never panics.
    pub fn open(path: impl AsRef<Path>) -> Result<Nvrtc, String> {
        let path = path.as_ref().to_path_buf();
        // SAFETY: loading NVRTC runs its initialisers, which have no
        // preconditions; it is a plain C library.
        let lib = unsafe { libloading::Library::new(path.as_os_str()) }
            .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
        // SAFETY: the types are NVRTC's documented signatures (`nvrtcResult`
        // is a C enum, i.e. `int`), unchanged from CUDA 11 to 13; the
        // pointers are stored next to `lib`, which outlives them.
        let nv = unsafe {
            let version: FnVersion = sym(&lib, "nvrtcVersion")?;
            let (mut major, mut minor) = (0, 0);
            let r = version(&mut major, &mut minor);
            if r != 0 {
                return Err(format!("{}: nvrtcVersion failed ({r})", path.display()));
            }
            Nvrtc {
                version: (major, minor),
                path: path.clone(),
                create: sym(&lib, "nvrtcCreateProgram")?,
                compile: sym(&lib, "nvrtcCompileProgram")?,
                ptx_size: sym(&lib, "nvrtcGetPTXSize")?,
                ptx: sym(&lib, "nvrtcGetPTX")?,
                log_size: sym(&lib, "nvrtcGetProgramLogSize")?,
                log: sym(&lib, "nvrtcGetProgramLog")?,
                destroy: sym(&lib, "nvrtcDestroyProgram")?,
                error_string: sym(&lib, "nvrtcGetErrorString").ok(),
                num_archs: sym(&lib, "nvrtcGetNumSupportedArchs").ok(),
                archs: sym(&lib, "nvrtcGetSupportedArchs").ok(),
                _lib: lib,
            }
        };
        Ok(nv)
    }

    /// `nvrtcVersion`: (major, minor).
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// What was opened (a path or a bare name).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The virtual architectures this NVRTC can compile for, as
    /// `10·major + minor` (`nvrtcGetSupportedArchs`; empty when the library
    /// cannot say).
    pub fn supported_archs(&self) -> Vec<i32> {
        let (Some(num), Some(archs)) = (self.num_archs, self.archs) else {
            return Vec::new();
        };
        let mut n: c_int = 0;
        // SAFETY: a valid out-pointer.
        if unsafe { num(&mut n) } != 0 || n <= 0 {
            return Vec::new();
        }
        let mut v = vec![0 as c_int; n as usize];
        // SAFETY: `v` holds the `n` entries NVRTC writes.
        if unsafe { archs(v.as_mut_ptr()) } != 0 {
            return Vec::new();
        }
        v
    }

    fn error(&self, what: &str, r: c_int) -> String {
        let text = self.error_string.and_then(|f| {
            // SAFETY: returns a static string (or null) for any code.
            let p = unsafe { f(r) };
            // SAFETY: a non-null result is a NUL-terminated static string.
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        });
        format!("{what} failed ({r}: {})", text.unwrap_or_default())
    }

    /// Compiles `source` to PTX (NUL-terminated), for
    /// `--gpu-architecture=compute_<arch>` when `arch` is given
    /// (`10·major + minor`, e.g. 90), else for NVRTC's default. Needs no
    /// driver and no GPU. The error carries NVRTC's log.
    ///
    /// NVRTC (LLVM inside) needs more stack than a Rust test or worker
    /// thread has (it overflowed a 2 MiB test thread), so it runs on a
    /// thread of its own with [`NVRTC_STACK`] bytes of stack.
    pub fn compile_ptx(
        &self,
        source: &str,
        name: &str,
        arch: Option<i32>,
    ) -> Result<Vec<u8>, String> {
        std::thread::scope(|s| {
            std::thread::Builder::new()
                .name("nvrtc".into())
                .stack_size(NVRTC_STACK)
                .spawn_scoped(s, || self.compile_here(source, name, arch))
                .map_err(|e| format!("cannot start the NVRTC thread: {e}"))?
                .join()
                .map_err(|_| "the NVRTC thread panicked".to_owned())?
        })
    }

    fn compile_here(&self, source: &str, name: &str, arch: Option<i32>) -> Result<Vec<u8>, String> {
        let src = CString::new(source).map_err(|_| "the source contains a NUL".to_owned())?;
        let cname = CString::new(name).map_err(|_| "the name contains a NUL".to_owned())?;
        let opts: Vec<CString> = arch
            .map(|a| format!("--gpu-architecture=compute_{a}"))
            .into_iter()
            .filter_map(|o| CString::new(o).ok())
            .collect();
        let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let mut prog: Prog = std::ptr::null_mut();
        // SAFETY: valid out-pointer and NUL-terminated strings; no headers.
        let r = unsafe {
            (self.create)(
                &mut prog,
                src.as_ptr(),
                cname.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if r != 0 {
            return Err(self.error("nvrtcCreateProgram", r));
        }
        let result = self.compile_program(prog, &opt_ptrs);
        // SAFETY: `prog` was created above and is destroyed once.
        unsafe { (self.destroy)(&mut prog) };
        result
    }

    fn compile_program(&self, prog: Prog, opts: &[*const c_char]) -> Result<Vec<u8>, String> {
        let n = c_int::try_from(opts.len()).map_err(|_| "too many options".to_owned())?;
        // SAFETY: a live program and `n` NUL-terminated option strings.
        let r = unsafe { (self.compile)(prog, n, opts.as_ptr()) };
        if r != 0 {
            let log = self.program_log(prog);
            return Err(format!("{}\n{log}", self.error("nvrtcCompileProgram", r)));
        }
        let mut size = 0usize;
        // SAFETY: a live, compiled program; valid out-pointer.
        let r = unsafe { (self.ptx_size)(prog, &mut size) };
        if r != 0 {
            return Err(self.error("nvrtcGetPTXSize", r));
        }
        let mut ptx = vec![0u8; size.max(1)];
        // SAFETY: `ptx` holds the `size` bytes NVRTC writes.
        let r = unsafe { (self.ptx)(prog, ptx.as_mut_ptr().cast()) };
        if r != 0 {
            return Err(self.error("nvrtcGetPTX", r));
        }
        if ptx.last() != Some(&0) {
            ptx.push(0);
        }
        Ok(ptx)
    }

    fn program_log(&self, prog: Prog) -> String {
        let mut size = 0usize;
        // SAFETY: a live program; valid out-pointer.
        if unsafe { (self.log_size)(prog, &mut size) } != 0 || size == 0 {
            return String::new();
        }
        let mut log = vec![0u8; size];
        // SAFETY: `log` holds the `size` bytes NVRTC writes.
        if unsafe { (self.log)(prog, log.as_mut_ptr().cast()) } != 0 {
            return String::new();
        }
        String::from_utf8_lossy(&log)
            .trim_end_matches('\0')
            .to_owned()
    }
}

/// The virtual architecture to compile for on a device of compute
/// capability `cc` (`10·major + minor`): the highest one NVRTC supports
/// that is not above it, or `cc` itself when NVRTC cannot list them.
/// `None` (NVRTC's default) without a device or when the device is older
/// than everything NVRTC supports (its PTX would not load anyway).
///
/// ```
/// use alloc_cuda::cuda::choose_arch;
/// assert_eq!(choose_arch(Some(90), &[75, 80, 86, 89, 90, 100]), Some(90));
/// assert_eq!(choose_arch(Some(121), &[75, 80, 90, 100, 120]), Some(120));
/// assert_eq!(choose_arch(Some(61), &[75, 80]), None);
/// assert_eq!(choose_arch(Some(86), &[]), Some(86));
/// assert_eq!(choose_arch(None, &[75]), None);
/// ```
pub fn choose_arch(cc: Option<i32>, supported: &[i32]) -> Option<i32> {
    let cc = cc?;
    if supported.is_empty() {
        return Some(cc);
    }
    supported.iter().copied().filter(|&a| a <= cc).max()
}

/// The major CUDA version of the driver, when a driver is loaded.
fn driver_major() -> Option<i32> {
    super::probe::driver_version().ok().map(|v| v / 1000)
}

/// The file the dynamic loader mapped for a library whose name starts
/// with `stem` (Linux: `/proc/self/maps`).
pub(crate) fn mapped_path(stem: &str) -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            Path::new(p)
                .file_name()
                .map(OsStr::to_string_lossy)
                .is_some_and(|n| n.starts_with(stem) && !n.contains("builtins"))
        })
        .map(PathBuf::from)
}

fn load() -> Result<(Nvrtc, NvrtcInfo), String> {
    let Some(candidates) = nvrtc_candidates() else {
        return Err(format!("NVRTC is disabled by {NVRTC_ENV}"));
    };
    let driver = driver_major();
    let mut tried = Vec::new();
    let mut newer_than_driver: Option<(Nvrtc, NvrtcSource)> = None;
    for c in candidates {
        match Nvrtc::open(&c.path) {
            Ok(nv) => {
                let explicit = c.source == NvrtcSource::Override;
                match driver {
                    Some(d) if !explicit && nv.version.0 > d => {
                        tracing::info!(target: "alloc_cuda", "passing over NVRTC {}.{} at {} (newer than the CUDA {d} driver)", nv.version.0, nv.version.1, c.path.display());
                        tried.push(format!(
                            "{}: NVRTC {}.{} is newer than the driver",
                            c.path.display(),
                            nv.version.0,
                            nv.version.1
                        ));
                        if newer_than_driver.is_none() {
                            newer_than_driver = Some((nv, c.source));
                        }
                    }
                    _ => {
                        let info = NvrtcInfo {
                            path: c.path,
                            resolved: mapped_path("libnvrtc"),
                            version: nv.version,
                            source: c.source,
                        };
                        return Ok((nv, info));
                    }
                }
            }
            Err(e) => {
                if c.source == NvrtcSource::Override {
                    return Err(format!("{NVRTC_ENV}={}: {e}", c.path.display()));
                }
                tried.push(e);
            }
        }
    }
    if let Some((nv, source)) = newer_than_driver {
        let info = NvrtcInfo {
            path: nv.path.clone(),
            resolved: mapped_path("libnvrtc"),
            version: nv.version,
            source,
        };
        return Ok((nv, info));
    }
    Err(format!(
        "no libnvrtc found (set {NVRTC_ENV}=/path/to/libnvrtc.so.N; tried: {})",
        tried.join("; ")
    ))
}

/// The process's NVRTC: found, loaded and reported once (see the module
/// documentation for where it looks).
pub(crate) fn nvrtc() -> Result<&'static (Nvrtc, NvrtcInfo), CudaError> {
    static NVRTC: OnceLock<Result<(Nvrtc, NvrtcInfo), String>> = OnceLock::new();
    NVRTC
        .get_or_init(|| {
            let r = load();
            match &r {
                Ok((_, info)) => tracing::info!(target: "alloc_cuda", "{info}"),
                Err(e) => tracing::warn!(target: "alloc_cuda", "NVRTC not available: {e}"),
            }
            r
        })
        .as_ref()
        .map_err(|e| CudaError::Nvrtc(e.clone()))
}

/// Which NVRTC this process uses (path, version, how it was found), or why
/// there is none. Loads it at the first call; needs no driver.
///
/// ```
/// match alloc_cuda::cuda::nvrtc_info() {
///     Ok(info) => println!("{info}"),
///     Err(e) => println!("no NVRTC: {e}"),
/// }
/// ```
pub fn nvrtc_info() -> Result<NvrtcInfo, CudaError> {
    nvrtc().map(|(_, i)| i.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, b"").expect("write");
    }

    #[test]
    fn candidates_cover_override_cuda_home_library_path_and_wheels() {
        let root =
            std::env::temp_dir().join(format!("alloc-cuda-nvrtc-cands-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let home = root.join("cuda-12.8");
        touch(&home.join("targets/x86_64-linux/lib/libnvrtc.so.12"));
        let venv13 = root.join("venv13");
        touch(&venv13.join("lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13"));
        let venv12 = root.join("venv12");
        touch(&venv12.join("lib/python3.11/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"));
        touch(&venv12.join("lib/python3.11/site-packages/torch/lib/libnvrtc-1a2b3c.so.12"));
        touch(
            &venv12.join("lib/python3.11/site-packages/torch/lib/libnvrtc-builtins-1a2b3c.so.12"),
        );
        touch(&venv12.join("bin/python3"));
        let env: HashMap<&str, OsString> = [
            ("CUDA_HOME", home.clone().into_os_string()),
            ("VIRTUAL_ENV", venv13.clone().into_os_string()),
            ("PATH", venv12.join("bin").into_os_string()),
        ]
        .into_iter()
        .collect();
        let c = candidates_from(&|v| env.get(v).cloned()).expect("enabled");
        let paths: Vec<&Path> = c.iter().map(|c| c.path.as_path()).collect();
        assert_eq!(
            paths[0],
            home.join("targets/x86_64-linux/lib/libnvrtc.so.12")
        );
        assert_eq!(c[0].source, NvrtcSource::CudaHome("CUDA_HOME".into()));
        assert_eq!(
            &paths[1..4],
            [
                Path::new("libnvrtc.so.13"),
                Path::new("libnvrtc.so.12"),
                Path::new("libnvrtc.so")
            ]
        );
        let wheel13 = venv13.join("lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13");
        let wheel12 =
            venv12.join("lib/python3.11/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
        let bundled = venv12.join("lib/python3.11/site-packages/torch/lib/libnvrtc-1a2b3c.so.12");
        assert_eq!(
            &paths[4..7],
            [wheel13.as_path(), wheel12.as_path(), bundled.as_path()]
        );
        assert!(c[4..7].iter().all(|c| c.source == NvrtcSource::PythonWheel));
        assert!(!paths
            .iter()
            .any(|p| p.to_string_lossy().contains("builtins")));

        // The override is the only candidate; `none` disables NVRTC.
        let with = |v: &str| {
            let mut e = env.clone();
            e.insert(NVRTC_ENV, OsString::from(v));
            candidates_from(&|k| e.get(k).cloned())
        };
        assert_eq!(
            with("/x/libnvrtc.so.13"),
            Ok(vec![NvrtcCandidate {
                path: "/x/libnvrtc.so.13".into(),
                source: NvrtcSource::Override
            }])
        );
        assert_eq!(with("none"), Err(()));
        assert_eq!(with("0"), Err(()));
        assert_eq!(with("").map(|c| c.len()), Ok(c.len()));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_missing_library_is_an_error_not_a_panic() {
        let e = Nvrtc::open("/nonexistent/libnvrtc.so.13").expect_err("missing");
        assert!(e.contains("cannot load /nonexistent/libnvrtc.so.13"), "{e}");
        let e = Nvrtc::open("/proc/self/status").expect_err("not a library");
        assert!(e.contains("cannot load"), "{e}");
    }
}
