//! PNG plots (`ramus::output::plot`): each plot is a valid PNG of `PLOT_SIZE` that is not
//! blank and has text in its title strip; bad input is an error naming the field and
//! writes no file.
//!
//! `demo_plots_from_runs` draws the three plots from short real runs (the Re = 100 cavity
//! against Ghia et al. 1982, an adaptive Re = 1000 cavity for cells per level and MLUPS)
//! and a synthetic shedding signal for the force history. With `RAMUS_PLOTS_DEMO_DIR` set
//! it writes them there to be looked at, e.g.
//! `RAMUS_PLOTS_DEMO_DIR=/tmp/plots-demo cargo test -p ramus --release --test integration plots::`.

use ramus::output::plot::{centerline_plot, force_history_plot, time_series_plot, PlotSeries, SeriesStyle, PLOT_SIZE};
use ramus::{Error, Result};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// A fresh folder for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ramus-plots-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Width and height from the PNG signature and IHDR chunk, checked by hand.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.len() > 33, "too short for a PNG: {} bytes", bytes.len());
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&bytes[8..16], b"\x00\x00\x00\x0dIHDR", "IHDR first, 13 bytes long");
    let be = |k: usize| u32::from_be_bytes(bytes[k..k + 4].try_into().unwrap());
    assert_eq!((bytes[24], bytes[25]), (8, 2), "8-bit RGB");
    (be(16), be(20))
}

/// Checks `path` is a `PLOT_SIZE` PNG with several colours and dark (text) pixels in its
/// top `title_rows` rows, which hold the title and nothing else (rows 21-44 for one chart,
/// 13-36 for the force history's two panels); returns its distinct colours.
fn check_png(path: &Path, title_rows: u32) -> HashSet<[u8; 3]> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(png_size(&bytes), PLOT_SIZE, "{}", path.display());
    let mut reader = png::Decoder::new(std::io::Cursor::new(&bytes)).read_info().expect("a decodable PNG");
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).expect("one frame");
    assert_eq!((info.width, info.height, info.color_type), (PLOT_SIZE.0, PLOT_SIZE.1, png::ColorType::Rgb));
    let rgb: Vec<[u8; 3]> = pixels.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
    let colours: HashSet<[u8; 3]> = rgb.iter().copied().collect();
    let drawn = rgb.iter().filter(|&&p| p != [255; 3]).count();
    assert!(colours.len() > 2, "{}: only {} colours", path.display(), colours.len());
    assert!(drawn > 5000, "{}: only {drawn} non-white pixels", path.display());
    let title = &rgb[..(title_rows * PLOT_SIZE.0) as usize];
    let dark = title.iter().filter(|p| p.iter().all(|&c| c < 80)).count();
    assert!(dark > 200, "{}: no text in the title strip ({dark} dark pixels)", path.display());
    colours
}

const BLUE: [u8; 3] = [31, 119, 180];
const ORANGE: [u8; 3] = [255, 127, 14];

/// The error is an `InvalidParameter` for `field`, and `path` was not written.
fn assert_invalid(result: Result<()>, field: &str, path: &Path) {
    match result {
        Err(Error::InvalidParameter { field: f, .. }) if f == field => {}
        other => panic!("expected an invalid {field}, got {other:?}"),
    }
    assert!(!path.exists(), "{} written despite the error", path.display());
    let left: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "files left behind: {left:?}");
}

fn sine(n: usize, f: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
    (0..n).map(|k| k as f64 / (n - 1) as f64).map(|x| (x, f(x))).collect()
}

#[test]
fn each_plot_is_a_png_of_the_expected_size_with_text_and_colours() {
    let dir = temp_dir("valid");
    let line = sine(50, |x| (6.0 * x).sin());
    let marks = sine(12, |x| (6.0 * x).cos());
    let series = [
        PlotSeries { label: "computed", points: &line, style: SeriesStyle::Line },
        PlotSeries { label: "reference", points: &marks, style: SeriesStyle::Markers },
    ];
    let path = dir.join("centerline.png");
    centerline_plot(&path, "Centreline", "y", "u / U_lid", &series).unwrap();
    let colours = check_png(&path, 46);
    assert!(colours.contains(&BLUE) && colours.contains(&ORANGE), "both series drawn");

    let t: Vec<f64> = (0..400).map(|k| k as f64 * 0.1).collect();
    let cd: Vec<f64> = t.iter().map(|t| 1.3 + 0.01 * (2.0 * t).sin()).collect();
    let cl: Vec<f64> = t.iter().map(|t| 0.3 * t.sin()).collect();
    let path = dir.join("forces.png");
    force_history_plot(&path, &t, &cd, &cl, Some((20.0, 39.9)), Some(0.165)).unwrap();
    assert!(check_png(&path, 38).contains(&BLUE));
    force_history_plot(&path, &t, &cd, &cl, None, None).unwrap();
    check_png(&path, 38);

    let cells: Vec<(f64, f64)> = (0..20).map(|k| (k as f64, 1e3 * 2f64.powi(k % 7))).collect();
    let flat = [(0.0, 5.0), (1.0, 5.0)];
    let series = [
        PlotSeries { label: "level 0", points: &cells, style: SeriesStyle::Line },
        PlotSeries { label: "level 1", points: &flat, style: SeriesStyle::Line },
    ];
    for log_y in [false, true] {
        let path = dir.join(format!("series-{log_y}.png"));
        time_series_plot(&path, "Cells per level", "root step", "cells", &series, log_y).unwrap();
        let colours = check_png(&path, 46);
        assert!(colours.contains(&BLUE) && colours.contains(&ORANGE), "both series drawn");
    }
    // A single point (flat ranges on both axes) still plots.
    let one = [PlotSeries { label: "one", points: &[(3.0, 7.0)], style: SeriesStyle::Markers }];
    time_series_plot(&dir.join("one.png"), "One point", "x", "y", &one, false).unwrap();
    check_png(&dir.join("one.png"), 46);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Finite but extreme data (beyond ±1e300, subnormal, 300+ decades on a log axis) plots
/// without a panic or a hang in plotters' axis arithmetic.
#[test]
fn extreme_finite_values_still_plot() {
    let dir = temp_dir("extreme");
    let path = dir.join("x.png");
    let cases = [
        ([(0.0, -f64::MAX), (0.5, 1.0), (1.0, f64::MAX)], false),
        ([(-f64::MAX, 5e-324), (0.0, 1e-310), (f64::MAX, 5e-324)], false),
        ([(0.0, 5e-324), (0.5, 1.0), (1.0, f64::MAX)], true),
        ([(0.0, 1e-220), (0.5, 1e-220), (1.0, 1e100)], true),
    ];
    for (points, log_y) in &cases {
        let s = [PlotSeries { label: "s", points, style: SeriesStyle::Line }];
        time_series_plot(&path, "extreme", "x", "y", &s, *log_y).unwrap();
        check_png(&path, 46);
        centerline_plot(&path, "extreme", "x", "y", &s).unwrap();
    }
    let t = [0.0, 1e300, f64::MAX];
    force_history_plot(&path, &t, &t, &[-f64::MAX, 0.0, 5e-324], Some((-f64::MAX, f64::MAX)), Some(1e300)).unwrap();
    check_png(&path, 38);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_names_the_field_and_writes_nothing() {
    let dir = temp_dir("invalid");
    let path = dir.join("bad.png");
    let good = [(0.0, 1.0), (1.0, 2.0)];
    let nan = [(0.0, 1.0), (0.5, f64::NAN), (1.0, 2.0)];
    let inf_x = [(f64::INFINITY, 1.0)];
    let zero = [(0.0, 1.0), (1.0, 0.0)];
    let s = |points| [PlotSeries { label: "s", points, style: SeriesStyle::Line }];

    assert_invalid(centerline_plot(&path, "t", "y", "u", &[]), "series", &path);
    assert_invalid(centerline_plot(&path, "t", "y", "u", &s(&[])), "points", &path);
    assert_invalid(centerline_plot(&path, "t", "y", "u", &s(&nan)), "points", &path);
    assert_invalid(time_series_plot(&path, "t", "x", "y", &[], false), "series", &path);
    assert_invalid(time_series_plot(&path, "t", "x", "y", &s(&inf_x), false), "points", &path);
    assert_invalid(time_series_plot(&path, "t", "x", "y", &s(&zero), true), "points", &path);
    let e = time_series_plot(&path, "t", "x", "y", &s(&nan), false).unwrap_err().to_string();
    assert!(e.contains("points") && e.contains("NaN") && e.contains("'s'"), "{e}");

    let t = [0.0, 1.0, 2.0];
    let v = [1.0, 1.1, 1.2];
    assert_invalid(force_history_plot(&path, &[], &[], &[], None, None), "t", &path);
    assert_invalid(force_history_plot(&path, &t, &[1.0, f64::NAN, 1.0], &v, None, None), "cd", &path);
    assert_invalid(force_history_plot(&path, &t, &v, &[0.0, 0.1], None, None), "cl", &path);
    assert_invalid(force_history_plot(&path, &[0.0, f64::NAN, 2.0], &v, &v, None, None), "t", &path);
    assert_invalid(force_history_plot(&path, &t, &v, &v, Some((2.0, 1.0)), None), "window", &path);
    assert_invalid(force_history_plot(&path, &t, &v, &v, Some((0.0, f64::NAN)), None), "window", &path);
    assert_invalid(force_history_plot(&path, &t, &v, &v, None, Some(f64::NAN)), "strouhal", &path);

    // The same calls with good input do write.
    centerline_plot(&path, "t", "y", "u", &s(&good)).unwrap();
    assert!(path.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unwritable_path_is_an_io_error() {
    let path = Path::new("/nonexistent-ramus-dir/plot.png");
    let s = [PlotSeries { label: "s", points: &[(0.0, 1.0), (1.0, 2.0)], style: SeriesStyle::Line }];
    match time_series_plot(path, "t", "x", "y", &s, false) {
        Err(Error::Io { path: p, .. }) => assert_eq!(p, path),
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

/// `(y, u)` of column `column` in the workspace's Ghia table of u on the vertical centreline.
fn ghia_u(column: &str) -> Vec<(f64, f64)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/ghia1982_u_vertical_centerline.csv");
    let text = std::fs::read_to_string(path).unwrap();
    let mut rows = text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
    let col = rows.next().unwrap().split(',').position(|h| h.trim() == column).unwrap();
    rows.map(|r| r.split(',').map(|x| x.trim().parse::<f64>().unwrap()).collect::<Vec<_>>())
        .map(|f| (f[0], f[col]))
        .collect()
}

#[test]
fn demo_plots_from_runs() {
    use ramus::cases::cavity::Cavity;
    use ramus::{Backend, Criterion, Forest, Refinement, D2, D2Q9};
    let demo = std::env::var_os("RAMUS_PLOTS_DEMO_DIR").map(PathBuf::from);
    let dir = demo.clone().unwrap_or_else(|| temp_dir("demo"));
    std::fs::create_dir_all(&dir).unwrap();

    // Cavity, Re = 100, n = 64, 20 lid passes (steady to ~1e-3), against Ghia's table.
    let cavity = Cavity { dim: 2, n: 64, re: 100.0, lid: 0.15 };
    let mut forest = Forest::<D2, D2Q9, f64>::new(cavity.forest_config(Backend::Cpu).unwrap()).unwrap();
    forest.advance(cavity.steps_for_passes(20.0)).unwrap();
    let u = cavity.centerlines(&forest.fields().unwrap()).unwrap().u;
    let computed: Vec<(f64, f64)> = u.coords.iter().copied().zip(u.values.iter().copied()).collect();
    let ghia = ghia_u("u_Re100");
    let series = [
        PlotSeries { label: "ramus, D2Q9, 64² (CPU)", points: &computed, style: SeriesStyle::Line },
        PlotSeries { label: "Ghia et al. (1982)", points: &ghia, style: SeriesStyle::Markers },
    ];
    let path = dir.join("cavity_re100_u_centerline.png");
    centerline_plot(&path, "Lid-driven cavity, Re = 100: u on x = 0.5", "y / L", "u / U_lid", &series).unwrap();
    check_png(&path, 46);

    // Synthetic shedding behind a cylinder at Re = 100: St = 0.165, C_D ≈ 1.35 oscillating
    // at twice the frequency, lift growing out of the symmetric start.
    let t: Vec<f64> = (0..3000).map(|k| k as f64 * 0.05).collect();
    let grow = |t: f64| 1.0 / (1.0 + (-(t - 60.0) / 8.0).exp());
    let phase = |t: f64| 2.0 * std::f64::consts::PI * 0.165 * t;
    let cd: Vec<f64> =
        t.iter().map(|&t| 1.35 + 0.4 * (-t / 6.0).exp() + 0.012 * grow(t) * (2.0 * phase(t)).cos()).collect();
    let cl: Vec<f64> = t.iter().map(|&t| 0.33 * grow(t) * phase(t).sin()).collect();
    let from = t.partition_point(|&x| x < 100.0);
    let (st, _) = ramus::cases::shedding::strouhal(&t[from..], &cl[from..]).unwrap();
    assert!((st - 0.165).abs() < 1e-3, "St = {st}");
    let path = dir.join("cylinder_forces.png");
    force_history_plot(&path, &t, &cd, &cl, Some((100.0, t[t.len() - 1])), Some(st)).unwrap();
    check_png(&path, 38);

    // An adaptive cavity (Re = 1000, root 32², 3 levels, vorticity criterion): leaf cells
    // per level and MLUPS over each 16 root steps.
    let cavity = Cavity { dim: 2, n: 32, re: 1000.0, lid: 0.1 };
    let refinement = Refinement {
        levels: 3,
        criterion: Criterion::Vorticity { n_start: -2.0, n_inc: 1.0, length: None },
        ..Refinement::default()
    };
    let config = cavity.forest_config(Backend::Cpu).unwrap().refinement(refinement);
    let mut forest = Forest::<D2, D2Q9, f64>::new(config).unwrap();
    let mut cells = vec![Vec::new(); 3];
    let mut mlups = Vec::new();
    let mut last = (0.0, 0.0);
    for _ in 0..40 {
        forest.advance(16).unwrap();
        let step = forest.steps() as f64;
        for (level, &n) in forest.cells_per_level().iter().enumerate().filter(|(_, &n)| n > 0) {
            cells[level].push((step, n as f64));
        }
        let timings = forest.timings();
        let now = (timings.updates, timings.stepping.as_secs_f64());
        mlups.push((step, (now.0 - last.0) / (now.1 - last.1) / 1e6));
        last = now;
    }
    let labels = ["level 0", "level 1", "level 2"];
    let series: Vec<PlotSeries> = cells
        .iter()
        .zip(labels)
        .filter(|(points, _)| !points.is_empty())
        .map(|(points, label)| PlotSeries { label, points, style: SeriesStyle::Line })
        .collect();
    let path = dir.join("amr_cells_per_level.png");
    time_series_plot(
        &path,
        "Adaptive cavity, Re = 1000: leaf cells per level",
        "root step",
        "leaf cells",
        &series,
        true,
    )
    .unwrap();
    check_png(&path, 46);
    let series = [PlotSeries { label: "CPU, f64 (per 16 root steps)", points: &mlups, style: SeriesStyle::Line }];
    let path = dir.join("amr_mlups.png");
    time_series_plot(&path, "Adaptive cavity, Re = 1000: throughput", "root step", "MLUPS", &series, false).unwrap();
    check_png(&path, 46);

    if demo.is_none() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// A force history with a start-up transient 100 times the shedding amplitude and sharp
/// spikes (what adaptation does to C_D): nothing of the curves is drawn outside the
/// panels. Before the lines were cut at the frame and drawn segment by segment, plotters'
/// mitre joins at the spikes shot lines through the title strip.
#[test]
fn spikes_and_a_start_up_transient_stay_inside_the_panels() {
    let dir = temp_dir("spikes");
    let n = 4000;
    let t: Vec<f64> = (0..n).map(|i| i as f64 * 240.0 / n as f64).collect();
    let cd: Vec<f64> = t
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let start = if x < 50.0 { 3.0 * x.cos() } else { 0.0 };
            1.51 + 0.01 * (2.0 * x).sin() + start + if i % 97 == 0 { 0.2 } else { 0.0 }
        })
        .collect();
    let cl: Vec<f64> = t.iter().map(|&x| 0.3 * (0.9 * x).sin()).collect();
    let path = dir.join("forces.png");
    force_history_plot(&path, &t, &cd, &cl, Some((224.0, 240.0)), Some(0.147)).unwrap();
    check_png(&path, 36);
    let bytes = std::fs::read(&path).unwrap();
    let mut reader = png::Decoder::new(std::io::Cursor::new(&bytes)).read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut pixels).unwrap();
    let width = PLOT_SIZE.0 as usize;
    let blue_in_title = pixels
        .chunks_exact(3)
        .take(36 * width)
        .filter(|p| p[0] == BLUE[0] && p[1] == BLUE[1] && p[2] == BLUE[2])
        .count();
    assert_eq!(blue_in_title, 0, "curve pixels in the title strip");
    std::fs::remove_dir_all(&dir).ok();
}
