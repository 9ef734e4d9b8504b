//! Python 2 strings (`SHORT_BINSTRING`, `BINSTRING`) read as
//! `LoadOptions::py2_strings` says (torch's `encoding=`), persistent ids
//! included.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use c10_core::{ScalarType, Storage};
use torchcore_pt::unpickle::{unpickle, StorageRecord, StorageSource};
use torchcore_pt::{PtError, Py2Strings, Value};

struct Source {
    mode: Py2Strings,
    asked: Vec<(String, String)>,
}

impl StorageSource for Source {
    fn load_storage(&mut self, rec: &StorageRecord<'_>) -> Result<Storage, PtError> {
        self.asked
            .push((rec.key.to_string(), rec.location.to_string()));
        Ok(c10_core::Tensor::zeros(&[1], ScalarType::Float)?
            .storage()
            .clone())
    }

    fn py2_strings(&self) -> Py2Strings {
        self.mode
    }
}

fn run(pickle: &[u8], mode: Py2Strings) -> Result<Value, PtError> {
    let mut s = Source {
        mode,
        asked: Vec::new(),
    };
    unpickle(pickle, &mut s)
}

#[test]
fn short_binstrings_follow_the_mode() {
    // protocol 2, SHORT_BINSTRING "ż" (UTF-8 c5 bc), STOP
    let p = b"\x80\x02U\x02\xc5\xbc.";
    assert_eq!(run(p, Py2Strings::Utf8).unwrap(), Value::Str("ż".into()));
    assert_eq!(
        run(p, Py2Strings::Latin1).unwrap(),
        Value::Str("\u{c5}\u{bc}".into())
    );
    assert_eq!(
        run(p, Py2Strings::Bytes).unwrap(),
        Value::Bytes(vec![0xc5, 0xbc])
    );
    let e = run(p, Py2Strings::Ascii).unwrap_err().to_string();
    assert!(
        e.contains("'ascii' codec can't decode byte 0xc5 in position 0"),
        "{e}"
    );
    let bad = b"\x80\x02U\x01\xff.";
    let e = run(bad, Py2Strings::Utf8).unwrap_err().to_string();
    assert!(e.contains("'utf-8' codec can't decode"), "{e}");
    // BINSTRING (4-byte length) too.
    let long = b"\x80\x02T\x02\x00\x00\x00ab.";
    assert_eq!(
        run(long, Py2Strings::Bytes).unwrap(),
        Value::Bytes(b"ab".to_vec())
    );
}

#[test]
fn persistent_ids_of_bytes_mode_still_name_storages() {
    // _rebuild_tensor_v2(('storage', FloatStorage, '0', 'cpu', 1), 0, (1,), (1,), False, None)
    // with every string a SHORT_BINSTRING, read with encoding='bytes'.
    let mut p = b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(".to_vec();
    p.extend_from_slice(b"(U\x07storagectorch\nFloatStorage\nU\x010U\x03cpuK\x01tQ");
    p.extend_from_slice(b"K\x00K\x01\x85K\x01\x85\x89NtR.");
    let mut s = Source {
        mode: Py2Strings::Bytes,
        asked: Vec::new(),
    };
    let v = unpickle(&p, &mut s).unwrap();
    assert!(matches!(v, Value::Tensor(_)));
    assert_eq!(s.asked, [("0".to_string(), "cpu".to_string())]);
}
