//! torch's callable `map_location` ([`LoadOptions::storage_map`]): each
//! storage is offered to the callback once every storage is loaded, and a
//! storage it replaces is replaced under every tensor that used it.

use c10_core::{Storage, Tensor};

use crate::error::{PtError, Result};
use crate::load::{LoadOptions, MapLocation};
use crate::unpickle::{StorageRecord, StorageSource};
use crate::value::{StorageValue, Value};

/// Forwards to another source and, when asked to, notes every storage
/// loaded with its key and location tag.
pub(crate) struct Recording<'a> {
    inner: &'a mut dyn StorageSource,
    record: bool,
    /// [`crate::MapLocation::Meta`] without a storage map: ZIP records are
    /// not read, each storage is a meta storage of the record's size.
    meta: bool,
    py2_strings: crate::load::Py2Strings,
    pub(crate) seen: Vec<(String, String, Storage)>,
}

impl<'a> Recording<'a> {
    pub(crate) fn new(inner: &'a mut dyn StorageSource, opts: &LoadOptions) -> Recording<'a> {
        let meta = opts.storage_map.is_none() && opts.map_location == MapLocation::Meta;
        Recording {
            record: opts.storage_map.is_some()
                // A legacy checkpoint's storages are read, then replaced.
                || (meta && inner.legacy_ids())
                || (cfg!(feature = "cuda") && opts.map_location == MapLocation::AsSaved),
            inner,
            meta,
            py2_strings: opts.py2_strings,
            seen: Vec::new(),
        }
    }
}

impl StorageSource for Recording<'_> {
    fn load_storage(&mut self, rec: &StorageRecord<'_>) -> Result<Storage> {
        if self.meta && !self.inner.legacy_ids() {
            return crate::load::meta_storage(rec.nbytes);
        }
        let s = self.inner.load_storage(rec)?;
        if self.record {
            self.seen
                .push((rec.key.to_string(), rec.location.to_string(), s.clone()));
        }
        Ok(s)
    }

    fn legacy_ids(&self) -> bool {
        self.inner.legacy_ids()
    }

    fn py2_strings(&self) -> crate::load::Py2Strings {
        self.py2_strings
    }
}

/// Runs the storage map of `opts` (if any) over the storages `seen` and
/// puts the replacements it returns into `value`.
pub(crate) fn apply(
    value: Value,
    seen: Vec<(String, String, Storage)>,
    opts: &LoadOptions,
) -> Result<Value> {
    let Some(map) = &opts.storage_map else {
        if opts.map_location == MapLocation::Meta {
            return to_meta(value, seen);
        }
        return to_devices(value, seen);
    };
    let mut replaced = Vec::new();
    for (key, location, storage) in seen {
        match map(&key, &location, &storage)? {
            None if location == "cpu" => {}
            None => return Err(PtError::Location { key, location }),
            Some(new) if new.is_alias_of(&storage) => {}
            Some(new) => {
                let device_ok = new.device().is_cpu() || new.device().is_meta();
                if !device_ok || new.nbytes() < storage.nbytes() {
                    return Err(PtError::Tensor(format!(
                        "map_location returned, for storage '{key}' ({} bytes on the CPU), a \
                         storage of {} bytes on {}: torchcore needs a CPU or meta storage at \
                         least as large",
                        storage.nbytes(),
                        new.nbytes(),
                        new.device()
                    )));
                }
                replaced.push((storage, new));
            }
        }
    }
    if replaced.is_empty() {
        return Ok(value);
    }
    substitute(value, &replaced)
}

/// [`MapLocation::Meta`] for a legacy checkpoint: every storage read is
/// replaced by a meta storage of its size.
fn to_meta(value: Value, seen: Vec<(String, String, Storage)>) -> Result<Value> {
    let replaced = seen
        .into_iter()
        .map(|(_, _, s)| Ok((s.clone(), crate::load::meta_storage(s.nbytes())?)))
        .collect::<Result<Vec<_>>>()?;
    if replaced.is_empty() {
        return Ok(value);
    }
    substitute(value, &replaced)
}

/// Without a storage map: storages tagged `cuda:N` go to their CUDA
/// device (feature `cuda`; `seen` is empty otherwise, and with
/// `MapLocation::Cpu`).
fn to_devices(value: Value, seen: Vec<(String, String, Storage)>) -> Result<Value> {
    #[cfg(feature = "cuda")]
    {
        let mut replaced = Vec::new();
        for (key, location, storage) in seen {
            if location != "cpu" {
                let moved = crate::cuda::to_cuda(&key, &location, &storage)?;
                replaced.push((storage, moved));
            }
        }
        if !replaced.is_empty() {
            return substitute(value, &replaced);
        }
    }
    #[cfg(not(feature = "cuda"))]
    drop(seen);
    Ok(value)
}

fn replacement<'a>(s: &Storage, replaced: &'a [(Storage, Storage)]) -> Option<&'a Storage> {
    replaced
        .iter()
        .find(|(old, _)| old.is_alias_of(s))
        .map(|(_, new)| new)
}

/// A legacy storage view (a slice of its root storage) whose root was
/// replaced: the same bytes of the replacement.
fn reslice(sv: StorageValue, replaced: &[(Storage, Storage)]) -> Result<StorageValue> {
    let Some((root, offset)) = sv.storage.slice_of() else {
        return Ok(sv);
    };
    let Some(new) = replacement(root, replaced) else {
        return Ok(sv);
    };
    let end = offset.saturating_add(sv.storage.nbytes());
    Ok(StorageValue {
        storage: new.slice(offset..end)?,
        dtype: sv.dtype,
    })
}

fn retensor(t: Tensor, replaced: &[(Storage, Storage)]) -> Result<Tensor> {
    let Some(new) = replacement(t.storage(), replaced) else {
        return Ok(t);
    };
    let mut out = Tensor::from_storage(
        new.clone(),
        t.dtype(),
        t.sizes(),
        t.strides(),
        t.storage_offset(),
    )?;
    if t.requires_grad() {
        out.set_requires_grad(true)?;
    }
    Ok(out)
}

/// `value` with every tensor and storage over a replaced storage rebuilt
/// over its replacement. Values from the loader nest at most
/// [`crate::unpickle::MAX_DEPTH`] deep, which bounds the recursion.
fn substitute(value: Value, replaced: &[(Storage, Storage)]) -> Result<Value> {
    let all = |xs: Vec<Value>| -> Result<Vec<Value>> {
        xs.into_iter().map(|x| substitute(x, replaced)).collect()
    };
    let pairs = |xs: Vec<(Value, Value)>| -> Result<Vec<(Value, Value)>> {
        xs.into_iter()
            .map(|(k, v)| Ok((substitute(k, replaced)?, substitute(v, replaced)?)))
            .collect()
    };
    Ok(match value {
        Value::Tensor(t) => Value::Tensor(retensor(t, replaced)?),
        Value::Parameter(t) => Value::Parameter(retensor(t, replaced)?),
        Value::Storage(sv) => match replacement(&sv.storage, replaced) {
            Some(new) => Value::Storage(StorageValue {
                storage: new.clone(),
                dtype: sv.dtype,
            }),
            None => Value::Storage(reslice(sv, replaced)?),
        },
        Value::List(xs) => Value::List(all(xs)?),
        Value::Tuple(xs) => Value::Tuple(all(xs)?),
        Value::Set(xs) => Value::Set(all(xs)?),
        Value::Dict(xs) => Value::Dict(pairs(xs)?),
        Value::OrderedDict(mut d) => {
            d.items = pairs(std::mem::take(&mut d.items))?;
            d.attrs = std::mem::take(&mut d.attrs)
                .into_iter()
                .map(|(k, v)| Ok((k, substitute(v, replaced)?)))
                .collect::<Result<_>>()?;
            Value::OrderedDict(d)
        }
        other => other,
    })
}
