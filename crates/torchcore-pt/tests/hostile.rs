//! Bad input gets a clear error, and nothing else: no panic, no abort, no
//! allocation out of proportion to the input.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Cursor, Write};

mod common;

use torchcore_pt::{load_from_reader, PtError, Value};
use zip::write::SimpleFileOptions;

/// A tiny pickle writer for crafting inputs.
#[derive(Default)]
struct P(Vec<u8>);

impl P {
    fn new() -> P {
        P(vec![0x80, 2])
    }
    fn raw(mut self, b: &[u8]) -> P {
        self.0.extend_from_slice(b);
        self
    }
    fn global(self, m: &str, n: &str) -> P {
        self.raw(format!("c{m}\n{n}\n").as_bytes())
    }
    fn s(mut self, x: &str) -> P {
        self.0.push(b'X');
        self.0.extend_from_slice(&(x.len() as u32).to_le_bytes());
        self.0.extend_from_slice(x.as_bytes());
        self
    }
    fn int(mut self, v: i128) -> P {
        let b = v.to_le_bytes();
        self.0.extend_from_slice(&[0x8a, 16]);
        self.0.extend_from_slice(&b);
        self
    }
    fn ints(mut self, xs: &[i128]) -> P {
        self.0.push(b'(');
        for &x in xs {
            self = self.int(x);
        }
        self.raw(b"t")
    }
    fn mark(self) -> P {
        self.raw(b"(")
    }
    fn stop(self) -> Vec<u8> {
        self.raw(b".").0
    }
    /// A persistent id tuple + BINPERSID.
    fn storage(self, class: (&str, &str), key: &str, numel: i128) -> P {
        self.mark()
            .s("storage")
            .global(class.0, class.1)
            .s(key)
            .s("cpu")
            .int(numel)
            .raw(b"tQ")
    }
    /// `_rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict())`.
    fn tensor(
        self,
        class: &str,
        key: &str,
        numel: i128,
        offset: i128,
        size: &[i128],
        stride: &[i128],
    ) -> P {
        self.global("torch._utils", "_rebuild_tensor_v2")
            .mark()
            .storage(("torch", class), key, numel)
            .int(offset)
            .ints(size)
            .ints(stride)
            .raw(&[0x89])
            .global("collections", "OrderedDict")
            .raw(b")R")
            .raw(b"tR")
    }
}

fn archive(pkl: &[u8], records: &[(&str, &[u8])]) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let o = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    z.start_file("archive/data.pkl", o).unwrap();
    z.write_all(pkl).unwrap();
    for (name, bytes) in records {
        z.start_file(format!("archive/{name}"), o).unwrap();
        z.write_all(bytes).unwrap();
    }
    z.finish().unwrap().into_inner()
}

/// Loads `b` from memory and, where files are read with positioned reads
/// (Unix), from a file too: the two paths must agree, on the value or on
/// failing.
fn load_bytes(b: Vec<u8>) -> Result<Value, PtError> {
    let from_memory = load_from_reader(Cursor::new(b.clone()));
    #[cfg(all(unix, not(miri)))]
    {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&b).unwrap();
        let from_file = torchcore_pt::load(f.path());
        match (&from_memory, &from_file) {
            (Ok(a), Ok(b)) => assert_eq!(common::describe(a), common::describe(b)),
            (Err(_), Err(_)) => {}
            (a, b) => panic!(
                "memory and file loads disagree: {:?} vs {:?}",
                a.as_ref().map_err(|e| e.to_string()).err(),
                b.as_ref().map_err(|e| e.to_string()).err()
            ),
        }
    }
    from_memory
}

fn err_of(pkl: Vec<u8>, records: &[(&str, &[u8])]) -> String {
    match load_bytes(archive(&pkl, records)) {
        Ok(v) => panic!("loaded: {v:?}"),
        Err(e) => e.to_string(),
    }
}

fn float_tensor(numel: i128, offset: i128, size: &[i128], stride: &[i128]) -> Vec<u8> {
    P::new()
        .tensor("FloatStorage", "0", numel, offset, size, stride)
        .stop()
}

const F4: &[u8] = &[0u8; 16]; // four floats

#[test]
fn a_valid_crafted_archive_loads() {
    let v = load_bytes(archive(&float_tensor(4, 1, &[3], &[1]), &[("data/0", F4)])).unwrap();
    assert_eq!(v.as_tensor().unwrap().sizes(), &[3]);
}

#[test]
#[cfg_attr(miri, ignore = "thousands of loads: too slow under Miri")]
fn every_truncation_is_an_error() {
    let full = archive(&float_tensor(4, 0, &[2, 2], &[2, 1]), &[("data/0", F4)]);
    for n in 0..full.len() {
        assert!(
            load_bytes(full[..n].to_vec()).is_err(),
            "prefix of {n} bytes loaded"
        );
    }
}

#[test]
#[cfg_attr(miri, ignore = "thousands of loads: too slow under Miri")]
fn every_single_byte_corruption_errors_or_loads_cleanly() {
    let full = archive(&float_tensor(4, 0, &[2, 2], &[2, 1]), &[("data/0", F4)]);
    for i in 0..full.len() {
        for x in [0x01u8, 0x80, 0xff] {
            let mut b = full.clone();
            b[i] ^= x;
            let _ = load_bytes(b); // must return, never panic
        }
    }
}

#[test]
fn wrong_crc_is_reported() {
    let mut b = archive(&float_tensor(4, 0, &[4], &[1]), &[("data/0", &[1u8; 16])]);
    let at = b.windows(16).position(|w| w == [1u8; 16]).unwrap();
    b[at] = 2;
    let e = load_bytes(b).unwrap_err().to_string();
    assert!(e.contains("checksum"), "{e}");
}

#[test]
fn short_record_is_reported() {
    let e = err_of(float_tensor(8, 0, &[8], &[1]), &[("data/0", F4)]);
    assert!(
        e.contains("holds 16 bytes, but storage '0' needs 32"),
        "{e}"
    );
}

#[test]
fn views_past_the_storage_are_refused() {
    for (offset, size, stride) in [
        (1, vec![4], vec![1]),
        (0, vec![2, 2], vec![3, 1]),
        (0, vec![5], vec![1]),
        (4, vec![1], vec![1]),
    ] {
        let e = err_of(float_tensor(4, offset, &size, &stride), &[("data/0", F4)]);
        assert!(
            e.contains("invalid tensor data: tensor over storage '0' (16 bytes)"),
            "{e}"
        );
    }
}

#[test]
fn negative_and_overflowing_values_are_refused() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (float_tensor(4, -1, &[1], &[1]), "invalid storage offset"),
        (float_tensor(4, 0, &[-1], &[1]), "overflow"),
        (float_tensor(4, 0, &[1], &[-1]), "Negative strides"),
        (float_tensor(-4, 0, &[1], &[1]), "invalid element count -4"),
        (float_tensor(1 << 62, 0, &[1], &[1]), "storage '0'"),
        (
            float_tensor(4, 0, &[i64::MAX as i128, 2], &[1, 1]),
            "tensor over storage",
        ),
        (
            float_tensor(4, 0, &[1 << 64], &[1]),
            "does not fit in 64 bits",
        ),
        (
            float_tensor(4, i64::MAX as i128, &[1], &[1]),
            "tensor over storage",
        ),
    ];
    for (pkl, want) in cases {
        let e = err_of(pkl, &[("data/0", F4)]);
        assert!(e.contains(want), "wanted {want:?} in: {e}");
    }
}

#[test]
fn unknown_storage_types_and_globals_are_named() {
    let e = err_of(
        P::new().tensor("FooStorage", "0", 4, 0, &[4], &[1]).stop(),
        &[("data/0", F4)],
    );
    assert!(
        e.contains("Weights only load failed: Unsupported global: GLOBAL torch.FooStorage"),
        "{e}"
    );
    let e = err_of(
        P::new()
            .global("torch._utils", "_rebuild_tensor_v2")
            .mark()
            .storage(("torch", "float32"), "0", 4)
            .stop(),
        &[],
    );
    assert!(e.contains("unknown storage type"), "{e}");
    let e = err_of(
        P::new()
            .global("os", "system")
            .s("echo hi")
            .raw(b"\x85R")
            .stop(),
        &[],
    );
    assert!(e.contains("GLOBAL os.system"), "{e}");
    let e = err_of(P::new().global("builtins", "eval").stop(), &[]);
    // torch names builtins by their bare name ("GLOBAL print").
    assert!(e.contains("GLOBAL eval was not an allowed global"), "{e}");
    let e = err_of(P::new().global("posix", "execv").stop(), &[]);
    assert!(
        e.contains("unsupported GLOBAL posix.execv whose module posix is blocked"),
        "{e}"
    );
}

#[test]
fn duplicate_keys_with_different_dtypes_are_refused() {
    let pkl = P::new()
        .mark()
        .tensor("FloatStorage", "0", 4, 0, &[4], &[1])
        .tensor("IntStorage", "0", 4, 0, &[4], &[1])
        .raw(b"t")
        .stop();
    let e = err_of(pkl, &[("data/0", F4)]);
    assert!(
        e.contains("storage '0' appears twice with different types"),
        "{e}"
    );
}

#[test]
#[cfg_attr(miri, ignore = "thousands of loads: too slow under Miri")]
fn deep_nesting_and_cycles_are_refused() {
    let n = 100_000;
    let mut lists = vec![0x80, 2];
    lists.extend(std::iter::repeat_n(b']', n));
    lists.extend(std::iter::repeat_n(b'a', n - 1));
    lists.push(b'.');
    let e = err_of(lists, &[]);
    assert!(e.contains("nested more than"), "{e}");

    let mut tuples = vec![0x80, 2, b'N'];
    tuples.extend(std::iter::repeat_n(0x85, n));
    tuples.push(b'.');
    let e = err_of(tuples, &[]);
    assert!(e.contains("nested more than"), "{e}");

    // l = []; l.append(l)
    let e = err_of(P::new().raw(b"]q\x00h\x00a").stop(), &[]);
    assert!(e.contains("self-referencing"), "{e}");
    // d = {}; d['x'] = d
    let e = err_of(P::new().raw(b"}q\x00").s("x").raw(b"h\x00s").stop(), &[]);
    assert!(e.contains("self-referencing"), "{e}");

    // A billion-laughs DAG: each level a list holding the previous one
    // twice; 2^40 nodes if expanded.
    let mut dag = P::new().raw(b"Nq\x00");
    for _ in 0..40 {
        dag = dag.raw(b"](h\x00h\x00eq\x00");
    }
    let e = err_of(dag.stop(), &[]);
    assert!(e.contains("expands to far more values"), "{e}");
}

#[test]
fn memo_and_long_extremes() {
    // A huge memo index is just a key.
    let v = load_bytes(archive(
        &P::new().raw(b"Nr\xff\xff\xff\xffj\xff\xff\xff\xff").stop(),
        &[],
    ))
    .unwrap();
    assert_eq!(v, Value::None);
    let e = err_of(P::new().raw(b"j\x00\x00\x00\x01").stop(), &[]);
    assert!(e.contains("memo key 16777216 was never stored"), "{e}");
    // LONG4 claiming 2 GiB of digits.
    let e = err_of(P::new().raw(b"\x8b\x00\x00\x00\x80").stop(), &[]);
    assert!(e.contains("pickle truncated"), "{e}");
    // 40 bytes of digits: too big.
    let mut giant = P::new().raw(&[0x8a, 40]).raw(&[0x11; 40]);
    giant = giant.raw(b"");
    let e = err_of(giant.stop(), &[]);
    assert!(e.contains("too big"), "{e}");
    // A 128-bit int loads as BigInt; a padded small one as Int.
    let v = load_bytes(archive(&P::new().int(-(1 << 100)).stop(), &[])).unwrap();
    assert_eq!(v, Value::BigInt(-(1 << 100)));
    let mut padded = vec![0x80, 2, 0x8a, 20, 5];
    padded.extend([0u8; 19]);
    padded.push(b'.');
    assert_eq!(load_bytes(archive(&padded, &[])).unwrap(), Value::Int(5));
}

#[test]
fn stack_misuse_is_an_error() {
    for bad in [
        &b"\x80\x02."[..],
        b"\x80\x02a.",
        b"\x80\x02(.",
        b"\x80\x02Nt",
        b"\x80\x02Ns.",
        b"\x80\x02\x06.",
        b"\x80\x09N.",
        b"\x80\x02I1\n.",
    ] {
        let e = err_of(bad.to_vec(), &[]);
        assert!(e.contains("malformed pickle"), "{e}");
    }
}

/// Patches the compression method of every entry to `method`.
fn set_method(mut b: Vec<u8>, method: u16) -> Vec<u8> {
    for i in 0..b.len().saturating_sub(4) {
        if b[i..i + 4] == *b"PK\x03\x04" {
            b[i + 8..i + 10].copy_from_slice(&method.to_le_bytes());
        } else if b[i..i + 4] == *b"PK\x01\x02" {
            b[i + 10..i + 12].copy_from_slice(&method.to_le_bytes());
        }
    }
    b
}

#[test]
fn compressed_records_are_refused() {
    let b = set_method(archive(&P::new().raw(b"N").stop(), &[]), 8);
    let e = load_bytes(b).unwrap_err().to_string();
    assert!(
        e.contains("compressed") || e.contains("Compression method not supported"),
        "{e}"
    );
}

#[test]
fn bad_record_names_are_refused() {
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let o = SimpleFileOptions::default();
    z.start_file("archive/data.pkl", o).unwrap();
    z.write_all(b"\x80\x02N.").unwrap();
    z.start_file("archive/../evil", o).unwrap();
    z.write_all(b"x").unwrap();
    let e = load_bytes(z.finish().unwrap().into_inner())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a plain relative path"), "{e}");

    let e = err_of(
        P::new()
            .tensor("FloatStorage", "../x", 4, 0, &[4], &[1])
            .stop(),
        &[],
    );
    assert!(e.contains("invalid storage key \"../x\""), "{e}");

    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    z.start_file("a/data.pkl", o).unwrap();
    z.write_all(b"\x80\x02N.").unwrap();
    z.start_file("b/data.pkl", o).unwrap();
    let e = load_bytes(z.finish().unwrap().into_inner())
        .unwrap_err()
        .to_string();
    assert!(e.contains("two top folders"), "{e}");
}

#[test]
fn any_top_folder_name_loads() {
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    z.start_file("my_model/data.pkl", SimpleFileOptions::default())
        .unwrap();
    z.write_all(b"\x80\x02K\x05.").unwrap();
    assert_eq!(
        load_bytes(z.finish().unwrap().into_inner()).unwrap(),
        Value::Int(5)
    );
}

#[test]
fn non_checkpoints_are_named() {
    let e = load_bytes(b"hello world".to_vec()).unwrap_err().to_string();
    assert!(
        e.contains("not a PyTorch checkpoint: not a ZIP archive (first bytes: 68 65 6c"),
        "{e}"
    );
    let e = load_bytes(Vec::new()).unwrap_err().to_string();
    assert!(e.contains("not a ZIP archive"), "{e}");
    let mut tar = vec![0u8; 512];
    tar[257..262].copy_from_slice(b"ustar");
    assert!(matches!(load_bytes(tar), Err(PtError::LegacyFormat)));
}

/// The legacy format's magic number pickle: PROTO 2, LONG1 of 10 bytes.
const LEGACY_MAGIC: [u8; 14] = [
    0x80, 2, 0x8a, 10, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19,
];

/// A legacy file: magic, protocol version, sys_info, `obj`, `keys`, then
/// `data` as is.
fn legacy_file(obj: &[u8], keys: &[&str], data: &[u8]) -> Vec<u8> {
    let mut b = LEGACY_MAGIC.to_vec();
    b.push(b'.');
    b.extend(P::new().raw(b"M\xe9\x03").stop()); // BININT2 1001
    b.extend(P::new().raw(b"}").stop()); // sys_info: an empty dict
    b.extend(obj);
    let mut k = P::new().raw(b"](");
    for key in keys {
        k = k.s(key);
    }
    b.extend(k.raw(b"e").stop());
    b.extend(data);
    b
}

/// `_rebuild_tensor_v2` over a legacy persistent id (six items, the last
/// `view_metadata`).
fn legacy_tensor(view_metadata: &[u8], numel: i128) -> Vec<u8> {
    P::new()
        .global("torch._utils", "_rebuild_tensor_v2")
        .raw(b"((")
        .s("storage")
        .global("torch", "FloatStorage")
        .s("k1")
        .s("cpu")
        .int(numel)
        .raw(view_metadata)
        .raw(b"tQ")
        .int(0)
        .ints(&[numel])
        .ints(&[1])
        .raw(b"\x89")
        .global("collections", "OrderedDict")
        .raw(b")Rt")
        .raw(b"R")
        .stop()
}

fn f32_record(xs: &[f32]) -> Vec<u8> {
    let mut d = (xs.len() as u64).to_le_bytes().to_vec();
    for x in xs {
        d.extend(x.to_le_bytes());
    }
    d
}

#[test]
fn a_crafted_legacy_file_loads() {
    let b = legacy_file(&legacy_tensor(b"N", 2), &["k1"], &f32_record(&[1.5, -2.0]));
    let t = load_bytes(b).unwrap().as_tensor().unwrap().clone();
    assert_eq!(t.to_vec::<f32>().unwrap(), [1.5, -2.0]);
}

#[test]
fn bad_legacy_files_are_named() {
    let data = f32_record(&[1.5, -2.0]);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        // The element count before the data disagrees with the pickle.
        (
            legacy_file(&legacy_tensor(b"N", 2), &["k1"], &f32_record(&[1.0])),
            "has 1 elements in the file, but the tensors name it with 2",
        ),
        // Data cut short.
        (
            legacy_file(&legacy_tensor(b"N", 2), &["k1"], &data[..12]),
            "truncated file",
        ),
        // A key with data but no tensor, a tensor without data.
        (
            legacy_file(&legacy_tensor(b"N", 2), &["k1", "k2"], &data),
            "storage 'k2' has data but no tensor names it",
        ),
        (
            legacy_file(&legacy_tensor(b"N", 2), &[], &data),
            "storage 'k1' is named by a tensor but has no data",
        ),
        (
            legacy_file(
                &legacy_tensor(b"N", 2),
                &["k1", "k1"],
                &[data.clone(), data.clone()].concat(),
            ),
            "listed twice",
        ),
        // No object pickle at all.
        (legacy_file(&[], &[], &[]), "pickle truncated"),
        // Pre-1.0 storage views: the tensor (2 elements) past its view
        // of 1, the view past its storage, a malformed view.
        (
            legacy_file(
                &legacy_tensor(&P::default().s("v").raw(b"K\x00K\x01\x87").0, 2),
                &["k1"],
                &data,
            ),
            "reaches past its storage view (1 elements at 0 of storage 'k1')",
        ),
        (
            legacy_file(
                &legacy_tensor(&P::default().s("v").raw(b"K\x01K\x02\x87").0, 2),
                &["k1"],
                &data,
            ),
            "storage view 'v' (elements 1..+2) reaches past its storage 'k1' (2 elements)",
        ),
        (
            legacy_file(
                &legacy_tensor(&P::default().s("v").raw(b"K\x00\x86").0, 2),
                &["k1"],
                &data,
            ),
            "view_metadata must have 3 items",
        ),
        (
            legacy_file(
                &legacy_tensor(&P::default().s("v").raw(b"K\x00J\xff\xff\xff\xff\x87").0, 2),
                &["k1"],
                &data,
            ),
            "storage view 'v' has invalid size -1",
        ),
        // A huge element count in a small file: refused before allocating.
        (
            legacy_file(&legacy_tensor(b"N", 1 << 40), &["k1"], &data),
            "more than the whole file",
        ),
        // The allowlist applies to every pickle.
        (
            legacy_file(&P::new().global("os", "system").stop(), &[], &[]),
            "Unsupported global: GLOBAL os.system",
        ),
    ];
    for (b, want) in cases {
        let e = load_bytes(b).unwrap_err().to_string();
        assert!(e.contains(want), "{e}\nwanted: {want}");
    }
    // A wrong protocol version.
    let mut b = LEGACY_MAGIC.to_vec();
    b.push(b'.');
    b.extend(P::new().raw(b"M\xe8\x03").stop());
    let e = load_bytes(b).unwrap_err().to_string();
    assert!(e.contains("protocol version 1000, expected 1001"), "{e}");
}

#[test]
#[cfg_attr(miri, ignore = "thousands of loads: too slow under Miri")]
fn every_legacy_truncation_and_corruption_is_handled() {
    let full = legacy_file(&legacy_tensor(b"N", 2), &["k1"], &f32_record(&[1.5, -2.0]));
    for n in 0..full.len() {
        assert!(
            load_bytes(full[..n].to_vec()).is_err(),
            "prefix of {n} bytes loaded"
        );
    }
    for i in 0..full.len() {
        for x in [0x01u8, 0x80, 0xff] {
            let mut b = full.clone();
            b[i] ^= x;
            let _ = load_bytes(b); // must return, never panic
        }
    }
}

#[test]
fn missing_pickle_and_missing_record() {
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    z.start_file("archive/version", SimpleFileOptions::default())
        .unwrap();
    z.write_all(b"3\n").unwrap();
    let e = load_bytes(z.finish().unwrap().into_inner())
        .unwrap_err()
        .to_string();
    assert!(e.contains("record \"archive/data.pkl\" is missing"), "{e}");
    let e = err_of(float_tensor(4, 0, &[4], &[1]), &[]);
    assert!(e.contains("record \"archive/data/0\" is missing"), "{e}");
}

#[test]
fn bad_byteorder_is_refused() {
    let e = err_of(P::new().raw(b"N").stop(), &[("byteorder", b"middle")]);
    assert!(e.contains("byteorder record holds \"middle\""), "{e}");
}

/// A ZIP written by hand: `records` stored, plus extra central-directory
/// entries `(name, index of the record whose local header they point at)`.
fn zip_with_aliases(records: &[(&str, &[u8])], aliases: &[(String, usize)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    let mut offsets = Vec::new();
    let mut meta = Vec::new();
    for (name, data) in records {
        let crc = crc32fast::hash(data);
        offsets.push(out.len() as u32);
        meta.push((crc, data.len() as u32));
        out.extend_from_slice(b"PK\x03\x04");
        out.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);
    }
    let entries: Vec<(String, usize)> = records
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.to_string(), i))
        .chain(aliases.iter().cloned())
        .collect();
    for (name, i) in &entries {
        let (crc, len) = meta[*i];
        central.extend_from_slice(b"PK\x01\x02");
        central.extend_from_slice(&[20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&len.to_le_bytes());
        central.extend_from_slice(&len.to_le_bytes());
        central.extend_from_slice(&(name.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0; 12]);
        central.extend_from_slice(&offsets[*i].to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_start = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_start.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

#[test]
#[cfg_attr(miri, ignore = "thousands of records: too slow under Miri")]
fn overlapping_records_cannot_multiply_memory() {
    // 2000 storage keys whose records all alias one 64 KiB record: loading
    // them would read 125 MiB from a 200 KiB file.
    let n = 2000;
    let mut pkl = P::new().raw(b"(");
    for k in 0..n {
        pkl = pkl.tensor("ByteStorage", &k.to_string(), 65536, 0, &[1], &[1]);
    }
    let pkl = pkl.raw(b"l").stop();
    let big = vec![7u8; 65536];
    let aliases: Vec<(String, usize)> = (1..n).map(|k| (format!("archive/data/{k}"), 1)).collect();
    let bytes = zip_with_aliases(
        &[("archive/data.pkl", &pkl), ("archive/data/0", &big)],
        &aliases,
    );
    let e = load_bytes(bytes).unwrap_err().to_string();
    assert!(e.contains("overlapping records"), "{e}");
    // One alias is fine memory-wise (each record is read and CRC-checked).
    let pkl = P::new()
        .raw(b"(")
        .tensor("ByteStorage", "0", 65536, 0, &[1], &[1])
        .tensor("ByteStorage", "1", 65536, 0, &[1], &[1])
        .raw(b"l")
        .stop();
    let bytes = zip_with_aliases(
        &[("archive/data.pkl", &pkl), ("archive/data/0", &big)],
        &[("archive/data/1".to_string(), 1)],
    );
    match load_bytes(bytes) {
        Ok(v) => assert_eq!(v.tensors().len(), 2),
        Err(e) => assert!(e.to_string().contains("damaged checkpoint archive"), "{e}"),
    }
}
