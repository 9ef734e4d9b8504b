//! The `torchcore-memviz` command: writes the HTML picture of a dump, ours
//! or one re-pickled by Python's `pickle` (protocol 5, with the memo and
//! frames PyTorch's `_dump_snapshot` produces), and fails cleanly on a
//! file that is not a snapshot.

use std::process::Command;

use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, FakeDevice, StreamId};
use c10_storage::history::HistoryConfig;
use torchcore_memviz::{cuda_snapshot, dump_snapshot};

fn memviz() -> Command {
    Command::new(env!("CARGO_BIN_EXE_torchcore-memviz"))
}

#[test]
#[cfg_attr(miri, ignore = "starts processes, which Miri cannot")]
fn writes_the_page_from_a_dump() {
    let a = CachingAllocator::new(
        FakeDevice::new(1 << 30),
        0,
        CachingAllocatorConfig::default(),
    );
    a.record_memory_history(Some(HistoryConfig::default()));
    let p = a.malloc(5 << 20, StreamId::DEFAULT).expect("malloc");
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = dir.path().join("snap.pickle");
    dump_snapshot(&cuda_snapshot(&[a.memory_snapshot()]), &dump).expect("dump");
    let html = dir.path().join("out.html");
    let out = memviz()
        .arg(&dump)
        .args(["-o".as_ref(), html.as_os_str()])
        .args(["--title", "cli"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("wrote {}\n", html.display())
    );
    let page = std::fs::read_to_string(&html).expect("page");
    assert!(page.contains("<title>cli</title>"));
    assert!(page.contains(r#"<span class="num" id="allocated">5.0MiB</span>"#));

    // The same dump re-pickled by Python with protocol 5, if python3 runs.
    let py5 = dir.path().join("py5.pickle");
    let script = "import pickle,sys; d=pickle.load(open(sys.argv[1],'rb')); pickle.dump(d, open(sys.argv[2],'wb'), protocol=5)";
    match Command::new("python3")
        .args(["-c", script])
        .arg(&dump)
        .arg(&py5)
        .status()
    {
        Ok(s) if s.success() => {
            let html5 = dir.path().join("out5.html");
            let st = memviz()
                .arg(&py5)
                .args(["-o".as_ref(), html5.as_os_str()])
                .args(["--title", "cli"])
                .status()
                .expect("run");
            assert!(st.success());
            assert_eq!(
                std::fs::read_to_string(&html5).expect("page"),
                page,
                "the same picture from Python's pickle"
            );
        }
        _ => eprintln!("SKIPPED the protocol-5 part: python3 did not run"),
    }

    // Not a snapshot.
    let junk = dir.path().join("junk.pickle");
    std::fs::write(&junk, b"not a pickle").expect("write");
    let out = memviz().arg(&junk).output().expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: "));
    let out = memviz().output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    // SAFETY: unused.
    unsafe { a.free(p).expect("free") };
}
