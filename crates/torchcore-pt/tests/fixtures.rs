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
    assert!(files.len() >= 10, "corpus has {} archives", files.len());
    for (name, expected) in files {
        let path = dir.join(name);
        if expected["t"] == "legacy" {
            let err = torchcore_pt::load(&path).unwrap_err();
            assert!(matches!(err, PtError::LegacyFormat), "{name}: {err}");
            assert!(err.to_string().contains("legacy (pre-1.6, non-ZIP) format"));
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
