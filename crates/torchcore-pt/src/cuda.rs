//! Loading `cuda:N` storages onto their CUDA device (feature `cuda`), as
//! `torch.load` does by default: each storage is loaded on the CPU, then
//! copied once, whole, to its device, and every tensor over it is rebuilt
//! over the device copy, so storage sharing survives the move.

use c10_core::{Device, ScalarType, Storage, Tensor};

use crate::error::{PtError, Result};

/// The device index of a CUDA location tag: `cuda` (torch's current
/// device, 0 here) or `cuda:N`; `None` for anything else.
pub(crate) fn cuda_index(location: &str) -> Option<i8> {
    match location.strip_prefix("cuda") {
        Some("") => Some(0),
        Some(rest) => rest
            .strip_prefix(':')
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<i8>().ok()),
        None => None,
    }
}

/// A copy of CPU storage `storage` (key `key`, tag `location`) on its CUDA
/// device. Without a usable CUDA driver or device, the error is the one a
/// CPU-only build gives (it suggests `map_location`), as torch's.
pub(crate) fn to_cuda(key: &str, location: &str, storage: &Storage) -> Result<Storage> {
    let unavailable = || PtError::Location {
        key: key.to_string(),
        location: location.to_string(),
    };
    let index = cuda_index(location).ok_or_else(unavailable)?;
    let count = alloc_cuda::cuda::device_count().map_err(|_| unavailable())?;
    if usize::try_from(index).map_or(true, |i| i >= count) {
        return Err(PtError::Tensor(format!(
            "storage '{key}' was saved on {location}, but this machine has {count} CUDA device(s) \
             (use map_location to load it elsewhere)"
        )));
    }
    let n = i64::try_from(storage.nbytes())
        .map_err(|_| PtError::Tensor(format!("storage '{key}' is too large to move")))?;
    let bytes = Tensor::from_storage(storage.clone(), ScalarType::Byte, &[n], &[1], 0)?;
    let on_device = alloc_cuda::cuda::to_device(&bytes, Device::cuda(index))
        .map_err(|e| PtError::Tensor(format!("copying storage '{key}' to {location}: {e}")))?;
    Ok(on_device.storage().clone())
}

#[cfg(test)]
mod tests {
    use super::cuda_index;

    #[test]
    fn location_tags() {
        assert_eq!(cuda_index("cuda"), Some(0));
        assert_eq!(cuda_index("cuda:0"), Some(0));
        assert_eq!(cuda_index("cuda:7"), Some(7));
        for bad in [
            "cpu", "cuda:", "cuda:-1", "cuda:x", "cuda:999", "cudax", "mps:0",
        ] {
            assert_eq!(cuda_index(bad), None, "{bad}");
        }
    }
}
