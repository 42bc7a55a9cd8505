//! The rate chart: an SVG line of ids per second drawn by the server, so the status page needs
//! no JavaScript.

use std::fmt::Write;

use crate::text::html::escape;

/// The chart's size in pixels.
const WIDTH: u32 = 600;
const HEIGHT: u32 = 160;
/// Room for the labels.
const LEFT: u32 = 60;
const BOTTOM: u32 = 20;

/// An SVG chart of `values` (one a second, oldest first), titled `title`.
pub(crate) fn svg(title: &str, values: &[u64]) -> String {
    let max = values.iter().copied().max().unwrap_or(0).max(1);
    let plot_w = f64::from(WIDTH - LEFT - 10);
    let plot_h = f64::from(HEIGHT - BOTTOM - 10);
    let step = plot_w / (super::rates::WINDOW.max(2) - 1) as f64;
    // Right-aligned: the newest second at the right edge.
    let offset = super::rates::WINDOW.saturating_sub(values.len());
    let mut points = String::new();
    for (i, v) in values.iter().enumerate() {
        let x = f64::from(LEFT) + (offset + i) as f64 * step;
        let y = 10.0 + plot_h - plot_h * (*v as f64) / (max as f64);
        let _ = write!(points, "{x:.1},{y:.1} ");
    }
    let title = escape(title);
    let last = values.last().copied().unwrap_or(0);
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"rate-chart\" width=\"{WIDTH}\" \
         height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" \
         aria-label=\"{title}\"><title>{title}</title>\
         <rect x=\"{LEFT}\" y=\"10\" width=\"{plot_w}\" height=\"{plot_h}\" fill=\"#f7f7f7\" \
         stroke=\"#ccc\"/>\
         <text x=\"{lx}\" y=\"18\" font-size=\"11\" text-anchor=\"end\">{max}/s</text>\
         <text x=\"{lx}\" y=\"{by}\" font-size=\"11\" text-anchor=\"end\">0</text>\
         <text x=\"{LEFT}\" y=\"{ty}\" font-size=\"11\">-60 s</text>\
         <text x=\"{rx}\" y=\"{ty}\" font-size=\"11\" text-anchor=\"end\">now: {last}/s</text>\
         <polyline fill=\"none\" stroke=\"#1f6feb\" stroke-width=\"2\" points=\"{points}\"/></svg>",
        lx = LEFT - 4,
        by = 10.0 + plot_h,
        ty = HEIGHT - 4,
        rx = WIDTH - 10,
        points = points.trim_end(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_has_one_point_per_second_and_escapes_its_title() {
        let chart = svg("ids <&> orders", &[0, 5, 10]);
        assert!(chart.starts_with("<svg"));
        assert!(chart.contains("ids &lt;&amp;&gt; orders"));
        assert!(chart.contains("10/s") && chart.contains("now: 10/s"));
        let points = chart.split("points=\"").nth(1).unwrap();
        let points = points.split('"').next().unwrap();
        assert_eq!(points.split(' ').count(), 3);
        assert!(svg("empty", &[]).contains("points=\"\""));
    }
}
