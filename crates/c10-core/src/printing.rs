//! Printing: `Display` like PyTorch's `print(tensor)`.
//!
//! `format!("{t}")` follows torch 2.x's `torch/_tensor_str.py` with the
//! default print options (precision 4, threshold 1000, 3 edge items, line
//! width 80): the same value formatting (`1.`, `0.2500`, `1.0000e+05`,
//! `nan`, `True`), the same alignment, line wrapping and summarization
//! (`...`), and the same suffixes (`dtype=`, `size=`, `device=`,
//! `requires_grad=True`). A precision in the format string overrides the
//! default one, like `torch.set_printoptions(precision=...)`:
//!
//! ```
//! use c10_core::Tensor;
//! let t = Tensor::from_vec(vec![0.25f32, 1.5, -2.125], &[3])?;
//! assert_eq!(t.to_string(), "tensor([ 0.2500,  1.5000, -2.1250])");
//! assert_eq!(format!("{t:.2}"), "tensor([ 0.25,  1.50, -2.12])");
//! let m = Tensor::from_vec(vec![0i32, 1, 2, 3, 4, 5], &[2, 3])?;
//! assert_eq!(m.to_string(), "tensor([[0, 1, 2],\n        [3, 4, 5]], dtype=torch.int32)");
//! # Ok::<(), c10_core::TensorError>(())
//! ```
//!
//! [`Tensor::explain`] (in `explain.rs`) draws how a view maps onto its
//! storage instead.

use std::fmt;

use crate::dispatch_key::{backend_component_for_device_type, BackendComponent, DispatchKey};
use crate::error::{Result, TensorError};
use crate::scalar_type::{BComplex32, Complex128, Complex32, Complex64, Element, ScalarType};
use crate::tensor::Tensor;
use c10_storage::DeviceType;

/// PyTorch's default `precision` print option.
pub(crate) const PRECISION: usize = 4;
/// PyTorch's default `threshold`: more elements than this are summarized.
const THRESHOLD: i64 = 1000;
/// PyTorch's default `edgeitems`.
const EDGE_ITEMS: usize = 3;
/// PyTorch's default `linewidth`.
const LINE_WIDTH: usize = 80;

// ---------------------------------------------------------------------------
// Reading elements
// ---------------------------------------------------------------------------

/// One element, as Python's `tensor.tolist()` would see it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Val {
    /// A floating-point value.
    F(f64),
    /// An integer (wide enough for `uint64` and `int64`).
    I(i128),
    /// A bool.
    B(bool),
    /// A complex value (real, imaginary).
    C(f64, f64),
}

/// For each dim, the indices that are printed: all of them, or (when the
/// tensor is summarized and the dim is longer than `2 * EDGE_ITEMS`) the
/// first and last `EDGE_ITEMS`. The product of these lists is exactly the
/// data `get_summarized_data` hands to PyTorch's formatter.
fn selected_indices(sizes: &[i64], summarize: bool) -> Vec<Vec<i64>> {
    let edge = EDGE_ITEMS as i64;
    sizes
        .iter()
        .map(|&n| {
            if summarize && n > 2 * edge {
                (0..edge).chain(n - edge..n).collect()
            } else {
                (0..n.max(0)).collect()
            }
        })
        .collect()
}

/// Reads the elements at the product of `sel` (row-major order) with `f`.
fn gather_as<T: Element>(t: &Tensor, sel: &[Vec<i64>], f: impl Fn(T) -> Val) -> Result<Vec<Val>> {
    let guard = t.read::<T>()?;
    let full = sel
        .iter()
        .zip(t.sizes())
        .all(|(s, &n)| s.len() as i64 == n && s.iter().enumerate().all(|(k, &i)| i == k as i64));
    // Summarizing bounds each dim at 6 printed indices but not their
    // product (60 dims of 2 print 2^60 values), so reserve fallibly: an
    // error shown in the text, not an abort.
    let total = sel
        .iter()
        .try_fold(1u64, |acc, s| acc.checked_mul(s.len() as u64))
        .unwrap_or(u64::MAX);
    let mut out = crate::access::try_vec_with_capacity(total, "printing")?;
    if full {
        out.extend(guard.iter().map(f));
        return Ok(out);
    }
    if total == 0 {
        return Ok(out);
    }
    let mut pos = vec![0usize; sel.len()];
    let mut index: Vec<i64> = sel.iter().map(|s| s[0]).collect();
    loop {
        out.push(f(guard.get(&index)?));
        // Advance the odometer from the last dim.
        let mut d = sel.len();
        loop {
            if d == 0 {
                return Ok(out);
            }
            d -= 1;
            pos[d] += 1;
            if pos[d] < sel[d].len() {
                index[d] = sel[d][pos[d]];
                break;
            }
            pos[d] = 0;
            index[d] = sel[d][0];
        }
    }
}

/// Reads the selected elements of `t` whatever its dtype, or explains why
/// it cannot.
pub(crate) fn gather(t: &Tensor, sel: &[Vec<i64>]) -> Result<Vec<Val>> {
    use ScalarType as S;
    match t.dtype() {
        S::Bool => gather_as::<bool>(t, sel, Val::B),
        S::Byte => gather_as::<u8>(t, sel, |v| Val::I(v.into())),
        S::Char => gather_as::<i8>(t, sel, |v| Val::I(v.into())),
        S::Short => gather_as::<i16>(t, sel, |v| Val::I(v.into())),
        S::Int => gather_as::<i32>(t, sel, |v| Val::I(v.into())),
        S::Long => gather_as::<i64>(t, sel, |v| Val::I(v.into())),
        S::UInt16 => gather_as::<u16>(t, sel, |v| Val::I(v.into())),
        S::UInt32 => gather_as::<u32>(t, sel, |v| Val::I(v.into())),
        S::UInt64 => gather_as::<u64>(t, sel, |v| Val::I(v.into())),
        S::ComplexHalf => gather_as::<Complex32>(t, sel, |v| Val::C(v.re.to_f64(), v.im.to_f64())),
        S::BComplex32 => gather_as::<BComplex32>(t, sel, |v| Val::C(v.re.to_f64(), v.im.to_f64())),
        S::ComplexFloat => gather_as::<Complex64>(t, sel, |v| Val::C(v.re.into(), v.im.into())),
        S::ComplexDouble => gather_as::<Complex128>(t, sel, |v| Val::C(v.re, v.im)),
        dtype => crate::dispatch_dtype!(dtype, T => {
            gather_as::<T>(t, sel, |v| Val::F(Element::to_f64(v)))
        }, {
            Err(TensorError::runtime(format!("cannot read elements of dtype {dtype}")))
        }),
    }
}

// ---------------------------------------------------------------------------
// Formatting values (PyTorch's `_Formatter`)
// ---------------------------------------------------------------------------

/// Python's `"{:.{p}e}".format(v)`: like Rust's `{:.p$e}` but with a signed
/// exponent of at least two digits (`1.0000e+05`).
fn python_sci(v: f64, precision: usize) -> String {
    if let Some(s) = non_finite(v) {
        return s.to_owned();
    }
    let s = format!("{v:.precision$e}");
    match s.split_once('e') {
        Some((mantissa, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// Python's spelling of NaN and the infinities.
fn non_finite(v: f64) -> Option<&'static str> {
    if v.is_nan() {
        Some("nan")
    } else if v == f64::INFINITY {
        Some("inf")
    } else if v == f64::NEG_INFINITY {
        Some("-inf")
    } else {
        None
    }
}

/// Python's `"{:.{p}f}".format(v)`.
fn python_fixed(v: f64, precision: usize) -> String {
    match non_finite(v) {
        Some(s) => s.to_owned(),
        None => format!("{v:.precision$}"),
    }
}

/// PyTorch's `_Formatter`: picks integer, fixed or scientific notation for
/// a whole tensor and the common width every element is padded to.
#[derive(Clone, Copy, Debug)]
struct Formatter {
    floating: bool,
    int_mode: bool,
    sci_mode: bool,
    max_width: usize,
    precision: usize,
}

impl Formatter {
    /// The formatter for floating-point values (also the real or imaginary
    /// parts of complex values).
    fn floating(values: impl Iterator<Item = f64>, precision: usize) -> Formatter {
        let mut f = Formatter {
            floating: true,
            int_mode: true,
            sci_mode: false,
            max_width: 1,
            precision,
        };
        let nonzero_finite: Vec<f64> = values.filter(|v| v.is_finite() && *v != 0.0).collect();
        if nonzero_finite.is_empty() {
            return f;
        }
        let (mut min, mut max) = (f64::INFINITY, 0.0f64);
        for v in &nonzero_finite {
            min = min.min(v.abs());
            max = max.max(v.abs());
        }
        f.int_mode = nonzero_finite.iter().all(|v| v.ceil() == *v);
        f.sci_mode = max / min > 1000.0 || max > 1.0e8 || min < 1.0e-4;
        for &v in &nonzero_finite {
            let width = if f.sci_mode {
                python_sci(v, precision).len()
            } else if f.int_mode {
                format!("{v:.0}").len() + 1
            } else {
                python_fixed(v, precision).len()
            };
            f.max_width = f.max_width.max(width);
        }
        f
    }

    /// The formatter for integers and bools: the width of the longest
    /// `str(value)`.
    fn plain(values: &[Val], precision: usize) -> Formatter {
        let max_width = values
            .iter()
            .map(|v| plain_str(*v).len())
            .fold(1, usize::max);
        Formatter {
            floating: false,
            int_mode: true,
            sci_mode: false,
            max_width,
            precision,
        }
    }

    /// `_Formatter.format(value)` for a real value.
    fn format_f64(&self, v: f64) -> String {
        let s = if self.sci_mode {
            python_sci(v, self.precision)
        } else if self.int_mode {
            match non_finite(v) {
                Some(s) => s.to_owned(),
                None => format!("{v:.0}."),
            }
        } else {
            python_fixed(v, self.precision)
        };
        self.pad(s)
    }

    /// `_Formatter.format(value)` for a non-floating value.
    fn format_plain(&self, v: Val) -> String {
        self.pad(plain_str(v))
    }

    /// Right-aligns `s` to the common width.
    fn pad(&self, s: String) -> String {
        if s.len() >= self.max_width {
            s
        } else {
            format!("{}{s}", " ".repeat(self.max_width - s.len()))
        }
    }
}

/// Python's `str(value)` for a non-floating value.
fn plain_str(v: Val) -> String {
    match v {
        Val::I(i) => i.to_string(),
        Val::B(true) => "True".to_owned(),
        Val::B(false) => "False".to_owned(),
        Val::F(f) => python_fixed(f, PRECISION),
        Val::C(re, im) => format!("({re}+{im}j)"),
    }
}

/// The formatters for one tensor: one for real data, or a pair (real,
/// imaginary) for complex data.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Formatters {
    first: Formatter,
    imag: Option<Formatter>,
}

impl Formatters {
    /// [`Formatters::new`] for values of `dtype` (floating and complex
    /// decided by the dtype, as `_tensor_str` does).
    pub(crate) fn for_dtype(values: &[Val], dtype: ScalarType, precision: usize) -> Formatters {
        Formatters::new(
            values,
            dtype.is_floating_point(),
            dtype.is_complex(),
            precision,
        )
    }

    /// Builds the formatters from the (summarized) data.
    pub(crate) fn new(
        values: &[Val],
        floating: bool,
        complex: bool,
        precision: usize,
    ) -> Formatters {
        if complex {
            let re = values.iter().map(|v| match *v {
                Val::C(re, _) => re,
                other => as_f64(other),
            });
            let im = values.iter().map(|v| match *v {
                Val::C(_, im) => im,
                _ => 0.0,
            });
            Formatters {
                first: Formatter::floating(re, precision),
                imag: Some(Formatter::floating(im, precision)),
            }
        } else if floating {
            Formatters {
                first: Formatter::floating(values.iter().map(|v| as_f64(*v)), precision),
                imag: None,
            }
        } else {
            Formatters {
                first: Formatter::plain(values, precision),
                imag: None,
            }
        }
    }

    /// The characters one element takes in a row, separator included.
    fn element_length(&self) -> usize {
        let mut n = self.first.max_width + 2;
        if let Some(im) = &self.imag {
            n += im.max_width + 1;
        }
        n
    }

    /// One element, padded (PyTorch's `_val_formatter`).
    pub(crate) fn format(&self, v: Val) -> String {
        match (v, &self.imag) {
            (Val::C(re, im), Some(fi)) => {
                let real = self.first.format_f64(re);
                let imag = format!("{}j", fi.format_f64(im));
                let imag = imag.trim_start();
                if imag.starts_with('+') || imag.starts_with('-') {
                    format!("{real}{imag}")
                } else {
                    format!("{real}+{imag}")
                }
            }
            (v, _) if self.first.floating => self.first.format_f64(as_f64(v)),
            (v, _) => self.first.format_plain(v),
        }
    }
}

/// A value as `f64` (real part for complex values).
fn as_f64(v: Val) -> f64 {
    match v {
        Val::F(f) => f,
        Val::I(i) => i as f64,
        Val::B(b) => f64::from(u8::from(b)),
        Val::C(re, _) => re,
    }
}

// ---------------------------------------------------------------------------
// Laying out (PyTorch's `_tensor_str_with_formatter`)
// ---------------------------------------------------------------------------

/// The selected data of a tensor and how to lay it out.
struct Layout<'a> {
    values: &'a [Val],
    /// Number of selected indices per dim.
    shape: &'a [usize],
    /// Whether each dim is elided in the middle (`...`).
    elided: &'a [bool],
    fmt: Formatters,
}

impl Layout<'_> {
    /// Writes the whole tensor (starting at column `indent`).
    ///
    /// PyTorch's `_tensor_str_with_formatter` recurses once per dim; this
    /// walks the dims with an explicit stack instead, so a tensor with tens
    /// of thousands of (size-1) dims prints in linear time and bounded
    /// call-stack depth rather than overflowing the thread's stack (an
    /// abort, not an error). The layout is the recursive one's: dim `d` is
    /// written at indent `indent + d`, its items separated by a comma, one
    /// newline per dim below it, and the spaces of the next line's indent.
    fn write(&self, out: &mut String, indent: usize) {
        let n = self.shape.len();
        if n == 0 {
            if let Some(&v) = self.values.first() {
                out.push_str(self.fmt.format(v).trim_start_matches(' '));
            }
            return;
        }
        // `chunk[d]`: the number of values under one index of dim `d`.
        // The product of all `shape` entries is `values.len()`, so none of
        // these overflow; saturating keeps that an invariant, not a panic.
        let mut chunk = vec![1usize; n];
        for d in (0..n - 1).rev() {
            chunk[d] = chunk[d + 1].saturating_mul(self.shape[d + 1]);
        }
        if n == 1 {
            self.write_vector(out, 0, 0, indent);
            return;
        }
        /// One open bracket: dim `d` of the sub-tensor at `values[start..]`,
        /// whose `next` item comes next.
        struct Open {
            d: usize,
            start: usize,
            next: usize,
        }
        let mut stack = vec![Open {
            d: 0,
            start: 0,
            next: 0,
        }];
        out.push('[');
        while let Some(top) = stack.last_mut() {
            let d = top.d;
            if top.next >= self.shape[d] {
                out.push(']');
                stack.pop();
                continue;
            }
            let i = top.next;
            top.next += 1;
            let start = top.start.saturating_add(i.saturating_mul(chunk[d]));
            if i > 0 {
                let sep = format!(",{}{}", "\n".repeat(n - d - 1), " ".repeat(indent + d + 1));
                out.push_str(&sep);
                // The elision mark comes before item EDGE_ITEMS (> 0).
                if self.elided[d] && i == EDGE_ITEMS {
                    out.push_str("...");
                    out.push_str(&sep);
                }
            }
            let child = d + 1;
            if child == n - 1 {
                self.write_vector(out, child, start, indent + child);
            } else {
                out.push('[');
                stack.push(Open {
                    d: child,
                    start,
                    next: 0,
                });
            }
        }
    }

    /// PyTorch's `_vector_str`: elements wrapped to the line width.
    fn write_vector(&self, out: &mut String, d: usize, start: usize, indent: usize) {
        let per_line = (LINE_WIDTH.saturating_sub(indent) / self.fmt.element_length()).max(1);
        let mut data: Vec<String> = Vec::with_capacity(self.shape[d] + 1);
        for i in 0..self.shape[d] {
            if self.elided[d] && i == EDGE_ITEMS {
                data.push(" ...".to_owned());
            }
            if let Some(&v) = self.values.get(start + i) {
                data.push(self.fmt.format(v));
            }
        }
        let line_sep = format!(",\n{}", " ".repeat(indent + 1));
        out.push('[');
        for (li, line) in data.chunks(per_line).enumerate() {
            if li > 0 {
                out.push_str(&line_sep);
            }
            out.push_str(&line.join(", "));
        }
        out.push(']');
    }
}

/// PyTorch's `_tensor_str`: the bracketed data of a non-empty tensor.
fn tensor_str(t: &Tensor, indent: usize, precision: usize) -> Result<String> {
    let summarize = t.numel() > THRESHOLD;
    let sel = selected_indices(t.sizes(), summarize);
    let values = gather(t, &sel)?;
    let fmt = Formatters::for_dtype(&values, t.dtype(), precision);
    let shape: Vec<usize> = sel.iter().map(Vec::len).collect();
    let elided: Vec<bool> = t
        .sizes()
        .iter()
        .map(|&n| summarize && n > 2 * EDGE_ITEMS as i64)
        .collect();
    let layout = Layout {
        values: &values,
        shape: &shape,
        elided: &elided,
        fmt,
    };
    let mut out = String::new();
    layout.write(&mut out, indent);
    Ok(out)
}

/// PyTorch's `_add_suffixes`: `, suffix` on the last line, or on a new line
/// when the line would pass the line width.
fn add_suffixes(body: &str, suffixes: &[String], indent: usize) -> String {
    let mut out = String::from(body);
    // Python: len(s) - s.rfind("\n") + 1, with rfind = -1 when absent.
    let mut last_line_len = match body.rfind('\n') {
        Some(i) => body.len() - i + 1,
        None => body.len() + 2,
    };
    for suffix in suffixes {
        if last_line_len + suffix.len() + 2 > LINE_WIDTH {
            out.push_str(",\n");
            out.push_str(&" ".repeat(indent));
            out.push_str(suffix);
            last_line_len = indent + suffix.len();
        } else {
            out.push_str(", ");
            out.push_str(suffix);
            last_line_len += suffix.len() + 2;
        }
    }
    out.push(')');
    out
}

/// PyTorch's `_str_intern` for a plain strided tensor.
fn tensor_repr(t: &Tensor, precision: usize) -> String {
    const PREFIX: &str = "tensor(";
    let indent = PREFIX.len();
    let dtype = t.dtype();
    let device = t.device();
    let mut suffixes = Vec::new();
    if !device.is_cpu() {
        suffixes.push(format!("device='{device}'"));
    }
    let has_default_dtype = matches!(
        dtype,
        ScalarType::Float | ScalarType::ComplexFloat | ScalarType::Long | ScalarType::Bool
    );
    let size_suffix = format!("size={}", crate::geometry::fmt_tuple(t.sizes()));
    let dtype_suffix = format!("dtype={dtype}");
    let body = if device.is_meta() || !device.device_type().is_host_accessible() {
        suffixes.push(size_suffix);
        if dtype != ScalarType::Float {
            suffixes.push(dtype_suffix);
        }
        if device.is_meta() {
            "...".to_owned()
        } else {
            format!("<data on device {device}: not readable from the host>")
        }
    } else if t.numel() == 0 {
        if t.dim() != 1 {
            suffixes.push(size_suffix);
        }
        if dtype != ScalarType::Float {
            suffixes.push(dtype_suffix);
        }
        "[]".to_owned()
    } else {
        match tensor_str(t, indent, precision) {
            Ok(s) => {
                if !has_default_dtype {
                    suffixes.push(dtype_suffix);
                }
                s
            }
            Err(e) => {
                suffixes.push(size_suffix);
                if !has_default_dtype {
                    suffixes.push(dtype_suffix);
                }
                format!("<data unavailable: {e}>")
            }
        }
    };
    if t.requires_grad() {
        suffixes.push("requires_grad=True".to_owned());
    }
    add_suffixes(&format!("{PREFIX}{body}"), &suffixes, indent)
}

/// Prints like PyTorch's `print(tensor)` (`torch/_tensor_str.py`, default
/// print options). A precision (`{:.2}`) replaces the default 4 digits.
///
/// Meta tensors print their metadata (`tensor(..., device='meta', size=(2,
/// 3))`), as PyTorch does; tensors on other devices without host access
/// print their metadata and say where the data is. If the elements cannot
/// be read (for instance a dtype without an element type, or a storage
/// shrunk under a view), the metadata is printed with `<data unavailable:
/// reason>`.
///
/// ```
/// use c10_core::{Tensor, ScalarType};
/// let t = Tensor::arange(0.0, 6.0, 1.0, ScalarType::Float)?;
/// let v = t.as_strided(&[2, 3], &[3, 1], None)?;
/// assert_eq!(v.to_string(), "tensor([[0., 1., 2.],\n        [3., 4., 5.]])");
/// let big = Tensor::from_vec(vec![1e5f32, 1.0], &[2])?;
/// assert_eq!(big.to_string(), "tensor([1.0000e+05, 1.0000e+00])");
/// # Ok::<(), c10_core::TensorError>(())
/// ```
impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&tensor_repr(self, f.precision().unwrap_or(PRECISION)))
    }
}

// ---------------------------------------------------------------------------
// Legacy type names
// ---------------------------------------------------------------------------

impl Tensor {
    /// Python's `t.type()` with no argument: the legacy tensor type name,
    /// built from the dtype's c10 name and the device (`torch.FloatTensor`,
    /// `torch.ComplexFloatTensor`, `torch.cuda.LongTensor`,
    /// `torch.meta.BFloat16Tensor`).
    ///
    /// ```
    /// use c10_core::{Device, ScalarType, Tensor, TensorOptions};
    /// let t = Tensor::zeros(&[2], ScalarType::Float)?;
    /// assert_eq!(t.type_name(), "torch.FloatTensor");
    /// let opts = TensorOptions::new().dtype(ScalarType::Float8_e4m3fn).device(Device::META);
    /// assert_eq!(Tensor::zeros(&[2], opts)?.type_name(), "torch.meta.Float8_e4m3fnTensor");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn type_name(&self) -> String {
        let dtype = self.dtype().name();
        match self.device().device_type() {
            DeviceType::Cpu => format!("torch.{dtype}Tensor"),
            other => format!("torch.{other}.{dtype}Tensor"),
        }
    }

    /// c10's `TensorBase::toString()`, as `expand`'s error prints the
    /// tensor: `torch.FloatTensor` (`torch.cuda.FloatTensor`) for the eight
    /// classic dtypes on the CPU (CUDA), else the dense dispatch key's name
    /// and the dtype's (`CPUBFloat16Type`, `MetaFloatType`).
    ///
    /// ```
    /// use c10_core::{Device, ScalarType, Tensor, TensorOptions};
    /// let t = Tensor::zeros(&[2], ScalarType::Float)?;
    /// assert_eq!(t.legacy_type_name(), "torch.FloatTensor");
    /// let b = Tensor::zeros(&[2], ScalarType::BFloat16)?;
    /// assert_eq!(b.legacy_type_name(), "CPUBFloat16Type");
    /// let m = Tensor::zeros(&[2], TensorOptions::new().device(Device::META))?;
    /// assert_eq!(m.legacy_type_name(), "MetaFloatType");
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn legacy_type_name(&self) -> String {
        use ScalarType::*;
        let dt = self.dtype();
        let classic = matches!(dt, Byte | Char | Short | Int | Long | Half | Float | Double);
        let device = self.device().device_type();
        match device {
            DeviceType::Cpu if classic => format!("torch.{}Tensor", dt.name()),
            DeviceType::Cuda if classic => format!("torch.cuda.{}Tensor", dt.name()),
            _ => format!("{}{}Type", dense_key_name(device), dt.name()),
        }
    }
}

/// The name of c10's dense dispatch key for tensors on `device` (`CPU`,
/// `CUDA`, `Meta`, ...; the keys without a backend bit by their own name).
fn dense_key_name(device: DeviceType) -> String {
    match backend_component_for_device_type(device as i8) {
        BackendComponent::InvalidBit => match device {
            DeviceType::Fpga => DispatchKey::FPGA.name().to_owned(),
            DeviceType::Vulkan => DispatchKey::Vulkan.name().to_owned(),
            DeviceType::Metal => DispatchKey::Metal.name().to_owned(),
            other => format!("{other:?}"),
        },
        b => DispatchKey::to_runtime_per_backend_functionality_key(DispatchKey::Dense, b)
            .name()
            .to_owned(),
    }
}
