//! Lid-driven cavity on a uniform grid (paper, section "Lid-Driven Cavity").
//!
//! A square (2D) or cubic (3D) box of `n` cells per side with no-slip walls; the lid
//! (`y = 1` in 2D, `z = 1` in 3D) slides with `+x` velocity `lid` (lattice units) and
//! `Re = U_lid n / ν`. The run lasts `passes` lid passes (`passes · n / U_lid` steps);
//! the default is long enough for the steady Re = 100 solution.
//!
//! ```text
//! cargo run --release --example cavity                                  # 2D, D2Q9, f32, n = 128
//! cargo run --release --example cavity -- --n 64 --passes 5 --backend cpu --out /tmp/cav
//! cargo run --release --example cavity -- --dim 3 --lattice d3q27 --precision f64 --n 64
//! cargo run --release --example cavity -- --re 1000 --n 256 --passes 100 --backend cuda
//! cargo run --release --example cavity -- --re 1000 --n 64 --lid 0.1 --levels 3 --passes 30
//! ```
//!
//! With `--levels L > 1` the mesh adapts every `--refine-every` root steps with the
//! paper's vorticity criterion (`--criterion vorticity`, `--n-start`, `--n-inc`; `none`
//! keeps the root grid) and ghost cells are filled by `--interp linear|cubic`. The
//! centreline profiles are then sampled at the finest level's spacing.
//!
//! Writes into `--out` (default `out/cavity`):
//! - `centerline_u.csv`: `y,u` (2D; `z,u` in 3D), `u/U_lid` on the vertical centreline,
//!   wall end points included;
//! - `centerline_v.csv`: `x,v` (2D, on y = 0.5; `x,w` in 3D, on y = z = 0.5);
//! - `summary.json`: parameters, backend and device, steps, time, MLUPS (AMR-aware: the
//!   paper's formula), adaptation share of the run time, blocks and cells per level, mass
//!   drift, the largest change of the centreline profiles over the last lid pass
//!   (steadiness), and with `--profile` the time per level and routine;
//! - `cavity.vtu`: every leaf cell with `rho`, `u` and `level` (ParaView).
//!
//! Invalid input prints `error: <message>` and exits with status 2.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use ramus::cases::cavity::{Cavity, Centerlines, Profile};
use ramus::{Backend, Criterion, Dim, Float, Forest, ForestConfig, Interpolation, LatticeKind, Precision, Refinement, VelocitySet};
use ramus::{D2, D2Q9, D3, D3Q19, D3Q27};

/// Default simulated time in lid passes. Measured at Re = 100 (n = 128, lid = 0.05,
/// D2Q9): the centreline profiles change by < 1e-3 U_lid per pass after 10 passes; over
/// the 20th pass by 4e-6 U_lid (f64) and 1.5e-5 U_lid (f32).
const DEFAULT_PASSES: f64 = 20.0;

/// Number of `advance` calls the run is split into (progress-bar updates).
const CHUNKS: u64 = 200;

/// Lid-driven cavity with the ramus lattice Boltzmann solver.
#[derive(Parser, Debug)]
#[command(about, long_about = None)]
struct Args {
    /// Spatial dimension: 2 or 3.
    #[arg(long, default_value_t = 2)]
    dim: u32,
    /// Velocity set: d2q9 (2D), d3q19 or d3q27 (3D) [default: d2q9 in 2D, d3q19 in 3D].
    #[arg(long)]
    lattice: Option<String>,
    /// Floating-point precision: f32 or f64.
    #[arg(long, default_value = "f32")]
    precision: String,
    /// Reynolds number U_lid n / ν.
    #[arg(long, default_value_t = 100.0, allow_negative_numbers = true)]
    re: f64,
    /// Cells per side (multiple of 4, at least 8).
    #[arg(long, default_value_t = 128)]
    n: usize,
    /// Lid speed in lattice units (0 < lid < 0.3).
    #[arg(long, default_value_t = 0.05, allow_negative_numbers = true)]
    lid: f64,
    /// Simulated time in lid passes L / U_lid.
    #[arg(long, default_value_t = DEFAULT_PASSES, allow_negative_numbers = true)]
    passes: f64,
    /// Where to run: auto (CUDA if available, else CPU), cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: String,
    /// Grid levels (1: the uniform root grid).
    #[arg(long, default_value_t = 1)]
    levels: usize,
    /// Adapt the mesh every this many root steps.
    #[arg(long, default_value_t = 32)]
    refine_every: u64,
    /// Refinement criterion: vorticity or none.
    #[arg(long, default_value = "vorticity")]
    criterion: String,
    /// The criterion's N_start (paper: -2 for the cavity).
    #[arg(long, default_value_t = -2.0, allow_negative_numbers = true)]
    n_start: f64,
    /// The criterion's N_inc (paper: 1 for the cavity).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    n_inc: f64,
    /// Interpolation to ghost cells and new blocks: linear or cubic.
    #[arg(long, default_value = "linear")]
    interp: String,
    /// Time every routine per level (synchronises after each launch).
    #[arg(long)]
    profile: bool,
    /// Run exactly this many root steps instead of `--passes` (e.g. for benchmarks).
    #[arg(long)]
    steps: Option<u64>,
    /// Skip writing cavity.vtu (large for fine 3D runs: ASCII, one hexahedron per cell).
    #[arg(long)]
    no_vtu: bool,
    /// Output directory.
    #[arg(long, default_value = "out/cavity")]
    out: PathBuf,
}

/// A validated run.
struct Setup {
    cavity: Cavity,
    config: ForestConfig,
    lattice: LatticeKind,
    precision: Precision,
    passes: f64,
    out: PathBuf,
    profile: bool,
    steps: Option<u64>,
    vtu: bool,
}

fn main() -> ExitCode {
    match Args::parse().validate().and_then(|setup| dispatch(&setup)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

impl Args {
    /// Converts the string flags with the library's parsers, which name what is wrong.
    fn validate(self) -> Result<Setup> {
        let default_lattice = if self.dim == 2 { "d2q9" } else { "d3q19" };
        let lattice = LatticeKind::for_dimension(self.dim, self.lattice.as_deref().unwrap_or(default_lattice))?;
        let precision: Precision = self.precision.parse()?;
        let backend: Backend = self.backend.parse()?;
        let cavity = Cavity { dim: self.dim, n: self.n, re: self.re, lid: self.lid };
        let criterion = match self.criterion.as_str() {
            "vorticity" => Criterion::Vorticity { n_start: self.n_start, n_inc: self.n_inc, length: None },
            "none" => Criterion::None,
            other => bail!("unknown criterion '{other}': allowed vorticity, none"),
        };
        let refinement = Refinement {
            levels: self.levels,
            interpolation: Interpolation::parse(&self.interp)?,
            every: self.refine_every,
            criterion,
            ..Refinement::default()
        };
        let config = cavity.forest_config(backend)?.refinement(refinement);
        config.validate(self.dim as usize)?;
        if !(self.passes.is_finite() && self.passes > 0.0) {
            bail!("invalid passes = {}: a finite number of lid passes > 0", self.passes);
        }
        if self.steps == Some(0) {
            bail!("invalid steps = 0: at least one root step");
        }
        Ok(Setup {
            cavity,
            config,
            lattice,
            precision,
            passes: self.passes,
            out: self.out,
            profile: self.profile,
            steps: self.steps,
            vtu: !self.no_vtu,
        })
    }
}

/// Picks the compile-time forest type for the run-time lattice and precision.
fn dispatch(s: &Setup) -> Result<()> {
    use LatticeKind as L;
    use Precision::{F32, F64};
    match (s.lattice, s.precision) {
        (L::D2Q9, F32) => run::<D2, D2Q9, f32>(s),
        (L::D2Q9, F64) => run::<D2, D2Q9, f64>(s),
        (L::D3Q19, F32) => run::<D3, D3Q19, f32>(s),
        (L::D3Q19, F64) => run::<D3, D3Q19, f64>(s),
        (L::D3Q27, F32) => run::<D3, D3Q27, f32>(s),
        (L::D3Q27, F64) => run::<D3, D3Q27, f64>(s),
    }
}

/// Runs the cavity on a `Forest<D, Q, F>`, prints a summary and writes the outputs.
fn run<D: Dim, Q: VelocitySet<Dim = D>, F: Float>(s: &Setup) -> Result<()> {
    let mut forest = Forest::<D, Q, F>::new(s.config.clone())?;
    forest.set_profiling(s.profile);
    let steps = s.steps.unwrap_or_else(|| s.cavity.steps_for_passes(s.passes));
    let dim = D::D;
    let mass0 = forest.leaf_cells()?.mass(dim);

    // Advance in chunks; stop once more at one pass before the end to measure how much
    // the profiles still change over the last pass.
    let last_pass = steps.saturating_sub(s.cavity.steps_for_passes(1.0));
    let chunk = steps.div_ceil(CHUNKS).max(1);
    let bar = progress_bar(steps);
    let mut before_last_pass = None;
    while forest.steps() < steps {
        let done = forest.steps();
        if done == last_pass {
            before_last_pass = Some(centerlines(&s.cavity, &mut forest)?);
        }
        let mut next = (done + chunk).min(steps);
        if done < last_pass {
            next = next.min(last_pass);
        }
        forest.advance(next - done)?;
        bar.set_position(next);
        bar.set_message(format!("{:.1} MLUPS, blocks {:?}", forest.mlups(), forest.blocks_per_level()));
    }
    bar.finish();

    let lines = centerlines(&s.cavity, &mut forest)?;
    let cells = forest.leaf_cells()?;
    let change = before_last_pass.map_or(f64::NAN, |b| max_change(&b, &lines));
    let mass_drift = (cells.mass(dim) - mass0) / mass0;
    let t = forest.timings().clone();
    let secs = t.stepping.as_secs_f64();
    let mlups = t.mlups();
    if !cells.u.iter().flatten().all(|u| u.is_finite()) {
        eprintln!(
            "warning: the solution is not finite (unstable): \
             lower the Reynolds number or the lid speed, or add cells"
        );
    }

    let c = &s.cavity;
    let r = &s.config.refinement;
    println!(
        "cavity {}D {} {}: n = {}, Re = {}, lid = {}, tau = {:.4}, levels = {}",
        c.dim, s.lattice, s.precision, c.n, c.re, c.lid, forest.tau(), r.levels
    );
    println!("backend: {} ({})", forest.backend(), forest.device_name());
    println!("lid passes: {:.3}, steps: {steps}, time in advance: {secs:.2} s", steps as f64 * c.lid / c.n as f64);
    println!("MLUPS (AMR-aware): {mlups:.1}");
    println!("blocks per level: {:?}, leaf cells per level: {:?}", forest.blocks_per_level(), forest.cells_per_level());
    println!(
        "adaptation: {} calls, {:.3} s, {:.2}% of the run time",
        t.adapt.count,
        t.adapt.total().as_secs_f64(),
        100.0 * t.adaptation_share()
    );
    if s.profile {
        for (l, lt) in t.levels.iter().enumerate() {
            println!(
                "  level {l}: interpolate {:.3} s, collide+stream {:.3} s, average {:.3} s",
                lt.interpolate.as_secs_f64(),
                lt.stream_collide.as_secs_f64(),
                lt.average.as_secs_f64()
            );
        }
        let a = &t.adapt;
        println!(
            "  adaptation: synchronise {:.3} s, criterion {:.3} s, mesh {:.3} s, fill {:.3} s",
            a.synchronize.as_secs_f64(),
            a.criterion.as_secs_f64(),
            a.mesh.as_secs_f64(),
            a.fill.as_secs_f64()
        );
        let steps: Vec<String> = a.mesh_steps.iter().map(|(n, d)| format!("{n} {:.4}", d.as_secs_f64())).collect();
        println!("  mesh routine steps (s): {}", steps.join(", "));
    }
    println!("mass drift: {mass_drift:.3e}");
    println!("change over the last pass: {change:.2e} U_lid");
    let ghia = ghia_deviation(c, &lines);
    if let Some((du, dv)) = ghia {
        println!("max deviation from Ghia et al. (1982): u {du:.4} U_lid, v {dv:.4} U_lid");
    }

    let levels: Vec<serde_json::Value> = t
        .levels
        .iter()
        .map(|lt| {
            serde_json::json!({
                "interpolate_s": lt.interpolate.as_secs_f64(),
                "stream_collide_s": lt.stream_collide.as_secs_f64(),
                "average_s": lt.average.as_secs_f64(),
            })
        })
        .collect();
    let summary = serde_json::json!({
        "backend": forest.backend().to_string(),
        "device": forest.device_name(),
        "lattice": s.lattice.to_string(),
        "precision": s.precision.to_string(),
        "dim": c.dim,
        "n": c.n,
        "re": c.re,
        "lid": c.lid,
        "tau": forest.tau(),
        "levels": r.levels,
        "refine_every": r.every,
        "criterion": r.criterion,
        "interpolation": r.interpolation,
        "passes": steps as f64 * c.lid / c.n as f64,
        "steps": steps,
        "wall_seconds": secs,
        "mlups": mlups,
        "adaptations": t.adapt.count,
        "adaptation_seconds": t.adapt.total().as_secs_f64(),
        "adaptation_share": t.adaptation_share(),
        "blocks_per_level": forest.blocks_per_level(),
        "leaf_cells_per_level": forest.cells_per_level(),
        "profile": if s.profile { serde_json::Value::Array(levels) } else { serde_json::Value::Null },
        "mass_drift": mass_drift,
        "last_pass_change": change,
        "ghia_max_deviation": ghia.map(|(u, v)| serde_json::json!({ "u": u, "v": v })),
    });
    write_outputs(&s.out, c.dim, &lines, &summary)?;
    if s.vtu {
        let vtu = s.out.join("cavity.vtu");
        ramus::output::write_leaf_cells_vtu(&vtu, dim, &cells).with_context(|| format!("writing {}", vtu.display()))?;
    }
    println!("wrote {}", s.out.display());
    Ok(())
}

/// Ghia, Ghia & Shin (1982), J. Comput. Phys. 48:387-411, Tables I and II (2D only).
const GHIA_U: &str = include_str!("../tests/data/ghia1982_u_vertical_centerline.csv");
const GHIA_V: &str = include_str!("../tests/data/ghia1982_v_horizontal_centerline.csv");

/// Largest |profile − Ghia| on each centreline for a 2D cavity at a tabulated Reynolds
/// number (100, 400, 1000), else `None`. Ghia's v = −0.23827 at x = 0.9063 for Re = 400 is
/// a known misprint and skipped.
fn ghia_deviation(c: &Cavity, lines: &Centerlines) -> Option<(f64, f64)> {
    let re = c.re.round() as u32;
    if c.dim != 2 || c.re != f64::from(re) || ![100, 400, 1000].contains(&re) {
        return None;
    }
    let worst = |table: &str, column: &str, p: &Profile| -> Option<f64> {
        let mut rows = table.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
        let header: Vec<&str> = rows.next()?.split(',').map(str::trim).collect();
        let col = header.iter().position(|h| *h == column)?;
        let mut w = 0.0f64;
        for row in rows {
            let v: Vec<f64> = row.split(',').filter_map(|x| x.trim().parse().ok()).collect();
            let (s, value) = (*v.first()?, *v.get(col)?);
            if s <= 0.0 || s >= 1.0 || (re == 400 && column.starts_with('v') && (s - 0.9063).abs() < 1e-9) {
                continue;
            }
            w = w.max((p.at(s) - value).abs());
        }
        Some(w)
    };
    Some((worst(GHIA_U, &format!("u_Re{re}"), &lines.u)?, worst(GHIA_V, &format!("v_Re{re}"), &lines.v)?))
}

/// Centreline profiles, sampled at the finest level's cell spacing.
fn centerlines<D: Dim, Q: VelocitySet<Dim = D>, F: Float>(c: &Cavity, forest: &mut Forest<D, Q, F>) -> Result<Centerlines> {
    let per_side = c.n << (forest.config().refinement.levels - 1);
    Ok(c.centerlines_sampled(per_side, |p| forest.sample(p).map(|v| v.into_iter().map(|(_, u)| u).collect()))?)
}

/// Progress over steps with elapsed time, ETA and the current MLUPS (in the message).
fn progress_bar(steps: u64) -> ProgressBar {
    let style = ProgressStyle::with_template(
        "{elapsed_precise} [{wide_bar}] {human_pos}/{human_len} steps, ETA {eta}, {msg}",
    )
    .expect("valid template")
    .progress_chars("=> ");
    ProgressBar::new(steps).with_style(style).with_message("- MLUPS")
}

/// Largest pointwise difference between two sets of centreline profiles.
fn max_change(a: &Centerlines, b: &Centerlines) -> f64 {
    let diff = |p: &Profile, q: &Profile| {
        p.values.iter().zip(&q.values).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
    };
    diff(&a.u, &b.u).max(diff(&a.v, &b.v))
}

/// Writes the two centreline CSV files and `summary.json` into `dir`.
fn write_outputs(dir: &Path, dim: u32, lines: &Centerlines, summary: &serde_json::Value) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let (u_head, v_head) = if dim == 2 { ("y,u", "x,v") } else { ("z,u", "x,w") };
    for (name, head, p) in [("centerline_u.csv", u_head, &lines.u), ("centerline_v.csv", v_head, &lines.v)] {
        let mut csv = format!("{head}\n");
        for (x, v) in p.coords.iter().zip(&p.values) {
            csv += &format!("{x},{v}\n");
        }
        let path = dir.join(name);
        fs::write(&path, csv).with_context(|| format!("writing {}", path.display()))?;
    }
    let path = dir.join("summary.json");
    fs::write(&path, serde_json::to_string_pretty(summary)? + "\n")
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
