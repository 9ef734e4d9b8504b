//! Fuzz target: torchcore-pt's checkpoint loader (ZIP container, records,
//! pickle, storages) on arbitrary bytes. No input may panic or abort;
//! whatever loads is walked and saved again, and the saved archive must
//! load.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = torchcore_pt::load_from_reader(Cursor::new(data.to_vec())) {
        for (_, t) in v.tensors() {
            let _ = t.to_vec::<u8>();
        }
        if let Ok(w) = torchcore_pt::save_to_writer(&v, Cursor::new(Vec::new())) {
            torchcore_pt::load_from_reader(Cursor::new(w.into_inner())).expect("a saved archive loads");
        }
    }
});
