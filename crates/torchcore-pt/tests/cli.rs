//! The `torchcore` binary (feature `cli`): `cargo test -p torchcore-pt --features cli`.
#![cfg(feature = "cli")]

mod common;

use std::process::Command;

fn run(args: &[&std::ffi::OsStr]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_torchcore"))
        .args(args)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn inspect_lists_tensors_sharing_and_refusals() {
    let f = common::fixtures();
    let (ok, text) = run(&["inspect".as_ref(), f.join("shared.pt").as_os_str()]);
    assert!(ok, "{text}");
    assert!(
        text.contains("evens    int64  [4]    [2]     1       0        numbers"),
        "{text}"
    );
    assert!(
        text.contains("total: 2 tensors over 1 storages (1 shared by several tensors), 72 bytes"),
        "{text}"
    );
    let (ok, text) = run(&["inspect".as_ref(), f.join("refused_global.pt").as_os_str()]);
    assert!(!ok);
    assert!(
        text.contains("refused globals (not in the weights-only allowlist): posix.system"),
        "{text}"
    );
    let (ok, text) = run(&["inspect".as_ref(), f.join("legacy.pt").as_os_str()]);
    assert!(ok, "{text}");
    assert!(
        text.contains("PyTorch legacy (pre-1.6, non-ZIP) format"),
        "{text}"
    );
    assert!(
        text.contains("total: 17 tensors over 14 storages (2 shared by several tensors)"),
        "{text}"
    );
}

#[test]
fn convert_round_trips_through_safetensors() {
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path().join("views.safetensors");
    let back = dir.path().join("back.pt");
    let src = common::fixtures().join("views.pt");
    let (ok, text) = run(&["convert".as_ref(), src.as_os_str(), st.as_os_str()]);
    assert!(ok, "{text}");
    assert!(
        text.contains("shared storage: offset_view, narrow_of_shared, base view one storage"),
        "{text}"
    );
    let (ok, text) = run(&["convert".as_ref(), st.as_os_str(), back.as_os_str()]);
    assert!(ok, "{text}");
    let a = torchcore_pt::load(&src).unwrap();
    let b = torchcore_pt::load_state_dict(&back).unwrap();
    for (name, t) in a.tensors() {
        let u = b.get(&name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(u.sizes(), t.sizes(), "{name}");
        assert_eq!(
            u.to_vec::<f32>().unwrap(),
            t.to_vec::<f32>().unwrap(),
            "{name}"
        );
    }
    let (ok, text) = run(&["convert".as_ref(), src.as_os_str(), back.as_os_str()]);
    assert!(!ok && text.contains("must end in .safetensors"), "{text}");
}
