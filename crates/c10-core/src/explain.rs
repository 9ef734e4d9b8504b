//! [`Tensor::explain`]: a drawing of how a view maps onto its storage, for
//! people learning how sizes, strides and offsets work (the storage strip,
//! which cells the view reads and how often, the indexing formula, and the
//! contiguity flags).

use std::collections::HashMap;
use std::fmt::{self, Write as _};

use crate::access::element_offset_range;
use crate::geometry::{contiguous_strides, fmt_list};
use crate::options::MemoryFormat;
use crate::printing::{gather, Formatters, PRECISION};
use crate::tensor::Tensor;

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

/// `(a, b, c)`: an index tuple or the index names in a formula (no
/// trailing comma for one item, unlike a Python tuple).
fn paren_list<T: fmt::Display>(items: &[T]) -> String {
    let list = fmt_list(items);
    format!("({})", &list[1..list.len() - 1])
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
    let fmt = Formatters::for_dtype(&values, t.dtype(), PRECISION);
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
    let fmt = Formatters::for_dtype(&values, t.dtype(), PRECISION);
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
    if t.dim() == 4 && t.is_contiguous_in(MemoryFormat::ChannelsLast) {
        s.push_str(", but channels-last contiguous (NHWC order in memory: C varies fastest)");
    } else if t.dim() == 5 && t.is_contiguous_in(MemoryFormat::ChannelsLast3d) {
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
    /// A transposed 2x3 view of `arange(6)` (the storage's use count is 2:
    /// the view, and the `arange` tensor the view keeps as its base):
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
    /// Storage 0x55d4c0a1b2c0: 48 bytes = 6 elements of torch.int64, use_count 2
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
        let names = index_names(self.dim());
        let uses = count_cells(self);
        let overlapping = write_geometry(&mut out, self, &names, uses.as_ref());
        let n_cells = write_storage(&mut out, self, uses.as_ref(), overlapping);
        write_indexing(&mut out, self, &names);
        write_grid(&mut out, self, &names);
        write_elements(&mut out, self, n_cells);
        out
    }
}

/// The geometry lines: sizes, strides, dtype, contiguity, stride-0 dims.
/// Returns whether the view reads some cell more than once (`None`:
/// unknown, the view is too large to count).
fn write_geometry(
    out: &mut String,
    t: &Tensor,
    names: &[String],
    uses: Option<&HashMap<i64, CellUse>>,
) -> Option<bool> {
    let sizes = t.sizes();
    let strides = t.strides();
    let offset = t.storage_offset();
    let dtype = t.dtype();
    let itemsize = dtype.itemsize();
    // Geometry.
    let _ = writeln!(
        out,
        "Tensor view: sizes {}, strides {}, storage offset {offset}",
        fmt_list(sizes),
        fmt_list(strides)
    );
    let _ = writeln!(
        out,
        "  dtype          {dtype} ({itemsize} byte{} per element), device {}",
        if itemsize == 1 { "" } else { "s" },
        t.device()
    );
    let _ = writeln!(out, "  elements       {}", t.numel());
    let stride0_dims: Vec<usize> = (0..t.dim())
        .filter(|&d| strides[d] == 0 && sizes[d] > 1)
        .collect();
    let overlapping = match uses {
        Some(u) => Some(u.values().any(|c| c.count > 1)),
        None if !stride0_dims.is_empty() => Some(true),
        None => None,
    };
    let _ = writeln!(out, "  contiguous     {}", contiguity_text(t, overlapping));
    if !t.is_contiguous() {
        let _ = writeln!(
            out,
            "  row-major      strides would be {} for these sizes",
            contiguous_strides(sizes).map_or_else(|e| e.to_string(), |s| fmt_list(&s))
        );
    }
    if t.dim() == 4
        && !t.is_contiguous_in(MemoryFormat::ChannelsLast)
        && t.is_strides_like(MemoryFormat::ChannelsLast)
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
    overlapping
}

/// The storage lines and the storage strip. Returns the number of
/// elements the storage holds.
fn write_storage(
    out: &mut String,
    t: &Tensor,
    uses: Option<&HashMap<i64, CellUse>>,
    overlapping: Option<bool>,
) -> usize {
    let sizes = t.sizes();
    let strides = t.strides();
    let offset = t.storage_offset();
    let dtype = t.dtype();
    let itemsize = dtype.itemsize();
    // Storage.
    let storage = t.storage();
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
    if storage.device() != t.device() {
        let _ = writeln!(out, "  storage device {}", storage.device());
    }
    let range = element_offset_range(sizes, strides, offset);
    match (&range, uses) {
        (None, _) => {
            let _ = writeln!(out, "  the view has no elements, so it reads no cells");
        }
        (Some((lo, hi)), Some(u)) => {
            let _ = writeln!(
                out,
                "  the view reads {} element{} from {} distinct cell{}, storage[{lo}..={hi}]",
                t.numel(),
                if t.numel() == 1 { "" } else { "s" },
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
                t.numel()
            );
        }
    }
    if range.is_some() {
        let first = vec![0i64; t.dim()];
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
    write_strip_legend(out, t, n_cells, range, uses);
    n_cells
}

/// The drawn storage strip with its legend.
fn write_strip_legend(
    out: &mut String,
    t: &Tensor,
    n_cells: usize,
    range: Option<(i128, i128)>,
    uses: Option<&HashMap<i64, CellUse>>,
) {
    if n_cells > 0 {
        let cols = drawn_columns(n_cells, range);
        let values = cell_values(t, n_cells, &cols);
        draw_strip(out, &cols, &values, uses);
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
}

/// The indexing formula and what one step along each dim moves.
fn write_indexing(out: &mut String, t: &Tensor, names: &[String]) {
    let strides = t.strides();
    let sizes = t.sizes();
    let offset = t.storage_offset();
    let itemsize = t.dtype().itemsize();
    // Indexing formula.
    let mut formula = offset.to_string();
    for (name, &s) in names.iter().zip(strides) {
        let _ = write!(formula, " + {name}*{s}");
    }
    let _ = writeln!(
        out,
        "Indexing: element {} lives at storage[{formula}]",
        paren_list(names)
    );
    for d in 0..t.dim() {
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
}

/// The grid of storage indices, for small 1-d and 2-d views.
fn write_grid(out: &mut String, t: &Tensor, names: &[String]) {
    let sizes = t.sizes();
    let strides = t.strides();
    let offset = t.storage_offset();
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
            let label = if t.dim() == 2 {
                format!("i={r}")
            } else {
                String::new()
            };
            let cells: Vec<String> = (0..cols).map(|c| format!("{:>w$}", at(r, c))).collect();
            let _ = writeln!(out, "  {label:<4} [ {} ]", cells.join(", "));
        }
    }
}

/// The first elements in logical order, with their storage offsets and
/// values.
fn write_elements(out: &mut String, t: &Tensor, n_cells: usize) {
    let sizes = t.sizes();
    let strides = t.strides();
    let offset = t.storage_offset();
    // The first elements in logical order.
    out.push('\n');
    let numel = t.numel().max(0) as u64;
    if numel == 0 {
        let _ = writeln!(out, "Elements in logical order: none");
        return;
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
    let values = offsets.and_then(|o| listed_values(t, n_cells, &o));
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
}
