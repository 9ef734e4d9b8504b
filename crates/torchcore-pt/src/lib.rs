//! PyTorch checkpoint files for torchcore: `torch.save` and `torch.load`.
//!
//! * [`load`] / [`load_from_reader`] read the ZIP format every PyTorch since
//!   1.6 writes into a [`Value`] tree (dicts, lists, tuples, numbers,
//!   strings, `torch.Size`, dtypes, devices, tensors, parameters), with
//!   storage sharing preserved: tensors saved over one storage load as views
//!   of one [`Storage`](c10_core::Storage) again. [`load_state_dict`] gives
//!   an ordered `name -> Tensor` map.
//! * [`load_mmap`] maps each storage from the file instead of reading it
//!   (`torch.load(mmap=True)`); it is `unsafe` under the project's mmap
//!   policy (see `alloc_cpu::mmap`), and [`load`] is its safe, copying
//!   counterpart.
//! * [`save`] writes archives that `torch.load(weights_only=True)` reads
//!   back bit-exactly, deterministically.
//!
//! Loading is safe by construction: the pickle is run by a small VM
//! ([`unpickle`]) that knows torch's weights-only allowlist and nothing
//! else; any other global is an error naming it, and nothing is imported
//! or called. See `docs/checkpoints.md` for the formats and what is
//! refused.
//!
//! ```
//! use torchcore_pt::{load, save, Value};
//! use c10_core::{Tensor, ScalarType};
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("model.pt");
//! let w = Tensor::ones(&[2, 3], ScalarType::Float)?;
//! let mut sd = torchcore_pt::StateDict::default();
//! sd.insert("weight", w);
//! save(&sd.to_value(), &path)?;
//! let back = torchcore_pt::load_state_dict(&path)?;
//! assert_eq!(back.get("weight").unwrap().sizes(), &[2, 3]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod archive;
#[cfg(feature = "cuda")]
mod cuda;
mod error;
#[cfg(all(unix, not(miri)))]
mod fileread;
pub mod inspect;
mod legacy;
mod load;
mod remap;
mod save;
pub mod unpickle;
mod value;

pub use error::{PtError, Result};
pub use load::{
    load, load_from_reader, load_from_reader_with, load_mmap, load_state_dict, load_with,
    LoadOptions, MapLocation, Py2Strings, StateDict, StorageMap,
};
pub use save::{
    save, save_legacy_to_writer, save_to_writer, save_to_writer_with, save_with,
    save_with_progress, Progress, SaveOptions, STORAGE_ALIGNMENT,
};
pub use value::{OrderedDict, StorageValue, Value};
