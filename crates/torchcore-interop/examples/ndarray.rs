//! ndarray views of tensors (zero-copy, under the storage's guard) and
//! tensors from ndarray arrays (adopting the buffer).
//!
//! Run: `cargo run -p torchcore-interop --example ndarray --features ndarray`

use aten_shape::prelude::*;
use c10_core::{ScalarType, Tensor};
use ndarray::{array, Axis};
use torchcore_interop::ndarray::{from_ndarray, NdarrayExt};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A transposed view, seen by ndarray with the same strides.
    let t = Tensor::arange(0.0, 6.0, 1.0, ScalarType::Double)?.view(&[2, 3])?;
    let tt = t.t()?;
    {
        let guard = tt.ndarray_read::<f64>()?; // shared lock held
        let a = guard.view();
        println!("view {:?} strides {:?}:\n{a}", a.shape(), a.strides());
        println!("column sums: {}", a.sum_axis(Axis(0)));
    } // lock released

    // Writing through ndarray, under the exclusive lock.
    {
        let mut guard = tt.ndarray_write::<f64>()?;
        guard.view_mut().mapv_inplace(|x| x * x);
    }
    println!(
        "base after squaring through the view: {:?}",
        t.to_vec::<f64>()?
    );

    // Overlapping layouts can be read but not written through ndarray.
    let expanded = Tensor::arange(0, 3, 1, ScalarType::Long)?
        .unsqueeze(0)?
        .expand(&[2, 3])?;
    println!("expanded, read: {}", expanded.ndarray_read::<i64>()?.view());
    if let Err(e) = expanded.ndarray_write::<i64>() {
        println!("expanded, write: {e}");
    }

    // From ndarray: the Vec is adopted, no copy.
    let a = array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]];
    let ptr = a.as_ptr();
    let t = from_ndarray(a)?;
    println!(
        "tensor {:?} from ndarray, same buffer: {}",
        t.sizes(),
        std::ptr::eq(t.storage().read()?.as_ptr(), ptr.cast())
    );
    Ok(())
}
