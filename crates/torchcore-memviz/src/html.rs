//! A self-contained HTML picture of a snapshot: inline SVG and CSS, no
//! script, no network.
//!
//! * **Active memory over time**: one band per allocation from the trace,
//!   stacked in allocation order (when one is freed, those above it move
//!   down), over the event index; out-of-memory events are red lines.
//! * **Segment map**: every segment as a bar (longest = full width), its
//!   blocks coloured by state; the requested part of an allocated block is
//!   darker than its rounding.
//! * **Legend** with the totals, and a table of the largest live
//!   allocations with their stacks. Every band and block has a tooltip
//!   (SVG `<title>`) with its address, sizes and allocation stack.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::value::Value;

/// What [`render_html`] draws.
#[derive(Debug, Clone)]
pub struct HtmlOptions {
    /// The page title.
    pub title: String,
    /// Trace entries used per device (the newest ones).
    pub max_events: usize,
    /// Allocation bands drawn per timeline (the largest ones).
    pub max_bands: usize,
    /// Segments drawn in the segment map (the largest ones).
    pub max_segments: usize,
}

impl Default for HtmlOptions {
    fn default() -> HtmlOptions {
        HtmlOptions {
            title: "Memory snapshot".into(),
            max_events: 20_000,
            max_bands: 3_000,
            max_segments: 400,
        }
    }
}

/// Bytes as PyTorch's `_memory_viz` prints them: one decimal and a binary
/// unit, `"20.0MiB"`.
///
/// ```
/// use torchcore_memviz::format_bytes;
/// assert_eq!(format_bytes(512), "512.0B");
/// assert_eq!(format_bytes(20 << 20), "20.0MiB");
/// assert_eq!(format_bytes(1_500_160), "1.4MiB");
/// ```
pub fn format_bytes(n: u64) -> String {
    let mut v = n as f64;
    for unit in ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"] {
        if v.abs() < 1024.0 {
            return format!("{v:.1}{unit}B");
        }
        v /= 1024.0;
    }
    format!("{v:.1}ZiB")
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// The first frames of a `frames` list, one per line.
fn frames_text(frames: Option<&Value>, max: usize) -> String {
    let Some(list) = frames.and_then(Value::as_list) else {
        return String::new();
    };
    let mut out = String::new();
    for f in list.iter().take(max) {
        let name = f.get("name").and_then(Value::as_str).unwrap_or("?");
        let file = f.get("filename").and_then(Value::as_str).unwrap_or("");
        let line = f.get("line").and_then(Value::as_u64).unwrap_or(0);
        if file.is_empty() {
            let _ = writeln!(out, "{name}");
        } else {
            let _ = writeln!(out, "{name} ({file}:{line})");
        }
    }
    if list.len() > max {
        let _ = writeln!(out, "... {} more frames", list.len() - max);
    }
    out
}

/// A colour per allocation, spread around the hue circle.
fn color(i: usize) -> String {
    let hue = (i as u64 * 137) % 360;
    let light = 45 + (i as u64 * 7) % 20;
    format!("hsl({hue},65%,{light}%)")
}

fn u(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

/// Totals over the segments.
#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    segments: usize,
    reserved: u64,
    allocated: u64,
    allocated_blocks: usize,
    requested: u64,
    pending: u64,
    inactive: u64,
    largest_free: u64,
}

fn totals(segments: &[Value]) -> Totals {
    let mut t = Totals {
        segments: segments.len(),
        ..Totals::default()
    };
    for s in segments {
        t.reserved += u(s.get("total_size"));
        for b in s.get("blocks").and_then(Value::as_list).unwrap_or(&[]) {
            let size = u(b.get("size"));
            match b.get("state").and_then(Value::as_str) {
                Some("active_allocated") => {
                    t.allocated += size;
                    t.allocated_blocks += 1;
                    t.requested += b.get("requested_size").map_or(size, |v| u(Some(v)));
                }
                Some("active_pending_free") | Some("active_awaiting_free") => t.pending += size,
                _ => {
                    t.inactive += size;
                    t.largest_free = t.largest_free.max(size);
                }
            }
        }
    }
    t
}

struct Band {
    addr: u64,
    size: u64,
    alloc_t: usize,
    free_t: Option<usize>,
    offset: u64,
    points: Vec<(usize, u64)>,
    frames: String,
}

struct Timeline {
    bands: Vec<Band>,
    events: usize,
    peak: u64,
    ooms: Vec<(usize, String)>,
    first_time_us: Option<i64>,
    last_time_us: Option<i64>,
    /// The point budget ran out: later moves are drawn as slopes.
    simplified: bool,
}

/// Polygon corners the timeline may emit in all (a trace where many
/// long-lived allocations sit above many short-lived ones moves every
/// band at every free; past this, the bands are drawn with slopes).
const POINT_BUDGET: usize = 4_000_000;

/// Replays `alloc` / `free_completed` entries into stacked bands.
fn timeline(trace: &[Value], segments: &[Value]) -> Timeline {
    let pre = preexisting(trace, segments);
    let mut bands: Vec<Band> = Vec::new();
    let mut live: Vec<usize> = Vec::new();
    let mut by_addr: HashMap<u64, usize> = HashMap::new();
    let mut total = 0u64;
    let mut peak = 0u64;
    for (addr, size, frames) in pre {
        by_addr.insert(addr, bands.len());
        live.push(bands.len());
        bands.push(Band {
            addr,
            size,
            alloc_t: 0,
            free_t: None,
            offset: total,
            points: vec![(0, total)],
            frames,
        });
        total += size;
    }
    peak = peak.max(total);
    let mut ooms = Vec::new();
    let mut t = 0usize;
    let mut budget = POINT_BUDGET;
    let mut simplified = false;
    for e in trace {
        let action = e.get("action").and_then(Value::as_str).unwrap_or("");
        let addr = u(e.get("addr"));
        let size = u(e.get("size"));
        match action {
            "alloc" => {
                t += 1;
                by_addr.insert(addr, bands.len());
                live.push(bands.len());
                bands.push(Band {
                    addr,
                    size,
                    alloc_t: t,
                    free_t: None,
                    offset: total,
                    points: vec![(t, total)],
                    frames: frames_text(e.get("frames"), 12),
                });
                total += size;
                peak = peak.max(total);
            }
            "free_completed" => {
                let Some(id) = by_addr.remove(&addr) else {
                    continue;
                };
                let Some(pos) = live.iter().position(|&b| b == id) else {
                    continue;
                };
                t += 1;
                live.remove(pos);
                total -= free_band(
                    &mut bands,
                    id,
                    &live[pos..],
                    t,
                    &mut budget,
                    &mut simplified,
                );
            }
            "oom" => {
                t += 1;
                ooms.push((
                    t,
                    format!(
                        "out of memory: {} requested, {} free on the device",
                        format_bytes(size),
                        format_bytes(u(e.get("device_free")))
                    ),
                ));
            }
            _ => {}
        }
    }
    let end = t.max(1);
    for &id in &live {
        let b = &mut bands[id];
        if b.points.last() != Some(&(end, b.offset)) {
            b.points.push((end, b.offset));
        }
    }
    let times = |e: &Value| e.get("time_us").and_then(Value::as_i64);
    Timeline {
        bands,
        events: end,
        peak,
        ooms,
        first_time_us: trace.iter().find_map(times),
        last_time_us: trace.iter().rev().find_map(times),
        simplified,
    }
}

/// Ends band `id` at time `t` and moves every live band `above` it down by
/// its size (two polygon corners each while `budget` lasts, else a slope,
/// and `simplified` is set). Returns the size freed.
fn free_band(
    bands: &mut [Band],
    id: usize,
    above: &[usize],
    t: usize,
    budget: &mut usize,
    simplified: &mut bool,
) -> u64 {
    let freed = bands[id].size;
    let off = bands[id].offset;
    bands[id].points.push((t, off));
    bands[id].free_t = Some(t);
    for &a in above {
        let b = &mut bands[a];
        if *budget >= 2 {
            *budget -= 2;
            b.points.push((t, b.offset));
            b.offset -= freed;
            b.points.push((t, b.offset));
        } else {
            *simplified = true;
            b.offset -= freed;
        }
    }
    freed
}

/// The allocations that exist from t = 0, as `(address, size, frames)`:
/// those freed in the trace but allocated before it, and blocks live at
/// the end that the trace never allocated.
fn preexisting(trace: &[Value], segments: &[Value]) -> Vec<(u64, u64, String)> {
    let mut seen_alloc: HashMap<u64, ()> = HashMap::new();
    let mut pre: Vec<(u64, u64, String)> = Vec::new();
    for e in trace {
        let addr = u(e.get("addr"));
        match e.get("action").and_then(Value::as_str) {
            Some("alloc") => {
                seen_alloc.insert(addr, ());
            }
            Some("free_completed") if !seen_alloc.contains_key(&addr) => {
                pre.push((addr, u(e.get("size")), String::new()));
                seen_alloc.insert(addr, ());
            }
            _ => {}
        }
    }
    for s in segments {
        for b in s.get("blocks").and_then(Value::as_list).unwrap_or(&[]) {
            if b.get("state").and_then(Value::as_str) != Some("active_allocated") {
                continue;
            }
            let addr = u(b.get("address"));
            if !seen_alloc.contains_key(&addr) {
                let size = b
                    .get("requested_size")
                    .map_or(u(b.get("size")), |v| u(Some(v)));
                pre.push((addr, size, frames_text(b.get("frames"), 12)));
            }
        }
    }
    pre
}

const W: f64 = 960.0;
const H: f64 = 260.0;
const ML: f64 = 70.0;

fn timeline_svg(out: &mut String, tl: &Timeline, opts: &HtmlOptions, device: usize) {
    let peak = tl.peak.max(1) as f64;
    let x = |t: usize| ML + t as f64 / tl.events as f64 * W;
    let y = |off: u64| 10.0 + H - off as f64 / peak * H;
    let _ = write!(
        out,
        r#"<svg class="timeline" id="timeline-{device}" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img" aria-label="active memory over time">"#,
        ML + W + 10.0,
        H + 40.0
    );
    let _ = write!(
        out,
        r##"<rect x="{ML}" y="10" width="{W}" height="{H}" fill="#fafafa" stroke="#ccc"/>"##
    );
    for i in 0..=4 {
        let v = tl.peak as f64 * i as f64 / 4.0;
        let yy = 10.0 + H - H * i as f64 / 4.0;
        let _ = write!(
            out,
            r##"<line x1="{ML}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" stroke="#e4e4e4"/><text x="{}" y="{:.1}" class="axis" text-anchor="end">{}</text>"##,
            ML + W,
            ML - 4.0,
            yy + 4.0,
            format_bytes(v as u64)
        );
    }
    // The largest bands, in allocation order.
    let mut order: Vec<usize> = (0..tl.bands.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(tl.bands[i].size));
    order.truncate(opts.max_bands);
    order.sort_unstable();
    for &i in &order {
        let b = &tl.bands[i];
        if b.size == 0 {
            continue;
        }
        let mut pts = String::new();
        for &(t, off) in &b.points {
            let _ = write!(pts, "{:.1},{:.1} ", x(t), y(off));
        }
        for &(t, off) in b.points.iter().rev() {
            let _ = write!(pts, "{:.1},{:.1} ", x(t), y(off + b.size));
        }
        let life = match b.free_t {
            Some(f) => format!("allocated at event {}, freed at event {f}", b.alloc_t),
            None if b.alloc_t == 0 => "live for the whole trace".to_string(),
            None => format!("allocated at event {}, still live", b.alloc_t),
        };
        let _ = write!(
            out,
            r#"<polygon class="band" points="{}" fill="{}"><title>{:#x}: {} ({} bytes), {}&#10;{}</title></polygon>"#,
            pts.trim_end(),
            color(i),
            b.addr,
            format_bytes(b.size),
            b.size,
            life,
            esc(&b.frames).replace('\n', "&#10;")
        );
    }
    for (t, msg) in &tl.ooms {
        let xx = x(*t);
        let _ = write!(
            out,
            r##"<line class="oom" x1="{xx:.1}" x2="{xx:.1}" y1="10" y2="{}" stroke="#d00" stroke-width="2"><title>{}</title></line>"##,
            10.0 + H,
            esc(msg)
        );
    }
    let _ = write!(
        out,
        r#"<text x="{ML}" y="{}" class="axis">event 0</text><text x="{}" y="{}" class="axis" text-anchor="end">event {}</text></svg>"#,
        H + 28.0,
        ML + W,
        H + 28.0,
        tl.events
    );
    if tl.simplified {
        out.push_str("<p class=\"note\">This trace moves too many allocations to draw every step: later moves are drawn as slopes.</p>");
    }
    if tl.bands.len() > order.len() {
        let _ = write!(
            out,
            "<p class=\"note\">{} smaller allocations are not drawn (their space shows as gaps).</p>",
            tl.bands.len() - order.len()
        );
    }
}

fn segment_map_svg(out: &mut String, segments: &[Value], opts: &HtmlOptions) {
    let mut segs: Vec<&Value> = segments.iter().collect();
    segs.sort_by_key(|s| std::cmp::Reverse(u(s.get("total_size"))));
    let dropped = segs.len().saturating_sub(opts.max_segments);
    segs.truncate(opts.max_segments);
    segs.sort_by_key(|s| (u(s.get("stream")), u(s.get("address"))));
    let longest = segs
        .iter()
        .map(|s| u(s.get("total_size")))
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let label_w = 250.0;
    let bar_w = 700.0;
    let row = 20.0;
    let _ = write!(
        out,
        r#"<svg class="segments" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img" aria-label="segment map">"#,
        label_w + bar_w + 20.0,
        row * segs.len() as f64 + 10.0
    );
    for (r, s) in segs.iter().enumerate() {
        let base = u(s.get("address"));
        let total = u(s.get("total_size"));
        let yy = 5.0 + row * r as f64;
        let kind = s.get("segment_type").and_then(Value::as_str).unwrap_or("");
        let exp = if s.get("is_expandable") == Some(&Value::Bool(true)) {
            " expandable"
        } else {
            ""
        };
        let _ = write!(
            out,
            r#"<text x="0" y="{:.1}" class="seglabel">{base:#x} {} {kind}{exp} s{}</text>"#,
            yy + 13.0,
            format_bytes(total),
            u(s.get("stream"))
        );
        let seg_w = (total as f64 / longest * bar_w).max(2.0);
        let _ = write!(
            out,
            r##"<rect x="{label_w}" y="{yy:.1}" width="{seg_w:.1}" height="16" fill="none" stroke="#888"><title>segment {base:#x}: {} {kind}{exp}, stream {}&#10;{}</title></rect>"##,
            format_bytes(total),
            u(s.get("stream")),
            esc(&frames_text(s.get("frames"), 12)).replace('\n', "&#10;")
        );
        let mut off = 0u64;
        for b in s.get("blocks").and_then(Value::as_list).unwrap_or(&[]) {
            let size = u(b.get("size"));
            let addr = b.get("address").map_or(base + off, |v| u(Some(v)));
            let bx = label_w + (addr.saturating_sub(base)) as f64 / longest * bar_w;
            let bw = (size as f64 / longest * bar_w).max(0.5);
            off += size;
            let state = b.get("state").and_then(Value::as_str).unwrap_or("inactive");
            let requested = b.get("requested_size").map_or(size, |v| u(Some(v)));
            let (fill, class) = match state {
                "active_allocated" => ("#7fa8d6", "allocated"),
                "active_pending_free" | "active_awaiting_free" => ("#f0a030", "pending"),
                _ => ("#e6e6e6", "inactive"),
            };
            let title = format!(
                "{addr:#x}: {} ({size} bytes) {state}{}\n{}",
                format_bytes(size),
                if class == "allocated" {
                    format!(", requested {}", format_bytes(requested))
                } else {
                    String::new()
                },
                frames_text(b.get("frames"), 12)
            );
            let _ = write!(
                out,
                r##"<g class="block {class}"><rect x="{bx:.2}" y="{:.1}" width="{bw:.2}" height="14" fill="{fill}" stroke="#fff" stroke-width="0.5"/>"##,
                yy + 1.0
            );
            if class == "allocated" && requested > 0 {
                let rw = (requested.min(size) as f64 / longest * bar_w).max(0.5);
                let _ = write!(
                    out,
                    r##"<rect x="{bx:.2}" y="{:.1}" width="{rw:.2}" height="14" fill="#2f6db3"/>"##,
                    yy + 1.0
                );
            }
            let _ = write!(
                out,
                "<title>{}</title></g>",
                esc(&title).replace('\n', "&#10;")
            );
        }
    }
    out.push_str("</svg>");
    if dropped > 0 {
        let _ = write!(
            out,
            "<p class=\"note\">{dropped} smaller segments are not drawn.</p>"
        );
    }
}

/// Renders `snapshot` (the dict of `_snapshot()`, from
/// [`cuda_snapshot`](crate::cuda_snapshot), [`cpu_snapshot`](crate::cpu_snapshot)
/// or [`load_snapshot`](crate::load_snapshot)) as a self-contained HTML
/// page.
///
/// ```
/// use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, FakeDevice, StreamId};
/// use c10_storage::history::HistoryConfig;
/// use torchcore_memviz::{cuda_snapshot, render_html, HtmlOptions};
/// let a = CachingAllocator::new(FakeDevice::new(1 << 30), 0, CachingAllocatorConfig::default());
/// a.record_memory_history(Some(HistoryConfig::default()));
/// let _p = a.malloc(3 << 20, StreamId::DEFAULT)?;
/// let html = render_html(&cuda_snapshot(&[a.memory_snapshot()]), &HtmlOptions::default());
/// assert!(html.starts_with("<!DOCTYPE html>"));
/// assert!(html.contains("<svg") && !html.contains("<script"));
/// assert!(html.contains(r#"<span class="num" id="reserved">20.0MiB</span>"#));
/// # Ok::<(), alloc_cuda::CachingAllocatorError>(())
/// ```
pub fn render_html(snapshot: &Value, opts: &HtmlOptions) -> String {
    let segments = snapshot
        .get("segments")
        .and_then(Value::as_list)
        .unwrap_or(&[]);
    let traces = snapshot
        .get("device_traces")
        .and_then(Value::as_list)
        .unwrap_or(&[]);
    let t = totals(segments);
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="generator" content="torchcore-memviz">
<title>{title}</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 16px 24px; color: #222; background: #fff; }}
h1 {{ font-size: 20px; margin: 0 0 8px; }} h2 {{ font-size: 16px; margin: 20px 0 6px; }}
.legend {{ display: flex; flex-wrap: wrap; gap: 6px 18px; padding: 8px 10px; border: 1px solid #ddd; background: #f7f7f7; }}
.legend span.sw {{ display: inline-block; width: 12px; height: 12px; margin-right: 5px; vertical-align: -1px; border: 1px solid #999; }}
.num {{ font-weight: 600; font-variant-numeric: tabular-nums; }}
.axis, .seglabel {{ font: 11px monospace; fill: #444; }}
.note {{ color: #666; font-size: 12px; }}
table {{ border-collapse: collapse; font-size: 13px; }} td, th {{ border-bottom: 1px solid #eee; padding: 3px 8px; text-align: left; vertical-align: top; }}
pre {{ margin: 0; font-size: 11px; }}
.band:hover, .block:hover rect {{ stroke: #000; stroke-width: 1; }}
</style></head><body>
<h1>{title}</h1>
"#,
        title = esc(&opts.title)
    );
    let sw = |c: &str| format!(r#"<span class="sw" style="background:{c}"></span>"#);
    let internal = t.allocated.saturating_sub(t.requested);
    let _ = write!(
        out,
        r##"<div class="legend" id="legend">
<div>segments <span class="num" id="segments">{}</span></div>
<div>reserved <span class="num" id="reserved">{}</span></div>
<div>{}allocated <span class="num" id="allocated">{}</span> in <span class="num" id="allocated-blocks">{}</span> blocks (requested <span class="num" id="requested">{}</span>; {}rounding <span class="num" id="internal">{}</span>)</div>
<div>{}pending free <span class="num" id="pending">{}</span></div>
<div>{}inactive (cached) <span class="num" id="inactive">{}</span>, largest free block <span class="num" id="largest-free">{}</span></div>
</div>
"##,
        t.segments,
        format_bytes(t.reserved),
        sw("#2f6db3"),
        format_bytes(t.allocated),
        t.allocated_blocks,
        format_bytes(t.requested),
        sw("#7fa8d6"),
        format_bytes(internal),
        sw("#f0a030"),
        format_bytes(t.pending),
        sw("#e6e6e6"),
        format_bytes(t.inactive),
        format_bytes(t.largest_free),
    );
    timelines_html(&mut out, traces, segments, opts);
    out.push_str("<h2>Segment map</h2>\n<p>Each bar is a segment (longest = full width); dark blue: requested bytes, light blue: rounding, orange: freed but waiting for other streams, grey: free (cached). Hover a block for its size and stack.</p>\n");
    segment_map_svg(&mut out, segments, opts);
    largest_live_html(&mut out, segments);
    out.push_str("</body></html>\n");
    out
}

/// One "active memory over time" section per device with a trace.
fn timelines_html(out: &mut String, traces: &[Value], segments: &[Value], opts: &HtmlOptions) {
    let mut any_trace = false;
    for (dev, tr) in traces.iter().enumerate() {
        let entries = tr.as_list().unwrap_or(&[]);
        if entries.is_empty() {
            continue;
        }
        any_trace = true;
        let entries = &entries[entries.len().saturating_sub(opts.max_events)..];
        let dev_segments: Vec<Value> = segments
            .iter()
            .filter(|s| s.get("device").and_then(Value::as_u64).unwrap_or(0) == dev as u64)
            .cloned()
            .collect();
        let tl = timeline(entries, &dev_segments);
        let span = match (tl.first_time_us, tl.last_time_us) {
            (Some(a), Some(b)) => format!(", {:.3} ms", (b - a) as f64 / 1000.0),
            _ => String::new(),
        };
        let _ = write!(
            out,
            r#"<h2>Active memory over time, device {dev}</h2>
<p>{} trace entries{span}; peak active <span class="num" id="peak-{dev}">{}</span>; {} out-of-memory events. Hover a band for its size and allocation stack.</p>
"#,
            entries.len(),
            format_bytes(tl.peak),
            tl.ooms.len()
        );
        timeline_svg(out, &tl, opts, dev);
    }
    if !any_trace {
        out.push_str("<h2>Active memory over time</h2><p class=\"note\">No trace in this snapshot: record history first (<code>record_memory_history</code>).</p>\n");
    }
}

/// The table of the 25 largest live allocations with their stacks.
fn largest_live_html(out: &mut String, segments: &[Value]) {
    let mut live: Vec<(u64, u64, u64, &Value)> = Vec::new();
    for s in segments {
        for b in s.get("blocks").and_then(Value::as_list).unwrap_or(&[]) {
            if b.get("state").and_then(Value::as_str) == Some("active_allocated") {
                let size = u(b.get("size"));
                live.push((
                    size,
                    u(b.get("address")),
                    b.get("requested_size").map_or(size, |v| u(Some(v))),
                    b,
                ));
            }
        }
    }
    live.sort_by_key(|l| std::cmp::Reverse(l.0));
    out.push_str("<h2>Largest live allocations</h2>\n<table><tr><th>address</th><th>size</th><th>requested</th><th>allocated at</th></tr>\n");
    for (size, addr, requested, b) in live.iter().take(25) {
        let frames = frames_text(b.get("frames"), 16);
        let _ = writeln!(
            out,
            "<tr><td>{addr:#x}</td><td>{}</td><td>{}</td><td><pre>{}</pre></td></tr>",
            format_bytes(*size),
            format_bytes(*requested),
            if frames.is_empty() {
                "(no stack recorded)".to_string()
            } else {
                esc(&frames)
            }
        );
    }
    out.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(action: &str, addr: u64, size: u64) -> Value {
        Value::dict([
            ("action", Value::from(action)),
            ("addr", Value::from(addr)),
            ("size", Value::from(size)),
        ])
    }

    #[test]
    fn bands_stack_and_move_down_when_one_below_is_freed() {
        let trace = [
            entry("alloc", 0x10, 100),
            entry("alloc", 0x20, 50),
            entry("alloc", 0x30, 10),
            entry("free_completed", 0x10, 100),
        ];
        let tl = timeline(&trace, &[]);
        assert_eq!(tl.peak, 160);
        assert_eq!(tl.events, 4);
        assert_eq!(tl.bands[0].points, [(1, 0), (4, 0)]);
        assert_eq!(tl.bands[1].points, [(2, 100), (4, 100), (4, 0)]);
        assert_eq!(tl.bands[2].points, [(3, 150), (4, 150), (4, 50)]);
    }

    #[test]
    fn allocations_from_before_the_trace_start_at_zero() {
        let trace = [entry("alloc", 0x20, 5), entry("free_completed", 0x10, 7)];
        let tl = timeline(&trace, &[]);
        assert_eq!(tl.bands[0].addr, 0x10);
        assert_eq!(tl.bands[0].points, [(0, 0), (2, 0)]);
        assert_eq!(tl.bands[1].points, [(1, 7), (2, 7), (2, 0)]);
        assert_eq!(tl.peak, 12);
    }

    #[test]
    #[cfg_attr(miri, ignore = "12.5 million steps are too slow interpreted")]
    fn fifo_frees_of_many_allocations_stay_within_the_point_budget() {
        // Freeing 5000 allocations oldest first moves every band above at
        // every free: 12.5 million moves, more than the budget.
        let n = 5000u64;
        let mut trace: Vec<Value> = (0..n).map(|i| entry("alloc", i * 64, 64)).collect();
        trace.extend((0..n).map(|i| entry("free_completed", i * 64, 64)));
        let tl = timeline(&trace, &[]);
        assert!(tl.simplified);
        let points: usize = tl.bands.iter().map(|b| b.points.len()).sum();
        assert!(points <= POINT_BUDGET + 2 * n as usize, "{points}");
        assert_eq!(tl.peak, 64 * n);
        assert!(tl.bands.iter().all(|b| b.offset == 0 && b.free_t.is_some()));
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        let v = Value::dict([("segments", Value::List(vec![]))]);
        let html = render_html(
            &v,
            &HtmlOptions {
                title: "<b>".into(),
                ..HtmlOptions::default()
            },
        );
        assert!(html.contains("<title>&lt;b&gt;</title>"));
        assert!(html.contains("No trace in this snapshot"));
    }
}
