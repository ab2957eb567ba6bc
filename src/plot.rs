//! SVG pictures of memory plans: one rectangle per buffer, time across and address up.

use crate::analysis;
use crate::problem::{Problem, Solution};
use std::fmt::Write;

/// Canvas size in pixels.
const WIDTH: f64 = 1200.0;
const HEIGHT: f64 = 700.0;
/// Margins around the plot area: room for the title, the axes and the line labels.
const LEFT: f64 = 72.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 52.0;
const BOTTOM: f64 = 46.0;
/// A buffer's id is printed inside its rectangle only when the rectangle is at least this big.
const LABEL_MIN_WIDTH: f64 = 40.0;
const LABEL_MIN_HEIGHT: f64 = 12.0;
/// Font size of the id labels and the approximate width of one of their characters.
const LABEL_FONT: f64 = 10.0;
const LABEL_CHAR_WIDTH: f64 = 6.0;
/// Rectangles thinner than this are widened (around their centre) so that they stay visible.
const MIN_EXTENT: f64 = 0.5;
/// Horizontal line labels are kept at least this far apart vertically.
const LINE_LABEL_GAP: f64 = 13.0;

/// Renders `solution` for `problem` as a self-contained SVG document (about 1200 x 700 px).
///
/// Time runs left to right from the smallest `lower` to the largest `upper`; addresses run
/// bottom to top from 0 to the largest of the capacity, the peak and LOAD. Each buffer is a
/// rectangle `[lower, upper) x [offset, offset + size)` with a colour derived from its index and a
/// `<title>` tooltip; horizontal lines mark the capacity, LOAD and the peak.
///
/// `capacity` is the capacity line to draw; when `None`, `problem.capacity` is used. A buffer
/// without an offset in `solution` falls back to its fixed offset and is left out if it has none.
/// The output is deterministic, starts with `<svg` and ends with `</svg>` and a newline; it never
/// panics, whatever the inputs (empty problems, invalid or overflowing plans included).
pub fn render_svg(problem: &Problem, solution: &Solution, capacity: Option<u64>) -> String {
    let capacity = capacity.or(problem.capacity);
    let load = drawable_load(problem);
    let placed = placed_buffers(problem, solution);
    let peak = placed
        .iter()
        .map(|&(i, o)| o.saturating_add(problem.buffers[i].size))
        .max()
        .unwrap_or(0);

    let t_lo = problem.buffers.iter().map(|b| b.lower).min().unwrap_or(0);
    let t_hi = problem.horizon().max(t_lo.saturating_add(1));
    let y_hi = capacity.unwrap_or(0).max(peak).max(load).max(1);
    let frame = Frame {
        x_scale: Scale::new(t_lo, t_hi, LEFT, WIDTH - RIGHT),
        y_scale: Scale::new(0, y_hi, HEIGHT - BOTTOM, TOP),
    };

    let mut svg = String::with_capacity(4096 + 256 * placed.len());
    write_background(&mut svg);
    write_axes(&mut svg, &frame, t_lo, t_hi, y_hi);
    write_buffers(&mut svg, &frame, problem, &placed);
    write_levels(&mut svg, &frame, capacity, load, peak);
    write_title(&mut svg, problem, capacity, load, peak, t_lo);
    svg.push_str("</svg>\n");
    svg
}

/// The plot area in pixels: left to right, top to bottom.
const PX_LEFT: f64 = LEFT;
const PX_RIGHT: f64 = WIDTH - RIGHT;
const PX_TOP: f64 = TOP;
const PX_BOTTOM: f64 = HEIGHT - BOTTOM;

/// How time (across) and addresses (up) map onto the plot area.
struct Frame {
    x_scale: Scale,
    y_scale: Scale,
}

/// LOAD of the buffers the timeline accepts: it needs `lower < upper`, so an invalid buffer is
/// drawn but does not count.
fn drawable_load(problem: &Problem) -> u64 {
    if problem.buffers.iter().all(|b| b.lower < b.upper) {
        analysis::load(problem)
    } else {
        let valid = problem
            .buffers
            .iter()
            .filter(|b| b.lower < b.upper)
            .cloned();
        analysis::load(&Problem::new(valid.collect(), None))
    }
}

/// (index, offset) of every buffer that has a place to be drawn at: its offset in `solution`,
/// else its fixed offset.
fn placed_buffers(problem: &Problem, solution: &Solution) -> Vec<(usize, u64)> {
    problem
        .buffers
        .iter()
        .enumerate()
        .filter_map(|(i, b)| {
            solution
                .offsets
                .get(i)
                .copied()
                .or(b.offset)
                .map(|o| (i, o))
        })
        .collect()
}

/// The document's opening tag and the backgrounds: the canvas and the plot area.
fn write_background(svg: &mut String) {
    let (px_left, px_right, px_top, px_bottom) = (PX_LEFT, PX_RIGHT, PX_TOP, PX_BOTTOM);
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\">",
        w = WIDTH,
        h = HEIGHT
    );
    // Backgrounds: the canvas and the plot area.
    let _ = writeln!(
        svg,
        "<rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{HEIGHT}\" fill=\"#ffffff\"/>"
    );
    let _ = writeln!(
        svg,
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f6f6f6\" stroke=\"#888888\" \
         stroke-width=\"1\"/>",
        num(px_left),
        num(px_top),
        num(px_right - px_left),
        num(px_bottom - px_top)
    );
}

/// Grid lines, tick labels and the axis names.
fn write_axes(svg: &mut String, frame: &Frame, t_lo: u64, t_hi: u64, y_hi: u64) {
    let (px_left, px_right, px_top, px_bottom) = (PX_LEFT, PX_RIGHT, PX_TOP, PX_BOTTOM);
    let (x_scale, y_scale) = (&frame.x_scale, &frame.y_scale);
    svg.push_str("<g stroke=\"#dddddd\" stroke-width=\"1\">\n");
    let x_ticks = ticks(t_lo, t_hi, 10);
    let y_ticks = ticks(0, y_hi, 8);
    for &t in &x_ticks {
        let x = num(x_scale.map(t));
        let _ = writeln!(
            svg,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\"/>",
            num(px_top),
            num(px_bottom)
        );
    }
    for &v in &y_ticks {
        let y = num(y_scale.map(v));
        let _ = writeln!(
            svg,
            "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\"/>",
            num(px_left),
            num(px_right)
        );
    }
    svg.push_str("</g>\n<g font-size=\"11\" fill=\"#333333\">\n");
    for &t in &x_ticks {
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            num(x_scale.map(t)),
            num(px_bottom + 15.0),
            compact(t)
        );
    }
    for &v in &y_ticks {
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            num(px_left - 5.0),
            num(y_scale.map(v) + 4.0),
            compact(v)
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">time</text>",
        num((px_left + px_right) / 2.0),
        num(HEIGHT - 10.0)
    );
    let _ = writeln!(
        svg,
        "<text x=\"16\" y=\"{y}\" text-anchor=\"middle\" font-size=\"12\" \
         transform=\"rotate(-90 16 {y})\">address (bytes)</text>",
        y = num((px_top + px_bottom) / 2.0)
    );
    svg.push_str("</g>\n");
}

/// The buffers' rectangles, then the ids of those big enough to carry one.
fn write_buffers(svg: &mut String, frame: &Frame, problem: &Problem, placed: &[(usize, u64)]) {
    let (x_scale, y_scale) = (&frame.x_scale, &frame.y_scale);
    svg.push_str("<g stroke=\"#222222\" stroke-width=\"0.5\" stroke-opacity=\"0.8\">\n");
    let mut labels = String::new();
    for &(i, offset) in placed {
        let b = &problem.buffers[i];
        let (x0, x1) = widen(x_scale.map(b.lower), x_scale.map(b.upper.max(b.lower)));
        let end = offset.saturating_add(b.size);
        let (y1, y0) = widen(y_scale.map(end), y_scale.map(offset));
        let (w, h) = (x1 - x0, y0 - y1);
        let _ = writeln!(
            svg,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">\
             <title>{}: time [{}, {}) size {} offset {}</title></rect>",
            num(x0),
            num(y1),
            num(w),
            num(h),
            colour(i),
            escape(&b.id),
            b.lower,
            b.upper,
            b.size,
            offset
        );
        let text_width = b.id.chars().count() as f64 * LABEL_CHAR_WIDTH + 4.0;
        if w > LABEL_MIN_WIDTH && h > LABEL_MIN_HEIGHT && w >= text_width {
            let _ = writeln!(
                labels,
                "<text x=\"{}\" y=\"{}\">{}</text>",
                num((x0 + x1) / 2.0),
                num((y0 + y1) / 2.0 + LABEL_FONT * 0.35),
                escape(&b.id)
            );
        }
    }
    svg.push_str("</g>\n");
    if !labels.is_empty() {
        let _ = writeln!(
            svg,
            "<g font-size=\"{LABEL_FONT}\" fill=\"#111111\" text-anchor=\"middle\" \
             pointer-events=\"none\">"
        );
        svg.push_str(&labels);
        svg.push_str("</g>\n");
    }
}

/// Horizontal lines: capacity, LOAD and peak, labelled in the right margin.
fn write_levels(svg: &mut String, frame: &Frame, capacity: Option<u64>, load: u64, peak: u64) {
    let (px_left, px_right) = (PX_LEFT, PX_RIGHT);
    let y_scale = &frame.y_scale;
    let mut lines: Vec<(f64, String, &str, &str)> = Vec::new();
    if let Some(c) = capacity {
        lines.push((
            y_scale.map(c),
            format!("capacity {}", grouped(c)),
            "#d62728",
            "",
        ));
    }
    lines.push((
        y_scale.map(load),
        format!("LOAD {}", grouped(load)),
        "#1f5fbf",
        "6 3",
    ));
    lines.push((
        y_scale.map(peak),
        format!("peak {}", grouped(peak)),
        "#111111",
        "2 2",
    ));
    for (y, _, stroke, dash) in &lines {
        let dash = if dash.is_empty() {
            String::new()
        } else {
            format!(" stroke-dasharray=\"{dash}\"")
        };
        let _ = writeln!(
            svg,
            "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{stroke}\" \
             stroke-width=\"1.5\"{dash}/>",
            num(px_left),
            num(px_right + 4.0),
            y = num(*y)
        );
    }
    // Spread the labels so that close lines do not print over each other: top to bottom, each
    // at least LINE_LABEL_GAP below the previous one.
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by(|&a, &b| lines[a].0.total_cmp(&lines[b].0).then(a.cmp(&b)));
    let mut previous = f64::NEG_INFINITY;
    svg.push_str("<g font-size=\"11\">\n");
    for k in order {
        let (y, text, stroke, _) = &lines[k];
        let y = (y + 4.0).max(previous + LINE_LABEL_GAP);
        previous = y;
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" fill=\"{stroke}\">{}</text>",
            num(px_right + 8.0),
            num(y),
            escape(text)
        );
    }
    svg.push_str("</g>\n");
}

/// The title: buffers, peak, LOAD, capacity and the time range.
fn write_title(
    svg: &mut String,
    problem: &Problem,
    capacity: Option<u64>,
    load: u64,
    peak: u64,
    t_lo: u64,
) {
    let px_left = PX_LEFT;
    let capacity_text = match capacity {
        Some(c) => grouped(c),
        None => "none".to_string(),
    };
    let ratio = if load == 0 {
        String::new()
    } else {
        format!(" (peak/LOAD {:.3})", peak as f64 / load as f64)
    };
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"24\" font-size=\"15\" fill=\"#111111\">{} buffers | peak {}{} | \
         LOAD {} | capacity {} | time [{}, {})</text>",
        num(px_left),
        problem.len(),
        grouped(peak),
        ratio,
        grouped(load),
        capacity_text,
        grouped(t_lo),
        grouped(problem.horizon().max(t_lo))
    );
}

/// A linear map from a `u64` range onto a pixel range.
struct Scale {
    lo: f64,
    span: f64,
    px_lo: f64,
    px_span: f64,
}

impl Scale {
    /// Maps `[lo, hi]` onto `[px_lo, px_hi]` (`hi > lo` is ensured by the caller).
    fn new(lo: u64, hi: u64, px_lo: f64, px_hi: f64) -> Scale {
        Scale {
            lo: lo as f64,
            span: (hi as f64 - lo as f64).max(1.0),
            px_lo,
            px_span: px_hi - px_lo,
        }
    }

    /// The pixel coordinate of `v`.
    fn map(&self, v: u64) -> f64 {
        self.px_lo + (v as f64 - self.lo) / self.span * self.px_span
    }
}

/// Makes the interval `[a, b]` at least `MIN_EXTENT` long, keeping its centre.
fn widen(a: f64, b: f64) -> (f64, f64) {
    let (a, b) = (a.min(b), a.max(b));
    if b - a >= MIN_EXTENT {
        (a, b)
    } else {
        let mid = (a + b) / 2.0;
        (mid - MIN_EXTENT / 2.0, mid + MIN_EXTENT / 2.0)
    }
}

/// A round tick step (1, 2 or 5 times a power of ten) giving about `target` ticks over `span`.
fn nice_step(span: u64, target: u64) -> u64 {
    let raw = (span as f64 / target.max(1) as f64).max(1.0);
    let magnitude = 10f64.powi(raw.log10().floor() as i32);
    let ratio = raw / magnitude;
    let mantissa = if ratio <= 1.0 {
        1.0
    } else if ratio <= 2.0 {
        2.0
    } else if ratio <= 5.0 {
        5.0
    } else {
        10.0
    };
    // `as` saturates, so a huge step cannot wrap.
    ((mantissa * magnitude).round() as u64).max(1)
}

/// The multiples of a round step within `[lo, hi]`, about `target` of them.
fn ticks(lo: u64, hi: u64, target: u64) -> Vec<u64> {
    let step = nice_step(hi.saturating_sub(lo), target) as u128;
    let mut t = (lo as u128).div_ceil(step) * step;
    let mut out = Vec::new();
    while t <= hi as u128 {
        out.push(t as u64);
        t += step;
    }
    out
}

/// A short tick label: `950`, `9500`, `12k`, `1.5M`, `2G`, ...
fn compact(v: u64) -> String {
    const UNITS: [(u64, &str); 6] = [
        (1_000_000_000_000_000_000, "E"),
        (1_000_000_000_000_000, "P"),
        (1_000_000_000_000, "T"),
        (1_000_000_000, "G"),
        (1_000_000, "M"),
        (1_000, "k"),
    ];
    if v < 10_000 {
        return v.to_string();
    }
    for (unit, suffix) in UNITS {
        if v >= unit {
            let whole = v / unit;
            // Three decimals at most, trailing zeros dropped.
            let frac = (v % unit) as u128 * 1000 / unit as u128;
            return if frac == 0 {
                format!("{whole}{suffix}")
            } else {
                let frac = format!("{frac:03}");
                format!("{whole}.{}{suffix}", frac.trim_end_matches('0'))
            };
        }
    }
    v.to_string()
}

/// `v` with thousands separators: `1,048,576`.
fn grouped(v: u64) -> String {
    let digits = v.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A pixel coordinate with two decimals, trailing zeros dropped.
fn num(v: f64) -> String {
    let v = if v.is_finite() { v } else { 0.0 };
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// The fill colour of buffer `index`: hues a golden-ratio turn apart, so neighbours differ.
fn colour(index: usize) -> String {
    const GOLDEN: f64 = 0.618_033_988_749_895;
    let hue = ((index as f64) * GOLDEN).fract() * 360.0;
    // Alternate the lightness a little as well, to separate hues that come round close.
    let lightness = [62, 72, 54][index % 3];
    format!("hsl({hue:.1},65%,{lightness}%)")
}

/// `text` with the XML special characters escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Buffer;

    /// The two background rectangles (canvas and plot area).
    const BACKGROUND_RECTS: usize = 2;

    /// A minimal well-formedness check: tags nest and close, text has no raw `<` and every `&`
    /// starts a known entity.
    fn assert_well_formed(svg: &str) {
        assert!(svg.starts_with("<svg"), "starts with <svg");
        assert!(svg.trim_end().ends_with("</svg>"), "ends with </svg>");
        let mut stack: Vec<String> = Vec::new();
        let mut rest = svg;
        while let Some(open) = rest.find('<') {
            check_text(&rest[..open]);
            let close = rest[open..].find('>').expect("tag closed") + open;
            let tag = &rest[open + 1..close];
            assert!(!tag.contains('<'), "no < inside a tag: {tag}");
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(stack.pop().as_deref(), Some(name.trim()), "matching close");
            } else {
                check_attributes(tag);
                if !tag.ends_with('/') {
                    let name = tag.split_whitespace().next().expect("tag name");
                    stack.push(name.to_string());
                }
            }
            rest = &rest[close + 1..];
            if stack.is_empty() {
                assert!(rest.trim().is_empty(), "nothing after the root element");
            }
        }
        check_text(rest);
        assert!(stack.is_empty(), "unclosed: {stack:?}");
    }

    fn check_text(text: &str) {
        assert!(!text.contains('>'), "raw > in text: {text}");
        let mut rest = text;
        while let Some(amp) = rest.find('&') {
            let entity = &rest[amp..];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                    .iter()
                    .any(|e| entity.starts_with(e)),
                "bad entity in {text}"
            );
            rest = &rest[amp + 1..];
        }
    }

    /// Attribute values are double-quoted and contain no quote, `<` or stray `&`.
    fn check_attributes(tag: &str) {
        assert_eq!(tag.matches('"').count() % 2, 0, "balanced quotes: {tag}");
        for (k, value) in tag.split('"').enumerate() {
            if k % 2 == 1 {
                check_text(value);
            }
        }
    }

    fn count(svg: &str, pattern: &str) -> usize {
        svg.matches(pattern).count()
    }

    fn small() -> (Problem, Solution) {
        let problem = Problem::new(
            vec![
                Buffer::new("a", 0, 10, 100),
                Buffer::new("b<&>\"'", 5, 15, 50),
                Buffer::new("c", 12, 20, 200),
            ],
            None,
        );
        let solution = Solution {
            offsets: vec![0, 100, 150],
        };
        (problem, solution)
    }

    #[test]
    fn small_plan_is_well_formed() {
        let (problem, solution) = small();
        let svg = render_svg(&problem, &solution, None);
        assert_well_formed(&svg);
        assert_eq!(count(&svg, "<rect"), problem.len() + BACKGROUND_RECTS);
        assert_eq!(count(&svg, "<title>"), problem.len());
        assert!(svg.contains("b&lt;&amp;&gt;&quot;&apos;"));
        assert!(!svg.contains("b<&"));
        assert!(svg.contains("3 buffers"));
        assert!(svg.contains("peak 350"));
        assert!(svg.contains("LOAD 250"));
        assert!(svg.contains("capacity none"));
        assert!(
            !svg.contains(">capacity "),
            "no capacity line without a capacity"
        );
    }

    #[test]
    fn capacity_line_is_drawn() {
        let (problem, solution) = small();
        let svg = render_svg(&problem, &solution, Some(1_048_576));
        assert_well_formed(&svg);
        assert!(svg.contains(">capacity 1,048,576</text>"));
        assert!(svg.contains("stroke=\"#d62728\""));
        // The capacity is the top of the plot: its line is at the top of the plot area.
        assert!(svg.contains(&format!("y1=\"{}\"", num(TOP))));
        // The problem's own capacity is the fallback.
        let with = problem.with_capacity(Some(4096));
        let svg = render_svg(&with, &solution, None);
        assert!(svg.contains(">capacity 4,096</text>"));
    }

    #[test]
    fn empty_problem_renders() {
        let problem = Problem::default();
        let solution = Solution { offsets: vec![] };
        for capacity in [None, Some(0), Some(100)] {
            let svg = render_svg(&problem, &solution, capacity);
            assert_well_formed(&svg);
            assert_eq!(count(&svg, "<rect"), BACKGROUND_RECTS);
            assert!(svg.contains("0 buffers"));
            assert!(!svg.contains("NaN") && !svg.contains("inf"));
        }
    }

    #[test]
    fn degenerate_and_huge_values_do_not_panic() {
        let problem = Problem::new(
            vec![
                Buffer::new("x", u64::MAX - 1, u64::MAX, u64::MAX),
                Buffer::new("y", 7, 7, 1),
            ],
            Some(u64::MAX),
        );
        let solution = Solution {
            offsets: vec![u64::MAX, 3],
        };
        let svg = render_svg(&problem, &solution, None);
        assert_well_formed(&svg);
        assert_eq!(count(&svg, "<rect"), 2 + BACKGROUND_RECTS);
        assert!(!svg.contains("NaN"));
        // A single buffer at a single time step.
        let one = Problem::new(vec![Buffer::new("z", 5, 6, 1)], None);
        let svg = render_svg(&one, &Solution { offsets: vec![0] }, None);
        assert_well_formed(&svg);
    }

    #[test]
    fn missing_offsets_fall_back_or_are_skipped() {
        let mut fixed = Buffer::new("fixed", 0, 4, 8);
        fixed.offset = Some(16);
        let problem = Problem::new(vec![fixed, Buffer::new("free", 0, 4, 8)], None);
        let svg = render_svg(&problem, &Solution { offsets: vec![] }, None);
        assert_well_formed(&svg);
        assert_eq!(count(&svg, "<rect"), 1 + BACKGROUND_RECTS);
        assert!(svg.contains("peak 24"));
    }

    #[test]
    fn big_rectangles_carry_their_id() {
        let problem = Problem::new(vec![Buffer::new("big", 0, 10, 100)], None);
        let svg = render_svg(&problem, &Solution { offsets: vec![0] }, None);
        assert!(svg.contains(">big</text>"));
        // A sliver does not.
        let problem = Problem::new(
            vec![
                Buffer::new("big", 0, 1000, 100),
                Buffer::new("sliver", 0, 1, 100),
            ],
            None,
        );
        let svg = render_svg(
            &problem,
            &Solution {
                offsets: vec![0, 100],
            },
            None,
        );
        assert!(!svg.contains(">sliver</text>"));
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(nice_step(1000, 10), 100);
        assert_eq!(nice_step(1_048_576, 8), 200_000);
        assert_eq!(nice_step(0, 8), 1);
        assert_eq!(ticks(3, 17, 3), vec![5, 10, 15]);
        assert_eq!(ticks(0, 0, 8), vec![0]);
        assert!(!ticks(0, u64::MAX, 8).is_empty());
        assert_eq!(compact(9_999), "9999");
        assert_eq!(compact(200_000), "200k");
        assert_eq!(compact(1_500_000), "1.5M");
        assert_eq!(grouped(1_048_576), "1,048,576");
        assert_eq!(grouped(0), "0");
        assert_eq!(num(-0.001), "0");
        assert_eq!(num(12.5), "12.5");
    }
}
