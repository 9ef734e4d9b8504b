//! The HTML picture in a real browser: headless Chromium renders the page
//! of a fragmented fake-device snapshot; the screenshot must not be blank
//! (checked pixel by pixel, with a small PNG decoder below) and the DOM
//! must hold the legend's numbers.
//!
//! Needs Chromium (`CHROMIUM`, else `chromium`, `chromium-browser` or
//! `google-chrome` on `PATH`; Debian: `apt-get install chromium`). Without
//! it the test prints `SKIPPED` and passes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use alloc_cuda::{CachingAllocator, CachingAllocatorConfig, DevicePtr, FakeDevice, StreamId};
use c10_storage::history::HistoryConfig;
use torchcore_memviz::{cuda_snapshot, render_html, HtmlOptions};

fn find_chromium() -> Option<PathBuf> {
    if let Some(c) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(c));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Runs Chromium headless on `url` with `extra` arguments, killed after
/// two minutes; returns stdout.
fn chromium(bin: &Path, profile: &Path, extra: &[String], url: &str) -> String {
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    reader.join().expect("reader")
}

fn fragmented_page() -> String {
    let a = CachingAllocator::new(
        FakeDevice::new(160 << 20),
        0,
        CachingAllocatorConfig::default(),
    );
    a.record_memory_history(Some(HistoryConfig::default()));
    let all: Vec<DevicePtr> = (0..24)
        .map(|_| a.malloc(6 << 20, StreamId::DEFAULT).expect("malloc"))
        .collect();
    for (i, p) in all.into_iter().enumerate() {
        if i % 2 == 1 {
            // SAFETY: unused.
            unsafe { a.free(p).expect("free") };
        }
    }
    assert!(a.malloc(30 << 20, StreamId::DEFAULT).is_err());
    render_html(
        &cuda_snapshot(&[a.memory_snapshot()]),
        &HtmlOptions {
            title: "chromium check".into(),
            ..HtmlOptions::default()
        },
    )
}

#[test]
#[cfg_attr(miri, ignore = "starts processes, which Miri cannot")]
fn the_page_renders_in_headless_chromium() {
    let Some(bin) = find_chromium() else {
        eprintln!(
            "SKIPPED the_page_renders_in_headless_chromium: no Chromium (set CHROMIUM, or apt-get install chromium); the HTML was not checked in a browser"
        );
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let page = dir.path().join("memory.html");
    std::fs::write(&page, fragmented_page()).expect("write");
    let url = format!("file://{}", page.display());

    let dom = chromium(
        &bin,
        &dir.path().join("profile-dom"),
        &["--dump-dom".into()],
        &url,
    );
    for want in [
        r#"<span class="num" id="segments">8</span>"#,
        r#"<span class="num" id="reserved">160.0MiB</span>"#,
        r#"<span class="num" id="allocated">72.0MiB</span>"#,
        r#"<span class="num" id="allocated-blocks">12</span>"#,
        r#"<span class="num" id="inactive">88.0MiB</span>"#,
        r#"<span class="num" id="largest-free">8.0MiB</span>"#,
        r#"<span class="num" id="peak-0">144.0MiB</span>"#,
        "1 out-of-memory events",
        "out of memory: 30.0MiB requested, 0.0B free on the device",
    ] {
        assert!(dom.contains(want), "the DOM lacks {want:?}:\n{dom}");
    }
    // The browser parsed the SVG: 24 bands, 8 segment outlines.
    assert_eq!(dom.matches("<polygon class=\"band\"").count(), 24);
    // The stacks (tooltips) name the allocating test function.
    assert!(dom.contains("fragmented_page"), "no stack in the tooltips");

    let png = dir.path().join("shot.png");
    chromium(
        &bin,
        &dir.path().join("profile-shot"),
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1100,900".into(),
        ],
        &url,
    );
    let bytes = std::fs::read(&png).expect("screenshot written");
    let img = png_decode::decode(&bytes).expect("a PNG");
    assert_eq!((img.width, img.height), (1100, 900));
    let pixels = img.rgb.len();
    let non_white = img
        .rgb
        .iter()
        .filter(|p| p.iter().any(|&c| c < 235))
        .count();
    assert!(
        non_white * 20 > pixels,
        "mostly blank: {non_white} of {pixels} pixels are not white"
    );
    // The requested-bytes blue of the segment map is on screen.
    let blue = img
        .rgb
        .iter()
        .filter(|p| p[0].abs_diff(0x2f) < 8 && p[1].abs_diff(0x6d) < 8 && p[2].abs_diff(0xb3) < 8)
        .count();
    assert!(blue > 500, "only {blue} pixels of the allocated colour");
    let mut colors: Vec<[u8; 3]> = img.rgb.clone();
    colors.sort_unstable();
    colors.dedup();
    assert!(colors.len() > 30, "only {} colours", colors.len());
}

/// A small PNG decoder (8-bit RGB/RGBA, non-interlaced; inflate after RFC
/// 1951), enough to look at a screenshot.
mod png_decode {
    pub struct Image {
        pub width: usize,
        pub height: usize,
        pub rgb: Vec<[u8; 3]>,
    }

    pub fn decode(b: &[u8]) -> Result<Image, String> {
        if b.get(..8) != Some(b"\x89PNG\r\n\x1a\n") {
            return Err("not a PNG".into());
        }
        let mut pos = 8;
        let (mut w, mut h, mut ctype) = (0usize, 0usize, 0u8);
        let mut idat = Vec::new();
        while pos + 8 <= b.len() {
            let len = u32::from_be_bytes(b[pos..pos + 4].try_into().unwrap()) as usize;
            let kind = &b[pos + 4..pos + 8];
            let data = b.get(pos + 8..pos + 8 + len).ok_or("truncated")?;
            match kind {
                b"IHDR" => {
                    w = u32::from_be_bytes(data[0..4].try_into().unwrap()) as usize;
                    h = u32::from_be_bytes(data[4..8].try_into().unwrap()) as usize;
                    if data[8] != 8 || data[12] != 0 {
                        return Err("only 8-bit, non-interlaced".into());
                    }
                    ctype = data[9];
                }
                b"IDAT" => idat.extend_from_slice(data),
                b"IEND" => break,
                _ => {}
            }
            pos += 12 + len;
        }
        let bpp = match ctype {
            2 => 3,
            6 => 4,
            _ => return Err(format!("colour type {ctype}")),
        };
        let raw = inflate(idat.get(2..).ok_or("no zlib header")?)?;
        let stride = w * bpp;
        if raw.len() < h * (stride + 1) {
            return Err("short image data".into());
        }
        let mut prev = vec![0u8; stride];
        let mut rgb = Vec::with_capacity(w * h);
        for y in 0..h {
            let line = &raw[y * (stride + 1)..(y + 1) * (stride + 1)];
            let mut cur = line[1..].to_vec();
            for i in 0..stride {
                let a = if i >= bpp { cur[i - bpp] as i32 } else { 0 };
                let up = prev[i] as i32;
                let c = if i >= bpp { prev[i - bpp] as i32 } else { 0 };
                let pred = match line[0] {
                    0 => 0,
                    1 => a,
                    2 => up,
                    3 => (a + up) / 2,
                    4 => {
                        let p = a + up - c;
                        let (pa, pb, pc) = ((p - a).abs(), (p - up).abs(), (p - c).abs());
                        if pa <= pb && pa <= pc {
                            a
                        } else if pb <= pc {
                            up
                        } else {
                            c
                        }
                    }
                    f => return Err(format!("filter {f}")),
                };
                cur[i] = cur[i].wrapping_add(pred as u8);
            }
            for px in cur.chunks(bpp) {
                rgb.push([px[0], px[1], px[2]]);
            }
            prev = cur;
        }
        Ok(Image {
            width: w,
            height: h,
            rgb,
        })
    }

    struct Bits<'a> {
        d: &'a [u8],
        pos: usize,
    }

    impl Bits<'_> {
        fn bit(&mut self) -> Result<u32, String> {
            let byte = *self.d.get(self.pos / 8).ok_or("inflate: out of data")?;
            let v = (byte >> (self.pos % 8)) & 1;
            self.pos += 1;
            Ok(u32::from(v))
        }
        fn bits(&mut self, n: u32) -> Result<u32, String> {
            let mut v = 0;
            for i in 0..n {
                v |= self.bit()? << i;
            }
            Ok(v)
        }
    }

    struct Huff {
        count: [u16; 16],
        sym: Vec<u16>,
    }

    fn huff(lengths: &[u8]) -> Huff {
        let mut count = [0u16; 16];
        for &l in lengths {
            count[l as usize] += 1;
        }
        count[0] = 0;
        let mut offs = [0u16; 16];
        for i in 1..15 {
            offs[i + 1] = offs[i] + count[i];
        }
        let mut sym = vec![0u16; lengths.len()];
        for (s, &l) in lengths.iter().enumerate() {
            if l != 0 {
                sym[offs[l as usize] as usize] = s as u16;
                offs[l as usize] += 1;
            }
        }
        Huff { count, sym }
    }

    fn decode_sym(b: &mut Bits<'_>, h: &Huff) -> Result<u16, String> {
        let (mut code, mut first, mut index) = (0i32, 0i32, 0i32);
        for len in 1..16 {
            code |= b.bit()? as i32;
            let count = h.count[len] as i32;
            if code - count < first {
                return Ok(h.sym[(index + code - first) as usize]);
            }
            index += count;
            first += count;
            first <<= 1;
            code <<= 1;
        }
        Err("inflate: bad code".into())
    }

    const LBASE: [u16; 29] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
        131, 163, 195, 227, 258,
    ];
    const LEXT: [u8; 29] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ];
    const DBASE: [u16; 30] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
        2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
    ];
    const DEXT: [u8; 30] = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12,
        13, 13,
    ];

    pub fn inflate(d: &[u8]) -> Result<Vec<u8>, String> {
        let mut b = Bits { d, pos: 0 };
        let mut out: Vec<u8> = Vec::new();
        loop {
            let last = b.bit()?;
            match b.bits(2)? {
                0 => {
                    b.pos = b.pos.div_ceil(8) * 8;
                    let p = b.pos / 8;
                    let len = u16::from_le_bytes([d[p], d[p + 1]]) as usize;
                    out.extend_from_slice(d.get(p + 4..p + 4 + len).ok_or("stored")?);
                    b.pos = (p + 4 + len) * 8;
                }
                t @ (1 | 2) => {
                    let (lit, dist) = if t == 1 {
                        let mut l = [8u8; 288];
                        l[144..256].fill(9);
                        l[256..280].fill(7);
                        (huff(&l), huff(&[5u8; 30]))
                    } else {
                        let hlit = b.bits(5)? as usize + 257;
                        let hdist = b.bits(5)? as usize + 1;
                        let hclen = b.bits(4)? as usize + 4;
                        const ORD: [usize; 19] = [
                            16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
                        ];
                        let mut cl = [0u8; 19];
                        for &o in ORD.iter().take(hclen) {
                            cl[o] = b.bits(3)? as u8;
                        }
                        let ch = huff(&cl);
                        let mut lens = Vec::with_capacity(hlit + hdist);
                        while lens.len() < hlit + hdist {
                            match decode_sym(&mut b, &ch)? {
                                s @ 0..=15 => lens.push(s as u8),
                                16 => {
                                    let p = *lens.last().ok_or("repeat with no length")?;
                                    for _ in 0..3 + b.bits(2)? {
                                        lens.push(p);
                                    }
                                }
                                17 => lens.extend(std::iter::repeat_n(0, 3 + b.bits(3)? as usize)),
                                _ => lens.extend(std::iter::repeat_n(0, 11 + b.bits(7)? as usize)),
                            }
                        }
                        (huff(&lens[..hlit]), huff(&lens[hlit..hlit + hdist]))
                    };
                    loop {
                        let s = decode_sym(&mut b, &lit)? as usize;
                        if s < 256 {
                            out.push(s as u8);
                        } else if s == 256 {
                            break;
                        } else {
                            let i = s - 257;
                            let len = LBASE[i] as usize + b.bits(LEXT[i] as u32)? as usize;
                            let ds = decode_sym(&mut b, &dist)? as usize;
                            let dd = DBASE[ds] as usize + b.bits(DEXT[ds] as u32)? as usize;
                            let start = out.len().checked_sub(dd).ok_or("distance too far")?;
                            for k in 0..len {
                                out.push(out[start + k]);
                            }
                        }
                    }
                }
                _ => return Err("inflate: bad block type".into()),
            }
            if last == 1 {
                return Ok(out);
            }
        }
    }
}
