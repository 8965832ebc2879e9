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
//! - `cavity.vtu`: every leaf cell with `rho`, `u` and `level` (ParaView);
//! - `cavity.vthb` (+ `cavity/`): every level's blocks (ParaView's AMR reader), binary;
//! - with `--output-every T`: `fields_NNNN.vthb` every `T` lid passes and `fields.pvd`;
//! - `series.csv` (mass, kinetic energy, max |u|, cells per level, MLUPS over time) and,
//!   with probes, `probes.csv`;
//! - plots (`--no-plots` to skip): `centerline_u.png`, `centerline_v.png` (against Ghia
//!   et al. 1982 where tabulated), `cells_per_level.png`, `mlups.png`;
//! - `config.toml`: the case as run (`--config` takes it back and reproduces the run);
//!   `forest.toml`: the forest's [`ramus::ForestConfig`];
//! - `checkpoint.ramus` with `--checkpoint-every N` (every N root steps and at the end)
//!   and on SIGINT/SIGTERM; `--restart FILE` continues from it, `--passes`/`--steps`
//!   still meaning the total from t = 0.
//!
//! `--config case.toml` reads any of the flags from a file (see `examples/cases/`);
//! flags on the command line override it. Files are written atomically; the output
//! folder is checked before the run.
//!
//! Exit status: 0 completed, 1 failed (device or files), 2 invalid input, 3 diverged (the
//! stability guard stopped the run: only `summary.json` is written, with `"status":
//! "diverged"` and the step, level and position), 130 interrupted by SIGINT/SIGTERM
//! (checkpoint and outputs written, `"status": "interrupted"`).
// The summary is one `serde_json::json!` object with more keys than its default
// recursion limit allows.
#![recursion_limit = "256"]

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Parser;
use ramus::cases::cavity::{Cavity, Centerlines};
use ramus::config::{Scales, Units};
use ramus::{
    Backend, BulkSteps, Criterion, Dim, Float, Forest, ForestConfig, Half, Interpolation, LatticeKind, Native,
    PairedCells, PoolStorage, Precision, Refinement, StorageKind, VelocitySet,
};
use ramus::{D2, D2Q9, D3, D3Q19, D3Q27};
use serde::{Deserialize, Serialize};

#[path = "cavity/results.rs"]
mod results;
#[path = "support/mod.rs"]
mod support;
use results::{conclude, print_summary, summary_json, write_results};
use support::{Chunker, Interrupt, KernelTimeline, Monitor, Outcome, Progress, RunFlags, Series};

/// Default simulated time in lid passes. Measured at Re = 100 (n = 128, lid = 0.05,
/// D2Q9): the centreline profiles change by < 1e-3 U_lid per pass after 10 passes; over
/// the 20th pass by 4e-6 U_lid (f64) and 1.5e-5 U_lid (f32).
const DEFAULT_PASSES: f64 = 20.0;

/// The files a run writes (removed from the output folder before a new run starts).
const RESULTS: [&str; 13] = [
    support::TIMELINE_FILE,
    "centerline_u.csv",
    "centerline_v.csv",
    "summary.json",
    "cavity.vtu",
    "config.toml",
    "forest.toml",
    "series.csv",
    "probes.csv",
    "centerline_u.png",
    "centerline_v.png",
    "cells_per_level.png",
    "mlups.png",
];
// Also removed before a run: `cavity.vthb` and `fields*` with their folders
// (`support::remove_series`).

/// Lid-driven cavity with the ramus lattice Boltzmann solver.
#[derive(Parser, Debug, Serialize, Deserialize)]
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
    /// Storage of the populations: native (the precision's own) or f16 (IEEE half of f32
    /// arithmetic: half the memory traffic).
    #[arg(long, default_value = "native")]
    storage: String,
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
    #[command(flatten)]
    #[serde(flatten)]
    physics: support::CollisionFlags,
    /// Time every routine per level (synchronises after each launch).
    #[arg(long)]
    profile: bool,
    /// Launch every kernel of a root step separately instead of replaying the step as a
    /// CUDA graph (for comparing the two; see `Forest::set_launch_graphs`).
    #[arg(long)]
    no_graphs: bool,
    /// Launch every kernel after the one before it has ended instead of overlapping its
    /// start with that end (programmatic dependent launch, Hopper and later; for comparing
    /// the two; see `Forest::set_dependent_launches`).
    #[arg(long)]
    no_dependent_launches: bool,
    /// Run every level's step after the finer levels' steps instead of alongside them in
    /// a root step's CUDA graph (for comparing the two; see
    /// `Forest::set_concurrent_levels`).
    #[arg(long)]
    no_concurrent_levels: bool,
    /// Average and interpolate between a level's two steps in two launches instead of one
    /// (for comparing the two; see `Forest::set_fused_exchanges`).
    #[arg(long)]
    no_fused_exchanges: bool,
    /// Capture a new CUDA graph for each new mesh state instead of updating a cached one
    /// in place (for comparing the two; see `Forest::set_graph_updates`).
    #[arg(long)]
    no_graph_updates: bool,
    /// Which AA steps take two cells per thread: measured (where that measured faster),
    /// all or off (for comparing; see `Forest::set_paired_cells`).
    #[arg(long, default_value = "measured")]
    paired_cells: String,
    /// Which AA steps step the blocks without boundary flags in a kernel of their own:
    /// measured (where that measured faster), all or off (for comparing; see
    /// `Forest::set_bulk_steps`).
    #[arg(long, default_value = "measured")]
    bulk_steps: String,
    /// Run exactly this many root steps instead of `--passes` (e.g. for benchmarks).
    #[arg(long)]
    steps: Option<u64>,
    /// Record when each kernel of the last N root steps ran on the GPU (its first and
    /// last CTA: start, end of the wait for the kernel before, end), to
    /// OUT/kernel_timeline.csv: a diagnostic of latency-bound runs (see
    /// `Forest::record_kernel_timeline`; not on the CPU).
    #[arg(long)]
    kernel_timeline: Option<u64>,
    #[command(flatten)]
    #[serde(flatten)]
    output: support::OutputFlags,
    /// Physical units, in a case file only: a `[units]` table (`length` m, `velocity`
    /// m/s, `density` kg/m³, `viscosity` m²/s, optional `dt` s). Re follows from them
    /// (and the lid's lattice speed, with `dt`); outputs and summary are then in SI.
    #[arg(skip)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    units: Option<Units>,
    /// Write OUT/checkpoint.ramus every this many root steps and at the end.
    #[arg(long)]
    checkpoint_every: Option<u64>,
    /// Output directory.
    #[arg(long, default_value = "out/cavity")]
    out: PathBuf,
    #[command(flatten)]
    #[serde(skip)]
    run: RunFlags,
}

impl support::CaseArgs for Args {
    fn run_flags(&mut self) -> &mut RunFlags {
        &mut self.run
    }
    const TABLES: &'static [&'static str] = &["units"];
}

/// A validated run.
struct Setup {
    cavity: Cavity,
    config: ForestConfig,
    lattice: LatticeKind,
    precision: Precision,
    storage: StorageKind,
    steps: u64,
    out: PathBuf,
    profile: bool,
    no_graphs: bool,
    no_dependent_launches: bool,
    no_concurrent_levels: bool,
    no_fused_exchanges: bool,
    no_graph_updates: bool,
    paired_cells: PairedCells,
    bulk_steps: BulkSteps,
    /// SI scales, with `[units]`.
    scales: Option<Scales>,
    /// The output flags in root steps.
    output: support::Outputs,
    checkpoint_every: Option<u64>,
    restart: Option<PathBuf>,
    /// Root steps at the end whose kernel timeline is recorded.
    kernel_timeline: Option<u64>,
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
    /// Converts the string flags with the library's parsers, which name what is wrong,
    /// and prepares the output folder (before any simulation time is spent).
    fn validate(self) -> Result<Setup> {
        let default_lattice = if self.dim == 2 { "d2q9" } else { "d3q19" };
        let lattice = LatticeKind::for_dimension(self.dim, self.lattice.as_deref().unwrap_or(default_lattice))?;
        let precision: Precision = self.precision.parse()?;
        let storage: StorageKind = self.storage.parse()?;
        storage.bytes(precision)?;
        let backend: Backend = self.backend.parse()?;
        let scales = self.units.map(|u| u.scales(self.n as f64, self.lid)).transpose()?;
        let (re, lid) = scales.map_or((self.re, self.lid), |s| (s.reynolds, s.lattice_velocity));
        let cavity = Cavity { dim: self.dim, n: self.n, re, lid };
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
        let config = cavity
            .forest_config(backend)?
            .refinement(refinement)
            .collision(self.physics.collision()?)
            .les(self.physics.les()?);
        config.validate(self.dim as usize)?;
        if !(self.passes.is_finite() && self.passes > 0.0) {
            bail!("invalid passes = {}: a finite number of lid passes > 0", self.passes);
        }
        let steps = self.steps.unwrap_or_else(|| cavity.steps_for_passes(self.passes));
        if steps == 0 {
            bail!(
                "invalid {}: no root step to run (one lid pass is {} root steps)",
                self.steps.map_or(format!("passes = {}", self.passes), |_| "steps = 0".to_string()),
                cavity.steps_for_passes(1.0)
            );
        }
        let output =
            self.output.validate("lid passes", |t| cavity.steps_for_passes(t), scales, self.dim as usize, [1.0; 3])?;
        if let Some(n) = self.kernel_timeline {
            KernelTimeline::new(n, steps)?;
        }
        if self.checkpoint_every == Some(0) {
            bail!("invalid checkpoint_every = 0: at least 1 root step between checkpoints");
        }
        support::prepare_out(&self.out, &RESULTS)?;
        support::remove_series(&self.out, &["fields", "cavity"])?;
        support::write_case_file(&self.out, &self, "Lid-driven cavity (cargo run --release --example cavity)")?;
        support::write_file(&self.out.join("forest.toml"), config.to_toml()?.as_bytes())?;
        Ok(Setup {
            cavity,
            config,
            lattice,
            precision,
            storage,
            steps,
            out: self.out,
            profile: self.profile,
            no_graphs: self.no_graphs,
            no_dependent_launches: self.no_dependent_launches,
            no_concurrent_levels: self.no_concurrent_levels,
            no_fused_exchanges: self.no_fused_exchanges,
            no_graph_updates: self.no_graph_updates,
            paired_cells: self.paired_cells.parse()?,
            bulk_steps: self.bulk_steps.parse()?,
            scales,
            output,
            checkpoint_every: self.checkpoint_every,
            restart: self.run.restart,
            kernel_timeline: self.kernel_timeline,
        })
    }
}

impl Setup {
    /// Lid passes after `steps` root steps (the time axis of the series and the summary).
    fn passes(&self, steps: u64) -> f64 {
        steps as f64 * self.cavity.lid / self.cavity.n as f64
    }
}

/// Picks the compile-time forest type for the run-time lattice, precision and storage.
fn dispatch(s: &Setup) -> Result<Outcome> {
    use LatticeKind as L;
    use Precision::{F32, F64};
    use StorageKind::{Native as N, F16};
    match (s.lattice, s.precision, s.storage) {
        (L::D2Q9, F32, N) => run::<D2, D2Q9, f32, Native>(s),
        (L::D2Q9, F32, F16) => run::<D2, D2Q9, f32, Half>(s),
        (L::D2Q9, F64, N) => run::<D2, D2Q9, f64, Native>(s),
        (L::D3Q19, F32, N) => run::<D3, D3Q19, f32, Native>(s),
        (L::D3Q19, F32, F16) => run::<D3, D3Q19, f32, Half>(s),
        (L::D3Q19, F64, N) => run::<D3, D3Q19, f64, Native>(s),
        (L::D3Q27, F32, N) => run::<D3, D3Q27, f32, Native>(s),
        (L::D3Q27, F32, F16) => run::<D3, D3Q27, f32, Half>(s),
        (L::D3Q27, F64, N) => run::<D3, D3Q27, f64, Native>(s),
        // Refused by `StorageKind::bytes` in `validate`.
        (_, F64, F16) => bail!("f16 storage needs f32 arithmetic"),
    }
}

/// What the run carries besides the forest, stored in its checkpoints (floats as bits,
/// so a restart continues bitwise).
#[derive(Default, Serialize, Deserialize)]
struct History {
    mass0: u64,
    /// Centreline values (u then v) one lid pass before the end.
    before_last_pass: Option<Vec<u64>>,
}

fn profile_bits(c: &Centerlines) -> Vec<u64> {
    c.u.values.iter().chain(&c.v.values).map(|v| v.to_bits()).collect()
}

/// Builds the forest, or loads it from `--restart` (checking that it holds this case).
fn start<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    s: &Setup,
) -> Result<(Forest<D, Q, F, S>, History)> {
    let Some(path) = &s.restart else {
        let mut forest = Forest::<D, Q, F, S>::new(s.config.clone())?;
        let mass0 = forest.leaf_cells()?.mass(D::D)?;
        return Ok((forest, History { mass0: mass0.to_bits(), before_last_pass: None }));
    };
    let (forest, data) = Forest::<D, Q, F, S>::restart_with(path, s.config.backend)?;
    support::check_restart(path, forest.config(), &s.config, forest.steps(), s.steps)?;
    let history = serde_json::from_slice(&data).with_context(|| format!("the cavity history in {}", path.display()))?;
    Ok((forest, history))
}

/// The execution switches a run set (what its summary reports besides the flags).
#[derive(Clone, Copy)]
struct Switches {
    dependent: bool,
    graph_updates: bool,
}

/// Runs the cavity on a `Forest<D, Q, F, S>`, prints a summary and writes the outputs.
fn run<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(s: &Setup) -> Result<Outcome> {
    let interrupt = Interrupt::install()?;
    let (mut forest, mut history) = start::<D, Q, F, S>(s)?;
    let switches = configure(&mut forest, s)?;
    let first_step = forest.steps();
    let passes_of = |steps: u64| s.passes(steps);
    let mut series = Series::new(&s.out, s.output.output_every, s.output.amr.clone())?;
    series.at(&mut forest, &passes_of)?;
    let mut monitor = Monitor::new(
        &s.out,
        s.output.series_every,
        s.cavity.n as f64,
        s.output.probes.clone(),
        D::D,
        "lid_passes",
        s.scales,
    )?;
    monitor.at(&mut forest, &passes_of)?;
    let mut timeline = s.kernel_timeline.map(|n| KernelTimeline::new(n, s.steps)).transpose()?;
    let outcome = march(s, &mut forest, &mut history, &interrupt, (&mut series, &mut monitor), &mut timeline)?;
    if let Some(t) = timeline {
        t.finish(&mut forest, &s.out)?;
    }
    let r = conclude(s, &mut forest, &history, outcome, first_step, series, monitor)?;
    print_summary(s, &forest, &r, switches);
    let summary = summary_json(s, &forest, &r, switches)?;
    // A diverged run writes only its summary: no file with non-finite numbers.
    if r.finite {
        write_results(s, &mut forest, &r)?;
    }
    support::write_json(&s.out.join("summary.json"), &summary)?;
    println!("wrote {} ({})", s.out.display(), r.outcome.status());
    Ok(r.outcome)
}

/// Sets the forest's execution switches from the flags (none changes the results).
fn configure<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    forest: &mut Forest<D, Q, F, S>,
    s: &Setup,
) -> Result<Switches> {
    forest.set_profiling(s.profile);
    forest.set_launch_graphs(!s.no_graphs);
    forest.set_concurrent_levels(!s.no_concurrent_levels);
    forest.set_fused_exchanges(!s.no_fused_exchanges);
    forest.set_paired_cells(s.paired_cells);
    forest.set_bulk_steps(s.bulk_steps)?;
    let dependent = forest.set_dependent_launches(!s.no_dependent_launches);
    let graph_updates = forest.set_graph_updates(!s.no_graph_updates);
    Ok(Switches { dependent, graph_updates })
}

/// Writes the run's checkpoint, its history in the checkpoint's extra data.
fn save<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    s: &Setup,
    forest: &mut Forest<D, Q, F, S>,
    history: &History,
) -> Result<()> {
    forest.checkpoint_with(support::checkpoint_path(&s.out), &serde_json::to_vec(history)?)?;
    Ok(())
}

/// Advances to the requested root step in chunks (checkpoints, series outputs and
/// samples at their multiples); stops once more one lid pass before the end to keep
/// the profiles there, and ends early on an interrupt or a diverged step.
fn march<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    s: &Setup,
    forest: &mut Forest<D, Q, F, S>,
    history: &mut History,
    interrupt: &Interrupt,
    (series, monitor): (&mut Series, &mut Monitor),
    timeline: &mut Option<KernelTimeline>,
) -> Result<Outcome> {
    let steps = s.steps;
    let passes_of = |steps: u64| s.passes(steps);
    let last_pass = steps.saturating_sub(s.cavity.steps_for_passes(1.0));
    let mut progress = Progress::new(steps, forest.steps());
    let mut chunker = Chunker::new();
    let mut outcome = Outcome::Completed;
    while forest.steps() < steps {
        if interrupt.requested() {
            outcome = Outcome::Interrupted;
            break;
        }
        let done = forest.steps();
        if done == last_pass && history.before_last_pass.is_none() {
            history.before_last_pass = Some(profile_bits(&centerlines(&s.cavity, forest)?));
        }
        // Even chunks: on CUDA two root steps from an even count run as one graph.
        let mut n = chunker.next(steps - done, 2);
        if done < last_pass {
            n = n.min(last_pass - done);
        }
        for k in [s.checkpoint_every, s.output.output_every, Some(s.output.series_every)].into_iter().flatten() {
            n = n.min(k - done % k);
        }
        if let Some(t) = timeline {
            t.at(forest)?;
            n = n.min(t.limit(done));
        }
        let t = Instant::now();
        match forest.advance(n) {
            Ok(()) => {}
            Err(e @ ramus::Error::Diverged { .. }) => {
                outcome = Outcome::Diverged(e.to_string());
                break;
            }
            Err(e) => return Err(e.into()),
        }
        chunker.record(n, t.elapsed());
        if s.checkpoint_every.is_some_and(|k| forest.steps() % k == 0) {
            save(s, forest, history)?;
        }
        series.at(forest, &passes_of)?;
        monitor.at(forest, &passes_of)?;
        progress.update(forest.steps(), &format!("{:.2} lid passes", s.passes(forest.steps())), forest.mlups());
    }
    progress.finish();
    Ok(outcome)
}

/// Centreline profiles, sampled at the finest level's cell spacing.
fn centerlines<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    c: &Cavity,
    forest: &mut Forest<D, Q, F, S>,
) -> Result<Centerlines> {
    let per_side = c.n << (forest.config().refinement.levels - 1);
    Ok(c.centerlines_sampled(per_side, |p| forest.sample(p).map(|v| v.into_iter().map(|(_, u)| u).collect()))?)
}
