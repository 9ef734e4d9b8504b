use super::*;
use c10_core::scalar_type::Complex64;

/// A storage holding a file image, as a read-only owner (no mmap, so these
/// tests run under Miri).
fn image(bytes: Vec<u8>) -> Storage {
    Storage::from_read_only_owner(bytes, "a test image")
}

fn sample() -> Vec<(&'static str, Tensor)> {
    let f = Tensor::arange(0.0, 12.0, 1.0, ScalarType::Float)
        .unwrap()
        .view(&[3, 4])
        .unwrap();
    vec![
        ("f32.t", f.t().unwrap()),
        ("f32.slice", f.slice(1, Some(1), None, 2).unwrap()),
        (
            "f64",
            Tensor::arange(0.5, 3.0, 1.0, ScalarType::Double).unwrap(),
        ),
        (
            "bf16",
            Tensor::arange(0.0, 4.0, 0.5, ScalarType::BFloat16).unwrap(),
        ),
        (
            "f16",
            Tensor::arange(-2.0, 2.0, 1.0, ScalarType::Half).unwrap(),
        ),
        ("i64", Tensor::arange(-3, 3, 1, ScalarType::Long).unwrap()),
        ("i32", Tensor::arange(0, 5, 1, ScalarType::Int).unwrap()),
        ("i16", Tensor::arange(0, 3, 1, ScalarType::Short).unwrap()),
        ("i8", Tensor::arange(-2, 2, 1, ScalarType::Char).unwrap()),
        ("u8", Tensor::arange(250, 256, 1, ScalarType::Byte).unwrap()),
        (
            "bool",
            Tensor::from_vec(vec![true, false, true], &[3]).unwrap(),
        ),
        (
            "c64",
            Tensor::from_vec(
                vec![Complex64::new(1.0, 2.0), Complex64::new(-1.0, 0.5)],
                &[2],
            )
            .unwrap(),
        ),
        (
            "expanded",
            Tensor::arange(0, 3, 1, ScalarType::Long)
                .unwrap()
                .unsqueeze(0)
                .unwrap()
                .expand(&[2, 3])
                .unwrap(),
        ),
        (
            "scalar",
            Tensor::scalar_tensor(7.0, ScalarType::Float).unwrap(),
        ),
        ("empty", Tensor::empty(&[0, 5], ScalarType::Float).unwrap()),
    ]
}

#[test]
fn serialize_then_load_round_trips_every_dtype_and_layout() {
    let tensors = sample();
    let meta = HashMap::from([("format".to_string(), "pt".to_string())]);
    let bytes = serialize(tensors.iter().map(|(n, t)| (*n, t)), Some(meta)).unwrap();
    let file = load_from_storage(image(bytes)).unwrap();
    assert_eq!(file.len(), tensors.len());
    assert!(file.copied().is_empty());
    assert_eq!(file.metadata().unwrap()["format"], "pt");
    for (name, t) in &tensors {
        let got = file.get(name).unwrap();
        assert_eq!(got.dtype(), t.dtype(), "{name}");
        assert_eq!(got.sizes(), t.sizes(), "{name}");
        assert!(got.is_contiguous(), "{name}");
        assert!(
            got.storage().is_alias_of(file.storage()),
            "{name} is a view"
        );
        assert_eq!(got.to_f64_vec().unwrap(), t.to_f64_vec().unwrap(), "{name}");
    }
    let c = file.get("c64").unwrap().to_vec::<Complex64>().unwrap();
    assert_eq!(c, [Complex64::new(1.0, 2.0), Complex64::new(-1.0, 0.5)]);
    let err = file.get("i64").unwrap().set::<i64>(&[0], 1).unwrap_err();
    assert!(err.to_string().contains("clone the tensor"), "{err}");
}

#[test]
fn header_matches_the_reference_format() {
    let a = Tensor::arange(0, 3, 1, ScalarType::Long).unwrap();
    let b = Tensor::arange(0.0, 2.0, 1.0, ScalarType::BFloat16).unwrap();
    let c = Tensor::from_vec(vec![1u8], &[1]).unwrap();
    let bytes = serialize([("b", &b), ("a", &a), ("c", &c)], None).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    assert_eq!(n % 8, 0, "header padded to 8 bytes");
    let header = std::str::from_utf8(&bytes[8..8 + n]).unwrap();
    assert!(header.ends_with(' ') || header.ends_with('}'));
    let json: serde_json::Value = serde_json::from_str(header.trim_end()).unwrap();
    // Ordered by decreasing alignment, then name: I64, BF16, U8.
    assert_eq!(json["a"]["dtype"], "I64");
    assert_eq!(json["a"]["shape"], serde_json::json!([3]));
    assert_eq!(json["a"]["data_offsets"], serde_json::json!([0, 24]));
    assert_eq!(json["b"]["dtype"], "BF16");
    assert_eq!(json["b"]["data_offsets"], serde_json::json!([24, 28]));
    assert_eq!(json["c"]["dtype"], "U8");
    assert_eq!(json["c"]["data_offsets"], serde_json::json!([28, 29]));
    assert_eq!(bytes.len(), 8 + n + 29);
    assert_eq!(&bytes[8 + n..8 + n + 8], &0i64.to_le_bytes());
}

/// Builds a file image by hand: `(name, dtype, shape, bytes)` in order.
fn hand_made(entries: &[(&str, &str, &[usize], &[u8])]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut offset = 0;
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in entries {
        header.insert(
            name.to_string(),
            serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + bytes.len()]}),
        );
        offset += bytes.len();
        data.extend_from_slice(bytes);
    }
    let mut h = serde_json::Value::Object(header).to_string().into_bytes();
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend(h);
    out.extend(data);
    out
}

#[test]
fn misaligned_tensors_are_copied_and_reported() {
    let ints: Vec<u8> = [1i32, -2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
    let bytes = hand_made(&[("pad", "U8", &[1], &[9]), ("ints", "I32", &[3], &ints)]);
    let file = load_from_storage(image(bytes)).unwrap();
    assert_eq!(file.copied(), ["ints".to_string()]);
    let ints = file.get("ints").unwrap();
    assert_eq!(ints.to_vec::<i32>().unwrap(), [1, -2, 3]);
    assert!(!ints.storage().is_alias_of(file.storage()));
    assert!(ints.storage().is_read_only(), "copies are read-only too");
    assert_eq!(ints.storage().read().unwrap().as_ptr() as usize % 64, 0);
    let pad = file.get("pad").unwrap();
    assert!(pad.storage().is_alias_of(file.storage()));
    assert_eq!(pad.to_vec::<u8>().unwrap(), [9]);
}

#[test]
fn bad_files_and_tensors_are_refused() {
    let t = Tensor::arange(0, 4, 1, ScalarType::Int).unwrap();
    let bytes = serialize([("t", &t)], None).unwrap();
    // Truncated data.
    let e = load_from_storage(image(bytes[..bytes.len() - 1].to_vec())).unwrap_err();
    assert!(e.to_string().starts_with("safetensors:"), "{e}");
    // Too short for a header length.
    assert!(load_from_storage(image(vec![1, 2, 3])).is_err());
    // Unsupported dtypes, both ways.
    let cd = Tensor::zeros(&[2], ScalarType::ComplexDouble).unwrap();
    let e = serialize([("cd", &cd)], None).unwrap_err().to_string();
    assert!(e.contains("complex128"), "{e}");
    let f4 = hand_made(&[("x", "F4", &[2], &[0])]);
    let e = load_from_storage(image(f4)).unwrap_err().to_string();
    assert!(e.contains("F4"), "{e}");
    // Duplicate names.
    let e = serialize([("t", &t), ("t", &t)], None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("appears twice"), "{e}");
}

#[test]
fn writable_storages_give_writable_views() {
    let t = Tensor::arange(0, 4, 1, ScalarType::Int).unwrap();
    let bytes = serialize([("t", &t)], None).unwrap();
    let file = load_from_storage(Storage::from_owner(bytes)).unwrap();
    let v = file.get("t").unwrap();
    v.set::<i32>(&[0], 10).unwrap();
    assert_eq!(v.to_vec::<i32>().unwrap(), [10, 1, 2, 3]);
}

#[test]
#[cfg_attr(miri, ignore = "memory-maps a file")]
fn load_mmap_maps_the_file_once_and_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    let tensors = sample();
    save(tensors.iter().map(|(n, t)| (*n, t)), None, &path).unwrap();
    // SAFETY: a private temporary file; nothing writes or truncates it
    // while it is mapped (`save` below replaces it by a rename).
    let file = unsafe { load_mmap(&path) }.unwrap();
    let len = std::fs::metadata(&path).unwrap().len() as usize;
    assert_eq!(
        file.storage().nbytes(),
        len,
        "one storage over the whole file"
    );
    for (name, t) in &tensors {
        let got = file.get(name).unwrap();
        assert!(got.storage().is_alias_of(file.storage()));
        assert_eq!(got.to_f64_vec().unwrap(), t.to_f64_vec().unwrap(), "{name}");
    }
    let w = file.get("f32.t").unwrap();
    let err = w.set::<f32>(&[0, 0], 1.0).unwrap_err().to_string();
    assert!(err.contains("read-only"), "{err}");
    assert!(err.contains("m.safetensors"), "{err}");
    assert!(err.contains("clone the tensor"), "{err}");
    // A clone is writable.
    let c = w.clone_in(MemoryFormat::Contiguous).unwrap();
    c.set::<f32>(&[0, 0], 1.0).unwrap();
    // Saving over the mapped file replaces it without disturbing the map.
    let other = Tensor::zeros(&[2], ScalarType::Float).unwrap();
    save([("z", &other)], None, &path).unwrap();
    assert_eq!(w.get::<f32>(&[1, 0]).unwrap(), 1.0);
    assert_eq!(load_file(&path).unwrap().len(), 1);
    // Missing files name the path.
    // SAFETY: fails before mapping anything.
    let e = unsafe { load_mmap(dir.path().join("nope")) }
        .unwrap_err()
        .to_string();
    assert!(e.contains("nope"), "{e}");
}

/// Soundness review, class 4: the safe loader copies the file once, so a
/// file truncated or rewritten afterwards (`SIGBUS` or changing bytes for
/// a mapping) leaves the tensors intact, and they are writable.
#[test]
#[cfg_attr(miri, ignore = "reads a file")]
fn load_reads_the_file_once_and_survives_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    let tensors = sample();
    save(tensors.iter().map(|(n, t)| (*n, t)), None, &path).unwrap();
    let file = load(&path).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    for (name, t) in &tensors {
        let got = file.get(name).unwrap();
        assert!(got.storage().is_alias_of(file.storage()));
        assert_eq!(got.to_f64_vec().unwrap(), t.to_f64_vec().unwrap(), "{name}");
    }
    let w = file.get("f32.t").unwrap();
    w.set::<f32>(&[0, 0], 1.5).unwrap();
    assert_eq!(w.get::<f32>(&[0, 0]).unwrap(), 1.5);
    let e = load(dir.path().join("nope")).unwrap_err().to_string();
    assert!(e.contains("nope"), "{e}");
    assert!(
        load(&path).is_err(),
        "an empty file is not a safetensors file"
    );
}
