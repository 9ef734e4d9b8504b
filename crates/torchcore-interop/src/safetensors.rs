//! `.safetensors` files (feature `safetensors`).
//!
//! * [`load`] reads the file **once** into one storage
//!   ([`alloc_cpu::mmap::read_file`]) and makes every tensor a view of it:
//!   one copy of the file, safe whatever happens to the file afterwards;
//!   the tensors are ordinary writable tensors.
//! * [`load_mmap`] (`unsafe`) maps the file **once**, read-only
//!   ([`alloc_cpu::mmap::map_file`] with [`MapMode::ReadOnly`]), and makes
//!   every tensor a view of that mapping: no bytes are copied, and writing
//!   to any of them fails with the storage's read-only error, which names
//!   the file and says to clone the tensor first. The storage (so the
//!   mapping) lives as long as any tensor from the file does. It is
//!   `unsafe` because a file changed or truncated while mapped breaks the
//!   storage's guarantees (changing bytes under a borrow, or `SIGBUS`; see
//!   [`alloc_cpu::mmap`]): the caller promises that it is not.
//! * A tensor whose data does not start at a multiple of its element size
//!   (counted from the start of the file) cannot be a view, because tensor
//!   offsets are counted in elements. Files written by the reference
//!   implementation never contain one (it pads the header to 8 bytes and
//!   orders tensors by decreasing alignment), but a hand-made file may: such
//!   a tensor is **copied** into its own 64-byte aligned storage (read-only
//!   if the file's storage is), and its name is listed by
//!   [`SafetensorsFile::copied`].
//! * [`save`] writes tensors of any layout (non-contiguous ones are made
//!   contiguous on the way; nothing else is copied: the bytes are written
//!   straight from the storages, under their read guards) with the
//!   reference header: dtype names (`F32`, `BF16`, `I64`, ...), shapes,
//!   `data_offsets`, an 8-byte little-endian header length, the header
//!   padded with spaces to a multiple of 8 bytes, tensors ordered by
//!   decreasing alignment then name, and an optional `__metadata__` map.
//!
//! Parsing, validating and writing the format is done by the `safetensors`
//! crate (Hugging Face's reference implementation, the same code that the
//! Python package runs): its `read_metadata` checks the header against the
//! buffer (offsets contiguous, sizes matching shapes, no overflow), and
//! `serialize_to_file` writes the file through a temporary file and a
//! rename, so saving over a file that is still mapped is safe.
//!
//! ```
//! # #[cfg(not(miri))] {
//! use c10_core::{ScalarType, Tensor};
//! use aten_shape::prelude::*;
//! use torchcore_interop::safetensors::{load, load_mmap, save};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("model.safetensors");
//! let w = Tensor::arange(0.0, 6.0, 1.0, ScalarType::Float)?.view(&[2, 3])?;
//! save([("w", &w.t()?)], None, &path)?; // non-contiguous: made contiguous
//!
//! let file = load(&path)?; // one copy, then independent of the file
//! let wt = file.get("w").ok_or("no tensor w")?;
//! assert_eq!(wt.sizes(), &[3, 2]);
//! assert_eq!(wt.to_vec::<f32>()?, vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
//! assert!(wt.storage().is_alias_of(file.storage())); // a view of the file's image
//!
//! // SAFETY: the file is private to this example; nothing writes or
//! // truncates it while `mapped` is alive.
//! let mapped = unsafe { load_mmap(&path)? };
//! let wm = mapped.get("w").ok_or("no tensor w")?;
//! assert_eq!(wm.to_vec::<f32>()?, wt.to_vec::<f32>()?);
//! let err = wm.set::<f32>(&[0, 0], 1.0).unwrap_err(); // the mapping is read-only
//! assert!(err.to_string().contains("clone the tensor"));
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

pub use ::safetensors::Dtype;
use ::safetensors::{SafeTensors, View};
use alloc_cpu::mmap::{map_file, read_file, MapMode};
use aten_shape::prelude::*;
use c10_core::geometry::contiguous_strides;
use c10_core::{ScalarType, Tensor};
use c10_storage::{Storage, StorageReadGuard};

use crate::error::{InteropError, Result};

/// The safetensors dtype of `dtype`.
///
/// `BOOL`, `U8`, `I8`, `I16`, `U16`, `F16`, `BF16`, `I32`, `U32`, `F32`,
/// `C64` (`complex64`), `F64`, `I64`, `U64`, and the float8 types
/// `F8_E5M2`, `F8_E4M3` (`float8_e4m3fn`, as `safetensors.torch` maps it),
/// `F8_E4M3FNUZ`, `F8_E5M2FNUZ`, `F8_E8M0`. Other dtypes (`complex128`,
/// `complex32`, quantized, sub-byte, bits) have no safetensors name.
///
/// ```
/// use c10_core::ScalarType;
/// use torchcore_interop::safetensors::{dtype_to_safetensors, Dtype};
/// assert_eq!(dtype_to_safetensors(ScalarType::BFloat16)?, Dtype::BF16);
/// assert!(dtype_to_safetensors(ScalarType::ComplexDouble).is_err());
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
pub fn dtype_to_safetensors(dtype: ScalarType) -> Result<Dtype> {
    use ScalarType as S;
    Ok(match dtype {
        S::Bool => Dtype::BOOL,
        S::Byte => Dtype::U8,
        S::Char => Dtype::I8,
        S::Short => Dtype::I16,
        S::UInt16 => Dtype::U16,
        S::Half => Dtype::F16,
        S::BFloat16 => Dtype::BF16,
        S::Int => Dtype::I32,
        S::UInt32 => Dtype::U32,
        S::Float => Dtype::F32,
        S::ComplexFloat => Dtype::C64,
        S::Double => Dtype::F64,
        S::Long => Dtype::I64,
        S::UInt64 => Dtype::U64,
        S::Float8_e5m2 => Dtype::F8_E5M2,
        S::Float8_e4m3fn => Dtype::F8_E4M3,
        S::Float8_e4m3fnuz => Dtype::F8_E4M3FNUZ,
        S::Float8_e5m2fnuz => Dtype::F8_E5M2FNUZ,
        S::Float8_e8m0fnu => Dtype::F8_E8M0,
        other => {
            return Err(InteropError::Dtype(format!(
                "safetensors has no dtype for {other}; convert the tensor first"
            )))
        }
    })
}

/// The dtype of a safetensors dtype (the inverse of
/// [`dtype_to_safetensors`]). The sub-byte `F4`, `F6_E2M3` and `F6_E3M2`
/// are refused.
///
/// ```
/// use c10_core::ScalarType;
/// use torchcore_interop::safetensors::{dtype_from_safetensors, Dtype};
/// assert_eq!(dtype_from_safetensors(Dtype::F8_E4M3)?, ScalarType::Float8_e4m3fn);
/// assert_eq!(dtype_from_safetensors(Dtype::I64)?, ScalarType::Long);
/// assert!(dtype_from_safetensors(Dtype::F4).is_err()); // sub-byte
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
pub fn dtype_from_safetensors(dtype: Dtype) -> Result<ScalarType> {
    use ScalarType as S;
    Ok(match dtype {
        Dtype::BOOL => S::Bool,
        Dtype::U8 => S::Byte,
        Dtype::I8 => S::Char,
        Dtype::I16 => S::Short,
        Dtype::U16 => S::UInt16,
        Dtype::F16 => S::Half,
        Dtype::BF16 => S::BFloat16,
        Dtype::I32 => S::Int,
        Dtype::U32 => S::UInt32,
        Dtype::F32 => S::Float,
        Dtype::C64 => S::ComplexFloat,
        Dtype::F64 => S::Double,
        Dtype::I64 => S::Long,
        Dtype::U64 => S::UInt64,
        Dtype::F8_E5M2 => S::Float8_e5m2,
        Dtype::F8_E4M3 => S::Float8_e4m3fn,
        Dtype::F8_E4M3FNUZ => S::Float8_e4m3fnuz,
        Dtype::F8_E5M2FNUZ => S::Float8_e5m2fnuz,
        Dtype::F8_E8M0 => S::Float8_e8m0fnu,
        other => {
            return Err(InteropError::Dtype(format!(
                "safetensors dtype {other} (a sub-byte type) has no dtype here"
            )))
        }
    })
}

fn check_little_endian() -> Result<()> {
    if cfg!(target_endian = "big") {
        return Err(InteropError::Format(
            "safetensors files are little-endian; this big-endian target cannot view them without byte swapping, which is not implemented".into(),
        ));
    }
    Ok(())
}

/// The tensors of a loaded file, in a map by name, with the file's
/// `__metadata__` and the storage they view.
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// use c10_storage::Storage;
/// use torchcore_interop::safetensors::{load_from_storage, serialize};
/// let bytes = serialize([("a", &Tensor::zeros(&[2, 2], ScalarType::Float)?)], None)?;
/// let file = load_from_storage(Storage::from_owner(bytes))?;
/// assert_eq!(file.len(), 1);
/// assert_eq!(file.get("a").map(|t| t.sizes().to_vec()), Some(vec![2, 2]));
/// # Ok::<(), torchcore_interop::InteropError>(())
/// ```
#[derive(Debug, Clone)]
pub struct SafetensorsFile {
    tensors: BTreeMap<String, Tensor>,
    metadata: Option<HashMap<String, String>>,
    storage: Storage,
    copied: Vec<String>,
}

impl SafetensorsFile {
    /// Every tensor, by name.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// use c10_storage::Storage;
    /// use torchcore_interop::safetensors::{load_from_storage, serialize};
    /// let (a, b) = (Tensor::arange(0, 3, 1, ScalarType::Int)?, Tensor::zeros(&[4], ScalarType::Half)?);
    /// let file = load_from_storage(Storage::from_owner(serialize([("a", &a), ("b", &b)], None)?))?;
    /// let numels: Vec<i64> = file.tensors().values().map(|t| t.numel()).collect();
    /// assert_eq!(numels, vec![3, 4]); // by name
    /// # Ok::<(), torchcore_interop::InteropError>(())
    /// ```
    pub fn tensors(&self) -> &BTreeMap<String, Tensor> {
        &self.tensors
    }

    /// The tensors, by name, letting go of the rest.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// use c10_storage::Storage;
    /// use torchcore_interop::safetensors::{load_from_storage, serialize};
    /// let bytes = serialize([("w", &Tensor::arange(0, 3, 1, ScalarType::Long)?)], None)?;
    /// let mut tensors = load_from_storage(Storage::from_owner(bytes))?.into_tensors();
    /// let w = tensors.remove("w").ok_or("no w")?;
    /// assert_eq!(w.to_vec::<i64>()?, vec![0, 1, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_tensors(self) -> BTreeMap<String, Tensor> {
        self.tensors
    }

    /// One tensor.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// use c10_storage::Storage;
    /// use torchcore_interop::safetensors::{load_from_storage, serialize};
    /// let bytes = serialize([("bias", &Tensor::zeros(&[8], ScalarType::Float)?)], None)?;
    /// let file = load_from_storage(Storage::from_owner(bytes))?;
    /// assert_eq!(file.get("bias").map(|t| t.dtype()), Some(ScalarType::Float));
    /// assert!(file.get("weight").is_none());
    /// # Ok::<(), torchcore_interop::InteropError>(())
    /// ```
    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.tensors.get(name)
    }

    /// Tensor names, sorted.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// use c10_storage::Storage;
    /// use torchcore_interop::safetensors::{load_from_storage, serialize};
    /// let t = Tensor::zeros(&[1], ScalarType::Float)?;
    /// let file = load_from_storage(Storage::from_owner(serialize([("z", &t), ("a", &t)], None)?))?;
    /// assert_eq!(file.names().collect::<Vec<_>>(), ["a", "z"]);
    /// # Ok::<(), torchcore_interop::InteropError>(())
    /// ```
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tensors.keys().map(String::as_str)
    }

    /// Number of tensors.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// use c10_storage::Storage;
    /// use torchcore_interop::safetensors::{load_from_storage, serialize};
    /// let t = Tensor::zeros(&[1], ScalarType::Float)?;
    /// let file = load_from_storage(Storage::from_owner(serialize([("x", &t), ("y", &t)], None)?))?;
    /// assert_eq!(file.len(), 2);
    /// # Ok::<(), torchcore_interop::InteropError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.tensors.len()
    }

    /// Whether the file holds no tensor.
    ///
    /// ```
    /// use c10_core::Tensor;
    /// use c10_storage::Storage;
    /// use torchcore_interop::safetensors::{load_from_storage, serialize};
    /// let bytes = serialize(std::iter::empty::<(&str, &Tensor)>(), None)?;
    /// assert!(load_from_storage(Storage::from_owner(bytes))?.is_empty());
    /// # Ok::<(), torchcore_interop::InteropError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.tensors.is_empty()
    }

    /// The file's `__metadata__` (free-form string pairs), if any.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use c10_core::{ScalarType, Tensor};
    /// use c10_storage::Storage;
    /// use torchcore_interop::safetensors::{load_from_storage, serialize};
    /// let meta = HashMap::from([("format".to_string(), "pt".to_string())]);
    /// let bytes = serialize([("t", &Tensor::zeros(&[1], ScalarType::Float)?)], Some(meta.clone()))?;
    /// assert_eq!(load_from_storage(Storage::from_owner(bytes))?.metadata(), Some(&meta));
    /// # Ok::<(), torchcore_interop::InteropError>(())
    /// ```
    pub fn metadata(&self) -> Option<&HashMap<String, String>> {
        self.metadata.as_ref()
    }

    /// The storage holding the whole file (header included) that every
    /// tensor but the [`copied`](SafetensorsFile::copied) ones views.
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// use c10_storage::Storage;
    /// use torchcore_interop::safetensors::{load_from_storage, serialize};
    /// let bytes = serialize([("t", &Tensor::zeros(&[4], ScalarType::Float)?)], None)?;
    /// let n = bytes.len();
    /// let file = load_from_storage(Storage::from_owner(bytes))?;
    /// assert_eq!(file.storage().nbytes(), n); // the whole image, header included
    /// assert!(file.get("t").is_some_and(|t| t.storage().is_alias_of(file.storage())));
    /// # Ok::<(), torchcore_interop::InteropError>(())
    /// ```
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// Names of the tensors that were copied because their data was not
    /// aligned to their element size in the file (empty for files written
    /// by the reference implementation).
    ///
    /// ```
    /// use c10_core::{ScalarType, Tensor};
    /// use c10_storage::Storage;
    /// use torchcore_interop::safetensors::{load_from_storage, serialize};
    /// let bytes = serialize([("t", &Tensor::zeros(&[4], ScalarType::Double)?)], None)?;
    /// let file = load_from_storage(Storage::from_owner(bytes))?;
    /// assert!(file.copied().is_empty()); // the reference writer aligns every tensor
    /// # Ok::<(), torchcore_interop::InteropError>(())
    /// ```
    pub fn copied(&self) -> &[String] {
        &self.copied
    }
}

/// Loads `path` by reading it once into one storage: every tensor is a view
/// of that copy of the file (see the [module docs](self) for the rare
/// tensor copied a second time because of its alignment). Safe whatever
/// happens to the file afterwards; [`load_mmap`] avoids the copy.
///
/// ```
/// # #[cfg(not(miri))] {
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::safetensors::{load, save};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.safetensors");
/// save([("t", &Tensor::arange(0, 3, 1, ScalarType::Int)?)], None, &path)?;
/// let t = load(&path)?.into_tensors().remove("t").ok_or("no t")?;
/// std::fs::remove_file(&path)?; // the tensors own their bytes
/// t.set::<i32>(&[0], 7)?;
/// assert_eq!(t.to_vec::<i32>()?, vec![7, 1, 2]);
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load(path: impl AsRef<Path>) -> Result<SafetensorsFile> {
    let storage = read_file(path.as_ref())?;
    load_from_storage(storage)
}

/// [`load`], keeping only the tensors.
///
/// ```
/// # #[cfg(not(miri))] {
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::safetensors::{load_file, save};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.safetensors");
/// save([("t", &Tensor::zeros(&[2], ScalarType::Float)?)], None, &path)?;
/// assert_eq!(load_file(&path)?["t"].sizes(), &[2]);
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_file(path: impl AsRef<Path>) -> Result<BTreeMap<String, Tensor>> {
    Ok(load(path)?.into_tensors())
}

/// Loads `path` through one read-only memory mapping, without copying:
/// every tensor is a view of it (see the [module docs](self) for the rare
/// copied case), and writes are refused with an error that names the file.
///
/// # Safety
///
/// As [`alloc_cpu::mmap::map_file`]: until every tensor from the file is
/// dropped, nothing may write or truncate the file (another process, a
/// writable mapping of it in this one, or `std::fs`). [`save`] over the same
/// path is fine: it writes a new file and renames it over the old one,
/// which stays mapped unchanged.
///
/// ```
/// # #[cfg(not(miri))] {
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::safetensors::{load_mmap, save};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("m.safetensors");
/// save([("m", &Tensor::arange(0, 4, 1, ScalarType::Int)?)], None, &path)?;
/// // SAFETY: the file is private to this example; nothing writes or
/// // truncates it while the mapping is alive.
/// let file = unsafe { load_mmap(&path)? };
/// let m = file.get("m").ok_or("no m")?;
/// assert_eq!(m.to_vec::<i32>()?, vec![0, 1, 2, 3]);
/// assert!(m.storage().is_read_only()); // clone it to get a writable copy
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub unsafe fn load_mmap(path: impl AsRef<Path>) -> Result<SafetensorsFile> {
    // SAFETY: forwarded to the caller.
    let storage = unsafe { map_file(path.as_ref(), MapMode::ReadOnly) }?;
    load_from_storage(storage)
}

/// Reads the tensors of a safetensors image held by any CPU storage (a
/// mapped file, a `Vec<u8>` adopted with `Storage::from_owner`, ...), as
/// views of it. The tensors are writable if and only if the storage is.
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// use c10_storage::Storage;
/// use torchcore_interop::safetensors::{load_from_storage, serialize};
/// let bytes = serialize([("t", &Tensor::arange(0, 3, 1, ScalarType::Long)?)], None)?;
/// let file = load_from_storage(Storage::from_read_only_owner(bytes, "an in-memory image"))?;
/// let t = file.get("t").ok_or("no t")?;
/// assert_eq!(t.to_vec::<i64>()?, vec![0, 1, 2]);
/// assert!(t.set::<i64>(&[0], 9).is_err()); // read-only storage, read-only tensors
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_from_storage(storage: Storage) -> Result<SafetensorsFile> {
    check_little_endian()?;
    let guard = storage.read()?;
    let bytes = guard.bytes()?;
    let (header_len, meta) = SafeTensors::read_metadata(bytes)?;
    // `read_metadata` checked that 8 + header_len + data = the buffer.
    let data_start = 8 + header_len;
    let mut tensors = BTreeMap::new();
    let mut copied = Vec::new();
    for name in meta.offset_keys() {
        let Some(info) = meta.info(&name) else {
            continue; // offset_keys lists exactly the names info knows
        };
        let dtype = dtype_from_safetensors(info.dtype)?;
        let sizes: Vec<i64> = info
            .shape
            .iter()
            .map(|&n| i64::try_from(n))
            .collect::<Result<_, _>>()
            .map_err(|_| {
                InteropError::Format(format!(
                    "tensor {name:?} has a shape {:?} too large for tensor sizes",
                    info.shape
                ))
            })?;
        let strides = contiguous_strides(&sizes)?;
        let (start, end) = info.data_offsets;
        let byte_offset = data_start + start;
        let itemsize = dtype.itemsize();
        let tensor = if byte_offset % itemsize == 0 {
            let offset = i64::try_from(byte_offset / itemsize)
                .map_err(|_| InteropError::Format("file too large".into()))?;
            Tensor::from_storage(storage.clone(), dtype, &sizes, &strides, offset)?
        } else {
            let src = bytes.get(byte_offset..data_start + end).ok_or_else(|| {
                InteropError::Format(format!("tensor {name:?} lies outside the file"))
            })?;
            let own = copy_tensor_bytes(src, storage.is_read_only())?;
            copied.push(name.clone());
            Tensor::from_storage(own, dtype, &sizes, &strides, 0)?
        };
        tensors.insert(name, tensor);
    }
    let metadata = meta.metadata().clone();
    drop(guard);
    Ok(SafetensorsFile {
        tensors,
        metadata,
        storage,
        copied,
    })
}

/// A new CPU storage (64-byte aligned) holding a copy of `bytes`,
/// read-only when the file's image is (so every tensor of a file behaves
/// alike).
fn copy_tensor_bytes(bytes: &[u8], read_only: bool) -> Result<Storage> {
    let storage = Storage::new(bytes.len(), alloc_cpu::cpu_allocator(), false)?;
    storage.write()?.bytes_mut()?.copy_from_slice(bytes);
    if !read_only {
        return Ok(storage);
    }
    storage
        .into_read_only(
            "loaded from a safetensors file (copied: the tensor was not aligned to its element size in the file)",
        )
        .map_err(|_| InteropError::Format("a fresh storage was unexpectedly shared".into()))
}

/// A contiguous tensor's bytes, as the `safetensors` writer wants them.
struct TensorBytes<'a> {
    dtype: Dtype,
    shape: Vec<usize>,
    data: &'a [u8],
}

impl View for TensorBytes<'_> {
    fn dtype(&self) -> Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Borrowed(self.data)
    }
    fn data_len(&self) -> usize {
        self.data.len()
    }
}

/// A tensor ready to be written: contiguous, on the CPU, with a
/// safetensors dtype.
struct Prepared {
    name: String,
    dtype: Dtype,
    shape: Vec<usize>,
    tensor: Tensor,
}

fn prepare<'t, I, S>(tensors: I) -> Result<Vec<Prepared>>
where
    I: IntoIterator<Item = (S, &'t Tensor)>,
    S: AsRef<str>,
{
    let mut out: Vec<Prepared> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (name, t) in tensors {
        let name = name.as_ref().to_string();
        if !seen.insert(name.clone()) {
            return Err(InteropError::Format(format!(
                "the tensor name {name:?} appears twice; safetensors names are unique"
            )));
        }
        if !t.device().is_cpu() {
            return Err(InteropError::Device(format!(
                "tensor {name:?} is on {}; copy it to the CPU before saving",
                t.device()
            )));
        }
        let dtype = dtype_to_safetensors(t.dtype())?;
        let shape = t.sizes().iter().map(|&n| n as usize).collect();
        out.push(Prepared {
            name,
            dtype,
            shape,
            tensor: t.contiguous()?,
        });
    }
    Ok(out)
}

/// Runs `write` over borrowed views of the prepared tensors' bytes, with a
/// read guard on each distinct storage (taken in address order, as
/// `Storage::lock_write_read` does, so concurrent savers cannot deadlock).
fn with_views<R>(
    prepared: &[Prepared],
    write: impl FnOnce(Vec<(&str, TensorBytes<'_>)>) -> Result<R>,
) -> Result<R> {
    let mut storages: Vec<&Storage> = prepared.iter().map(|p| p.tensor.storage()).collect();
    storages.sort_by_key(|s| s.id());
    storages.dedup_by_key(|s| s.id());
    let guards: Vec<(usize, StorageReadGuard<'_>)> = storages
        .iter()
        .map(|s| Ok((s.id(), s.read()?)))
        .collect::<Result<_>>()?;
    let mut views = Vec::with_capacity(prepared.len());
    for p in prepared {
        let id = p.tensor.storage().id();
        let Ok(i) = guards.binary_search_by_key(&id, |(gid, _)| *gid) else {
            continue; // every storage was guarded above
        };
        let bytes = guards[i].1.bytes()?;
        let itemsize = p.tensor.element_size();
        let start = p.tensor.storage_offset() as usize * itemsize;
        let len = p.tensor.numel() as usize * itemsize;
        let data = if len == 0 {
            &[][..]
        } else {
            start
                .checked_add(len)
                .and_then(|end| bytes.get(start..end))
                .ok_or_else(|| {
                    InteropError::Layout(format!(
                        "tensor {:?} does not fit in its storage (was the storage shrunk?)",
                        p.name
                    ))
                })?
        };
        views.push((
            p.name.as_str(),
            TensorBytes {
                dtype: p.dtype,
                shape: p.shape.clone(),
                data,
            },
        ));
    }
    write(views)
}

/// Saves `tensors` (name, tensor pairs, any layout, CPU) to `path` as a
/// safetensors file that `safetensors.torch.load_file` and every other
/// reader load back identically. Non-contiguous tensors are made
/// contiguous on the way; the rest are written straight from their
/// storages. `metadata` becomes the header's `__metadata__`.
///
/// The file is written to a temporary file next to `path` and renamed over
/// it, so overwriting a file that is still mapped (by [`load`]) is safe.
///
/// ```
/// # #[cfg(not(miri))] {
/// use std::collections::HashMap;
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::safetensors::{load, save};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("ckpt.safetensors");
/// let w = Tensor::arange(0.0, 4.0, 1.0, ScalarType::Float)?;
/// save([("w", &w)], Some(HashMap::from([("step".into(), "100".into())])), &path)?;
/// let file = load(&path)?;
/// assert_eq!(file.get("w").ok_or("no w")?.to_vec::<f32>()?, w.to_vec::<f32>()?);
/// assert_eq!(file.metadata().and_then(|m| m.get("step")).map(String::as_str), Some("100"));
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save<'t, I, S>(
    tensors: I,
    metadata: Option<HashMap<String, String>>,
    path: impl AsRef<Path>,
) -> Result<()>
where
    I: IntoIterator<Item = (S, &'t Tensor)>,
    S: AsRef<str>,
{
    check_little_endian()?;
    let prepared = prepare(tensors)?;
    let path = path.as_ref();
    with_views(&prepared, |views| {
        Ok(::safetensors::serialize_to_file(views, metadata, path)?)
    })
}

/// [`save`] into a byte vector instead of a file.
///
/// ```
/// use c10_core::{ScalarType, Tensor};
/// use torchcore_interop::safetensors::serialize;
/// let bytes = serialize([("t", &Tensor::zeros(&[2], ScalarType::Float)?)], None)?;
/// let header_len = u64::from_le_bytes(bytes[..8].try_into().map_err(|_| "short")?) as usize;
/// assert_eq!(header_len % 8, 0); // padded to 8 bytes
/// assert_eq!(bytes.len(), 8 + header_len + 2 * 4); // header, then the data
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn serialize<'t, I, S>(tensors: I, metadata: Option<HashMap<String, String>>) -> Result<Vec<u8>>
where
    I: IntoIterator<Item = (S, &'t Tensor)>,
    S: AsRef<str>,
{
    check_little_endian()?;
    let prepared = prepare(tensors)?;
    with_views(&prepared, |views| {
        Ok(::safetensors::serialize(views, metadata)?)
    })
}

#[cfg(test)]
mod tests;
