//! PNG plots of the validation cases without Python or system libraries (issue 13, item 5):
//! the cavity's centreline profiles against Ghia et al. (1982), the cylinder's force
//! coefficient histories, and generic time series (cells per level, MLUPS).
//!
//! Drawn with [`plotters`] into an in-memory RGB buffer, encoded by the pure-Rust `png`
//! crate and written with [`crate::output::write_atomic`] (a reader never sees a partial
//! file). Text uses **DejaVu Sans 2.37** (`crates/ramus/assets/DejaVuSans.ttf`, from the
//! upstream release `dejavu-fonts-ttf-2.37`), embedded in the binary with `include_bytes!`
//! and rasterised by `ab_glyph` through plotters' `ab_glyph` feature. Its licence,
//! `crates/ramus/assets/DejaVuSans-LICENSE`, is the permissive Bitstream Vera licence
//! (DejaVu's changes are in the public domain, the Arev glyphs under the same terms): free
//! use, copying and redistribution with the notice. No fontconfig, FreeType or system font
//! is loaded. The font is registered for plotters under the family `sans-serif`
//! (process-wide) on first use.
//!
//! Every function checks its input before drawing: empty data or a non-finite value is an
//! [`Error::InvalidParameter`] naming the field, and then no file is written.

use crate::{Error, Result};
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

/// Width and height of every plot, in pixels.
pub const PLOT_SIZE: (u32, u32) = (1000, 700);

/// How a [`PlotSeries`] is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeriesStyle {
    /// A line through the points in order (e.g. a computed profile).
    Line,
    /// A hollow circle at each point (e.g. reference data).
    Markers,
}

/// One curve of a plot: a legend label and its `(x, y)` points.
#[derive(Clone, Copy, Debug)]
pub struct PlotSeries<'a> {
    /// The legend entry.
    pub label: &'a str,
    /// The points, in drawing order; all finite.
    pub points: &'a [(f64, f64)],
    /// Line or markers.
    pub style: SeriesStyle,
}

/// The embedded DejaVu Sans (see the module documentation for its licence).
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";
const TITLE_SIZE: u32 = 30;
const DESC_SIZE: u32 = 24;
const LABEL_SIZE: u32 = 19;
/// A colour-blind friendly cycle (the Tableau 10 palette).
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Centreline profiles of the lid-driven cavity: `series` against the position along the
/// centreline (x axis, `[0, 1]` at least), velocity / U_lid on the y axis, with a legend.
/// Typically the computed profile as a [`SeriesStyle::Line`] and the reference data of
/// Ghia et al. (1982) as [`SeriesStyle::Markers`].
pub fn centerline_plot(
    path: &Path,
    title: &str,
    axis_label: &str,
    value_label: &str,
    series: &[PlotSeries<'_>],
) -> Result<()> {
    check_series(series, false)?;
    let all = || series.iter().flat_map(|s| s.points.iter());
    let x = padded(bounds(all().map(|p| p.0).chain([0.0, 1.0])), 0.0);
    let y = padded(bounds(all().map(|p| p.1)), 0.08);
    render(path, |root| {
        let mut chart = builder(root, title).build_cartesian_2d(x.clone(), y.clone())?;
        mesh(&mut chart, axis_label, value_label, &x, Some(&y))?;
        draw_series(&mut chart, series, &x, &y, false)
    })
}

/// Drag and lift coefficient histories of the cylinder against `t` (in `D / U_0`): C_D in
/// the top panel, C_L in the bottom one. `window = Some((t0, t1))` shades the averaging
/// window in both; `strouhal` puts the fitted Strouhal number in the title. `t`, `cd` and
/// `cl` have the same, non-zero length.
pub fn force_history_plot(
    path: &Path,
    t: &[f64],
    cd: &[f64],
    cl: &[f64],
    window: Option<(f64, f64)>,
    strouhal: Option<f64>,
) -> Result<()> {
    check_values("t", t)?;
    for (field, v) in [("cd", cd), ("cl", cl)] {
        if v.len() != t.len() {
            return Err(Error::invalid(field, format!("{} values", v.len()), format!("as many as t ({})", t.len())));
        }
        check_values(field, v)?;
    }
    if let Some((t0, t1)) = window {
        if !(t0.is_finite() && t1.is_finite() && t0 < t1) {
            return Err(Error::invalid("window", format!("({t0}, {t1})"), "finite (t0, t1) with t0 < t1"));
        }
    }
    if let Some(st) = strouhal.filter(|st| !st.is_finite()) {
        return Err(Error::invalid("strouhal", st, "a finite number"));
    }
    let x = padded(bounds(t.iter().copied().chain(window.into_iter().flat_map(|(a, b)| [a, b]))), 0.0);
    let title = match strouhal {
        Some(st) => format!("Cylinder force coefficients (St = {st:.4})"),
        None => "Cylinder force coefficients".to_string(),
    };
    render(path, |root| {
        let root = root.margin(12, 0, 0, 0).titled(&title, (FAMILY, TITLE_SIZE))?;
        let panels = root.split_evenly((2, 1));
        for (k, (area, name, v)) in [(&panels[0], "C_D", cd), (&panels[1], "C_L", cl)].into_iter().enumerate() {
            // The axis fits the averaging window (or the second half of the run): the
            // start-up transient, often ten times larger, would flatten the signal to read.
            let focus = |&(ti, _): &(&f64, &f64)| match window {
                Some((t0, t1)) => (t0..=t1).contains(ti),
                None => *ti >= 0.5 * (x.start + x.end),
            };
            let seen = bounds(t.iter().zip(v).filter(focus).map(|(_, &vi)| vi));
            let y = padded(if seen.0 <= seen.1 { seen } else { bounds(v.iter().copied()) }, 0.12);
            let clipped = v.iter().any(|vi| !y.contains(vi));
            let name = if clipped { format!("{name} (start-up cut)") } else { name.to_string() };
            let mut chart = ChartBuilder::on(area)
                .margin(12)
                .x_label_area_size(if k == 1 { 55 } else { 30 })
                .y_label_area_size(95)
                .build_cartesian_2d(x.clone(), y.clone())?;
            mesh(&mut chart, if k == 1 { "t U₀ / D" } else { "" }, &name, &x, Some(&y))?;
            if let Some((t0, t1)) = window {
                let shade = RGBColor(120, 120, 120).mix(0.18);
                let band = chart.draw_series([Rectangle::new([(t0, y.start), (t1, y.end)], shade.filled())])?;
                if k == 0 {
                    band.label(format!("averaging window {} ≤ t ≤ {}", tick(t0, None), tick(t1, None)))
                        .legend(move |(x, y)| Rectangle::new([(x, y - 7), (x + 24, y + 7)], shade.filled()));
                }
            }
            let points: Vec<(f64, f64)> = t.iter().copied().zip(v.iter().copied()).collect();
            let one = [PlotSeries { label: &name, points: &points, style: SeriesStyle::Line }];
            draw_series(&mut chart, &one, &x, &y, false)?;
        }
        Ok(())
    })
}

/// A generic plot of `series` against `x` (e.g. cells per level over time, one series per
/// level, or MLUPS over time), with a legend. `log_y` draws the y axis logarithmically; all
/// y values must then be positive.
pub fn time_series_plot(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[PlotSeries<'_>],
    log_y: bool,
) -> Result<()> {
    check_series(series, log_y)?;
    let all = || series.iter().flat_map(|s| s.points.iter());
    let x = padded(bounds(all().map(|p| p.0)), 0.0);
    let (lo, hi) = bounds(all().map(|p| p.1));
    render(path, |root| {
        let mut builder = builder(root, title);
        if log_y {
            // Whole decades, at least a quarter of one above the data for the legend; at most
            // 300 of them, within 1e±300 (plotters' log axis needs a finite end / start).
            let decade = |e: f64| 10f64.powf(e.clamp(-300.0, 300.0));
            let end = decade((hi.log10() + 0.25).ceil()).max(decade(lo.log10().floor() + 1.0));
            let y = decade(lo.log10().floor()).max(end / 1e300)..end;
            let mut chart = builder.build_cartesian_2d(x.clone(), y.clone().log_scale())?;
            mesh(&mut chart, x_label, y_label, &x, None)?;
            draw_series(&mut chart, series, &x, &y, true)
        } else {
            let y = padded((lo, hi), 0.1);
            let mut chart = builder.build_cartesian_2d(x.clone(), y.clone())?;
            mesh(&mut chart, x_label, y_label, &x, Some(&y))?;
            draw_series(&mut chart, series, &x, &y, false)
        }
    })
}

type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;
type Chart<'a, 'b, X, Y> = ChartContext<'a, BitMapBackend<'b>, Cartesian2d<X, Y>>;
type DrawResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// At least one series, each with points, all finite (and positive y for a log axis).
fn check_series(series: &[PlotSeries<'_>], log_y: bool) -> Result<()> {
    if series.is_empty() {
        return Err(Error::invalid("series", "none", "at least one series"));
    }
    for s in series {
        if s.points.is_empty() {
            return Err(Error::invalid("points", format!("none in series '{}'", s.label), "at least one point"));
        }
        if let Some(&(x, y)) = s.points.iter().find(|(x, y)| !(x.is_finite() && y.is_finite() && (!log_y || *y > 0.0)))
        {
            let allowed = if log_y { "finite x and y > 0 (log y axis)" } else { "finite x and y" };
            return Err(Error::invalid("points", format!("({x}, {y}) in series '{}'", s.label), allowed));
        }
    }
    Ok(())
}

/// Non-empty and finite.
fn check_values(field: &'static str, v: &[f64]) -> Result<()> {
    if v.is_empty() {
        return Err(Error::invalid(field, "no values", "at least one value"));
    }
    match v.iter().position(|x| !x.is_finite()) {
        Some(i) => Err(Error::invalid(field, format!("{} at index {i}", v[i]), "finite values")),
        None => Ok(()),
    }
}

/// Smallest and largest of finite values (at least one).
fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)))
}

/// `[lo, hi]` widened by `frac` of its length on each side (by a tenth of the magnitude, or
/// 1 near zero, when flat), within ±`LIMIT` (beyond it the data is clipped), so that the
/// axis' arithmetic stays finite.
fn padded((lo, hi): (f64, f64), frac: f64) -> Range<f64> {
    let (lo, hi) = (lo.clamp(-LIMIT, LIMIT), hi.clamp(-LIMIT, LIMIT));
    let (width, scale) = (hi - lo, lo.abs().max(hi.abs()));
    if width <= 1e-12 * scale || scale < 1e-200 {
        let d = if scale < 1e-200 { 1.0 } else { 0.1 * scale };
        return (lo - d).max(-2.0 * LIMIT)..(hi + d).min(2.0 * LIMIT);
    }
    lo - frac * width..hi + frac * width
}

/// The largest axis bound [`padded`] returns is `2 LIMIT` (far from overflow).
const LIMIT: f64 = 1e300;

/// Draws into a white `PLOT_SIZE` buffer, encodes it as PNG and writes it atomically.
fn render(path: &Path, draw: impl FnOnce(&Area<'_>) -> DrawResult) -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    if !*REGISTERED.get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok()) {
        return Err(Error::io("loading the embedded font for", path, std::io::Error::other("invalid font data")));
    }
    let (w, h) = PLOT_SIZE;
    let mut pixels = vec![255u8; w as usize * h as usize * 3];
    let drawn = (|| -> DrawResult {
        let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
        Ok(())
    })();
    drawn.map_err(|e| Error::io("drawing", path, std::io::Error::other(e.to_string())))?;
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let encoded = encoder.write_header().and_then(|mut writer| {
        writer.write_image_data(&pixels)?;
        writer.finish()
    });
    encoded.map_err(|e| Error::io("encoding the PNG for", path, std::io::Error::other(e)))?;
    crate::output::write_atomic(path, &bytes)
}

/// A chart with a caption and room for the axis labels.
fn builder<'a, 'b>(root: &'a Area<'b>, title: &str) -> ChartBuilder<'a, 'b, BitMapBackend<'b>> {
    let mut b = ChartBuilder::on(root);
    b.caption(title, (FAMILY, TITLE_SIZE)).margin(20).x_label_area_size(60).y_label_area_size(95);
    b
}

/// Grid, tick labels and axis descriptions; `x` and `y` are the axis ranges (`y = None`
/// for a log axis), which set the decimals of the tick labels.
fn mesh<X, Y>(
    chart: &mut Chart<'_, '_, X, Y>,
    x_desc: &str,
    y_desc: &str,
    x: &Range<f64>,
    y: Option<&Range<f64>>,
) -> DrawResult
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    const X_LABELS: usize = 11;
    const Y_LABELS: usize = 9;
    let (dx, dy) = (decimals(x, X_LABELS), y.map(|y| decimals(y, Y_LABELS)));
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style((FAMILY, LABEL_SIZE))
        .axis_desc_style((FAMILY, DESC_SIZE))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(200, 200, 200))
        .x_labels(X_LABELS)
        .y_labels(Y_LABELS)
        .x_label_formatter(&|v| tick(*v, Some(dx)))
        .y_label_formatter(&|v| tick(*v, dy))
        .draw()?;
    Ok(())
}

/// Lines and markers of `series` in palette order, then the legend in the corner with the
/// fewest points (`x` and `y` are the axis ranges, `y` logarithmic when `log_y`).
fn draw_series<'a, 'b: 'a, X, Y>(
    chart: &mut Chart<'a, 'b, X, Y>,
    series: &[PlotSeries<'_>],
    x: &Range<f64>,
    y: &Range<f64>,
    log_y: bool,
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    // Nothing is drawn beyond the axes (plotters does not clip, and its pixel arithmetic
    // would wrap around far out): lines are cut at the frame, markers outside left out.
    let inside = |p: &&(f64, f64)| x.contains(&p.0) && y.contains(&p.1);
    for (k, s) in series.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let anno = match s.style {
            SeriesStyle::Line => {
                // One element per segment: plotters joins the segments of a wide path with
                // mitres, which shoot far off the line where a signal turns sharply (a
                // spike in C_D), even beyond the frame.
                let runs = clip_line(s.points, x, y);
                let segments = runs.into_iter().flat_map(|run| {
                    run.windows(2).map(|w| PathElement::new([w[0], w[1]], color.stroke_width(2))).collect::<Vec<_>>()
                });
                chart.draw_series(segments)?
            }
            SeriesStyle::Markers => {
                chart.draw_series(s.points.iter().filter(inside).map(|&p| Circle::new(p, 6, color.stroke_width(2))))?
            }
        };
        let style = s.style;
        anno.label(s.label).legend(move |(px, py)| match style {
            SeriesStyle::Line => PathElement::new([(px, py), (px + 24, py)], color.stroke_width(3)).into_dyn(),
            SeriesStyle::Markers => Circle::new((px + 12, py), 6, color.stroke_width(2)).into_dyn(),
        });
    }
    chart
        .configure_series_labels()
        .position(legend_corner(series, x, y, log_y))
        .label_font((FAMILY, LABEL_SIZE))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(150, 150, 150))
        .margin(12)
        .draw()?;
    Ok(())
}

/// The parts of the polyline `points` inside the rectangle `x × y`, as separate runs:
/// each segment cut to the rectangle (Liang–Barsky), consecutive visible segments joined.
fn clip_line(points: &[(f64, f64)], x: &Range<f64>, y: &Range<f64>) -> Vec<Vec<(f64, f64)>> {
    let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut open = false;
    if let [p] = points {
        if x.contains(&p.0) && y.contains(&p.1) {
            runs.push(vec![*p]);
        }
    }
    for w in points.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        let (dx, dy) = (x1 - x0, y1 - y0);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        let mut visible = true;
        for (p, q) in [(-dx, x0 - x.start), (dx, x.end - x0), (-dy, y0 - y.start), (dy, y.end - y0)] {
            if p == 0.0 {
                visible &= q >= 0.0;
            } else if p < 0.0 {
                t0 = t0.max(q / p);
            } else {
                t1 = t1.min(q / p);
            }
        }
        if !visible || t0 > t1 {
            open = false;
            continue;
        }
        let at = |t: f64| (x0 + t * dx, y0 + t * dy);
        // A segment continues the open run only if it starts inside (not cut at t0 > 0).
        if !(open && t0 == 0.0) {
            runs.push(vec![at(t0)]);
        }
        runs.last_mut().expect("a run was pushed").push(at(t1));
        open = t1 == 1.0;
    }
    runs
}

/// The fewest decimals that write the ticks plotters puts on `range` (at most `labels`)
/// exactly.
fn decimals(range: &Range<f64>, labels: usize) -> usize {
    let ticks = plotters::coord::types::RangedCoordf64::from(range.clone()).key_points(labels);
    let exact = |d: i32| {
        ticks.iter().all(|v| {
            let scaled = v * 10f64.powi(d);
            (scaled - scaled.round()).abs() < 1e-6
        })
    };
    (0..=12).find(|&d| exact(d)).unwrap_or(12) as usize
}

/// A tick label with `decimals` (`None`: as few as the value needs), in scientific
/// notation from a million on and for more than 6 decimals (below 1e-4 without them).
fn tick(v: f64, decimals: Option<usize>) -> String {
    if v != 0.0 && (v.abs() >= 1e6 || decimals.map_or(v.abs() < 1e-4, |d| d > 6)) {
        let text = format!("{v:.3e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        return format!("{}e{exponent}", mantissa.trim_end_matches('0').trim_end_matches('.'));
    }
    let text = match decimals {
        Some(d) => format!("{v:.d$}"),
        None => format!("{v:.4}").trim_end_matches('0').trim_end_matches('.').to_string(),
    };
    // No "-0.0" for a value that rounds to zero.
    if text.starts_with('-') && text.chars().all(|c| matches!(c, '-' | '0' | '.')) {
        text[1..].to_string()
    } else {
        text
    }
}

/// The corner of the plot holding the fewest points (a box of 40 % of the width and 35 % of
/// the height), the upper ones preferred on ties.
fn legend_corner(series: &[PlotSeries<'_>], x: &Range<f64>, y: &Range<f64>, log_y: bool) -> SeriesLabelPosition {
    let ty = |v: f64| if log_y { v.log10() } else { v };
    let (y0, y1) = (ty(y.start), ty(y.end));
    let count = |right: bool, upper: bool| {
        let points = series.iter().flat_map(|s| s.points.iter());
        points
            .filter(|&&(px, py)| {
                let fx = (px - x.start) / (x.end - x.start);
                let fy = (ty(py) - y0) / (y1 - y0);
                (if right { fx >= 0.6 } else { fx <= 0.4 }) && (if upper { fy >= 0.65 } else { fy <= 0.35 })
            })
            .count()
    };
    let corners = [
        (SeriesLabelPosition::UpperLeft, false, true),
        (SeriesLabelPosition::UpperRight, true, true),
        (SeriesLabelPosition::LowerLeft, false, false),
        (SeriesLabelPosition::LowerRight, true, false),
    ];
    let best = corners.into_iter().min_by_key(|&(_, right, upper)| count(right, upper));
    best.map_or(SeriesLabelPosition::UpperRight, |c| c.0)
}

#[cfg(test)]
mod tests {
    use super::clip_line;

    #[test]
    fn lines_are_cut_at_the_frame_into_runs() {
        let (x, y) = (0.0..10.0, 0.0..1.0);
        // In, out through the top, back in, out through the top again.
        let line = [(0.0, 0.5), (2.0, 0.5), (4.0, 2.5), (6.0, 0.5), (8.0, 0.5), (9.0, 1.5)];
        let runs = clip_line(&line, &x, &y);
        assert_eq!(runs.len(), 2, "{runs:?}");
        assert_eq!(runs[0], vec![(0.0, 0.5), (2.0, 0.5), (2.5, 1.0)]);
        assert_eq!(runs[1], vec![(5.5, 1.0), (6.0, 0.5), (8.0, 0.5), (8.5, 1.0)]);
        // Entirely outside: nothing; a lone point inside: itself.
        assert!(clip_line(&[(1.0, 5.0), (2.0, 6.0)], &x, &y).is_empty());
        assert_eq!(clip_line(&[(1.0, 0.25)], &x, &y), vec![vec![(1.0, 0.25)]]);
        // A segment crossing the whole frame is one run between its two cuts.
        assert_eq!(clip_line(&[(1.0, -1.0), (3.0, 2.0)], &x, &y).len(), 1);
    }
}
