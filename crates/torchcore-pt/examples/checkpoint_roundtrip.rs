//! A real round trip through a PyTorch checkpoint file: build a small
//! "model" (a state dict with a parameter, a buffer, and two views of one
//! storage), save it with `torchcore_pt::save`, load it back (copying, and
//! memory-mapped), check every tensor bit for bit and the storage sharing,
//! and describe the file as `torchcore inspect` would.
//!
//! ```sh
//! cargo run -p torchcore-pt --example checkpoint_roundtrip [OUT.pt]
//! python -c "import torch; print(torch.load('OUT.pt'))"   # if torch is at hand
//! ```

use c10_core::{ScalarType, Tensor};
use torchcore_pt::{inspect::inspect, load, load_mmap, save, LoadOptions, OrderedDict, Value};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| dir.path().join("model.pt"));

    let mut weight =
        Tensor::arange(0.0, 12.0, 1.0, ScalarType::Float)?.as_strided(&[3, 4], &[4, 1], Some(0))?;
    weight.set_requires_grad(true)?;
    let steps = Tensor::full(&[], 100, ScalarType::Long)?;
    let numbers = Tensor::arange(1, 10, 1, ScalarType::Long)?;
    let evens = numbers.as_strided(&[4], &[2], Some(1))?;

    let mut sd = OrderedDict::default();
    sd.insert("layer.weight", Value::Parameter(weight.clone()));
    sd.insert("layer.steps", Value::Tensor(steps));
    sd.insert("numbers", Value::Tensor(numbers.clone()));
    sd.insert("evens", Value::Tensor(evens));
    sd.insert("epoch", Value::Int(3));
    save(&Value::OrderedDict(sd), &path)?;
    println!(
        "saved {} ({} bytes)",
        path.display(),
        std::fs::metadata(&path)?.len()
    );

    let back = load(&path)?;
    let get = |k: &str| -> Result<Tensor, Box<dyn std::error::Error>> {
        let v = back.dict_items().and_then(|items| {
            items
                .iter()
                .find(|(key, _)| matches!(key, Value::Str(s) if s == k))
                .map(|(_, v)| v)
        });
        Ok(v.and_then(Value::as_tensor)
            .ok_or(format!("no tensor {k}"))?
            .clone())
    };
    let w = get("layer.weight")?;
    assert_eq!(w.to_vec::<f32>()?, weight.to_vec::<f32>()?);
    assert!(w.requires_grad(), "a parameter keeps requires_grad");
    let (n, e) = (get("numbers")?, get("evens")?);
    assert!(
        n.storage().is_alias_of(e.storage()),
        "one storage, two views"
    );
    e.fill_(0i64)?;
    assert_eq!(n.to_vec::<i64>()?, [1, 0, 3, 0, 5, 0, 7, 0, 9]);
    println!("loaded back: bits equal, parameter restored, evens is a view of numbers again");

    // SAFETY: the file is ours and nothing writes or truncates it while
    // the mapped tensors live (they are dropped at the end of main).
    let mapped = unsafe { load_mmap(&path, &LoadOptions::default())? };
    println!("memory-mapped load: {} tensors", mapped.tensors().len());

    print!("{}", inspect(&path)?);
    Ok(())
}
