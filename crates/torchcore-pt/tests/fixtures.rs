//! Loads the archives real PyTorch 2.15 wrote (checked in under
//! tests/fixtures/torch-2.15, made by `tools/pt_corpus.py generate`) and
//! compares each with torch's own description of what it loads to.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use torchcore_pt::{load_with, LoadOptions, MapLocation, PtError};

fn check_dir(dir: &Path) {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let files = manifest.as_object().unwrap();
    assert!(files.len() >= 13, "corpus has {} archives", files.len());
    for (name, expected) in files {
        let path = dir.join(name);
        if name.starts_with("legacy") {
            // The legacy (non-ZIP) format: read, from a path and from
            // memory; refused for mmap, as torch refuses it.
            let opts = LoadOptions::default();
            let v = load_with(&path, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                &common::describe(&v),
                expected,
                "{name} (legacy, from a path)"
            );
            let bytes = std::fs::read(&path).unwrap();
            let v = torchcore_pt::load_from_reader(std::io::Cursor::new(bytes)).unwrap();
            assert_eq!(
                &common::describe(&v),
                expected,
                "{name} (legacy, from memory)"
            );
            // SAFETY: the fixture files are not written while mapped.
            let err = unsafe { torchcore_pt::load_mmap(&path, &opts) }.unwrap_err();
            assert!(matches!(err, PtError::LegacyMmap), "{name}: {err}");
            assert!(err
                .to_string()
                .contains("mmap can only be used with files saved in the ZIP format"));
            continue;
        }
        if expected["t"] == "refused" {
            let err = torchcore_pt::load(&path).unwrap_err();
            let global = expected["global"].as_str().unwrap();
            assert!(
                err.to_string()
                    .contains(&format!("Unsupported global: GLOBAL {global}")),
                "{name}: {err}"
            );
            let report = torchcore_pt::inspect::inspect(&path).unwrap();
            assert_eq!(report.refused_globals().collect::<Vec<_>>(), [global]);
            continue;
        }
        let opts = LoadOptions::default().map_location(MapLocation::Cpu);
        let v = load_with(&path, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&common::describe(&v), expected, "{name} (copying load)");
        // SAFETY: the fixture files are not written while mapped.
        let m = unsafe { torchcore_pt::load_mmap(&path, &opts) }
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&common::describe(&m), expected, "{name} (mmap load)");
    }
}

#[test]
#[cfg_attr(miri, ignore = "memory maps files (foreign mmap calls)")]
fn torch_written_fixtures_load_exactly() {
    check_dir(&common::fixtures());
}

#[test]
fn cuda_tag_needs_map_location() {
    let err = torchcore_pt::load(common::fixtures().join("cuda_tag.pt")).unwrap_err();
    assert!(
        matches!(&err, PtError::Location { location, .. } if location == "cuda:0"),
        "{err}"
    );
    assert!(err.to_string().contains("map_location"), "{err}");
}

#[test]
fn shared_storage_mutation_shows_in_both() {
    let v = torchcore_pt::load(common::fixtures().join("shared.pt")).unwrap();
    let items = v.dict_items().unwrap();
    let numbers = items[0].1.as_tensor().unwrap().clone();
    let evens = items[1].1.as_tensor().unwrap().clone();
    assert!(numbers.storage().is_alias_of(evens.storage()));
    // evens.fill_(0): a strided write through the view shows in numbers.
    evens.fill_(0i64).unwrap();
    assert_eq!(
        numbers.to_vec::<i64>().unwrap(),
        [1, 0, 3, 0, 5, 0, 7, 0, 9]
    );
}

#[test]
fn state_dict_loads_in_order() {
    let sd = torchcore_pt::load_state_dict(common::fixtures().join("state_dict.pt")).unwrap();
    assert_eq!(sd.keys().collect::<Vec<_>>(), ["weight", "bias"]);
    assert_eq!(sd.get("weight").unwrap().sizes(), &[2, 3]);
    assert_eq!(sd.get("bias").unwrap().sizes(), &[2]);
}

#[test]
fn storage_map_is_called_once_per_storage_and_can_replace() {
    use std::sync::{Arc, Mutex};
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = calls.clone();
    let opts = LoadOptions::default().storage_map(move |key, location, s| {
        seen.lock()
            .unwrap()
            .push((key.to_string(), location.to_string(), s.nbytes()));
        Ok(Some(s.clone()))
    });
    let path = common::fixtures().join("cuda_tag.pt");
    let v = load_with(&path, &opts).unwrap();
    let w = v.dict_items().unwrap()[0].1.as_tensor().unwrap().clone();
    assert_eq!(w.to_vec::<f32>().unwrap(), [0.0, 1.0, 2.0]);
    assert_eq!(
        *calls.lock().unwrap(),
        [("0".to_string(), "cuda:0".to_string(), 12)]
    );
    // None loads as saved: a cuda:0 storage is then refused.
    let none = LoadOptions::default().storage_map(|_, _, _| Ok(None));
    let err = load_with(&path, &none).unwrap_err();
    assert!(matches!(err, PtError::Location { .. }), "{err}");
    // A replacement is used under every tensor over the original, in the
    // ZIP format (from a path and from memory) and in the legacy format.
    for name in ["shared.pt", "legacy.pt"] {
        let path = common::fixtures().join(name);
        let repl = LoadOptions::default().storage_map(|_, _, s| {
            let n = s.nbytes().div_ceil(8);
            let t = c10_core::Tensor::full(&[n as i64], 5.0, c10_core::ScalarType::Long)?;
            Ok(Some(t.storage().clone()))
        });
        let from_path = load_with(&path, &repl).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let from_memory =
            torchcore_pt::load_from_reader_with(std::io::Cursor::new(bytes), &repl).unwrap();
        for v in [from_path, from_memory] {
            let items = v.dict_items().unwrap();
            let numbers = items[0].1.as_tensor().unwrap().clone();
            let evens = items[1].1.as_tensor().unwrap().clone();
            assert!(numbers.storage().is_alias_of(evens.storage()), "{name}");
            assert_eq!(evens.to_vec::<i64>().unwrap(), [5, 5, 5, 5], "{name}");
            assert_eq!(evens.strides(), &[2]);
        }
    }
    // Too small a replacement is refused.
    let small = LoadOptions::default()
        .storage_map(|_, _, _| Ok(Some(alloc_cpu::empty_storage(1).unwrap())));
    let err = load_with(common::fixtures().join("shared.pt"), &small).unwrap_err();
    assert!(err.to_string().contains("at least as large"), "{err}");
}
