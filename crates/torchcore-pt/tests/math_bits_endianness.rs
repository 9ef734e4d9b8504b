//! Lazy conjugate / negative views keep their bits through a save and a
//! load (torch writes them as the `{'neg': True, 'conj': True}` metadata
//! of `_rebuild_tensor_v2`), and archives without a `byteorder` record load
//! in the byte order `LoadOptions::unmarked_big_endian` says.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Cursor, Read, Write};

use c10_core::scalar_type::Complex64;
use c10_core::{ScalarType, Tensor};
use torchcore_pt::{load_from_reader, load_from_reader_with, save_to_writer, LoadOptions, Value};

fn with_bits(t: &Tensor, conj: bool, neg: bool) -> Tensor {
    let mut v = t
        .as_strided(t.sizes(), t.strides(), Some(t.storage_offset()))
        .unwrap();
    {
        let mut m = v.edit_metadata();
        m.set_conj(conj);
        m.set_neg(neg);
    }
    v
}

fn round_trip(v: &Value) -> Value {
    let bytes = save_to_writer(v, Cursor::new(Vec::new()))
        .unwrap()
        .into_inner();
    load_from_reader(Cursor::new(bytes)).unwrap()
}

#[test]
fn conj_and_neg_bits_survive_a_round_trip() {
    let base =
        Tensor::from_slice_1d(&[Complex64::new(1.0, 2.0), Complex64::new(-3.0, 0.5)]).unwrap();
    for (conj, neg) in [(true, false), (false, true), (true, true), (false, false)] {
        let t = with_bits(&base, conj, neg);
        let Value::Tensor(back) = round_trip(&Value::Tensor(t.clone())) else {
            panic!("not a tensor")
        };
        assert_eq!((back.is_conj(), back.is_neg()), (conj, neg));
        assert_eq!(
            back.to_vec::<Complex64>().unwrap(),
            t.to_vec::<Complex64>().unwrap(),
            "conj={conj} neg={neg}"
        );
    }
    // A real negative view (torch's `_neg_view` of a float tensor).
    let f = Tensor::arange(1, 4, 1, ScalarType::Float).unwrap();
    let Value::Tensor(back) = round_trip(&Value::Tensor(with_bits(&f, false, true))) else {
        panic!("not a tensor")
    };
    assert!(back.is_neg());
    assert_eq!(back.to_vec::<f32>().unwrap(), [-1.0, -2.0, -3.0]);
}

#[test]
fn the_pickle_holds_the_metadata_only_for_views_with_bits() {
    let base = Tensor::from_slice_1d(&[Complex64::new(1.0, 2.0)]).unwrap();
    let plain = save_to_writer(&Value::Tensor(base.clone()), Cursor::new(Vec::new()))
        .unwrap()
        .into_inner();
    let both = save_to_writer(
        &Value::Tensor(with_bits(&base, true, true)),
        Cursor::new(Vec::new()),
    )
    .unwrap()
    .into_inner();
    let pkl = |bytes: &[u8]| {
        let mut z = zip::ZipArchive::new(Cursor::new(bytes.to_vec())).unwrap();
        let name = (0..z.len())
            .map(|i| z.by_index(i).unwrap().name().unwrap().to_string())
            .find(|n| n.ends_with("/data.pkl"))
            .unwrap();
        let mut out = Vec::new();
        z.by_name(&name).unwrap().read_to_end(&mut out).unwrap();
        out
    };
    let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle);
    assert!(find(&pkl(&plain), b"conj").is_none());
    let p = pkl(&both);
    let (n, c) = (find(&p, b"neg").unwrap(), find(&p, b"conj").unwrap());
    assert!(n < c, "torch writes 'neg' before 'conj'");
}

#[test]
fn unknown_tensor_metadata_is_refused_by_name() {
    // The saved pickle with the metadata key renamed: "neg" -> "zzz".
    let base = Tensor::arange(0, 2, 1, ScalarType::Float).unwrap();
    let bytes = save_to_writer(
        &Value::Tensor(with_bits(&base, false, true)),
        Cursor::new(Vec::new()),
    )
    .unwrap()
    .into_inner();
    let edited = rewrite(&bytes, |name, data| {
        if name.ends_with("/data.pkl") {
            let i = data.windows(3).position(|w| w == b"neg").unwrap();
            data[i..i + 3].copy_from_slice(b"zzz");
        }
    });
    let e = load_from_reader(Cursor::new(edited))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("tensor metadata \"zzz\" is not supported"),
        "{e}"
    );
}

/// The archive rebuilt with `edit` applied to each record's bytes, records
/// named `byteorder` dropped when `edit` empties them.
fn rewrite(bytes: &[u8], mut edit: impl FnMut(&str, &mut Vec<u8>)) -> Vec<u8> {
    let mut z = zip::ZipArchive::new(Cursor::new(bytes.to_vec())).unwrap();
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        let name = f.name().unwrap().to_string();
        let mut data = Vec::new();
        f.read_to_end(&mut data).unwrap();
        edit(&name, &mut data);
        if name.ends_with("/byteorder") && data.is_empty() {
            continue;
        }
        out.start_file(name, opts).unwrap();
        out.write_all(&data).unwrap();
    }
    out.finish().unwrap().into_inner()
}

#[test]
fn unmarked_archives_load_in_the_byte_order_asked_for() {
    let t = Tensor::arange(1, 4, 1, ScalarType::Int).unwrap();
    let bytes = save_to_writer(&Value::Tensor(t), Cursor::new(Vec::new()))
        .unwrap()
        .into_inner();
    let unmarked = rewrite(&bytes, |name, data| {
        if name.ends_with("/byteorder") {
            data.clear();
        }
    });
    let load = |b: &[u8], big: bool| {
        let opts = LoadOptions::default().unmarked_big_endian(big);
        match load_from_reader_with(Cursor::new(b.to_vec()), &opts).unwrap() {
            Value::Tensor(t) => t.to_vec::<i32>().unwrap(),
            _ => panic!("not a tensor"),
        }
    };
    assert_eq!(load(&unmarked, false), [1, 2, 3]);
    assert_eq!(load(&unmarked, true), [1 << 24, 2 << 24, 3 << 24]);
    // A recorded byte order wins over the option.
    assert_eq!(load(&bytes, true), [1, 2, 3]);
    // The copying file path reads the same way.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unmarked.pt");
    std::fs::write(&path, &unmarked).unwrap();
    let opts = LoadOptions::default().unmarked_big_endian(true);
    let Value::Tensor(t) = torchcore_pt::load_with(&path, &opts).unwrap() else {
        panic!("not a tensor")
    };
    assert_eq!(t.to_vec::<i32>().unwrap(), [1 << 24, 2 << 24, 3 << 24]);
}

/// `load_mmap` maps the file once and hands each storage its record's
/// range: writes to one storage reach neither the others nor the file, and
/// views saved over one storage still share it.
#[test]
#[cfg_attr(miri, ignore)] // mmap is a foreign call
fn mmap_storages_share_one_mapping_but_not_bytes() {
    use torchcore_pt::{load_mmap, save};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.pt");
    let base = Tensor::arange(0, 64, 1, ScalarType::Float).unwrap();
    let view = base.as_strided(&[8], &[2], Some(3)).unwrap();
    let mut items = vec![Value::Tensor(base.clone()), Value::Tensor(view)];
    for i in 0..20 {
        items.push(Value::Tensor(
            Tensor::arange(i, i + 16, 1, ScalarType::Long).unwrap(),
        ));
    }
    save(&Value::List(items), &path).unwrap();
    let before = std::fs::read(&path).unwrap();
    // SAFETY: nothing else touches the temporary file while the tensors live.
    let v = unsafe { load_mmap(&path, &LoadOptions::default()) }.unwrap();
    let Value::List(xs) = v else {
        panic!("not a list")
    };
    let t = |i: usize| match &xs[i] {
        Value::Tensor(t) => t.clone(),
        _ => panic!("not a tensor"),
    };
    // Writes to every long tensor's first element: each sees only its own.
    for i in 2..22 {
        t(i).set(&[0], -(i as i64)).unwrap();
    }
    for i in 2..22 {
        let got = t(i).to_vec::<i64>().unwrap();
        assert_eq!(got[0], -(i as i64));
        assert_eq!(
            got[1..],
            ((i as i64 - 1)..(i as i64 + 14)).collect::<Vec<_>>()[..]
        );
    }
    // The view still shares the base's storage.
    t(0).set(&[5], 500.0f32).unwrap();
    assert_eq!(t(1).get::<f32>(&[1]).unwrap(), 500.0);
    drop(xs);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "private mappings never write the file"
    );
}

/// `LoadOptions::mmap_shared`: writes through a shared mapping reach the
/// file (torch's `set_default_mmap_options(mmap.MAP_SHARED)`), and a second
/// load sees them; the default private mapping leaves the file alone.
#[test]
#[cfg_attr(miri, ignore)] // mmap is a foreign call
fn shared_mmap_writes_reach_the_file() {
    use torchcore_pt::{load_mmap, save};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.pt");
    let a = Tensor::arange(0, 8, 1, ScalarType::Float).unwrap();
    let b = Tensor::arange(10, 14, 1, ScalarType::Long).unwrap();
    save(
        &Value::List(vec![Value::Tensor(a), Value::Tensor(b)]),
        &path,
    )
    .unwrap();
    let first = |opts: &LoadOptions| {
        // SAFETY: only this test touches the temporary file.
        let Value::List(xs) = (unsafe { load_mmap(&path, opts) }).unwrap() else {
            panic!("not a list")
        };
        xs.into_iter()
            .map(|x| match x {
                Value::Tensor(t) => t,
                _ => panic!("not a tensor"),
            })
            .collect::<Vec<_>>()
    };
    let private = LoadOptions::default();
    let shared = LoadOptions::default().mmap_shared(true);
    let ts = first(&private);
    ts[0].set(&[0], 99.0f32).unwrap();
    drop(ts);
    assert_eq!(first(&private)[0].get::<f32>(&[0]).unwrap(), 0.0);
    let ts = first(&shared);
    ts[0].set(&[0], 99.0f32).unwrap();
    ts[1].set(&[3], -1i64).unwrap();
    let again = first(&shared);
    assert_eq!(again[0].get::<f32>(&[0]).unwrap(), 99.0);
    assert_eq!(again[1].to_vec::<i64>().unwrap(), [10, 11, 12, -1]);
    drop((ts, again));
    // The copying load checks record CRCs (torch does not): the records
    // written through the mapping no longer match the archive's directory.
    let e = torchcore_pt::load(&path).unwrap_err().to_string();
    assert!(e.contains("invalid checksum"), "{e}");
}
