//! The examples' PNG plots (`ramus::output::plot`: bundled font, no Python), written next
//! to the data they show; `--no-plots` skips them.

use std::path::Path;

use anyhow::{Context, Result};
use ramus::cases::cavity::{Cavity, Centerlines};
use ramus::output::plot::{centerline_plot, time_series_plot, PlotSeries, SeriesStyle};

/// `centerline_u.png` and `centerline_v.png`: the profiles, with Ghia et al. (1982) where
/// the Reynolds number is tabulated (2D).
pub fn cavity_plots(out: &Path, c: &Cavity, lines: &Centerlines) -> Result<()> {
    let reference = if c.dim == 2 { ramus::cases::ghia::ghia_1982(c.re) } else { None };
    let (along_u, along_v, v_name) = if c.dim == 2 { ("y / L", "x / L", "v") } else { ("z / L", "x / L", "w") };
    for (k, (file, along, name, p)) in
        [("centerline_u.png", along_u, "u", &lines.u), ("centerline_v.png", along_v, v_name, &lines.v)]
            .into_iter()
            .enumerate()
    {
        let computed: Vec<(f64, f64)> = p.coords.iter().copied().zip(p.values.iter().copied()).collect();
        let label = format!("ramus, {}D, n = {}", c.dim, c.n);
        let mut series = vec![PlotSeries { label: &label, points: &computed, style: SeriesStyle::Line }];
        let ghia: Vec<(f64, f64)> = match &reference {
            Some((u, v)) => {
                let r = if k == 0 { u } else { v };
                r.coords.iter().copied().zip(r.values.iter().copied()).collect()
            }
            None => Vec::new(),
        };
        if !ghia.is_empty() {
            series.push(PlotSeries { label: "Ghia et al. (1982)", points: &ghia, style: SeriesStyle::Markers });
        }
        let title = format!("Lid-driven cavity, Re = {}: {name} on the centreline", c.re);
        centerline_plot(&out.join(file), &title, along, &format!("{name} / U_lid"), &series)
            .with_context(|| format!("plotting {file}"))?;
    }
    Ok(())
}

/// `cells_per_level.png` and `mlups.png` from `OUT/series.csv` (time in its second
/// column, labelled `time_label`).
pub fn series_plots(out: &Path, time_label: &str) -> Result<()> {
    let text = std::fs::read_to_string(out.join("series.csv")).context("reading series.csv for its plots")?;
    let mut rows = text.lines();
    let header: Vec<&str> = rows.next().unwrap_or_default().split(',').collect();
    let rows: Vec<Vec<Option<f64>>> = rows.map(|l| l.split(',').map(|x| x.parse().ok()).collect()).collect();
    let col = |name: &str| header.iter().position(|h| *h == name);
    let points = |c: usize| -> Vec<(f64, f64)> {
        rows.iter().filter_map(|r| Some((r.get(1).copied()??, r.get(c).copied()??))).collect()
    };
    let levels: Vec<(String, Vec<(f64, f64)>)> = header
        .iter()
        .enumerate()
        .filter_map(|(i, h)| h.strip_prefix("cells_level").map(|l| (format!("level {l}"), points(i))))
        .map(|(l, p)| (l, p.into_iter().filter(|&(_, y)| y > 0.0).collect::<Vec<_>>()))
        .filter(|(_, p)| !p.is_empty())
        .collect();
    let series: Vec<PlotSeries> =
        levels.iter().map(|(l, p)| PlotSeries { label: l, points: p, style: SeriesStyle::Line }).collect();
    if !series.is_empty() {
        time_series_plot(&out.join("cells_per_level.png"), "Leaf cells per level", time_label, "cells", &series, true)
            .context("plotting cells_per_level.png")?;
    }
    let mlups: Vec<(f64, f64)> = col("mlups").map(points).unwrap_or_default();
    if !mlups.is_empty() {
        let s = [PlotSeries { label: "MLUPS since the previous sample", points: &mlups, style: SeriesStyle::Line }];
        time_series_plot(&out.join("mlups.png"), "Throughput (AMR-aware MLUPS)", time_label, "MLUPS", &s, false)
            .context("plotting mlups.png")?;
    }
    Ok(())
}

/// Writes the two centreline CSV files of a cavity, atomically.
pub fn write_centerlines(out: &Path, dim: u32, lines: &Centerlines) -> Result<()> {
    let (u_head, v_head) = if dim == 2 { ("y,u", "x,v") } else { ("z,u", "x,w") };
    for (name, head, p) in [("centerline_u.csv", u_head, &lines.u), ("centerline_v.csv", v_head, &lines.v)] {
        let mut csv = format!("{head}\n");
        for (x, v) in p.coords.iter().zip(&p.values) {
            csv += &format!("{x},{v}\n");
        }
        super::write_file(&out.join(name), csv.as_bytes())?;
    }
    Ok(())
}
