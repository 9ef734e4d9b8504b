//! `torch.load` for torchcore: the safe (weights-only) loader.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::Arc;

use c10_core::{Storage, Tensor};

use crate::archive::{swap_to_native, Archive, RecordSpan};
use crate::error::{PtError, Result};
use crate::remap::{self, Recording};
use crate::unpickle::{unpickle, StorageRecord, StorageSource};
use crate::value::Value;

/// Where storages saved on another device are loaded (torch's
/// `map_location`). Storages are built on the CPU, or, with
/// [`MapLocation::Meta`], on the meta device.
///
/// ```
/// use torchcore_pt::{LoadOptions, MapLocation};
/// let opts = LoadOptions::default().map_location(MapLocation::Cpu);
/// assert_eq!(opts.map_location, MapLocation::Cpu);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MapLocation {
    /// Load each storage where it was saved: `cpu` storages load; any other
    /// location (`cuda:0`, ...) is an error that suggests
    /// [`MapLocation::Cpu`].
    #[default]
    AsSaved,
    /// Load every storage on the CPU, whatever its location tag
    /// (`map_location='cpu'`).
    Cpu,
    /// Load every storage on the meta device, whatever its location tag
    /// (`map_location='meta'`): sizes, strides, offsets, dtypes and
    /// storage sharing as saved, no data. The records of a ZIP archive are
    /// not read at all (as torch); a legacy (pre-1.6) checkpoint is read as
    /// usual and its storages then replaced by meta storages of the same
    /// size.
    ///
    /// ```
    /// use torchcore_pt::{load_with, save, LoadOptions, MapLocation, Value};
    /// use c10_core::{Tensor, ScalarType};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.pt");
    /// save(&Value::Tensor(Tensor::arange(0, 4, 1, ScalarType::Float)?), &path)?;
    /// let v = load_with(&path, &LoadOptions::default().map_location(MapLocation::Meta))?;
    /// let t = v.as_tensor().unwrap();
    /// assert!(t.device().is_meta());
    /// assert_eq!((t.sizes(), t.storage().nbytes()), (&[4][..], 16));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    Meta,
}

/// torch's callable `map_location`, see [`LoadOptions::storage_map`].
pub type StorageMap = Arc<dyn Fn(&str, &str, &Storage) -> Result<Option<Storage>> + Send + Sync>;

/// How Python 2 `str` values of old pickles (`BINSTRING`,
/// `SHORT_BINSTRING`: files written from Python 2) are read, torch's
/// `torch.load(..., encoding=...)`.
///
/// ```
/// use torchcore_pt::{LoadOptions, Py2Strings};
/// let opts = LoadOptions::default().py2_strings(Py2Strings::Bytes);
/// assert_eq!(opts.py2_strings, Py2Strings::Bytes);
/// assert_eq!(Py2Strings::default(), Py2Strings::Latin1);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Py2Strings {
    /// As text, each byte one character (`encoding='latin1'`, torch's
    /// default for these files).
    #[default]
    Latin1,
    /// As UTF-8 text (`encoding='utf-8'`); invalid UTF-8 is an error.
    Utf8,
    /// As ASCII text (`encoding='ascii'`); a byte past 127 is an error.
    Ascii,
    /// As `bytes` (`encoding='bytes'`).
    Bytes,
}

/// Options for loading.
#[derive(Clone, Default)]
pub struct LoadOptions {
    /// Where storages saved on other devices go.
    pub map_location: MapLocation,
    /// Called once per storage, after every storage is loaded (on the CPU),
    /// with the storage's key, its location tag and the storage: torch's
    /// callable `map_location(storage, location)`. It returns the storage
    /// to use (the same one or a CPU storage at least as large, which
    /// replaces it under every tensor that used it), or `None` to load it
    /// where it was saved (as [`MapLocation::AsSaved`]: `cpu` only). When
    /// set, [`LoadOptions::map_location`] is not consulted.
    pub storage_map: Option<StorageMap>,
    /// The byte order of storages in an archive without a `byteorder`
    /// record: `false` (little-endian, torch's default and what every
    /// machine torch runs on writes) or `true` (torch's
    /// `set_default_load_endianness(LoadEndianness.BIG)`). Archives with
    /// the record are read as it says.
    pub unmarked_big_endian: bool,
    /// For [`load_mmap`]: map the file shared (`MAP_SHARED`, torch's
    /// `set_default_mmap_options(mmap.MAP_SHARED)`) instead of private:
    /// writes to the loaded tensors go to the file (which must be
    /// writable). Default: private (copy-on-write).
    pub mmap_shared: bool,
    /// How Python 2 strings are read (torch's `encoding=`).
    pub py2_strings: Py2Strings,
    /// Copying loads: do not check the CRC-32 of storage records (what
    /// `torch.load` does: it checks none). Default `false`: every storage
    /// record read is checked, and a corrupt record is an error. Records
    /// whose archive entry holds CRC 0 (written with torch's
    /// `set_crc32_options(False)` or [`crate::SaveOptions::crc32`]
    /// `false`) are never checked. Memory-mapped records are never checked.
    pub skip_crc32: bool,
}

impl std::fmt::Debug for LoadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadOptions")
            .field("map_location", &self.map_location)
            .field("storage_map", &self.storage_map.as_ref().map(|_| "<fn>"))
            .field("unmarked_big_endian", &self.unmarked_big_endian)
            .field("mmap_shared", &self.mmap_shared)
            .field("py2_strings", &self.py2_strings)
            .field("skip_crc32", &self.skip_crc32)
            .finish()
    }
}

impl LoadOptions {
    /// Sets [`LoadOptions::map_location`].
    pub fn map_location(mut self, m: MapLocation) -> LoadOptions {
        self.map_location = m;
        self
    }

    /// Sets [`LoadOptions::unmarked_big_endian`].
    ///
    /// ```
    /// use torchcore_pt::LoadOptions;
    /// let opts = LoadOptions::default().unmarked_big_endian(true);
    /// assert!(opts.unmarked_big_endian);
    /// ```
    pub fn unmarked_big_endian(mut self, big: bool) -> LoadOptions {
        self.unmarked_big_endian = big;
        self
    }

    /// Sets [`LoadOptions::py2_strings`] (see [`Py2Strings`]).
    pub fn py2_strings(mut self, mode: Py2Strings) -> LoadOptions {
        self.py2_strings = mode;
        self
    }

    /// Sets [`LoadOptions::mmap_shared`].
    ///
    /// ```
    /// use torchcore_pt::LoadOptions;
    /// assert!(LoadOptions::default().mmap_shared(true).mmap_shared);
    /// ```
    pub fn mmap_shared(mut self, shared: bool) -> LoadOptions {
        self.mmap_shared = shared;
        self
    }

    /// Sets [`LoadOptions::skip_crc32`].
    ///
    /// ```
    /// use torchcore_pt::LoadOptions;
    /// assert!(LoadOptions::default().skip_crc32(true).skip_crc32);
    /// ```
    pub fn skip_crc32(mut self, skip: bool) -> LoadOptions {
        self.skip_crc32 = skip;
        self
    }

    /// Sets [`LoadOptions::storage_map`].
    ///
    /// ```
    /// use torchcore_pt::{load_with, save, LoadOptions, Value};
    /// use c10_core::{Tensor, ScalarType};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.pt");
    /// save(&Value::Tensor(Tensor::arange(0, 3, 1, ScalarType::Float)?), &path)?;
    /// // Keep every storage on the CPU, whatever its tag (`lambda s, loc: s`).
    /// let opts = LoadOptions::default().storage_map(|_key, _loc, s| Ok(Some(s.clone())));
    /// let v = load_with(&path, &opts)?;
    /// assert_eq!(v.as_tensor().unwrap().to_vec::<f32>()?, [0.0, 1.0, 2.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn storage_map(
        mut self,
        f: impl Fn(&str, &str, &Storage) -> Result<Option<Storage>> + Send + Sync + 'static,
    ) -> LoadOptions {
        self.storage_map = Some(Arc::new(f));
        self
    }
}

pub(crate) fn check_location(key: &str, location: &str, opts: &LoadOptions) -> Result<()> {
    if location == "cpu" || opts.map_location != MapLocation::AsSaved || opts.storage_map.is_some()
    {
        return Ok(());
    }
    // Loaded on the CPU first, then moved to the device (`remap::apply`).
    #[cfg(feature = "cuda")]
    if crate::cuda::cuda_index(location).is_some() {
        return Ok(());
    }
    Err(PtError::Location {
        key: key.to_string(),
        location: location.to_string(),
    })
}

/// A meta storage of `nbytes` (no memory): what [`MapLocation::Meta`]
/// loads.
pub(crate) fn meta_storage(nbytes: usize) -> Result<Storage> {
    let alloc = c10_core::factories::allocator_for(c10_core::Device::META)?;
    Ok(Storage::new(nbytes, alloc, true)?)
}

/// What every source that reads records itself checks first: `rec`'s
/// location is allowed, and its record `data/<key>` can hold its bytes.
/// Returns the record's name and span.
fn checked_record<R: Read + Seek>(
    archive: &mut Archive<R>,
    rec: &StorageRecord<'_>,
    opts: &LoadOptions,
) -> Result<(String, RecordSpan)> {
    check_location(rec.key, rec.location, opts)?;
    let name = format!("data/{}", rec.key);
    let span = archive.check_storage_span(&name, rec.key, rec.nbytes, rec.dtype)?;
    Ok((name, span))
}

struct CopySource<'a, R: Read + Seek> {
    archive: &'a mut Archive<R>,
    opts: &'a LoadOptions,
}

impl<R: Read + Seek> StorageSource for CopySource<'_, R> {
    fn load_storage(&mut self, rec: &StorageRecord<'_>) -> Result<Storage> {
        check_location(rec.key, rec.location, self.opts)?;
        self.archive.read_storage(rec.key, rec.nbytes, rec.dtype)
    }
}

/// The copying load from a file: storages are allocated (uninitialised)
/// while the pickle runs and filled afterwards by
/// [`crate::fileread::fill_records`], in file order.
#[cfg(all(unix, not(miri)))]
struct FileCopySource<'a> {
    archive: &'a mut Archive<BufReader<File>>,
    opts: &'a LoadOptions,
    pending: Vec<crate::fileread::PendingRecord>,
}

#[cfg(all(unix, not(miri)))]
impl StorageSource for FileCopySource<'_> {
    fn load_storage(&mut self, rec: &StorageRecord<'_>) -> Result<Storage> {
        let (nbytes, dtype) = (rec.nbytes, rec.dtype);
        let (name, span) = checked_record(self.archive, rec, self.opts)?;
        self.archive.count_mapped(&name, span.len)?;
        // Lazily initialised: if the load fails before the bytes are read,
        // whatever still holds the storage sees zeros, never stale memory.
        let storage = Storage::new_uninit(nbytes, alloc_cpu::cpu_allocator(), true)?;
        self.pending.push(crate::fileread::PendingRecord {
            name: self.archive.full_name(&name),
            span,
            storage: storage.clone(),
            dtype,
        });
        Ok(storage)
    }
}

struct MmapSource<'a> {
    archive: &'a mut Archive<BufReader<File>>,
    /// The checkpoint, opened once for all the mappings.
    file: File,
    /// Its path (a shared mapping opens it again, for writing).
    path: &'a Path,
    opts: &'a LoadOptions,
    /// One copy-on-write (or, with `LoadOptions::mmap_shared`, shared) mapping of the whole file, made at the first
    /// storage mapped and shared by every storage (torch maps the file once
    /// too): one `mmap` call per load, not one per storage.
    whole: Option<(Arc<WholeMap>, NonNull<u8>, usize)>,
    /// The byte ranges already handed out of `whole` (start -> end). Two
    /// storages never get overlapping ranges of it: a record that overlaps
    /// one (only a crafted archive has such records) gets its own mapping.
    handed_out: BTreeMap<usize, usize>,
}

/// The mapping `load_mmap` shares between the storages of one load.
struct WholeMap {
    _map: memmap2::MmapMut,
}

/// A storage's bytes: one record's range of the shared mapping, which it
/// keeps alive.
struct MapSlice {
    _whole: Arc<WholeMap>,
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a `MapSlice` is the only way to its bytes (ranges handed out are
// disjoint, see `MmapSource::handed_out`), the mapping is plain memory
// that any thread may access, and `Arc<WholeMap>` is `Send`.
unsafe impl Send for MapSlice {}

impl AsMut<[u8]> for MapSlice {
    fn as_mut(&mut self) -> &mut [u8] {
        // SAFETY: `ptr..ptr + len` lies inside the mapping `_whole` keeps
        // alive (checked against its length when the slice was made), and
        // no other `MapSlice` covers any of these bytes, so the `&mut`
        // returned is the only reference to them (`&mut self` guarantees
        // there is no other one through this slice).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl MmapSource<'_> {
    /// The shared mapping of the whole file (made on first use), its base
    /// address and length.
    fn whole(&mut self) -> Result<(Arc<WholeMap>, NonNull<u8>, usize)> {
        if let Some(w) = &self.whole {
            return Ok(w.clone());
        }
        let map_opts = memmap2::MmapOptions::new();
        let mut map = if self.opts.mmap_shared {
            let rw = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(self.path)
                .map_err(|e| PtError::io_path(self.path, e))?;
            // SAFETY: forwarded from `load_mmap`'s contract: nothing else
            // writes or truncates the file while the storages live, so no
            // access through the mapping reaches past the file's end or sees
            // bytes change behind it; the writes through it are this load's
            // own (the caller asked for a shared mapping).
            unsafe { map_opts.map_mut(&rw) }
        } else {
            // SAFETY: as above; the mapping is private (copy-on-write, as
            // `MapMode::CopyOnWrite`), so it never writes to the file.
            unsafe { map_opts.map_copy(&self.file) }
        }
        .map_err(|e| PtError::io("mapping the checkpoint", e))?;
        let len = map.len();
        let base = NonNull::new(map.as_mut_ptr())
            .ok_or_else(|| PtError::Archive("the checkpoint mapped at address 0".into()))?;
        let w = (Arc::new(WholeMap { _map: map }), base, len);
        self.whole = Some(w.clone());
        Ok(w)
    }

    /// A private mapping of the record alone: for a record whose range
    /// overlaps one already handed out of the shared mapping.
    fn map_alone(&self, name: &str, start: u64, nbytes: usize) -> Result<Storage> {
        let mut map_opts = memmap2::MmapOptions::new();
        map_opts.offset(start).len(nbytes);
        // SAFETY: as in `whole`; a private mapping of its own never aliases
        // another storage's bytes.
        let map = unsafe { map_opts.map_copy(&self.file) }.map_err(|e| {
            PtError::io(
                format!("mapping record {:?}", self.archive.full_name(name)),
                e,
            )
        })?;
        Ok(Storage::from_owner(map))
    }
}

impl StorageSource for MmapSource<'_> {
    fn load_storage(&mut self, rec: &StorageRecord<'_>) -> Result<Storage> {
        let (key, nbytes, dtype) = (rec.key, rec.nbytes, rec.dtype);
        let (name, span) = checked_record(self.archive, rec, self.opts)?;
        if nbytes == 0 || span.data_start % 64 != 0 {
            // Nothing to map, or a record not aligned for every dtype (torch
            // aligns records to 64 bytes; other writers may not): copy.
            return self.archive.read_storage(key, nbytes, dtype);
        }
        self.archive.count_mapped(&name, span.len)?;
        let too_far = || PtError::Archive(format!("record {name:?} lies past the end of the file"));
        let start = usize::try_from(span.data_start).map_err(|_| too_far())?;
        let end = start.checked_add(nbytes).ok_or_else(too_far)?;
        let (whole, base, len) = self.whole()?;
        // The record lies inside the file (`check_storage_span`); the file
        // may have shrunk since, which the mapping's length shows.
        if end > len {
            return Err(too_far());
        }
        if self.opts.mmap_shared && self.archive.big_endian() {
            // Swapping to native order in a shared mapping would rewrite
            // the file: copy.
            return self.archive.read_storage(key, nbytes, dtype);
        }
        if self.opts.mmap_shared && !claim(&mut self.handed_out, start, end) {
            // A second shared mapping of the same file bytes would let two
            // storages write one byte through different addresses: copy.
            return self.archive.read_storage(key, nbytes, dtype);
        }
        let storage = if self.opts.mmap_shared || claim(&mut self.handed_out, start, end) {
            // SAFETY: `start < end <= len`, so the pointer stays inside the
            // mapping `base` starts.
            let ptr = unsafe { NonNull::new_unchecked(base.as_ptr().add(start)) };
            Storage::from_owner(MapSlice {
                _whole: whole,
                ptr,
                len: nbytes,
            })
        } else {
            self.map_alone(&name, span.data_start, nbytes)?
        };
        if self.archive.big_endian() {
            let mut g = storage.write()?;
            swap_to_native(g.bytes_mut()?, dtype);
        }
        Ok(storage)
    }
}

/// Claims `start..end` (non-empty) in `handed_out` (start -> end of the
/// ranges claimed so far), unless it overlaps one of them.
fn claim(handed_out: &mut BTreeMap<usize, usize>, start: usize, end: usize) -> bool {
    let before = handed_out.range(..=start).next_back();
    if before.is_some_and(|(_, &e)| e > start) {
        return false;
    }
    let after = handed_out.range(start..).next();
    if after.is_some_and(|(&s, _)| s < end) {
        return false;
    }
    handed_out.insert(start, end);
    true
}

/// Whether the reader holds a legacy (non-ZIP) checkpoint; leaves it at
/// its start.
pub(crate) fn starts_legacy<R: Read + Seek>(reader: &mut R) -> Result<bool> {
    let io = |e| PtError::io("the checkpoint", e);
    reader.seek(SeekFrom::Start(0)).map_err(io)?;
    let mut head = Vec::with_capacity(14);
    reader.take(14).read_to_end(&mut head).map_err(io)?;
    reader.seek(SeekFrom::Start(0)).map_err(io)?;
    Ok(crate::legacy::is_legacy(&head))
}

/// The ZIP checkpoint `reader` reads (from `path`), opened for reading
/// records outside the ZIP reader: a second handle on the file, the
/// archive, and its `data.pkl`.
fn open_zip_file(
    reader: BufReader<File>,
    path: &Path,
    opts: &LoadOptions,
) -> Result<(File, Archive<BufReader<File>>, Vec<u8>)> {
    let file = reader
        .get_ref()
        .try_clone()
        .map_err(|e| PtError::io_path(path, e))?;
    let mut archive = Archive::open(reader)?;
    archive.assume_byte_order(opts.unmarked_big_endian);
    archive.skip_storage_crc32(opts.skip_crc32);
    let pickle = archive.read_small_record("data.pkl")?;
    Ok((file, archive, pickle))
}

fn open_file(path: &Path) -> Result<BufReader<File>> {
    let f = File::open(path).map_err(|e| PtError::io_path(path, e))?;
    Ok(BufReader::new(f))
}

/// Loads the checkpoint at `path` (what `torch.save` wrote), with every
/// storage on the CPU as saved. Safe for untrusted files: only the
/// weights-only allowlist is understood (see [`crate::unpickle`]).
///
/// ```
/// use torchcore_pt::{load, save, Value};
/// use c10_core::{Tensor, ScalarType};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.pt");
/// save(&Value::Tensor(Tensor::arange(0, 4, 1, ScalarType::Long)?), &path)?;
/// let Value::Tensor(t) = load(&path)? else { panic!("not a tensor") };
/// assert_eq!(t.to_vec::<i64>()?, [0, 1, 2, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load(path: impl AsRef<Path>) -> Result<Value> {
    load_with(path, &LoadOptions::default())
}

/// [`load`] with options.
pub fn load_with(path: impl AsRef<Path>, opts: &LoadOptions) -> Result<Value> {
    let path = path.as_ref();
    let reader = open_file(path)?;
    // Positioned reads need a file descriptor (and are foreign calls
    // Miri does not run); elsewhere the generic reader serves.
    #[cfg(all(unix, not(miri)))]
    let reader = {
        let mut reader = reader;
        if !starts_legacy(&mut reader)? {
            let (file, mut archive, pickle) = open_zip_file(reader, path, opts)?;
            let big_endian = archive.big_endian();
            let mut source = FileCopySource {
                archive: &mut archive,
                opts,
                pending: Vec::new(),
            };
            let mut rec = Recording::new(&mut source, opts);
            let value = unpickle(&pickle, &mut rec)?;
            let seen = rec.seen;
            crate::fileread::fill_records(&file, &mut source.pending, big_endian, opts.skip_crc32)?;
            return remap::apply(value, seen, opts);
        }
        reader
    };
    load_from_reader_with(reader, opts)
}

/// Loads a checkpoint from any seekable reader (a file, a
/// `Cursor<Vec<u8>>`).
///
/// ```
/// use torchcore_pt::{load_from_reader, save_to_writer, Value};
/// let bytes = save_to_writer(&Value::Int(5), std::io::Cursor::new(Vec::new()))?.into_inner();
/// assert_eq!(load_from_reader(std::io::Cursor::new(bytes))?, Value::Int(5));
/// # Ok::<(), torchcore_pt::PtError>(())
/// ```
pub fn load_from_reader<R: Read + Seek>(reader: R) -> Result<Value> {
    load_from_reader_with(reader, &LoadOptions::default())
}

/// [`load_from_reader`] with options.
pub fn load_from_reader_with<R: Read + Seek>(mut reader: R, opts: &LoadOptions) -> Result<Value> {
    if starts_legacy(&mut reader)? {
        return crate::legacy::load_legacy(reader, opts);
    }
    let mut archive = Archive::open(reader)?;
    archive.assume_byte_order(opts.unmarked_big_endian);
    archive.skip_storage_crc32(opts.skip_crc32);
    let pickle = archive.read_small_record("data.pkl")?;
    let mut source = CopySource {
        archive: &mut archive,
        opts,
    };
    let mut rec = Recording::new(&mut source, opts);
    let value = unpickle(&pickle, &mut rec)?;
    remap::apply(value, rec.seen, opts)
}

/// Loads the checkpoint at `path` with every storage a zero-copy,
/// copy-on-write memory map of its record (`torch.load(mmap=True)`): the
/// work is proportional to the number of tensors, not to their bytes, and
/// pages are read when touched. Writes to the tensors stay in this
/// process (the mapping is private). Records that are not 64-byte aligned
/// (torch always aligns them) are copied instead; CRCs of mapped records
/// are not checked (torch does not check them either).
///
/// ```
/// use torchcore_pt::{load_mmap, save, LoadOptions, Value};
/// use c10_core::{Tensor, ScalarType};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.pt");
/// save(&Value::Tensor(Tensor::arange(0, 4, 1, ScalarType::Float)?), &path)?;
/// // SAFETY: a private temporary file that nothing else writes or truncates.
/// let v = unsafe { load_mmap(&path, &LoadOptions::default())? };
/// assert_eq!(v.as_tensor().unwrap().to_vec::<f32>()?, [0.0, 1.0, 2.0, 3.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Safety
///
/// As [`alloc_cpu::mmap::map_file`]: until every loaded storage and tensor
/// is dropped, the file must not be written or truncated, by this process
/// or any other (see the mmap policy in `alloc_cpu::mmap`). When that
/// cannot be promised, use [`load`], which copies. With
/// [`LoadOptions::mmap_shared`] the mapping is shared: writes to the
/// loaded tensors reach the file (this load's own writes are the only ones
/// allowed while they live).
pub unsafe fn load_mmap(path: impl AsRef<Path>, opts: &LoadOptions) -> Result<Value> {
    let path = path.as_ref();
    let mut reader = open_file(path)?;
    if starts_legacy(&mut reader)? {
        return Err(PtError::LegacyMmap);
    }
    let (file, mut archive, pickle) = open_zip_file(reader, path, opts)?;
    let mut source = MmapSource {
        archive: &mut archive,
        file,
        path,
        opts,
        whole: None,
        handed_out: BTreeMap::new(),
    };
    let mut rec = Recording::new(&mut source, opts);
    let value = unpickle(&pickle, &mut rec)?;
    remap::apply(value, rec.seen, opts)
}

/// An ordered `name -> Tensor` map: a module's `state_dict()`.
///
/// ```
/// use torchcore_pt::StateDict;
/// use c10_core::{Tensor, ScalarType};
/// let mut sd = StateDict::default();
/// sd.insert("weight", Tensor::zeros(&[2, 2], ScalarType::Float)?);
/// assert_eq!(sd.keys().collect::<Vec<_>>(), ["weight"]);
/// assert_eq!(sd.get("weight").unwrap().sizes(), &[2, 2]);
/// # Ok::<(), c10_core::TensorError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct StateDict {
    entries: Vec<(String, Tensor)>,
    index: HashMap<String, usize>,
}

impl StateDict {
    /// Adds or replaces an entry (a replaced entry keeps its position).
    pub fn insert(&mut self, name: impl Into<String>, tensor: Tensor) {
        let name = name.into();
        match self.index.get(&name) {
            Some(&i) => self.entries[i].1 = tensor,
            None => {
                self.index.insert(name.clone(), self.entries.len());
                self.entries.push((name, tensor));
            }
        }
    }

    /// The tensor under `name`.
    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.index.get(name).map(|&i| &self.entries[i].1)
    }

    /// The names, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// The entries, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Tensor)> {
        self.entries.iter().map(|(k, t)| (k.as_str(), t))
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The state dict as a [`Value`] (an `OrderedDict` of tensors) for
    /// [`save`](crate::save).
    pub fn to_value(&self) -> Value {
        let mut d = crate::value::OrderedDict::default();
        for (k, t) in &self.entries {
            d.items
                .push((Value::Str(k.clone()), Value::Tensor(t.clone())));
        }
        Value::OrderedDict(d)
    }

    /// A state dict from a loaded value: a dict or `OrderedDict` of
    /// string keys and tensors (or parameters).
    pub fn from_value(v: &Value) -> Result<StateDict> {
        let items = v.dict_items().ok_or_else(|| {
            PtError::Tensor(format!(
                "a state dict is a dict of tensors; the checkpoint holds a {}",
                v.type_name()
            ))
        })?;
        let mut sd = StateDict::default();
        for (k, x) in items {
            let Value::Str(name) = k else {
                return Err(PtError::Tensor(format!(
                    "state dict key is a {}, not a str",
                    k.type_name()
                )));
            };
            let t = x.as_tensor().ok_or_else(|| {
                PtError::Tensor(format!(
                    "state dict entry {name:?} is a {}, not a tensor (use load() and Value::tensors() for nested checkpoints)",
                    x.type_name()
                ))
            })?;
            sd.insert(name.clone(), t.clone());
        }
        Ok(sd)
    }
}

impl<'a> IntoIterator for &'a StateDict {
    type Item = (&'a str, &'a Tensor);
    type IntoIter = Box<dyn Iterator<Item = (&'a str, &'a Tensor)> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// Loads a state dict (`torch.save(model.state_dict(), path)`): an ordered
/// `name -> Tensor` map.
///
/// ```
/// use torchcore_pt::{load_state_dict, save, StateDict};
/// use c10_core::{Tensor, ScalarType};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("sd.pt");
/// let mut sd = StateDict::default();
/// sd.insert("bias", Tensor::ones(&[3], ScalarType::Float)?);
/// save(&sd.to_value(), &path)?;
/// let back = load_state_dict(&path)?;
/// assert_eq!(back.get("bias").unwrap().to_vec::<f32>()?, [1.0, 1.0, 1.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_state_dict(path: impl AsRef<Path>) -> Result<StateDict> {
    StateDict::from_value(&load(path)?)
}

/// The archive name torch would use for `path` (its file stem).
pub(crate) fn archive_name_for(path: &Path) -> String {
    let stem = PathBuf::from(path)
        .file_stem()
        .and_then(|s| s.to_str())
        .map(str::to_string)
        .unwrap_or_default();
    if crate::unpickle::valid_key(&stem) {
        stem
    } else {
        "archive".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claimed_ranges_never_overlap() {
        let mut h = BTreeMap::new();
        assert!(claim(&mut h, 64, 128));
        assert!(claim(&mut h, 128, 192)); // touching is not overlapping
        assert!(claim(&mut h, 0, 64));
        assert!(!claim(&mut h, 64, 128)); // the same range twice
        assert!(!claim(&mut h, 100, 110)); // inside one
        assert!(!claim(&mut h, 32, 70)); // across a start
        assert!(!claim(&mut h, 190, 300)); // across an end
        assert!(!claim(&mut h, 0, 1000)); // around several
        assert!(claim(&mut h, 192, 193));
        assert_eq!(h.len(), 4);
    }
}
