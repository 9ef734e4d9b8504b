//! Fuzz target: the weights-only pickle VM of torchcore-pt on arbitrary
//! bytes. Storages are served zero-filled (up to 1 MiB; larger requests
//! are refused, as a short record would be). No input may panic, abort or
//! allocate out of proportion to its length; whatever loads must describe
//! itself (walking the whole tree) without trouble.
#![no_main]

use c10_core::Storage;
use libfuzzer_sys::fuzz_target;
use torchcore_pt::unpickle::{unpickle, StorageRecord, StorageSource};
use torchcore_pt::PtError;

struct Zeros;

impl StorageSource for Zeros {
    fn load_storage(&mut self, rec: &StorageRecord<'_>) -> Result<Storage, PtError> {
        if rec.nbytes > 1 << 20 {
            return Err(PtError::Archive(format!("storage {}: record too short", rec.key)));
        }
        Ok(alloc_cpu::empty_storage(rec.nbytes)?)
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = unpickle(data, &mut Zeros) {
        for (_, t) in v.tensors() {
            // Every loaded tensor lies inside its storage.
            let _ = t.to_vec::<u8>();
        }
        let _ = format!("{v:?}");
    }
});
