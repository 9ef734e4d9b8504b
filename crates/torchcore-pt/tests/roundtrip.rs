//! Saving: what torchcore writes loads back identically here, byte for
//! byte the same each time, every record 64-byte aligned, and (when torch
//! is importable) `torch.load(weights_only=True)`, with and without
//! `mmap=True`, reads it back bit-exactly (`tools/pt_corpus.py check-saved`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Cursor;
use std::path::Path;

use c10_core::{ScalarType, Tensor};
use torchcore_pt::{load, save, save_to_writer, OrderedDict, Value};

const DTYPES: &[ScalarType] = &[
    ScalarType::Bool,
    ScalarType::Byte,
    ScalarType::Char,
    ScalarType::Short,
    ScalarType::Int,
    ScalarType::Long,
    ScalarType::Half,
    ScalarType::BFloat16,
    ScalarType::Float,
    ScalarType::Double,
    ScalarType::ComplexHalf,
    ScalarType::ComplexFloat,
    ScalarType::ComplexDouble,
    ScalarType::UInt16,
    ScalarType::UInt32,
    ScalarType::UInt64,
    ScalarType::Float8_e4m3fn,
    ScalarType::Float8_e5m2,
    ScalarType::Float8_e4m3fnuz,
    ScalarType::Float8_e5m2fnuz,
    ScalarType::Float8_e8m0fnu,
];

/// A tensor of `n` elements with pseudo-random bit patterns.
fn random(dtype: ScalarType, n: usize, seed: &mut u64) -> Tensor {
    let nbytes = n * dtype.itemsize();
    let storage = alloc_cpu::empty_storage(nbytes).unwrap();
    {
        let mut g = storage.write().unwrap();
        for b in g.bytes_mut().unwrap().iter_mut() {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = (*seed >> 33) as u8;
            *b = if dtype == ScalarType::Bool { x & 1 } else { x };
        }
    }
    Tensor::from_storage(storage, dtype, &[n as i64], &[1], 0).unwrap()
}

fn s(x: &str) -> Value {
    Value::Str(x.to_string())
}

fn odict(items: Vec<(&str, Value)>) -> Value {
    Value::OrderedDict(OrderedDict {
        items: items.into_iter().map(|(k, v)| (s(k), v)).collect(),
        attrs: Vec::new(),
    })
}

/// The values saved by these tests, by file name.
fn corpus() -> Vec<(&'static str, Value)> {
    let mut seed = 42u64;
    let dtypes = odict(
        DTYPES
            .iter()
            .map(|&d| (d.torch_name(), Value::Tensor(random(d, 5, &mut seed))))
            .collect(),
    );
    let numbers = Tensor::arange(1, 10, 1, ScalarType::Long).unwrap();
    let evens = numbers.as_strided(&[4], &[2], Some(1)).unwrap();
    let base = random(ScalarType::Float, 120, &mut seed);
    let nchw_cl = base
        .as_strided(&[2, 3, 4, 5], &[60, 1, 15, 3], Some(0))
        .unwrap();
    let views = odict(vec![
        (
            "transposed",
            Value::Tensor(base.as_strided(&[4, 3], &[1, 4], Some(0)).unwrap()),
        ),
        (
            "expanded",
            Value::Tensor(base.as_strided(&[3, 4], &[1, 0], Some(7)).unwrap()),
        ),
        ("channels_last", Value::Tensor(nchw_cl)),
        (
            "offset_view",
            Value::Tensor(base.as_strided(&[2], &[5], Some(93)).unwrap()),
        ),
        (
            "zero_size",
            Value::Tensor(Tensor::zeros(&[0, 3], ScalarType::Float).unwrap()),
        ),
        (
            "zero_dim",
            Value::Tensor(Tensor::full(&[], 2.5, ScalarType::Double).unwrap()),
        ),
        ("base", Value::Tensor(base.clone())),
    ]);
    let mut p = random(ScalarType::Float, 2, &mut seed);
    p.set_requires_grad(true).unwrap();
    let mut g = random(ScalarType::Float, 3, &mut seed);
    g.set_requires_grad(true).unwrap();
    let mut meta = OrderedDict::default();
    meta.attrs.push((
        "_metadata".into(),
        odict(vec![("", Value::Dict(vec![(s("version"), Value::Int(1))]))]),
    ));
    meta.items.push((
        s("w"),
        Value::Tensor(random(ScalarType::Half, 4, &mut seed)),
    ));
    let nested = Value::Dict(vec![
        (
            s("params"),
            Value::List(vec![
                Value::Parameter(p),
                Value::Parameter(random(ScalarType::Float, 2, &mut seed)),
            ]),
        ),
        (
            s("meta"),
            Value::Dict(vec![
                (s("epoch"), Value::Int(7)),
                (s("lr"), Value::Float(0.125)),
                (s("big"), Value::BigInt(1 << 70)),
                (s("neg"), Value::Int(-(1 << 40))),
                (s("minus_one"), Value::Int(-1)),
                (s("i32"), Value::Int(70000)),
                (
                    s("flags"),
                    Value::Tuple(vec![Value::Bool(true), Value::Bool(false), Value::None]),
                ),
                (s("blob"), Value::Bytes(vec![0, 0xff, b'a', b'b'])),
                (s("c"), Value::Complex(3.0, 4.0)),
                (
                    s("ids"),
                    Value::Set(vec![Value::Int(1), Value::Int(2), Value::Int(3)]),
                ),
                (s("shape"), Value::Size(vec![2, 3])),
                (s("dtype"), Value::Dtype(ScalarType::BFloat16)),
                (s("device"), Value::Device("cpu".into())),
                (s("nan"), Value::Float(f64::NAN)),
                (
                    s("long_tuple"),
                    Value::Tuple((0..5).map(Value::Int).collect()),
                ),
                (s("unicode"), s("h\u{e9}llo \u{1F600}")),
            ]),
        ),
        (s("grad_tensor"), Value::Tensor(g)),
        (s("sd_with_metadata"), Value::OrderedDict(meta)),
        (
            s("deep"),
            Value::List(vec![Value::List(vec![Value::List(vec![Value::Dict(
                vec![(s("x"), Value::Int(1))],
            )])])]),
        ),
        (
            s("empty"),
            Value::Tuple(vec![
                Value::List(vec![]),
                Value::Dict(vec![]),
                Value::Tuple(vec![]),
                s(""),
            ]),
        ),
        (s("many"), Value::List((0..2500).map(Value::Int).collect())),
    ]);
    vec![
        ("dtypes.pt", dtypes),
        (
            "shared.pt",
            odict(vec![
                ("numbers", Value::Tensor(numbers)),
                ("evens", Value::Tensor(evens)),
            ]),
        ),
        ("views.pt", views),
        ("nested.pt", nested),
        (
            "scalar.pt",
            Value::Tensor(Tensor::full(&[], 1.0, ScalarType::Float).unwrap()),
        ),
    ]
}

fn write_corpus(dir: &Path) {
    let mut manifest = serde_json::Map::new();
    for (name, v) in corpus() {
        save(&v, dir.join(name)).unwrap();
        manifest.insert(name.to_string(), common::describe(&v));
    }
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(&manifest).unwrap(),
    )
    .unwrap();
}

#[test]
#[cfg_attr(miri, ignore = "memory maps files (foreign mmap calls)")]
fn saved_archives_load_back_identically() {
    let dir = tempfile::tempdir().unwrap();
    for (name, v) in corpus() {
        let path = dir.path().join(name);
        save(&v, &path).unwrap();
        let back = load(&path).unwrap();
        assert_eq!(common::describe(&back), common::describe(&v), "{name}");
        // SAFETY: a private temporary file.
        let mapped = unsafe { torchcore_pt::load_mmap(&path, &Default::default()) }.unwrap();
        assert_eq!(
            common::describe(&mapped),
            common::describe(&v),
            "{name} (mmap)"
        );
    }
}

#[test]
fn save_is_deterministic_and_aligned() {
    for (name, v) in corpus() {
        let a = save_to_writer(&v, Cursor::new(Vec::new()))
            .unwrap()
            .into_inner();
        let b = save_to_writer(&v, Cursor::new(Vec::new()))
            .unwrap()
            .into_inner();
        assert_eq!(a, b, "{name}: two saves differ");
        let mut z = zip::ZipArchive::new(Cursor::new(a)).unwrap();
        let names: Vec<String> = z.file_names().map(|n| n.unwrap().to_string()).collect();
        assert_eq!(names[0], "archive/data.pkl");
        assert_eq!(
            &names[1..4],
            [
                "archive/.format_version",
                "archive/.storage_alignment",
                "archive/byteorder"
            ]
        );
        assert_eq!(
            &names[names.len() - 2..],
            ["archive/version", "archive/.data/serialization_id"]
        );
        for i in 0..z.len() {
            let f = z.by_index(i).unwrap();
            assert_eq!(f.compression(), zip::CompressionMethod::Stored);
            let start = f.data_start().unwrap();
            assert_eq!(
                start % 64,
                0,
                "{name}: {} starts at {start}",
                f.name().unwrap()
            );
        }
        let mut id = String::new();
        std::io::Read::read_to_string(
            &mut z.by_name("archive/.data/serialization_id").unwrap(),
            &mut id,
        )
        .unwrap();
        assert_eq!(id.len(), 40);
        assert!(id.bytes().all(|b| b.is_ascii_digit()));
    }
}

#[test]
fn shared_storage_is_written_once() {
    let numbers = Tensor::arange(1, 10, 1, ScalarType::Long).unwrap();
    let evens = numbers.as_strided(&[4], &[2], Some(1)).unwrap();
    let v = Value::List(vec![Value::Tensor(numbers), Value::Tensor(evens)]);
    let bytes = save_to_writer(&v, Cursor::new(Vec::new()))
        .unwrap()
        .into_inner();
    let z = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    let data: Vec<_> = z
        .file_names()
        .map(|n| n.unwrap().to_string())
        .filter(|n| n.contains("/data/"))
        .collect();
    assert_eq!(data, ["archive/data/0"]);
}

#[test]
#[cfg_attr(miri, ignore = "runs Python")]
fn torch_reads_what_torchcore_saved() {
    let Some(python) = common::torch_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    write_corpus(dir.path());
    let out = std::process::Command::new(python)
        .arg(common::corpus_script())
        .arg("check-saved")
        .arg(dir.path())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "torch could not read torchcore's archives:\n{text}"
    );
    assert!(text.contains("checked 5 archives: 0 failures"), "{text}");
}

#[test]
#[cfg_attr(miri, ignore = "runs Python")]
fn torchcore_reads_freshly_generated_torch_corpus() {
    let Some(python) = common::torch_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(python)
        .arg(common::corpus_script())
        .arg("generate")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("manifest.json")).unwrap())
            .unwrap();
    for (name, expected) in manifest.as_object().unwrap() {
        if expected["t"] == "refused" {
            continue;
        }
        let opts =
            torchcore_pt::LoadOptions::default().map_location(torchcore_pt::MapLocation::Cpu);
        let v = torchcore_pt::load_with(dir.path().join(name), &opts).unwrap();
        assert_eq!(&common::describe(&v), expected, "{name}");
    }
}

#[test]
#[cfg_attr(miri, ignore = "memory maps files (foreign mmap calls)")]
fn mmap_load_is_private_copy_on_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.pt");
    let numbers = Tensor::arange(1, 10, 1, ScalarType::Long).unwrap();
    let evens = numbers.as_strided(&[4], &[2], Some(1)).unwrap();
    save(
        &Value::List(vec![Value::Tensor(numbers), Value::Tensor(evens)]),
        &path,
    )
    .unwrap();
    let before = std::fs::read(&path).unwrap();
    // SAFETY: a private temporary file that nothing else writes.
    let v = unsafe { torchcore_pt::load_mmap(&path, &Default::default()) }.unwrap();
    let Value::List(items) = v else {
        panic!("not a list")
    };
    let (n, e) = (items[0].as_tensor().unwrap(), items[1].as_tensor().unwrap());
    assert!(n.storage().is_alias_of(e.storage()));
    e.fill_(0i64).unwrap();
    assert_eq!(n.to_vec::<i64>().unwrap(), [1, 0, 3, 0, 5, 0, 7, 0, 9]);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "writes reached the file"
    );
    // The mapping starts on the record: 64-byte aligned data.
    assert_eq!(n.storage().data_addr().unwrap() % 64, 0);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "13 minutes under Miri for safe code (the pickle writer and reader over in-memory buffers); runs natively"
)]
fn legacy_format_round_trips() {
    for (name, v) in corpus() {
        let zip = save_to_writer(&v, Cursor::new(Vec::new()))
            .unwrap()
            .into_inner();
        let zip = torchcore_pt::load_from_reader(Cursor::new(zip)).unwrap();
        let bytes = torchcore_pt::save_legacy_to_writer(&v, Vec::new()).unwrap();
        assert!(bytes.starts_with(&[0x80, 2, 0x8a, 10]), "{name}");
        let legacy = torchcore_pt::load_from_reader(Cursor::new(bytes.clone())).unwrap();
        assert_eq!(common::describe(&legacy), common::describe(&zip), "{name}");
        let again = torchcore_pt::save_legacy_to_writer(&v, Vec::new()).unwrap();
        assert_eq!(bytes, again, "{name}: the same bytes each time");
    }
}

#[test]
fn meta_map_location_keeps_layout_and_sharing() {
    let numbers = Tensor::arange(1, 10, 1, ScalarType::Long).unwrap();
    let evens = numbers.as_strided(&[2, 2], &[2, 1], Some(3)).unwrap();
    let v = Value::List(vec![Value::Tensor(numbers), Value::Tensor(evens)]);
    let zip = save_to_writer(&v, Cursor::new(Vec::new()))
        .unwrap()
        .into_inner();
    let legacy = torchcore_pt::save_legacy_to_writer(&v, Vec::new()).unwrap();
    let opts = torchcore_pt::LoadOptions::default().map_location(torchcore_pt::MapLocation::Meta);
    for bytes in [zip, legacy] {
        let got = torchcore_pt::load_from_reader_with(Cursor::new(bytes), &opts).unwrap();
        let Value::List(items) = got else {
            panic!("a list")
        };
        let (a, b) = (items[0].as_tensor().unwrap(), items[1].as_tensor().unwrap());
        assert!(a.device().is_meta() && b.device().is_meta());
        assert_eq!(
            (a.sizes(), a.strides(), a.storage_offset()),
            (&[9][..], &[1][..], 0)
        );
        assert_eq!(
            (b.sizes(), b.strides(), b.storage_offset()),
            (&[2, 2][..], &[2, 1][..], 3)
        );
        assert_eq!(a.storage().nbytes(), 72);
        assert!(a.storage().is_alias_of(b.storage()));
    }
}

#[test]
fn meta_tensors_save_without_storage_and_load_back() {
    let o = c10_core::TensorOptions::new()
        .dtype(ScalarType::Half)
        .device(c10_core::Device::META);
    let m = Tensor::empty_strided(&[2, 3], &[1, 2], o).unwrap();
    let bytes = save_to_writer(&Value::Tensor(m), Cursor::new(Vec::new()))
        .unwrap()
        .into_inner();
    let z = zip::ZipArchive::new(Cursor::new(bytes.clone())).unwrap();
    assert!(!z.file_names().any(|n| n.unwrap().contains("/data/")));
    let back = torchcore_pt::load_from_reader(Cursor::new(bytes)).unwrap();
    let t = back.as_tensor().unwrap();
    assert!(t.device().is_meta());
    assert_eq!(
        (t.sizes(), t.strides(), t.dtype()),
        (&[2, 3][..], &[1, 2][..], ScalarType::Half)
    );
}
