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
//! ```
//!
//! Writes into `--out` (default `out/cavity`):
//! - `centerline_u.csv`: `y,u` (2D; `z,u` in 3D), `u/U_lid` on the vertical centreline,
//!   wall end points included;
//! - `centerline_v.csv`: `x,v` (2D, on y = 0.5; `x,w` in 3D, on y = z = 0.5);
//! - `summary.json`: parameters, backend and device, steps, time, MLUPS, mass drift, and
//!   the largest change of the centreline profiles over the last lid pass (steadiness).
//!
//! Invalid input prints `error: <message>` and exits with status 2.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use ramus::cases::cavity::{Cavity, Centerlines, Profile};
use ramus::{Backend, Dim, Float, Forest, ForestConfig, LatticeKind, Precision, VelocitySet};
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
        let config = cavity.forest_config(backend)?;
        if !(self.passes.is_finite() && self.passes > 0.0) {
            bail!("invalid passes = {}: a finite number of lid passes > 0", self.passes);
        }
        Ok(Setup { cavity, config, lattice, precision, passes: self.passes, out: self.out })
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
    let steps = s.cavity.steps_for_passes(s.passes);
    let mass0 = forest.fields()?.mass();

    // Advance in chunks; stop once more at one pass before the end to measure how much
    // the profiles still change over the last pass.
    let last_pass = steps.saturating_sub(s.cavity.steps_for_passes(1.0));
    let chunk = steps.div_ceil(CHUNKS).max(1);
    let bar = progress_bar(steps);
    let mut before_last_pass = None;
    while forest.steps() < steps {
        let done = forest.steps();
        if done == last_pass {
            before_last_pass = Some(s.cavity.centerlines(&forest.fields()?));
        }
        let mut next = (done + chunk).min(steps);
        if done < last_pass {
            next = next.min(last_pass);
        }
        forest.advance(next - done)?;
        bar.set_position(next);
        bar.set_message(format!("{:.1} MLUPS", forest.mlups()));
    }
    bar.finish();

    let fields = forest.fields()?;
    let lines = s.cavity.centerlines(&fields);
    let change = before_last_pass.map_or(f64::NAN, |b| max_change(&b, &lines));
    let mass_drift = (fields.mass() - mass0) / mass0;
    let secs = forest.stepping_time().as_secs_f64();
    let mlups = forest.mlups();
    if !fields.u.iter().flatten().all(|u| u.is_finite()) {
        eprintln!(
            "warning: the solution is not finite (unstable): \
             lower the Reynolds number or the lid speed, or add cells"
        );
    }

    let c = &s.cavity;
    println!(
        "cavity {}D {} {}: n = {}, Re = {}, lid = {}, tau = {:.4}",
        c.dim, s.lattice, s.precision, c.n, c.re, c.lid, forest.tau()
    );
    println!("backend: {} ({})", forest.backend(), forest.device_name());
    println!("lid passes: {}, steps: {steps}, time in advance: {secs:.2} s", s.passes);
    println!("MLUPS: {mlups:.1}");
    println!("mass drift: {mass_drift:.3e}");
    println!("change over the last pass: {change:.2e} U_lid");

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
        "passes": s.passes,
        "steps": steps,
        "wall_seconds": secs,
        "mlups": mlups,
        "mass_drift": mass_drift,
        "last_pass_change": change,
    });
    write_outputs(&s.out, c.dim, &lines, &summary)?;
    println!("wrote {}", s.out.display());
    Ok(())
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
