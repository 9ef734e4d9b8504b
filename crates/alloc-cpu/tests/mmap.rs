//! Memory-mapped storages. Miri cannot map files, so these run natively
//! only.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::io::Write;

use alloc_cpu::mmap::{self, read_file, read_file_range, MapMode, MmapError};
use c10_storage::{Device, Storage, StorageError};

/// [`mmap::map_file`] for this file's tests.
fn map_file(path: &std::path::Path, mode: MapMode) -> Result<Storage, MmapError> {
    // SAFETY: every file these tests map is a private temporary file that
    // nothing writes or truncates while it is mapped, except through the
    // one writable mapping under test.
    unsafe { mmap::map_file(path, mode) }
}

/// [`mmap::map_file_range`] for this file's tests.
fn map_file_range(
    path: &std::path::Path,
    mode: MapMode,
    offset: u64,
    len: usize,
) -> Result<Storage, MmapError> {
    // SAFETY: as in `map_file`.
    unsafe { mmap::map_file_range(path, mode, offset, len) }
}

fn temp_with(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(bytes).unwrap();
    f.flush().unwrap();
    f
}

#[test]
#[cfg_attr(miri, ignore)]
fn read_only_maps_and_refuses_writes() {
    let f = temp_with(b"hello, mmap");
    let s = map_file(f.path(), MapMode::ReadOnly).unwrap();
    assert_eq!(s.nbytes(), 11);
    assert_eq!(s.device(), Device::CPU);
    assert!(s.is_read_only());
    assert!(!s.resizable());
    assert_eq!(s.read().unwrap().bytes().unwrap(), b"hello, mmap");
    let err = s.write().err().unwrap();
    assert!(matches!(err, StorageError::ReadOnly { .. }));
    let text = err.to_string();
    assert!(
        text.contains("read-only storage (memory-mapped read-only from")
            && text.contains(&f.path().display().to_string()),
        "{text}"
    );
    assert!(s.try_write().is_err());
    assert!(s.resize(100).is_err());
    assert!(s.set_resizable(true).is_err());
    // Page-aligned base: 64-byte aligned too.
    assert_eq!(s.read().unwrap().as_ptr() as usize % 64, 0);
}

#[test]
#[cfg_attr(miri, ignore)]
fn read_write_changes_reach_the_file() {
    let f = temp_with(&[0u8; 16]);
    let s = map_file(f.path(), MapMode::ReadWrite).unwrap();
    assert!(!s.is_read_only());
    s.write().unwrap().bytes_mut().unwrap()[..4].copy_from_slice(b"abcd");
    // Visible through the page cache while still mapped...
    assert_eq!(&fs::read(f.path()).unwrap()[..4], b"abcd");
    drop(s);
    // ...and after unmapping.
    let back = fs::read(f.path()).unwrap();
    assert_eq!(&back[..4], b"abcd");
    assert_eq!(&back[4..], &[0u8; 12]);
}

#[test]
#[cfg_attr(miri, ignore)]
fn copy_on_write_changes_stay_private() {
    let f = temp_with(b"original");
    let s = map_file(f.path(), MapMode::CopyOnWrite).unwrap();
    s.write()
        .unwrap()
        .bytes_mut()
        .unwrap()
        .copy_from_slice(b"modified");
    assert_eq!(s.read().unwrap().bytes().unwrap(), b"modified");
    assert_eq!(fs::read(f.path()).unwrap(), b"original");
    drop(s);
    assert_eq!(fs::read(f.path()).unwrap(), b"original");
}

#[test]
#[cfg_attr(miri, ignore)]
fn zero_length_file_gives_an_empty_storage() {
    let f = temp_with(b"");
    for mode in [MapMode::ReadOnly, MapMode::ReadWrite, MapMode::CopyOnWrite] {
        let s = map_file(f.path(), mode).unwrap();
        assert_eq!(s.nbytes(), 0, "{mode:?}");
        assert!(s.read().unwrap().bytes().unwrap().is_empty());
        if mode != MapMode::ReadOnly {
            assert!(s.write().unwrap().bytes_mut().unwrap().is_empty());
        }
    }
    let s = map_file_range(f.path(), MapMode::ReadOnly, 0, 0).unwrap();
    assert_eq!(s.nbytes(), 0);
}

#[test]
#[cfg_attr(miri, ignore)]
fn ranges_map_the_right_bytes() {
    let data: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    let f = temp_with(&data);
    // Unaligned offset within the second page.
    let s = map_file_range(f.path(), MapMode::ReadOnly, 5000, 1234).unwrap();
    assert_eq!(s.read().unwrap().bytes().unwrap(), &data[5000..6234]);
    // Up to the end exactly; zero bytes at the end.
    let s = map_file_range(f.path(), MapMode::CopyOnWrite, 9990, 10).unwrap();
    assert_eq!(s.read().unwrap().bytes().unwrap(), &data[9990..]);
    let s = map_file_range(f.path(), MapMode::ReadOnly, 10_000, 0).unwrap();
    assert_eq!(s.nbytes(), 0);
    // A writable range writes only its bytes.
    let s = map_file_range(f.path(), MapMode::ReadWrite, 4096, 4).unwrap();
    s.write().unwrap().bytes_mut().unwrap().fill(0xEE);
    drop(s);
    let back = fs::read(f.path()).unwrap();
    assert_eq!(&back[4096..4100], &[0xEE; 4]);
    assert_eq!(&back[..4096], &data[..4096]);
    assert_eq!(&back[4100..], &data[4100..]);
}

#[test]
#[cfg_attr(miri, ignore)]
fn out_of_range_and_missing_files_are_errors() {
    let f = temp_with(b"0123456789");
    let err = map_file_range(f.path(), MapMode::ReadOnly, 5, 6).unwrap_err();
    assert!(matches!(
        err,
        MmapError::OutOfRange {
            offset: 5,
            len: 6,
            file_len: 10,
            ..
        }
    ));
    assert_eq!(err.path(), f.path());
    assert_eq!(
        err.to_string(),
        format!(
            "cannot map 6 bytes at offset 5 of {}: the file has 10 bytes",
            f.path().display()
        )
    );
    assert!(map_file_range(f.path(), MapMode::ReadOnly, 11, 0).is_err());
    assert!(map_file_range(f.path(), MapMode::ReadOnly, u64::MAX, 2).is_err());

    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.bin");
    for mode in [MapMode::ReadOnly, MapMode::ReadWrite, MapMode::CopyOnWrite] {
        let err = map_file(&missing, mode).unwrap_err();
        assert!(matches!(err, MmapError::Open { .. }));
        assert_eq!(err.path(), missing.as_path());
        let text = err.to_string();
        assert!(
            text.starts_with(&format!(
                "cannot open {} for memory mapping: ",
                missing.display()
            )),
            "{text}"
        );
        // The io::Error is kept as the source.
        let source = std::error::Error::source(&err).unwrap();
        assert!(source.downcast_ref::<std::io::Error>().is_some());
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn shared_handles_keep_the_mapping_alive() {
    let f = temp_with(b"shared");
    let s = map_file(f.path(), MapMode::ReadOnly).unwrap();
    let t = s.clone();
    drop(s);
    assert_eq!(t.read().unwrap().bytes().unwrap(), b"shared");
}

/// Dropping the storage unmaps the file: the mapping disappears from
/// `/proc/self/maps`.
#[test]
#[cfg_attr(miri, ignore)]
#[cfg(target_os = "linux")]
fn dropping_the_storage_unmaps() {
    let f = temp_with(&[1u8; 8192]);
    let name = f.path().display().to_string();
    let mapped = || {
        fs::read_to_string("/proc/self/maps")
            .unwrap()
            .lines()
            .any(|l| l.ends_with(&name))
    };
    assert!(!mapped());
    for mode in [MapMode::ReadOnly, MapMode::ReadWrite, MapMode::CopyOnWrite] {
        let s = map_file(f.path(), mode).unwrap();
        assert!(mapped(), "{mode:?}: mapping should be listed");
        let t = s.clone();
        drop(s);
        assert!(mapped(), "{mode:?}: a handle remains");
        drop(t);
        assert!(!mapped(), "{mode:?}: mapping should be gone");
    }
}

/// Soundness review, class 4: the safe alternative copies, so a file
/// changed or truncated afterwards (which would make a mapping read changed
/// bytes or die of `SIGBUS`) leaves the storage as it was.
#[test]
#[cfg_attr(miri, ignore)]
fn read_file_owns_its_bytes() {
    let f = temp_with(&[7u8; 10_000]);
    let s = read_file(f.path()).unwrap();
    let tail = read_file_range(f.path(), 9_000, 1_000).unwrap();
    assert!(!s.is_read_only() && s.resizable());
    // Another writer, then truncation.
    fs::write(f.path(), [1u8; 3]).unwrap();
    fs::File::options()
        .write(true)
        .open(f.path())
        .unwrap()
        .set_len(0)
        .unwrap();
    assert_eq!(s.nbytes(), 10_000);
    assert!(s.read().unwrap().bytes().unwrap().iter().all(|&b| b == 7));
    assert!(tail
        .read()
        .unwrap()
        .bytes()
        .unwrap()
        .iter()
        .all(|&b| b == 7));
    // Writable and growable like any storage.
    s.write().unwrap().bytes_mut().unwrap()[0] = 9;
    s.resize(20_000).unwrap();
    assert_eq!(s.read().unwrap().bytes().unwrap()[..2], [9, 7]);
}

#[test]
#[cfg_attr(miri, ignore)]
fn read_file_errors_name_the_file() {
    let f = temp_with(b"0123456789");
    let err = read_file_range(f.path(), 5, 6).unwrap_err();
    assert!(matches!(err, MmapError::OutOfRange { .. }));
    assert!(read_file_range(f.path(), u64::MAX, 2).is_err());
    assert_eq!(read_file_range(f.path(), 10, 0).unwrap().nbytes(), 0);
    let missing = f.path().with_extension("missing");
    let err = read_file(&missing).unwrap_err();
    assert!(matches!(err, MmapError::Open { .. }));
    assert_eq!(err.path(), missing.as_path());
}
