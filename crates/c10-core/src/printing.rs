//! Printing: `Display` like PyTorch's `print(tensor)`, and [`Tensor::explain`].
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
//! [`Tensor::explain`] draws how a view maps onto its storage, for people
//! learning how sizes, strides and offsets work.

use std::collections::HashMap;
use std::fmt::{self, Write as _};

use crate::access::element_offset_range;
use crate::error::{Result, TensorError};
use crate::options::MemoryFormat;
use crate::scalar_type::{BComplex32, Complex128, Complex32, Complex64, Element, ScalarType};
use crate::tensor::Tensor;

/// PyTorch's default `precision` print option.
const PRECISION: usize = 4;
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
enum Val {
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
fn gather(t: &Tensor, sel: &[Vec<i64>]) -> Result<Vec<Val>> {
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
struct Formatters {
    first: Formatter,
    imag: Option<Formatter>,
}

impl Formatters {
    /// Builds the formatters from the (summarized) data.
    fn new(values: &[Val], floating: bool, complex: bool, precision: usize) -> Formatters {
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
    fn format(&self, v: Val) -> String {
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
    /// Writes the sub-tensor at `values[start..]` of dims `d..` at the
    /// given indent.
    fn write(&self, out: &mut String, d: usize, start: usize, indent: usize) {
        let dims_left = self.shape.len() - d;
        if dims_left == 0 {
            if let Some(&v) = self.values.get(start) {
                out.push_str(self.fmt.format(v).trim_start_matches(' '));
            }
            return;
        }
        if dims_left == 1 {
            self.write_vector(out, d, start, indent);
            return;
        }
        let chunk: usize = self.shape[d + 1..].iter().product();
        let sep = format!(",{}{}", "\n".repeat(dims_left - 1), " ".repeat(indent + 1));
        out.push('[');
        for i in 0..self.shape[d] {
            if i > 0 {
                out.push_str(&sep);
            }
            if self.elided[d] && i == EDGE_ITEMS {
                out.push_str("...");
                out.push_str(&sep);
            }
            self.write(out, d + 1, start + i * chunk, indent + 1);
        }
        out.push(']');
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
    let dtype = t.dtype();
    let fmt = Formatters::new(
        &values,
        dtype.is_floating_point(),
        dtype.is_complex(),
        precision,
    );
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
    layout.write(&mut out, 0, 0, indent);
    Ok(out)
}

/// A shape as a Python tuple: `()`, `(5,)`, `(2, 3)`.
fn python_tuple(sizes: &[i64]) -> String {
    match sizes {
        [n] => format!("({n},)"),
        _ => {
            let inner: Vec<String> = sizes.iter().map(i64::to_string).collect();
            format!("({})", inner.join(", "))
        }
    }
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
    let size_suffix = format!("size={}", python_tuple(t.sizes()));
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
// explain()
// ---------------------------------------------------------------------------

/// Storages with at most this many elements are drawn whole.
const DRAW_ALL_CELLS: usize = 64;
/// At most this many cells per drawn row of the storage strip.
const CELLS_PER_ROW: usize = 16;
/// Drawn rows of the strip stay within about this many characters.
const STRIP_WIDTH: usize = 100;
/// Elements listed with their storage offsets.
const LISTED_ELEMENTS: usize = 8;
/// Views with more elements than this are not counted cell by cell.
const MAX_COUNTED: i64 = 1 << 22;

/// How often a storage cell is read, and by which element first.
#[derive(Clone, Copy, Debug)]
struct CellUse {
    count: u64,
    first_reader: u64,
}

/// One drawn column of the storage strip.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Column {
    /// Storage cell with this index.
    Cell(usize),
    /// Cells left out.
    Gap,
}

/// The names of the index variables in formulas: `i, j, k` up to 3 dims,
/// `i0, i1, ...` beyond.
fn index_names(ndim: usize) -> Vec<String> {
    if ndim <= 3 {
        ["i", "j", "k"][..ndim]
            .iter()
            .map(|s| (*s).to_owned())
            .collect()
    } else {
        (0..ndim).map(|d| format!("i{d}")).collect()
    }
}

/// `(a, b, c)`.
fn paren_list<T: fmt::Display>(items: &[T]) -> String {
    let inner: Vec<String> = items.iter().map(ToString::to_string).collect();
    format!("({})", inner.join(", "))
}

/// `[a, b, c]`.
fn bracket_list<T: fmt::Display>(items: &[T]) -> String {
    let inner: Vec<String> = items.iter().map(ToString::to_string).collect();
    format!("[{}]", inner.join(", "))
}

/// Row-major contiguous strides for `sizes`.
fn row_major_strides(sizes: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; sizes.len()];
    for d in (0..sizes.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1].saturating_mul(sizes[d + 1].max(1));
    }
    strides
}

/// The multi-index of the `flat`-th element in row-major order.
fn unravel(mut flat: u64, sizes: &[i64]) -> Vec<i64> {
    let mut index = vec![0i64; sizes.len()];
    for d in (0..sizes.len()).rev() {
        let n = sizes[d].max(1) as u64;
        index[d] = (flat % n) as i64;
        flat /= n;
    }
    index
}

/// Which storage cells to draw: all of them for small storages, otherwise
/// the start and end of the storage and the neighbourhoods of the first and
/// last cell the view reads, with gaps between.
fn drawn_columns(n_cells: usize, view_range: Option<(i128, i128)>) -> Vec<Column> {
    if n_cells <= DRAW_ALL_CELLS {
        return (0..n_cells).map(Column::Cell).collect();
    }
    let n = n_cells as i128;
    let mut ranges: Vec<(i128, i128)> = vec![(0, 4), (n - 4, n)];
    match view_range {
        Some((lo, hi)) => {
            ranges.push((lo - 2, lo + 22));
            ranges.push((hi - 9, hi + 3));
        }
        None => ranges.push((0, 24)),
    }
    let mut keep: Vec<usize> = Vec::new();
    for (a, b) in ranges {
        let (a, b) = (a.clamp(0, n), b.clamp(0, n));
        keep.extend((a..b).map(|i| i as usize));
    }
    keep.sort_unstable();
    keep.dedup();
    let mut cols = Vec::with_capacity(keep.len() + 4);
    for (k, &i) in keep.iter().enumerate() {
        if k > 0 && keep[k - 1] + 1 != i {
            cols.push(Column::Gap);
        }
        cols.push(Column::Cell(i));
    }
    cols
}

/// Element values of the drawn storage cells, formatted like `Display`
/// does (without padding), or why they cannot be shown.
fn cell_values(
    t: &Tensor,
    n_cells: usize,
    cols: &[Column],
) -> std::result::Result<HashMap<usize, String>, String> {
    let device = t.device();
    if device.is_meta() {
        return Err("meta tensors have no data".to_owned());
    }
    if !device.device_type().is_host_accessible() {
        return Err(format!(
            "the data is on device {device}, not readable from the host"
        ));
    }
    let cells: Vec<usize> = cols
        .iter()
        .filter_map(|c| match c {
            Column::Cell(i) => Some(*i),
            Column::Gap => None,
        })
        .collect();
    let flat = Tensor::from_storage(t.storage().clone(), t.dtype(), &[n_cells as i64], &[1], 0)
        .map_err(|e| e.to_string())?;
    let sel = vec![cells.iter().map(|&i| i as i64).collect::<Vec<i64>>()];
    let values = gather(&flat, &sel).map_err(|e| e.to_string())?;
    let dtype = t.dtype();
    let fmt = Formatters::new(
        &values,
        dtype.is_floating_point(),
        dtype.is_complex(),
        PRECISION,
    );
    Ok(cells
        .iter()
        .zip(&values)
        .map(|(&i, &v)| (i, fmt.format(v).trim_start().to_owned()))
        .collect())
}

/// The formatted values of the storage cells at `offsets`, if readable.
fn listed_values(t: &Tensor, n_cells: usize, offsets: &[i64]) -> Option<Vec<String>> {
    if !t.device().device_type().is_host_accessible() {
        return None;
    }
    let flat =
        Tensor::from_storage(t.storage().clone(), t.dtype(), &[n_cells as i64], &[1], 0).ok()?;
    let values = gather(&flat, &[offsets.to_vec()]).ok()?;
    let dtype = t.dtype();
    let fmt = Formatters::new(
        &values,
        dtype.is_floating_point(),
        dtype.is_complex(),
        PRECISION,
    );
    Some(
        values
            .iter()
            .map(|&v| fmt.format(v).trim_start().to_owned())
            .collect(),
    )
}

/// A short description of the layout's contiguity.
fn contiguity_text(t: &Tensor, overlapping: Option<bool>) -> String {
    if t.is_contiguous() {
        return "yes (row-major: each stride is the product of the sizes to its right)".to_owned();
    }
    let mut s = String::from("no");
    if t.dim() == 4 && t.is_contiguous_as(MemoryFormat::ChannelsLast) {
        s.push_str(", but channels-last contiguous (NHWC order in memory: C varies fastest)");
    } else if t.dim() == 5 && t.is_contiguous_as(MemoryFormat::ChannelsLast3d) {
        s.push_str(", but channels-last-3d contiguous (NDHWC order in memory: C varies fastest)");
    } else if t.is_non_overlapping_and_dense() {
        s.push_str(": dense but permuted (like a transpose): no gaps or overlap, but not in row-major order");
    } else if overlapping == Some(true) {
        s.push_str(": overlapping, some storage cells are read more than once");
    } else {
        s.push_str(": it skips storage cells between its elements (gaps)");
    }
    s
}

/// Counts how often the view reads each storage cell, if the view is small
/// enough to walk.
fn count_cells(t: &Tensor) -> Option<HashMap<i64, CellUse>> {
    if t.numel() > MAX_COUNTED {
        return None;
    }
    let mut uses: HashMap<i64, CellUse> = HashMap::new();
    for (k, off) in t.offsets().enumerate() {
        uses.entry(off)
            .and_modify(|u| u.count += 1)
            .or_insert(CellUse {
                count: 1,
                first_reader: k as u64,
            });
    }
    Some(uses)
}

/// Draws the storage strip: index, value, which cells the view reads (and
/// how often) and by which element first.
fn draw_strip(
    out: &mut String,
    cols: &[Column],
    values: &std::result::Result<HashMap<usize, String>, String>,
    uses: Option<&HashMap<i64, CellUse>>,
) {
    let value_of = |i: usize| -> String {
        match values {
            Ok(map) => map.get(&i).cloned().unwrap_or_else(|| "?".to_owned()),
            Err(_) => "?".to_owned(),
        }
    };
    let read_mark = |i: usize| -> String {
        match uses.and_then(|u| u.get(&(i as i64))) {
            Some(u) if u.count == 1 => "^".to_owned(),
            Some(u) => format!("^x{}", u.count),
            None => String::new(),
        }
    };
    let reader = |i: usize| -> String {
        match uses.and_then(|u| u.get(&(i as i64))) {
            Some(u) => u.first_reader.to_string(),
            None => String::new(),
        }
    };
    let width = cols
        .iter()
        .map(|c| match *c {
            Column::Cell(i) => i
                .to_string()
                .len()
                .max(value_of(i).len())
                .max(read_mark(i).len())
                .max(reader(i).len()),
            Column::Gap => 3,
        })
        .max()
        .unwrap_or(1);
    const LABEL: usize = 16;
    let label = |s: &str| format!("  {s:<w$}", w = LABEL - 2);
    let per_row = (STRIP_WIDTH.saturating_sub(LABEL) / (width + 3)).clamp(4, CELLS_PER_ROW);
    for row in cols.chunks(per_row) {
        let mut index = label("storage index");
        let mut border = " ".repeat(LABEL);
        let mut value = label("value");
        let mut read = label("read by view");
        let mut first = label("as element #");
        for (k, col) in row.iter().enumerate() {
            let (idx, val, mark, rd) = match *col {
                Column::Cell(i) => (i.to_string(), value_of(i), read_mark(i), reader(i)),
                Column::Gap => (
                    "...".to_owned(),
                    "...".to_owned(),
                    String::new(),
                    String::new(),
                ),
            };
            if k == 0 {
                border.push('+');
                value.push('|');
                index.push(' ');
                read.push(' ');
                first.push(' ');
            }
            let _ = write!(index, " {idx:>width$}  ");
            let _ = write!(value, " {val:>width$} |");
            let _ = write!(read, " {mark:>width$}  ");
            let _ = write!(first, " {rd:>width$}  ");
            border.push_str(&"-".repeat(width + 2));
            border.push('+');
        }
        for line in [&index, &border, &value, &border, &read, &first] {
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
}

impl Tensor {
    /// A multi-line ASCII drawing of how this tensor views its storage, for
    /// learning how sizes, strides and storage offsets work: the geometry
    /// and contiguity, the storage (identity, size, use count) drawn as a
    /// strip of cells with the cells this view reads marked (`^`, or `^xN`
    /// for a cell read N times through stride 0), which logical element
    /// reads each cell first, the storage offset of the first elements in
    /// logical order, and the indexing formula with the actual numbers.
    ///
    /// Never fails: what cannot be read (meta or device data, dtypes
    /// without an element type) is drawn as `?` with the reason. Storages
    /// of more than 64 elements are drawn in part, with `...` gaps.
    ///
    /// A transposed 2x3 view of `arange(6)`:
    ///
    /// ```
    /// use c10_core::{Tensor, ScalarType};
    /// let t = Tensor::arange(0, 6, 1, ScalarType::Long)?.as_strided(&[3, 2], &[1, 3], None)?;
    /// let id = format!("{:#x}", t.storage().id());
    /// let shown = t.explain().replace(&id, "0x55d4c0a1b2c0");
    /// assert_eq!(shown, r"
    /// Tensor view: sizes [3, 2], strides [1, 3], storage offset 0
    ///   dtype          torch.int64 (8 bytes per element), device cpu
    ///   elements       6
    ///   contiguous     no: dense but permuted (like a transpose): no gaps or overlap, but not in row-major order
    ///   row-major      strides would be [2, 1] for these sizes
    ///
    /// Storage 0x55d4c0a1b2c0: 48 bytes = 6 elements of torch.int64, use_count 1
    ///   the view reads 6 elements from 6 distinct cells, storage[0..=5]
    ///   its first element (0, 0) is storage[0] (the storage offset)
    ///
    ///   storage index   0   1   2   3   4   5
    ///                 +---+---+---+---+---+---+
    ///   value         | 0 | 1 | 2 | 3 | 4 | 5 |
    ///                 +---+---+---+---+---+---+
    ///   read by view    ^   ^   ^   ^   ^   ^
    ///   as element #    0   2   4   1   3   5
    ///   (^ = read once, ^xN = read N times; element # = position in logical row-major order)
    ///
    /// Indexing: element (i, j) lives at storage[0 + i*1 + j*3]
    ///   one step along dim 0 (i, size 3) moves 1 element (8 bytes) in storage
    ///   one step along dim 1 (j, size 2) moves 3 elements (24 bytes) in storage
    ///
    /// The view as a grid of storage indices:
    ///          j=0  j=1
    ///   i=0  [   0,   3 ]
    ///   i=1  [   1,   4 ]
    ///   i=2  [   2,   5 ]
    ///
    /// Elements in logical order:
    ///   (0, 0) -> storage[0 + 0*1 + 0*3] = storage[0] = 0
    ///   (0, 1) -> storage[0 + 0*1 + 1*3] = storage[3] = 3
    ///   (1, 0) -> storage[0 + 1*1 + 0*3] = storage[1] = 1
    ///   (1, 1) -> storage[0 + 1*1 + 1*3] = storage[4] = 4
    ///   (2, 0) -> storage[0 + 2*1 + 0*3] = storage[2] = 2
    ///   (2, 1) -> storage[0 + 2*1 + 1*3] = storage[5] = 5
    /// "[1..]);
    /// # Ok::<(), c10_core::TensorError>(())
    /// ```
    pub fn explain(&self) -> String {
        let mut out = String::new();
        let sizes = self.sizes();
        let strides = self.strides();
        let offset = self.storage_offset();
        let dtype = self.dtype();
        let itemsize = dtype.itemsize();
        let names = index_names(self.dim());

        // Geometry.
        let _ = writeln!(
            out,
            "Tensor view: sizes {}, strides {}, storage offset {offset}",
            bracket_list(sizes),
            bracket_list(strides)
        );
        let _ = writeln!(
            out,
            "  dtype          {dtype} ({itemsize} byte{} per element), device {}",
            if itemsize == 1 { "" } else { "s" },
            self.device()
        );
        let _ = writeln!(out, "  elements       {}", self.numel());
        let uses = count_cells(self);
        let stride0_dims: Vec<usize> = (0..self.dim())
            .filter(|&d| strides[d] == 0 && sizes[d] > 1)
            .collect();
        let overlapping = match &uses {
            Some(u) => Some(u.values().any(|c| c.count > 1)),
            None if !stride0_dims.is_empty() => Some(true),
            None => None,
        };
        let _ = writeln!(
            out,
            "  contiguous     {}",
            contiguity_text(self, overlapping)
        );
        if !self.is_contiguous() {
            let _ = writeln!(
                out,
                "  row-major      strides would be {} for these sizes",
                bracket_list(&row_major_strides(sizes))
            );
        }
        if self.dim() == 4
            && !self.is_contiguous_as(MemoryFormat::ChannelsLast)
            && self.is_strides_like(MemoryFormat::ChannelsLast)
        {
            let _ = writeln!(
                out,
                "  channels-last  strides ordered like NHWC (C varies fastest)"
            );
        }
        for &d in &stride0_dims {
            let _ = writeln!(
                out,
                "  stride 0       dim {d} ({}, size {}) has stride 0: all {} positions read the same cells (broadcast / expand)",
                names[d], sizes[d], sizes[d]
            );
        }
        out.push('\n');

        // Storage.
        let storage = self.storage();
        let nbytes = storage.nbytes();
        let n_cells = nbytes
            .checked_div(itemsize)
            .map_or(0, |n| n * dtype.elements_per_byte());
        let _ = write!(
            out,
            "Storage {:#x}: {nbytes} bytes = {n_cells} element{} of {dtype}",
            storage.id(),
            if n_cells == 1 { "" } else { "s" }
        );
        if itemsize > 0 && !nbytes.is_multiple_of(itemsize) {
            let _ = write!(out, " (+{} spare bytes)", nbytes % itemsize);
        }
        let _ = writeln!(out, ", use_count {}", storage.use_count());
        if storage.device() != self.device() {
            let _ = writeln!(out, "  storage device {}", storage.device());
        }
        let range = element_offset_range(sizes, strides, offset);
        match (&range, &uses) {
            (None, _) => {
                let _ = writeln!(out, "  the view has no elements, so it reads no cells");
            }
            (Some((lo, hi)), Some(u)) => {
                let _ = writeln!(
                    out,
                    "  the view reads {} element{} from {} distinct cell{}, storage[{lo}..={hi}]",
                    self.numel(),
                    if self.numel() == 1 { "" } else { "s" },
                    u.len(),
                    if u.len() == 1 { "" } else { "s" }
                );
                if overlapping == Some(true) {
                    let max = u.values().map(|c| c.count).max().unwrap_or(1);
                    let shared = u.values().filter(|c| c.count > 1).count();
                    let _ = writeln!(
                        out,
                        "  overlapping: {shared} cell{} read more than once (up to {max} times); writing through this view is ambiguous",
                        if shared == 1 { " is" } else { "s are" }
                    );
                }
            }
            (Some((lo, hi)), None) => {
                let _ = writeln!(
                    out,
                    "  the view reads {} elements within storage[{lo}..={hi}]",
                    self.numel()
                );
            }
        }
        if range.is_some() {
            let first = vec![0i64; self.dim()];
            let _ = writeln!(
                out,
                "  its first element {} is storage[{offset}] (the storage offset)",
                if first.is_empty() {
                    "()".to_owned()
                } else {
                    paren_list(&first)
                }
            );
        }
        if let Some((_, hi)) = range {
            if hi >= n_cells as i128 {
                let _ = writeln!(
                    out,
                    "  warning: the view reaches storage[{hi}], past the storage's {n_cells} elements (was the storage shrunk?)"
                );
            }
        }
        out.push('\n');
        if n_cells > 0 {
            let cols = drawn_columns(n_cells, range);
            let values = cell_values(self, n_cells, &cols);
            draw_strip(&mut out, &cols, &values, uses.as_ref());
            let _ = writeln!(
                out,
                "  (^ = read once, ^xN = read N times; element # = position in logical row-major order)"
            );
            if cols.contains(&Column::Gap) {
                let _ = writeln!(
                    out,
                    "  (... = cells not drawn; the storage has {n_cells} elements)"
                );
            }
            if uses.is_none() {
                let _ = writeln!(out, "  (the view is too large to mark the cells it reads)");
            }
            if let Err(why) = &values {
                let _ = writeln!(out, "  (values not shown: {why})");
            }
        } else {
            let _ = writeln!(out, "  (the storage is empty)");
        }
        out.push('\n');

        // Indexing formula.
        let mut formula = offset.to_string();
        for (name, &s) in names.iter().zip(strides) {
            let _ = write!(formula, " + {name}*{s}");
        }
        let _ = writeln!(
            out,
            "Indexing: element {} lives at storage[{formula}]",
            paren_list(&names)
        );
        for d in 0..self.dim() {
            let step = strides[d];
            let bytes = i128::from(step) * itemsize as i128;
            let _ = writeln!(
                out,
                "  one step along dim {d} ({}, size {}) moves {step} element{} ({bytes} byte{}) in storage",
                names[d],
                sizes[d],
                if step == 1 { "" } else { "s" },
                if bytes == 1 { "" } else { "s" },
            );
        }

        // The grid of storage indices for small 1-d and 2-d views.
        let small_grid = match sizes {
            [n] => (1..=16).contains(n),
            [r, c] => (1..=8).contains(r) && (1..=12).contains(c),
            _ => false,
        };
        if small_grid {
            out.push('\n');
            let _ = writeln!(out, "The view as a grid of storage indices:");
            let (rows, cols, rs, cs) = match sizes {
                [n] => (1, *n, 0, strides[0]),
                _ => (sizes[0], sizes[1], strides[0], strides[1]),
            };
            // i128: strides of views made without bounds checks may be huge.
            let at = |r: i64, c: i64| {
                i128::from(offset) + i128::from(r) * i128::from(rs) + i128::from(c) * i128::from(cs)
            };
            let max_off = at(rows - 1, cols - 1).max(at(0, 0));
            let col_name = names.last().cloned().unwrap_or_default();
            let w = max_off
                .to_string()
                .len()
                .max(format!("{col_name}={}", cols - 1).len());
            // Rows are "  {label:<4} [ " (9 characters), then cells of
            // width w separated by ", ".
            let mut header = " ".repeat(9);
            for c in 0..cols {
                let _ = write!(header, "{:>w$}  ", format!("{col_name}={c}"));
            }
            out.push_str(header.trim_end());
            out.push('\n');
            for r in 0..rows {
                let label = if self.dim() == 2 {
                    format!("i={r}")
                } else {
                    String::new()
                };
                let cells: Vec<String> = (0..cols).map(|c| format!("{:>w$}", at(r, c))).collect();
                let _ = writeln!(out, "  {label:<4} [ {} ]", cells.join(", "));
            }
        }

        // The first elements in logical order.
        out.push('\n');
        let numel = self.numel().max(0) as u64;
        if numel == 0 {
            let _ = writeln!(out, "Elements in logical order: none");
            return out;
        }
        let _ = writeln!(out, "Elements in logical order:");
        let listed = if numel <= LISTED_ELEMENTS as u64 + 2 {
            numel
        } else {
            LISTED_ELEMENTS as u64
        };
        let mut rows: Vec<(Vec<i64>, String, i128)> = Vec::new();
        for k in 0..listed {
            let index = unravel(k, sizes);
            let mut terms = offset.to_string();
            let mut off = i128::from(offset);
            for (&i, &s) in index.iter().zip(strides) {
                let _ = write!(terms, " + {i}*{s}");
                off += i128::from(i) * i128::from(s);
            }
            rows.push((index, terms, off));
        }
        let offsets: Option<Vec<i64>> = rows.iter().map(|r| i64::try_from(r.2).ok()).collect();
        let values = offsets.and_then(|o| listed_values(self, n_cells, &o));
        for (k, (index, terms, off)) in rows.iter().enumerate() {
            let value = values
                .as_ref()
                .and_then(|v| v.get(k))
                .map(|v| format!(" = {v}"))
                .unwrap_or_default();
            if index.is_empty() {
                let _ = writeln!(out, "  () -> storage[{off}]{value}");
            } else {
                let _ = writeln!(
                    out,
                    "  {} -> storage[{terms}] = storage[{off}]{value}",
                    paren_list(index)
                );
            }
        }
        if listed < numel {
            let _ = writeln!(out, "  ... and {} more", numel - listed);
        }
        out
    }
}
