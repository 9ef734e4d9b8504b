//! `inspect`: tensors, storages and sharing without reading data, and
//! every global a pickle names.

mod common;

use torchcore_pt::inspect::inspect;

#[test]
fn views_and_sharing_are_described() {
    let r = inspect(common::fixtures().join("views.pt")).unwrap();
    assert!(r.error.is_none());
    assert_eq!(r.archive, "views");
    assert_eq!(r.protocol, Some(2));
    assert_eq!(r.tensors.len(), 8);
    let off = r.tensors.iter().find(|t| t.name == "offset_view").unwrap();
    assert_eq!(
        (off.shape.clone(), off.strides.clone(), off.offset),
        (vec![2, 5], vec![20, 1], 90)
    );
    let shared = r.storages.iter().find(|s| s.tensors.len() > 1).unwrap();
    assert_eq!(shared.tensors, ["offset_view", "narrow_of_shared", "base"]);
    assert_eq!(shared.nbytes, 480);
    assert_eq!(r.total_bytes(), 1024);
    let text = r.to_string();
    assert!(
        text.contains("total: 8 tensors over 6 storages (1 shared by several tensors), 1024 bytes"),
        "{text}"
    );
    assert!(r.globals.iter().all(|g| g.allowed));
    assert!(r
        .globals
        .iter()
        .any(|g| g.name == "torch._utils._rebuild_tensor_v2"));
}

#[test]
fn stack_global_names_are_resolved() {
    // Protocol 4 names globals with STACK_GLOBAL over memoised strings.
    let r = inspect(common::fixtures().join("protocol4.pt")).unwrap();
    assert_eq!(r.protocol, Some(4));
    let names: Vec<&str> = r.globals.iter().map(|g| g.name.as_str()).collect();
    assert!(
        names.contains(&"torch._utils._rebuild_tensor_v2"),
        "{names:?}"
    );
    assert!(names.contains(&"torch.LongStorage"), "{names:?}");
    assert!(names.contains(&"collections.OrderedDict"), "{names:?}");
}

#[test]
fn refused_globals_are_listed_and_locations_shown() {
    let r = inspect(common::fixtures().join("refused_global.pt")).unwrap();
    assert!(r.error.is_some());
    assert!(r
        .to_string()
        .contains("refused globals (not in the weights-only allowlist): posix.system"));
    let r = inspect(common::fixtures().join("cuda_tag.pt")).unwrap();
    assert_eq!(r.storages[0].location, "cuda:0");
}

#[test]
fn legacy_files_are_described_without_reading_data() {
    let report = inspect(common::fixtures().join("legacy.pt")).unwrap();
    assert!(report.legacy && report.error.is_none(), "{report}");
    assert_eq!((report.tensors.len(), report.storages.len()), (17, 14));
    let evens = report.tensors.iter().find(|t| t.name == "evens").unwrap();
    assert_eq!((evens.offset, evens.strides.as_slice()), (1, &[2][..]));
    // A refused global in a legacy file is named, and nothing else fails.
    let mut b = vec![
        0x80, 2, 0x8a, 10, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19,
    ];
    b.extend(b".\x80\x02M\xe9\x03.\x80\x02}.\x80\x02cos\nsystem\n.");
    let report = torchcore_pt::inspect::inspect_reader(std::io::Cursor::new(b)).unwrap();
    assert_eq!(report.refused_globals().collect::<Vec<_>>(), ["os.system"]);
    assert!(report
        .error
        .unwrap()
        .to_string()
        .contains("Unsupported global: GLOBAL os.system"));
}
