//! The decaying three-dimensional Taylor–Green vortex (test case C3.5 of the International
//! Workshops on High-Order CFD Methods) on a uniform periodic grid, against the 512³
//! spectral DNS at Re = 1600 (see `ramus::cases::taylor_green`).
//!
//! `--n` cells per period `2πL`, `Re = U₀L/ν`, time in `L/U₀`; the run samples the kinetic
//! energy `E` `--samples-per-unit` times per time unit and differentiates it for the
//! dissipation rate `ε = −dE/dt`. The start carries the first-order non-equilibrium part
//! of the initial field (`Forest::initialize_with_gradient`).
//!
//! ```text
//! cargo run --release --example taylor_green                                    # 64³, Re 1600, D3Q27, t ≤ 20
//! cargo run --release --example taylor_green -- --n 128 --collision rr --les smagorinsky --backend cuda
//! cargo run --release --example taylor_green -- --n 32 --re 100 --t-end 5 --backend cpu --out /tmp/tgv
//! ```
//!
//! Writes into `--out` (default `out/taylor_green`):
//! - `taylor_green.csv`: `t,E,eps` (E per unit mass in U₀², ε in U₀³/L; central
//!   differences inside, one-sided at both ends);
//! - `summary.json`: parameters, τ, steps, wall time, MLUPS, final E, the peak of ε and its
//!   time, and at Re = 1600 the comparison with the DNS up to t = 20 (largest relative
//!   deviation of E, of ε pointwise and relative to the DNS peak, peak value and time);
//! - `energy.png`, `dissipation.png`: E and ε against the DNS (`--no-plots` to skip);
//! - `config.toml` (the case as run; `--config` takes it back), `forest.toml`.
//!
//! Exit status: 0 completed, 1 failed, 2 invalid input (checked before the run, output
//! folder included), 3 diverged (only `summary.json` is written), 130 interrupted by
//! SIGINT/SIGTERM (the samples so far are written).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::Parser;
use ramus::cases::taylor_green::TaylorGreen;
use ramus::cases::taylor_green_dns::{self as dns, History};
use ramus::output::plot::{time_series_plot, PlotSeries, SeriesStyle};
use ramus::{Backend, Dim, Float, Forest, ForestConfig, LatticeKind, Precision, VelocitySet, D3, D3Q19, D3Q27};
use serde::{Deserialize, Serialize};

#[path = "support/mod.rs"]
mod support;
use support::{Chunker, Interrupt, Outcome, Progress, RunFlags};

/// The files a run writes (removed from the output folder before a new run starts).
const RESULTS: [&str; 6] =
    ["taylor_green.csv", "summary.json", "config.toml", "forest.toml", "energy.png", "dissipation.png"];

/// The DNS comparison covers the reference's time range.
const DNS_T_MAX: f64 = 20.0;

/// Decaying Taylor–Green vortex with the ramus lattice Boltzmann solver.
#[derive(Parser, Debug, Serialize, Deserialize)]
#[command(about, long_about = None)]
struct Args {
    /// Cells per period 2πL along each axis (a multiple of 4, at least 8).
    #[arg(long, default_value_t = 64)]
    n: usize,
    /// Reynolds number U₀ L / ν (L = period / 2π).
    #[arg(long, default_value_t = 1600.0, allow_negative_numbers = true)]
    re: f64,
    /// Velocity amplitude U₀ in lattice units [default: 0.1/√3, Ma = 0.1]. τ = ½ + 3 U₀ n
    /// / (2π Re) must exceed 0.501: at Re = 1600 that needs U₀ n > 3.35.
    #[arg(long, allow_negative_numbers = true)]
    u0: Option<f64>,
    /// Simulated time in L / U₀.
    #[arg(long, default_value_t = 20.0, allow_negative_numbers = true)]
    t_end: f64,
    /// Energy samples per time unit (ε comes from their central differences).
    #[arg(long, default_value_t = 10.0, allow_negative_numbers = true)]
    samples_per_unit: f64,
    /// Velocity set: d3q27 or d3q19.
    #[arg(long, default_value = "d3q27")]
    lattice: String,
    /// Floating-point precision: f32 or f64.
    #[arg(long, default_value = "f32")]
    precision: String,
    #[command(flatten)]
    #[serde(flatten)]
    physics: support::CollisionFlags,
    /// Where to run: auto (CUDA if available, else CPU), cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: String,
    /// Skip the PNG plots.
    #[arg(long)]
    no_plots: bool,
    /// Output directory.
    #[arg(long, default_value = "out/taylor_green")]
    out: PathBuf,
    #[command(flatten)]
    #[serde(skip)]
    run: RunFlags,
}

impl support::CaseArgs for Args {
    fn run_flags(&mut self) -> &mut RunFlags {
        &mut self.run
    }
}

/// A validated run.
struct Setup {
    case: TaylorGreen,
    config: ForestConfig,
    lattice: LatticeKind,
    precision: Precision,
    /// Root steps of the samples, the first 0, the last the end of the run.
    samples: Vec<u64>,
    plots: bool,
    out: PathBuf,
}

fn main() -> ExitCode {
    let setup = match support::load_args::<Args>().and_then(Args::validate) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(support::exit_code_of(&e, true));
        }
    };
    support::exit(dispatch(&setup))
}

impl Args {
    /// Converts and checks the flags (the library's parsers name what is wrong) and
    /// prepares the output folder, before any simulation time is spent.
    fn validate(self) -> Result<Setup> {
        if self.run.restart.is_some() {
            bail!("invalid restart: the taylor_green example writes no checkpoints (run it again from t = 0)");
        }
        let lattice = LatticeKind::for_dimension(3, &self.lattice)?;
        let precision: Precision = self.precision.parse()?;
        let backend: Backend = self.backend.parse()?;
        let case = TaylorGreen { n: self.n, re: self.re, u0: self.u0.unwrap_or(TaylorGreen::U0_MACH_01) };
        let config = case.forest_config(backend)?.collision(self.physics.collision()?).les(self.physics.les()?);
        config.validate(3)?;
        if !(self.t_end.is_finite() && self.t_end > 0.0) {
            bail!("invalid t_end = {}: a finite time > 0 (in L/U0)", self.t_end);
        }
        if !(self.samples_per_unit.is_finite() && self.samples_per_unit > 0.0) {
            bail!("invalid samples_per_unit = {}: a finite number > 0", self.samples_per_unit);
        }
        let end = case.steps_for_time(self.t_end);
        if end == 0 {
            bail!(
                "invalid t_end = {}: no root step to run (one step is {:.3e} time units)",
                self.t_end,
                case.time_per_step()
            );
        }
        let count = (self.t_end * self.samples_per_unit).floor();
        if count > 1e6 {
            bail!("invalid samples_per_unit = {}: at most 10^6 samples in all", self.samples_per_unit);
        }
        let mut samples: Vec<u64> =
            (0..=count as u64).map(|j| case.steps_for_time(j as f64 / self.samples_per_unit).min(end)).collect();
        samples.push(end);
        samples.dedup();
        support::prepare_out(&self.out, &RESULTS)?;
        support::write_case_file(&self.out, &self, "Taylor-Green vortex (cargo run --release --example taylor_green)")?;
        support::write_file(&self.out.join("forest.toml"), config.to_toml()?.as_bytes())?;
        Ok(Setup { case, config, lattice, precision, samples, plots: !self.no_plots, out: self.out })
    }
}

/// Picks the compile-time forest type for the run-time lattice and precision.
fn dispatch(s: &Setup) -> Result<Outcome> {
    use LatticeKind as L;
    use Precision::{F32, F64};
    match (s.lattice, s.precision) {
        (L::D3Q19, F32) => run::<D3, D3Q19, f32>(s),
        (L::D3Q19, F64) => run::<D3, D3Q19, f64>(s),
        (L::D3Q27, F32) => run::<D3, D3Q27, f32>(s),
        (L::D3Q27, F64) => run::<D3, D3Q27, f64>(s),
        (other, _) => bail!("invalid lattice {other}: the Taylor-Green vortex is 3D (d3q19 or d3q27)"),
    }
}

/// Runs the vortex on a `Forest<D, Q, F>`, prints a summary and writes the outputs.
fn run<D: Dim, Q: VelocitySet<Dim = D>, F: Float>(s: &Setup) -> Result<Outcome> {
    let interrupt = Interrupt::install()?;
    let c = &s.case;
    let mut forest = Forest::<D, Q, F>::new(s.config.clone())?;
    forest.initialize_with_gradient(|x| c.state(x), |x| c.gradient(x))?;
    let end = *s.samples.last().unwrap_or(&0);
    let mut progress = Progress::new(end, 0);
    let mut chunker = Chunker::new();
    let mut outcome = Outcome::Completed;
    let (mut t, mut e) = (Vec::new(), Vec::new());
    'samples: for &target in &s.samples {
        while forest.steps() < target {
            if interrupt.requested() {
                outcome = Outcome::Interrupted;
                break 'samples;
            }
            // Even chunks: on CUDA two root steps from an even count run as one graph.
            let n = chunker.next(target - forest.steps(), 2);
            let started = Instant::now();
            match forest.advance(n) {
                Ok(()) => {}
                Err(err @ ramus::Error::Diverged { .. }) => {
                    outcome = Outcome::Diverged(err.to_string());
                    break 'samples;
                }
                Err(err) => return Err(err.into()),
            }
            chunker.record(n, started.elapsed());
            progress.update(forest.steps(), &format!("t = {:.2} L/U0", c.time(forest.steps())), forest.mlups());
        }
        let energy = c.kinetic_energy(&forest.fields()?);
        if !energy.is_finite() {
            // The guard checks every `guard.every` root steps; a sample may come first.
            outcome = Outcome::Diverged(format!(
                "the kinetic energy is not finite at root step {} (t = {:.3}): lower the Reynolds number or U0, \
                 add cells, or use --collision rr or --les",
                forest.steps(),
                c.time(forest.steps())
            ));
            break;
        }
        t.push(c.time(forest.steps()));
        e.push(energy);
    }
    progress.finish();
    outcome = outcome.after_last_check(&mut forest)?;
    let history = History::from_energy(t, e);
    let timings = forest.timings().clone();
    let (secs, mlups) = (timings.stepping.as_secs_f64(), timings.mlups());
    let diverged = matches!(outcome, Outcome::Diverged(_));
    let peak = if diverged { None } else { history.peak() };
    let comparison = if !diverged && c.re == dns::RE { dns::deviation(&history, DNS_T_MAX) } else { None };
    let final_energy = if diverged { f64::NAN } else { history.e.last().copied().unwrap_or(f64::NAN) };

    println!(
        "Taylor-Green vortex {} {}: n = {}, Re = {}, U0 = {:.5} (Ma = {:.3}), tau = {:.6}, collision {}, les {}",
        s.lattice,
        s.precision,
        c.n,
        c.re,
        c.u0,
        c.u0 * 3f64.sqrt(),
        forest.tau(),
        s.config.collision.name(),
        s.config.les.name()
    );
    println!("backend: {} ({})", forest.backend(), forest.device_name());
    println!(
        "t = {:.3} L/U0 ({} root steps), {} energy samples, time in advance: {secs:.2} s, MLUPS: {mlups:.1}",
        c.time(forest.steps()),
        forest.steps(),
        history.t.len()
    );
    if !diverged {
        println!("final E = {final_energy:.6} U0^2");
        if let Some((tp, vp)) = peak {
            println!(
                "largest dissipation {vp:.6e} U0^3/L at t = {tp:.3} (DNS peak: {:.6e} at t = {:.2})",
                dns::PEAK.1,
                dns::PEAK.0
            );
        }
        if let Some(d) = &comparison {
            let peak = if d.peak_value.is_finite() {
                format!(", peak {:+.2} % at {:+.3} time units", 100.0 * d.peak_value, d.peak_time)
            } else {
                String::new()
            };
            println!(
                "against the DNS (t <= {:.2}): max |dE|/E {:.2} %, max |d eps|/eps {:.2} %, max |d eps| / peak {:.2} %{peak}",
                d.t_max,
                100.0 * d.energy,
                100.0 * d.dissipation,
                100.0 * d.dissipation_of_peak,
            );
        }
    }

    let error = match &outcome {
        Outcome::Diverged(why) => Some(why.clone()),
        _ => None,
    };
    // serde_json writes non-finite numbers as null.
    let summary = serde_json::json!({
        "status": outcome.status(),
        "error": error,
        "backend": forest.backend().to_string(),
        "device": forest.device_name(),
        "lattice": s.lattice.to_string(),
        "precision": s.precision.to_string(),
        "n": c.n,
        "re": c.re,
        "u0": c.u0,
        "mach": c.u0 * 3f64.sqrt(),
        "nu": c.viscosity(),
        "tau": forest.tau(),
        "collision": s.config.collision,
        "les": s.config.les,
        "t": c.time(forest.steps()),
        "steps": forest.steps(),
        "steps_requested": end,
        "samples": history.t.len(),
        "wall_seconds": secs,
        "mlups": mlups,
        "final_energy": final_energy,
        "peak_dissipation": peak.map(|(t, v)| serde_json::json!({ "t": t, "value": v })),
        "dns": serde_json::json!({
            "source": "512^3 pseudo-spectral DNS, International Workshop on High-Order CFD Methods case C3.5 \
                       (van Rees et al., J. Comput. Phys. 230 (2011) 2794); tests/data/tgv_re1600_spectral512.csv",
            "peak_dissipation": { "t": dns::PEAK.0, "value": dns::PEAK.1 },
            "comparison": comparison.map(|d| serde_json::json!({
                "t_max": d.t_max,
                "samples": d.samples,
                "energy_max_rel": d.energy,
                "dissipation_max_rel": d.dissipation,
                "dissipation_max_rel_to_peak": d.dissipation_of_peak,
                "peak_value_rel": d.peak_value,
                "peak_time_diff": d.peak_time,
            })),
        }),
    });
    // A diverged run writes only its summary: no file with non-finite numbers.
    if !diverged && !history.t.is_empty() {
        write_csv(s, &history)?;
        if s.plots {
            plots(s, &history)?;
        }
    }
    support::write_json(&s.out.join("summary.json"), &summary)?;
    println!("wrote {} ({})", s.out.display(), outcome.status());
    Ok(outcome)
}

/// `taylor_green.csv`: `t,E,eps`; a value that is not finite (ε of a single sample) is
/// left empty.
fn write_csv(s: &Setup, h: &History) -> Result<()> {
    let cell = |v: f64| if v.is_finite() { format!("{v:e}") } else { String::new() };
    let mut csv = String::from("t,E,eps\n");
    for i in 0..h.t.len() {
        csv += &format!("{},{},{}\n", cell(h.t[i]), cell(h.e[i]), cell(h.eps[i]));
    }
    support::write_file(&s.out.join("taylor_green.csv"), csv.as_bytes())
}

/// `energy.png` and `dissipation.png`: the run against the DNS (at Re = 1600).
fn plots(s: &Setup, h: &History) -> Result<()> {
    let reference = dns::reference();
    let c = &s.case;
    let label = format!("ramus, {}³, {}, {}", c.n, s.config.collision.name(), s.config.les.name());
    let finite = |v: &[f64]| -> Vec<(f64, f64)> {
        h.t.iter().copied().zip(v.iter().copied()).filter(|p| p.0.is_finite() && p.1.is_finite()).collect()
    };
    let dns_points = |v: &[f64]| -> Vec<(f64, f64)> {
        let t_end = h.t.last().copied().unwrap_or(0.0);
        reference.t.iter().copied().zip(v.iter().copied()).filter(|p| p.0 <= t_end + 1e-9).collect()
    };
    for (file, name, unit, run, dns_values) in [
        ("energy.png", "Kinetic energy E", "E / U0^2", finite(&h.e), dns_points(&reference.e)),
        ("dissipation.png", "Dissipation rate -dE/dt", "eps L / U0^3", finite(&h.eps), dns_points(&reference.eps)),
    ] {
        if run.is_empty() {
            continue;
        }
        let mut series = vec![PlotSeries { label: &label, points: &run, style: SeriesStyle::Line }];
        if c.re == dns::RE && !dns_values.is_empty() {
            series.push(PlotSeries {
                label: "DNS 512³ (van Rees et al. 2011)",
                points: &dns_values,
                style: SeriesStyle::Line,
            });
        }
        let title = format!("Taylor-Green vortex, Re = {}: {name}", c.re);
        time_series_plot(&s.out.join(file), &title, "t U0 / L", unit, &series, false)
            .map_err(|e| anyhow::anyhow!("plotting {file}: {e}"))?;
    }
    Ok(())
}
