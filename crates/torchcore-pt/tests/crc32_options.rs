//! CRC-32 options: archives without CRCs (torch's
//! `serialization.set_crc32_options(False)` writes 0 in every CRC field)
//! load every way; `SaveOptions::crc32(false)` writes them the same way;
//! `LoadOptions::skip_crc32` loads without checking (as `torch.load`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Cursor;
use std::path::Path;

use c10_core::{ScalarType, Tensor};
use torchcore_pt::{
    load, load_from_reader, load_from_reader_with, load_mmap, load_with, save, save_with,
    LoadOptions, SaveOptions, Value,
};

fn field<'a>(v: &'a Value, key: &str) -> &'a Tensor {
    let Value::Dict(items) = v else {
        panic!("not a dict: {v:?}")
    };
    items
        .iter()
        .find(|(k, _)| *k == Value::Str(key.into()))
        .and_then(|(_, x)| x.as_tensor())
        .unwrap_or_else(|| panic!("no tensor {key:?}"))
}

/// `{'numbers': arange(1, 10), 'evens': numbers[1::2], 'w': arange(6.).reshape(2, 3).t()}`.
fn check_torch_fixture(v: &Value) {
    let numbers = field(v, "numbers");
    let evens = field(v, "evens");
    let w = field(v, "w");
    assert_eq!(
        numbers.to_vec::<i64>().unwrap(),
        (1..10).collect::<Vec<_>>()
    );
    assert_eq!(evens.to_vec::<i64>().unwrap(), [2, 4, 6, 8]);
    assert_eq!((evens.storage_offset(), evens.strides()), (1, &[2][..]));
    assert!(numbers.storage().is_alias_of(evens.storage()));
    assert_eq!((w.sizes(), w.strides()), (&[3, 2][..], &[1, 3][..]));
    assert_eq!(w.to_vec::<f32>().unwrap(), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
}

fn crcs(bytes: &[u8]) -> Vec<(String, u32)> {
    let mut z = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    (0..z.len())
        .map(|i| {
            let e = z.by_index(i).unwrap();
            (e.name().unwrap().to_string(), e.crc32())
        })
        .collect()
}

#[test]
#[cfg_attr(
    miri,
    ignore = "load_mmap calls mmap, a foreign function Miri does not run"
)]
fn torch_archive_without_crcs_loads_every_way() {
    let path = common::fixtures()
        .parent()
        .unwrap()
        .join("torch-2.15-nocrc.pt");
    let bytes = std::fs::read(&path).unwrap();
    let fields = crcs(&bytes);
    assert!(
        fields.len() >= 5 && fields.iter().all(|(_, c)| *c == 0),
        "{fields:?}"
    );
    check_torch_fixture(&load(&path).unwrap());
    check_torch_fixture(&load_from_reader(Cursor::new(bytes)).unwrap());
    // SAFETY: a fixture file nothing writes while the test runs.
    check_torch_fixture(&unsafe { load_mmap(&path, &LoadOptions::default()) }.unwrap());
}

fn sample() -> Value {
    let numbers = Tensor::arange(1, 10, 1, ScalarType::Long).unwrap();
    let evens = numbers.as_strided(&[4], &[2], Some(1)).unwrap();
    Value::List(vec![Value::Tensor(numbers), Value::Tensor(evens)])
}

fn check_sample(v: &Value) {
    let Value::List(xs) = v else { panic!("{v:?}") };
    let (n, e) = (xs[0].as_tensor().unwrap(), xs[1].as_tensor().unwrap());
    assert!(n.storage().is_alias_of(e.storage()));
    assert_eq!(e.to_vec::<i64>().unwrap(), [2, 4, 6, 8]);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "load_mmap calls mmap, a foreign function Miri does not run"
)]
fn saving_without_crcs_writes_zeros_and_loads_back() {
    let dir = tempfile::tempdir().unwrap();
    let dir_on = tempfile::tempdir().unwrap();
    let off = dir.path().join("t.pt");
    let on = dir_on.path().join("t.pt");
    save_with(&sample(), &off, None, &SaveOptions::default().crc32(false)).unwrap();
    save(&sample(), &on).unwrap();
    let bytes = std::fs::read(&off).unwrap();
    let fields = crcs(&bytes);
    assert!(fields.iter().all(|(_, c)| *c == 0), "{fields:?}");
    // With CRCs on, each record's field is its CRC-32.
    let on_bytes = std::fs::read(&on).unwrap();
    let on_fields = crcs(&on_bytes);
    assert!(on_fields.iter().any(|(_, c)| *c != 0));
    let mut z = zip::ZipArchive::new(Cursor::new(&on_bytes)).unwrap();
    for (name, c) in &on_fields {
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut z.by_name(name).unwrap(), &mut data).unwrap();
        assert_eq!(crc32fast::hash(&data), *c, "{name}");
    }
    // The same layout either way: only the CRC fields and the id differ.
    assert_eq!(bytes.len(), on_bytes.len());
    check_sample(&load(&off).unwrap());
    check_sample(&load_from_reader(Cursor::new(bytes.clone())).unwrap());
    // SAFETY: a private temporary file.
    check_sample(&unsafe { load_mmap(&off, &LoadOptions::default()) }.unwrap());
    // Deterministic (same file name, so the same top folder).
    let dir2 = tempfile::tempdir().unwrap();
    let again = dir2.path().join("t.pt");
    save_with(
        &sample(),
        &again,
        None,
        &SaveOptions::default().crc32(false),
    )
    .unwrap();
    assert_eq!(std::fs::read(&again).unwrap(), bytes);
}

/// Flips one byte of storage record `data/0`'s data.
fn corrupt_storage(path: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(path).unwrap();
    let start = {
        let mut z = zip::ZipArchive::new(Cursor::new(&bytes)).unwrap();
        let i = (0..z.len())
            .find(|&i| z.by_index(i).unwrap().name().unwrap().ends_with("/data/0"))
            .unwrap();
        let start = z.by_index(i).unwrap().data_start().unwrap();
        start as usize
    };
    bytes[start + 8] ^= 0x01;
    std::fs::write(path, &bytes).unwrap();
    bytes
}

#[test]
fn skip_crc32_loads_a_corrupt_record_as_torch_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.pt");
    save(&sample(), &path).unwrap();
    let bytes = corrupt_storage(&path);
    let e = load(&path).unwrap_err().to_string();
    assert!(e.contains("checksum"), "{e}");
    let e = load_from_reader(Cursor::new(bytes.clone()))
        .unwrap_err()
        .to_string();
    assert!(e.to_lowercase().contains("checksum"), "{e}");
    let skip = LoadOptions::default().skip_crc32(true);
    for v in [
        load_with(&path, &skip).unwrap(),
        load_from_reader_with(Cursor::new(bytes), &skip).unwrap(),
    ] {
        let Value::List(xs) = v else { panic!() };
        // Element 1 of the little-endian int64 storage: 2 ^ 1.
        assert_eq!(xs[1].as_tensor().unwrap().to_vec::<i64>().unwrap()[0], 3);
    }
}

#[test]
#[cfg_attr(miri, ignore = "runs Python")]
fn torch_loads_what_torchcore_saved_without_crcs() {
    let Some(python) = common::torch_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("off.pt");
    save_with(&sample(), &path, None, &SaveOptions::default().crc32(false)).unwrap();
    let script = "import sys, torch\n\
        for mmap in (False, True):\n\
        \x20   n, e = torch.load(sys.argv[1], weights_only=True, mmap=mmap)\n\
        \x20   assert e.tolist() == [2, 4, 6, 8], e\n\
        \x20   assert e.untyped_storage().data_ptr() == n.untyped_storage().data_ptr()\n\
        print('ok')\n";
    let out = std::process::Command::new(python)
        .args(["-c", script])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "ok",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
