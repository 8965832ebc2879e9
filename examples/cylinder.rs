//! Flow past a square cylinder (paper, section "Flow Past a Square Cylinder").
//!
//! Channel of length 32 D (`--root` cells on the root level) and height `--height` D
//! (default 32, the paper's text, which reproduces its results; its configuration table
//! says 16, which has twice the blockage: C_D and St come out about 2 % higher); square cylinder of
//! side D centred 10 D downstream of the inlet on the centre line; uniform inlet `U_0`,
//! far field with the inlet velocity on top and bottom, pressure outlet. Blocks near the
//! cylinder and the outlet are refined and frozen; the wake adapts to the vorticity every
//! 32 root steps (`--no-adapt` keeps only the frozen refinement). `--inlet parabolic`
//! makes it a channel: resting walls on top and bottom, Poiseuille inlet of mean speed
//! `U_0` (`ramus::cases::cylinder::Inlet`). `--shape circle` puts a circular cylinder of
//! diameter D there instead, `--walls interpolated` gives its wall interpolated
//! bounce-back (`ramus::Walls`).
//!
//! ```text
//! cargo run --release --example cylinder                                     # root 256, 2 levels, f64
//! cargo run --release --example cylinder -- --root 256 --levels 4 --interp cubic --time 240
//! cargo run --release --example cylinder -- --root 2048 --levels 1           # uniform reference
//! cargo run --release --example cylinder -- --root 128 --levels 3 --time 60 --backend cpu
//! ```
//!
//! The force on the cylinder (momentum exchange) is sampled every 16 root steps, as in
//! the paper. Writes into `--out` (default `out/cylinder`):
//! - `forces.csv`: `t,cd,cl` with `t` in `D / U_0`;
//! - `summary.json`: parameters (the height used included), mean `C_D` over the whole
//!   shedding periods of the last `--window` time units, Strouhal number from a sinusoidal
//!   fit of `C_L` over that window, wall time, MLUPS (AMR-aware), adaptation share,
//!   blocks and cells per level;
//! - `cylinder.vtu`: every leaf cell with `rho`, `u`, `level` and `solid` (ParaView);
//! - `cylinder.vthb` (+ `cylinder/`): every level's blocks (ParaView's AMR reader), binary;
//! - with `--output-every T`: `fields_NNNN.vthb` every `T` D/U0 and `fields.pvd`;
//! - `series.csv` and, with probes, `probes.csv`; plots (`--no-plots` to skip):
//!   `forces.png` (C_D, C_L, the averaging window and St), `cells_per_level.png`, `mlups.png`.
//!
//! Also `config.toml` (the case as run: `--config` takes it back), `forest.toml` (the
//! forest's [`ramus::ForestConfig`]) and, with `--checkpoint-every N` or on SIGINT/SIGTERM,
//! `checkpoint.ramus` (`--restart` continues from it; `--time` stays the total).
//!
//! Exit status: 0 completed, 1 failed (device or files), 2 invalid input, 3 diverged (the
//! stability guard stopped the run; only `summary.json` and `forces.csv` are written, with
//! `"status": "diverged"`), 130 interrupted (checkpoint and outputs written).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Parser;
use ramus::cases::cylinder::{Cylinder, Inlet};
use ramus::cases::shedding::{mean_over_periods, strouhal};
use ramus::{
    Backend, Float, Forest, ForestConfig, Half, Interpolation, Native, PoolStorage, Precision, StorageKind, D2, D2Q9,
};
use serde::{Deserialize, Serialize};

#[path = "support/mod.rs"]
mod support;
use support::{Interrupt, Monitor, Outcome, Progress, RunFlags, Series};

/// Root steps between force samples (the paper's sampling interval).
const SAMPLE_EVERY: u64 = 16;

/// The files a run writes (removed from the output folder before a new run starts).
const RESULTS: [&str; 10] = [
    "forces.csv",
    "summary.json",
    "cylinder.vtu",
    "config.toml",
    "forest.toml",
    "series.csv",
    "probes.csv",
    "forces.png",
    "cells_per_level.png",
    "mlups.png",
];

/// Flow past a square cylinder with the ramus lattice Boltzmann solver.
#[derive(Parser, Debug, Serialize, Deserialize)]
#[command(about, long_about = None)]
struct Args {
    /// Root-level cells along the domain length 32 D (a multiple of 64).
    #[arg(long, default_value_t = 256)]
    root: usize,
    /// Grid levels (1: uniform).
    #[arg(long, default_value_t = 2)]
    levels: usize,
    /// Reynolds number U_0 D / ν.
    #[arg(long, default_value_t = 100.0, allow_negative_numbers = true)]
    re: f64,
    /// Interpolation to ghost cells and new blocks: linear or cubic.
    #[arg(long, default_value = "linear")]
    interp: String,
    #[command(flatten)]
    #[serde(flatten)]
    physics: support::CollisionFlags,
    /// Simulated time in D / U_0 (the paper's t = 150 s is 240).
    #[arg(long, default_value_t = 240.0, allow_negative_numbers = true)]
    time: f64,
    /// Averaging window at the end of the run, in D / U_0 (the paper's last 10 s are 16).
    #[arg(long, default_value_t = 16.0, allow_negative_numbers = true)]
    window: f64,
    /// Domain height in D (the paper's text: 32; its configuration table: 16).
    #[arg(long, default_value_t = 32.0, allow_negative_numbers = true)]
    height: f64,
    /// Inlet speed U_0 in lattice units (the mean speed with a parabolic inlet).
    #[arg(long, default_value_t = 0.05, allow_negative_numbers = true)]
    u0: f64,
    /// Inflow: uniform (far field on top and bottom, the paper's) or parabolic (a channel:
    /// resting walls on top and bottom, Poiseuille inlet of mean speed U_0).
    #[arg(long, default_value = "uniform")]
    inlet: String,
    /// The body: square (side D, the paper's) or circle (diameter D).
    #[arg(long, default_value = "square")]
    shape: String,
    /// Wall rule on the body: staircase (half-way bounce-back) or interpolated (Bouzidi
    /// et al. 2001: the curved wall at its true distance along each link).
    #[arg(long, default_value = "staircase")]
    walls: String,
    /// Floating-point precision: f32 or f64.
    #[arg(long, default_value = "f64")]
    precision: String,
    /// Storage of the populations: native (the precision's own) or f16 (IEEE half of f32
    /// arithmetic).
    #[arg(long, default_value = "native")]
    storage: String,
    /// Where to run: auto (CUDA if available, else CPU), cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: String,
    /// Keep only the frozen refinement near the cylinder and the outlet.
    #[arg(long)]
    no_adapt: bool,
    #[command(flatten)]
    #[serde(flatten)]
    output: support::OutputFlags,
    /// Physical units, in a case file only: a `[units]` table (`length` = the cylinder's
    /// side D in m, `velocity` = U0 in m/s, `density` kg/m³, `viscosity` m²/s, optional
    /// `dt` s). Re follows from them (and U0's lattice value, with `dt`); field outputs,
    /// series and probes are then in SI (C_D, C_L and t U0/D stay dimensionless).
    #[arg(skip)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    units: Option<ramus::config::Units>,
    /// Write OUT/checkpoint.ramus every this many root steps and at the end.
    #[arg(long)]
    checkpoint_every: Option<u64>,
    /// Output directory.
    #[arg(long, default_value = "out/cylinder")]
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
    case: Cylinder,
    config: ForestConfig,
    precision: Precision,
    storage: StorageKind,
    time: f64,
    window: f64,
    steps: u64,
    out: PathBuf,
    /// SI scales, with `[units]`.
    scales: Option<ramus::config::Scales>,
    /// The output flags in root steps.
    output: support::Outputs,
    checkpoint_every: Option<u64>,
    restart: Option<PathBuf>,
}

fn main() -> ExitCode {
    let setup = match support::load_args::<Args>().and_then(Args::validate) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(support::exit_code_of(&e, true));
        }
    };
    let result = match (setup.precision, setup.storage) {
        (Precision::F32, StorageKind::Native) => run::<f32, Native>(&setup),
        (Precision::F32, StorageKind::F16) => run::<f32, Half>(&setup),
        (Precision::F64, StorageKind::Native) => run::<f64, Native>(&setup),
        // Refused by `StorageKind::bytes` in `validate`.
        (Precision::F64, StorageKind::F16) => Err(anyhow::anyhow!("f16 storage needs f32 arithmetic")),
    };
    support::exit(result)
}

impl Args {
    fn validate(self) -> Result<Setup> {
        let backend: Backend = self.backend.parse()?;
        // D = root / 32 root cells.
        let diameter = self.root as f64 / ramus::cases::cylinder::LENGTH;
        let scales = self.units.map(|u| u.scales(diameter, self.u0)).transpose()?;
        let (re, u0) = scales.map_or((self.re, self.u0), |s| (s.reynolds, s.lattice_velocity));
        let case = Cylinder {
            root: self.root,
            height: self.height,
            levels: self.levels,
            re,
            u0,
            interpolation: Interpolation::parse(&self.interp)?,
            adapt: !self.no_adapt,
            inlet: self.inlet.parse()?,
            shape: self.shape.parse()?,
            walls: self.walls.parse()?,
        };
        let config = case.forest_config(backend)?.collision(self.physics.collision()?).les(self.physics.les()?);
        if !(self.time.is_finite() && self.time > 0.0) {
            bail!("invalid time = {}: a finite time > 0 (in D/U0)", self.time);
        }
        let steps = case.steps_for(self.time);
        if steps < SAMPLE_EVERY {
            bail!(
                "invalid time = {}: {steps} root steps, fewer than one force sample ({SAMPLE_EVERY} root steps = {} D/U0)",
                self.time,
                case.time(SAMPLE_EVERY)
            );
        }
        if !(self.window.is_finite() && self.window > 0.0 && self.window <= self.time) {
            bail!("invalid window = {}: 0 < window <= time = {} (in D/U0)", self.window, self.time);
        }
        let output = self.output.validate(
            "D/U0",
            |t| case.steps_for(t),
            scales,
            2,
            [ramus::cases::cylinder::LENGTH, case.height, 0.0],
        )?;
        if self.checkpoint_every == Some(0) {
            bail!("invalid checkpoint_every = 0: at least 1 root step between checkpoints");
        }
        let precision: Precision = self.precision.parse()?;
        let storage: StorageKind = self.storage.parse()?;
        storage.bytes(precision)?;
        support::prepare_out(&self.out, &RESULTS)?;
        support::remove_series(&self.out, &["fields", "cylinder"])?;
        support::write_case_file(
            &self.out,
            &self,
            "Flow past a square cylinder (cargo run --release --example cylinder)",
        )?;
        support::write_file(&self.out.join("forest.toml"), config.to_toml()?.as_bytes())?;
        Ok(Setup {
            case,
            config,
            precision,
            storage,
            time: self.time,
            window: self.window,
            steps,
            out: self.out,
            scales,
            output,
            checkpoint_every: self.checkpoint_every,
            restart: self.run.restart,
        })
    }
}

/// The force history, stored in checkpoints (floats as bits: a restart continues
/// bitwise).
#[derive(Default, Serialize, Deserialize)]
struct History {
    t: Vec<u64>,
    cd: Vec<u64>,
    cl: Vec<u64>,
}

/// Builds and initialises the forest, or loads it from `--restart` (checking that it
/// holds this case).
fn start<F: Float, S: PoolStorage<F>>(s: &Setup) -> Result<(Forest<D2, D2Q9, F, S>, History)> {
    let c = &s.case;
    let Some(path) = &s.restart else {
        let mut forest = Forest::<D2, D2Q9, F, S>::new(s.config.clone())?;
        forest.initialize(|x| c.initial_state(x))?;
        return Ok((forest, History::default()));
    };
    let (forest, data) = Forest::<D2, D2Q9, F, S>::restart_with(path, s.config.backend)?;
    support::check_restart(path, forest.config(), &s.config, forest.steps(), s.steps)?;
    let history = serde_json::from_slice(&data).with_context(|| format!("the force history in {}", path.display()))?;
    Ok((forest, history))
}

fn run<F: Float, S: PoolStorage<F>>(s: &Setup) -> Result<Outcome> {
    let c = &s.case;
    let interrupt = Interrupt::install()?;
    let (mut forest, mut history) = start::<F, S>(s)?;
    let steps = s.steps;
    let first_step = forest.steps();
    println!(
        "cylinder: root {} x {} (D = {} root cells, height {} D), {:?} body, {:?} walls, {} levels, Re {}, U0 {}, {} inlet, {} interpolation, {} collision, les {}, {} on {}",
        c.root,
        c.height_cells(),
        c.diameter(),
        c.height,
        c.shape,
        c.walls,
        c.levels,
        c.re,
        c.u0,
        if c.inlet == Inlet::Parabolic { "parabolic" } else { "uniform" },
        if c.interpolation == Interpolation::Cubic { "cubic" } else { "linear" },
        s.config.collision.name(),
        s.config.les.name(),
        F::NAME,
        forest.device_name()
    );
    let checkpoint = support::checkpoint_path(&s.out);
    let save = |forest: &mut Forest<D2, D2Q9, F, S>, history: &History| -> Result<()> {
        forest.checkpoint_with(&checkpoint, &serde_json::to_vec(history)?)?;
        Ok(())
    };
    let mut progress = Progress::new(steps, first_step);
    let start = Instant::now();
    let mut outcome = Outcome::Completed;
    let time_of = |steps: u64| c.time(steps);
    let mut series = Series::new(&s.out, s.output.output_every, s.output.amr.clone())?;
    series.at(&mut forest, &time_of)?;
    let mut monitor =
        Monitor::new(&s.out, s.output.series_every, c.diameter(), s.output.probes.clone(), 2, "t_d_over_u0", s.scales)?;
    monitor.at(&mut forest, &time_of)?;
    // Advance to each force sample (every SAMPLE_EVERY root steps and the last step) and
    // to each checkpoint.
    while forest.steps() < steps {
        if interrupt.requested() {
            outcome = Outcome::Interrupted;
            break;
        }
        let done = forest.steps();
        let mut n = (SAMPLE_EVERY - done % SAMPLE_EVERY).min(steps - done);
        for k in [s.checkpoint_every, s.output.output_every, Some(s.output.series_every)].into_iter().flatten() {
            n = n.min(k - done % k);
        }
        match forest.advance(n) {
            Ok(()) => {}
            Err(e @ ramus::Error::Diverged { .. }) => {
                outcome = Outcome::Diverged(e.to_string());
                break;
            }
            Err(e) => return Err(e.into()),
        }
        let done = forest.steps();
        if done % SAMPLE_EVERY == 0 || done == steps {
            let (d, l) = c.coefficients(forest.force(Some(0))?);
            if !(d.is_finite() && l.is_finite()) {
                outcome = Outcome::Diverged(format!(
                    "the force on the cylinder is not finite at root step {done} (t = {:.2} D/U0, C_D = {d}); \
                     try more cells or a lower Reynolds number",
                    c.time(done)
                ));
                break;
            }
            history.t.push(c.time(done).to_bits());
            history.cd.push(d.to_bits());
            history.cl.push(l.to_bits());
            progress.update(
                done,
                &format!("t = {:.1} D/U0, C_D = {d:.4}, C_L = {l:+.4}", c.time(done)),
                forest.mlups(),
            );
        }
        if s.checkpoint_every.is_some_and(|k| done % k == 0) {
            save(&mut forest, &history)?;
        }
        series.at(&mut forest, &time_of)?;
        monitor.at(&mut forest, &time_of)?;
    }
    let wall = start.elapsed().as_secs_f64();
    progress.finish();
    // The last steps since the guard's previous check: checked before anything is saved.
    outcome = outcome.after_last_check(&mut forest)?;
    if outcome.ends_with_checkpoint(s.checkpoint_every) {
        save(&mut forest, &history)?;
    }
    let cells = forest.leaf_cells()?;
    let finite = cells.u.iter().flatten().chain(&cells.rho).all(|v| v.is_finite());
    if !finite && outcome == Outcome::Completed {
        outcome = Outcome::Diverged(format!(
            "the solution is not finite at root step {} (try more cells or a lower Reynolds number)",
            forest.steps()
        ));
    }
    if finite && !matches!(outcome, Outcome::Diverged(_)) {
        series.write(&mut forest, &time_of)?;
        monitor.sample(&mut forest, &time_of)?;
    }
    monitor.finish()?;
    let (outputs, writer_busy) = series.finish()?;
    let bits = |v: &[u64]| v.iter().map(|&x| f64::from_bits(x)).collect::<Vec<f64>>();
    let (t, cd, cl) = (bits(&history.t), bits(&history.cd), bits(&history.cl));

    // The averaging window: the last `window` time units (only of a completed run).
    let completed = outcome == Outcome::Completed;
    let from = t.partition_point(|&x| x < s.time - s.window);
    let (tw, cdw, clw) = (&t[from..], &cd[from..], &cl[from..]);
    let fit =
        if completed { strouhal(tw, clw).map_err(|e| e.to_string()) } else { Err(format!("run {}", outcome.status())) };
    let (st, cd_mean, periods) = match &fit {
        Ok((st, f)) => {
            (Some(*st), Some(mean_over_periods(tw, cdw, f.frequency, f.periods.floor().max(1.0))?), Some(f.periods))
        }
        Err(_) if completed && !cdw.is_empty() => (None, Some(cdw.iter().sum::<f64>() / cdw.len() as f64), None),
        Err(_) => (None, None, None),
    };
    let timings = forest.timings();
    let error = match &outcome {
        Outcome::Diverged(why) => Some(why.clone()),
        _ => None,
    };
    let summary = serde_json::json!({
        "status": outcome.status(),
        "error": error,
        "case": c,
        "collision": s.config.collision,
        "les": s.config.les,
        "height_used_d": c.height,
        "time_d_over_u0": s.time,
        "window_d_over_u0": s.window,
        "root_steps": forest.steps(),
        "root_steps_requested": steps,
        "restarted_at_step": (first_step > 0).then_some(first_step),
        "precision": F::NAME,
        "storage": s.storage.to_string(),
        "backend": forest.backend().to_string(),
        "device": forest.device_name(),
        "cd_mean": cd_mean,
        "strouhal": st,
        "cl_amplitude": fit.as_ref().ok().map(|(_, f)| f.amplitude),
        "periods_in_window": periods,
        "strouhal_error": fit.as_ref().err(),
        "wall_time_s": wall,
        "stepping_time_s": timings.stepping.as_secs_f64(),
        "mlups": forest.mlups(),
        "virtual_mlups": forest.virtual_mlups(),
        "adaptation_share": timings.adaptation_share(),
        "guard_seconds": timings.guard.as_secs_f64(),
        "units": s.scales.map(|u| serde_json::json!({ "dx_m": u.dx, "dt_s": u.dt, "density_kg_m3": u.density,
            "velocity_m_s_per_lattice": u.velocity(), "reynolds": u.reynolds, "tau": u.tau })),
        "series_outputs": outputs,
        "series_writer_seconds": writer_busy.as_secs_f64(),
        "blocks_per_level": forest.blocks_per_level(),
        "cells_per_level": forest.cells_per_level(),
    });
    if completed {
        println!(
            "C_D = {} (mean over the last {} D/U0), St = {}, wall {wall:.1} s, {:.0} MLUPS ({:.0} finest-equivalent), adaptation {:.2} %",
            cd_mean.map_or("n/a".to_string(), |v| format!("{v:.4}")),
            s.window,
            st.map_or("n/a (no shedding in the window)".to_string(), |v| format!("{v:.4}")),
            forest.mlups(),
            forest.virtual_mlups(),
            100.0 * timings.adaptation_share()
        );
    }
    // The samples are finite (checked as they are taken); the field only if `finite`.
    let mut csv = String::from("t,cd,cl\n");
    for k in 0..t.len() {
        csv += &format!("{:.6},{:.8},{:.8}\n", t[k], cd[k], cl[k]);
    }
    support::write_file(&s.out.join("forces.csv"), csv.as_bytes())?;
    if s.output.plots && !t.is_empty() {
        let window = completed.then_some((s.time - s.window, s.time));
        ramus::output::plot::force_history_plot(&s.out.join("forces.png"), &t, &cd, &cl, window, st)?;
        if finite {
            support::series_plots(&s.out, "t U0 / D")?;
        }
    }
    if s.output.vtu && finite && !matches!(outcome, Outcome::Diverged(_)) {
        ramus::output::write_leaf_cells_vtu_binary(
            s.out.join("cylinder.vtu"),
            2,
            &cells,
            support::vtu_options(&s.output.amr),
        )?;
        ramus::output::write_amr(&s.out, "cylinder", &forest.active_blocks()?, &s.output.amr)?;
    }
    support::write_json(&s.out.join("summary.json"), &summary)?;
    println!("wrote {} ({})", s.out.display(), outcome.status());
    Ok(outcome)
}
