//! Flow past a 3D body: the built-in sphere or an STL body in a channel
//! (`ramus::cases::obstacle`; issue "Geometry for real flows").
//!
//! Channel of square cross-section `H × H` (`--root` root cells across) and length
//! `--length` H; the body a quarter of the length downstream of the inlet on the centre
//! line, scaled so that its largest extent is `D = H/8`; uniform inlet and free stream
//! `U_0` on the sides, pressure outlet. Blocks near the body are refined and frozen; the
//! wake adapts to the vorticity every 32 root steps (`--no-adapt`: only the frozen
//! refinement). `--stl FILE` reads a body (binary or ASCII STL, checked: open,
//! non-manifold or degenerate surfaces are named errors); `--sphere` (the default) is
//! the built-in sphere; `--icosphere LEVEL` writes a sphere of `20·4^LEVEL` triangles to
//! `OUT/icosphere.stl` and runs it as an STL body (the same sphere through the STL path).
//!
//! ```text
//! cargo run --release --example obstacle                                  # sphere, Re 100, root 64, 3 levels
//! cargo run --release --example obstacle -- --stl body.stl --re 300 --time 100
//! cargo run --release --example obstacle -- --icosphere 5 --walls interpolated --profile
//! ```
//!
//! Writes into `--out` (default `out/obstacle`): `forces.csv` (`t,cd,cl,cs`, t in
//! D/U_0, coefficients on the frontal area π D²/4, sampled every 16 root steps),
//! `summary.json` (parameters, mean coefficients over the last `--window` D/U_0,
//! `solid_volume` in D³ — the volume of the solid leaf cells —, wall time, MLUPS,
//! adaptation share and, with `--profile`, the time per adaptation spent on the solid
//! cells and wall distances), `obstacle.vtu` and `obstacle.vthb` (ParaView), series,
//! probes and plots as the other examples, `config.toml`, `forest.toml`, checkpoints.
//!
//! Exit status: 0 completed, 1 failed (device or files), 2 invalid input, 3 diverged,
//! 130 interrupted (checkpoint and outputs written).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Parser;
use ramus::cases::obstacle::{Body, ObstacleFlow, HEIGHT_IN_D};
use ramus::stl::SurfaceMesh;
use ramus::{Backend, Float, Forest, ForestConfig, Interpolation, Precision, D3, D3Q19};
use serde::{Deserialize, Serialize};

#[path = "support/mod.rs"]
mod support;
use support::{Interrupt, Monitor, Outcome, Progress, RunFlags, Series};

/// Root steps between force samples.
const SAMPLE_EVERY: u64 = 16;

/// The files a run writes (removed from the output folder before a new run starts).
const RESULTS: [&str; 11] = [
    "forces.csv",
    "summary.json",
    "obstacle.vtu",
    "config.toml",
    "forest.toml",
    "series.csv",
    "probes.csv",
    "forces.png",
    "cells_per_level.png",
    "mlups.png",
    "icosphere.stl",
];

/// Flow past a 3D body (sphere or STL) with the ramus lattice Boltzmann solver.
#[derive(Parser, Debug, Serialize, Deserialize)]
#[command(about, long_about = None)]
struct Args {
    /// The built-in sphere of diameter D (the default body).
    #[arg(long, conflicts_with_all = ["stl", "icosphere"])]
    #[serde(default)]
    sphere: bool,
    /// A body from an STL file (binary or ASCII), scaled to D.
    #[arg(long)]
    stl: Option<PathBuf>,
    /// A sphere of 20·4^LEVEL triangles written to OUT/icosphere.stl and run as an STL body.
    #[arg(long)]
    icosphere: Option<u32>,
    /// Root-level cells across the channel (a multiple of 32; D = root/8).
    #[arg(long, default_value_t = 64)]
    root: usize,
    /// Channel length in channel heights.
    #[arg(long, default_value_t = 4.0)]
    length: f64,
    /// Grid levels (1: uniform).
    #[arg(long, default_value_t = 3)]
    levels: usize,
    /// Reynolds number U_0 D / ν.
    #[arg(long, default_value_t = 100.0, allow_negative_numbers = true)]
    re: f64,
    /// Inlet speed U_0 in lattice units.
    #[arg(long, default_value_t = 0.05, allow_negative_numbers = true)]
    u0: f64,
    /// Simulated time in D / U_0.
    #[arg(long, default_value_t = 40.0, allow_negative_numbers = true)]
    time: f64,
    /// Averaging window at the end of the run, in D / U_0.
    #[arg(long, default_value_t = 10.0, allow_negative_numbers = true)]
    window: f64,
    /// Interpolation to ghost cells and new blocks: linear or cubic.
    #[arg(long, default_value = "linear")]
    interp: String,
    /// Wall rule on the body: staircase or interpolated (Bouzidi et al. 2001).
    #[arg(long, default_value = "interpolated")]
    walls: String,
    #[command(flatten)]
    #[serde(flatten)]
    physics: support::CollisionFlags,
    /// Floating-point precision: f32 or f64.
    #[arg(long, default_value = "f32")]
    precision: String,
    /// Where to run: auto (CUDA if available, else CPU), cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: String,
    /// Keep only the frozen refinement near the body.
    #[arg(long)]
    no_adapt: bool,
    #[command(flatten)]
    #[serde(flatten)]
    output: support::OutputFlags,
    /// Write OUT/checkpoint.ramus every this many root steps and at the end.
    #[arg(long)]
    checkpoint_every: Option<u64>,
    /// Time the adaptations' parts (the device synchronised after each): reports the time
    /// per adaptation spent on solid cells and wall distances.
    #[arg(long)]
    #[serde(default)]
    profile: bool,
    /// Output directory.
    #[arg(long, default_value = "out/obstacle")]
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
    case: ObstacleFlow,
    config: ForestConfig,
    precision: Precision,
    time: f64,
    window: f64,
    steps: u64,
    out: PathBuf,
    output: support::Outputs,
    checkpoint_every: Option<u64>,
    restart: Option<PathBuf>,
    profile: bool,
}

fn main() -> ExitCode {
    let setup = match support::load_args::<Args>().and_then(Args::validate) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(support::exit_code_of(&e, true));
        }
    };
    let result = match setup.precision {
        Precision::F32 => run::<f32>(&setup),
        Precision::F64 => run::<f64>(&setup),
    };
    support::exit(result)
}

impl Args {
    fn validate(self) -> Result<Setup> {
        let backend: Backend = self.backend.parse()?;
        if self.stl.is_some() && self.icosphere.is_some() {
            bail!("invalid body: --stl and --icosphere both given (one body)");
        }
        if let Some(level) = self.icosphere {
            if level > 7 {
                bail!("invalid icosphere = {level}: 0 to 7 (20·4^7 = 327,680 triangles)");
            }
        }
        let body = match (&self.stl, self.icosphere) {
            (Some(path), _) => Body::Stl { path: path.clone() },
            (None, Some(_)) => Body::Stl { path: self.out.join("icosphere.stl") },
            (None, None) => Body::Sphere,
        };
        let case = ObstacleFlow {
            root: self.root,
            length: self.length,
            levels: self.levels,
            re: self.re,
            u0: self.u0,
            interpolation: Interpolation::parse(&self.interp)?,
            walls: self.walls.parse()?,
            adapt: !self.no_adapt,
            body,
        };
        let mut config = case.forest_config(backend)?.collision(self.physics.collision()?).les(self.physics.les()?);
        config.validate(3)?;
        if !(self.time.is_finite() && self.time > 0.0) {
            bail!("invalid time = {}: a finite time > 0 (in D/U0)", self.time);
        }
        let steps = case.steps_for(self.time);
        if steps < SAMPLE_EVERY {
            bail!("invalid time = {}: {steps} root steps, fewer than one force sample ({SAMPLE_EVERY})", self.time);
        }
        if !(self.window.is_finite() && self.window > 0.0 && self.window <= self.time) {
            bail!("invalid window = {}: 0 < window <= time = {} (in D/U0)", self.window, self.time);
        }
        let extent = [case.length * HEIGHT_IN_D, HEIGHT_IN_D, HEIGHT_IN_D];
        let output = self.output.validate("D/U0", |t| case.steps_for(t), None, 3, extent)?;
        if self.checkpoint_every == Some(0) {
            bail!("invalid checkpoint_every = 0: at least 1 root step between checkpoints");
        }
        let precision = self.precision.parse()?;
        support::prepare_out(&self.out, &RESULTS)?;
        support::remove_series(&self.out, &["fields", "obstacle"])?;
        if let Some(level) = self.icosphere {
            SurfaceMesh::icosphere(level).write(self.out.join("icosphere.stl"))?;
        }
        // The STL is read (and checked) before the run starts: a bad file is an input error.
        if let Some(s) = &config.surface {
            s.load(config.cells.map(|c| c as f64))?;
        }
        config = config.backend(backend);
        support::write_case_file(&self.out, &self, "Flow past a 3D body (cargo run --release --example obstacle)")?;
        support::write_file(&self.out.join("forest.toml"), config.to_toml()?.as_bytes())?;
        Ok(Setup {
            case,
            config,
            precision,
            time: self.time,
            window: self.window,
            steps,
            out: self.out,
            output,
            checkpoint_every: self.checkpoint_every,
            restart: self.run.restart,
            profile: self.profile,
        })
    }
}

/// The force history, stored in checkpoints (floats as bits: a restart continues
/// bitwise).
#[derive(Default, Serialize, Deserialize)]
struct History {
    t: Vec<u64>,
    c: Vec<[u64; 3]>,
}

fn start<F: Float>(s: &Setup) -> Result<(Forest<D3, D3Q19, F>, History)> {
    let Some(path) = &s.restart else {
        let mut forest = Forest::<D3, D3Q19, F>::new(s.config.clone())?;
        forest.initialize(|x| s.case.initial_state(x))?;
        return Ok((forest, History::default()));
    };
    let (forest, data) = Forest::<D3, D3Q19, F>::restart_with(path, s.config.backend)?;
    support::check_restart(path, forest.config(), &s.config, forest.steps(), s.steps)?;
    let history = serde_json::from_slice(&data).with_context(|| format!("the force history in {}", path.display()))?;
    Ok((forest, history))
}

/// Volume of the solid leaf cells (ghosts left out: the coarse cells under them count).
fn solid_volume(cells: &ramus::LeafCells) -> f64 {
    (0..cells.len()).filter(|&k| cells.solid[k] && !cells.ghost[k]).map(|k| cells.width[k].powi(3)).sum()
}

fn run<F: Float>(s: &Setup) -> Result<Outcome> {
    let c = &s.case;
    let interrupt = Interrupt::install()?;
    let (mut forest, mut history) = start::<F>(s)?;
    forest.set_profiling(s.profile);
    // Adaptations before the run (the frozen refinement while building) were not profiled.
    let adapts_before = forest.timings().adapt.count;
    let first_step = forest.steps();
    let body = match &c.body {
        Body::Sphere => "built-in sphere".to_string(),
        Body::Stl { path } => format!("STL {}", path.display()),
    };
    println!(
        "obstacle: {:?} root cells (D = {} root cells), {body}, {:?} walls, {} levels, Re {}, U0 {}, {} collision, les {}, {} on {}",
        c.cells(),
        c.diameter(),
        c.walls,
        c.levels,
        c.re,
        c.u0,
        s.config.collision.name(),
        s.config.les.name(),
        F::NAME,
        forest.device_name()
    );
    let volume = solid_volume(&forest.leaf_cells()?) / c.diameter().powi(3);
    println!("solid volume {volume:.4} D³ (a sphere: π/6 = {:.4})", std::f64::consts::PI / 6.0);
    let checkpoint = support::checkpoint_path(&s.out);
    let save = |forest: &mut Forest<D3, D3Q19, F>, history: &History| -> Result<()> {
        forest.checkpoint_with(&checkpoint, &serde_json::to_vec(history)?)?;
        Ok(())
    };
    let mut progress = Progress::new(s.steps, first_step);
    let wall_start = Instant::now();
    let mut outcome = Outcome::Completed;
    let time_of = |steps: u64| c.time(steps);
    let mut series = Series::new(&s.out, s.output.output_every, s.output.amr.clone())?;
    series.at(&mut forest, &time_of)?;
    let mut monitor =
        Monitor::new(&s.out, s.output.series_every, c.diameter(), s.output.probes.clone(), 3, "t_d_over_u0", None)?;
    monitor.at(&mut forest, &time_of)?;
    while forest.steps() < s.steps {
        if interrupt.requested() {
            outcome = Outcome::Interrupted;
            break;
        }
        let done = forest.steps();
        let mut n = (SAMPLE_EVERY - done % SAMPLE_EVERY).min(s.steps - done);
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
        if done % SAMPLE_EVERY == 0 || done == s.steps {
            let k = c.coefficients(forest.force(None)?);
            if k.iter().any(|v| !v.is_finite()) {
                outcome = Outcome::Diverged(format!(
                    "the force on the body is not finite at root step {done} (t = {:.2} D/U0); try more cells, \
                     another collision operator or a lower Reynolds number",
                    c.time(done)
                ));
                break;
            }
            history.t.push(c.time(done).to_bits());
            history.c.push(k.map(f64::to_bits));
            let msg =
                format!("t = {:.1} D/U0, C_D = {:.4}, C_L = {:+.4}, C_S = {:+.4}", c.time(done), k[0], k[1], k[2]);
            progress.update(done, &msg, forest.mlups());
        }
        if s.checkpoint_every.is_some_and(|k| done % k == 0) {
            save(&mut forest, &history)?;
        }
        series.at(&mut forest, &time_of)?;
        monitor.at(&mut forest, &time_of)?;
    }
    let wall = wall_start.elapsed().as_secs_f64();
    progress.finish();
    outcome = outcome.after_last_check(&mut forest)?;
    if outcome.ends_with_checkpoint(s.checkpoint_every) {
        save(&mut forest, &history)?;
    }
    let cells = forest.leaf_cells()?;
    let finite = cells.u.iter().flatten().chain(&cells.rho).all(|v| v.is_finite());
    if !finite && outcome == Outcome::Completed {
        outcome = Outcome::Diverged(format!("the solution is not finite at root step {}", forest.steps()));
    }
    let diverged = matches!(outcome, Outcome::Diverged(_));
    if finite && !diverged {
        series.write(&mut forest, &time_of)?;
        monitor.sample(&mut forest, &time_of)?;
    }
    monitor.finish()?;
    let (outputs, writer_busy) = series.finish()?;
    let t: Vec<f64> = history.t.iter().map(|&x| f64::from_bits(x)).collect();
    let k: Vec<[f64; 3]> = history.c.iter().map(|v| v.map(f64::from_bits)).collect();
    let completed = outcome == Outcome::Completed;
    let from = t.partition_point(|&x| x < s.time - s.window);
    let mean = |a: usize| {
        let w = &k[from..];
        (completed && !w.is_empty()).then(|| w.iter().map(|v| v[a]).sum::<f64>() / w.len() as f64)
    };
    let timings = forest.timings();
    let adapts = timings.adapt.count - adapts_before;
    let geometry_ms = (s.profile && adapts > 0).then(|| 1e3 * timings.adapt.geometry.as_secs_f64() / adapts as f64);
    let summary = serde_json::json!({
        "status": outcome.status(),
        "error": match &outcome { Outcome::Diverged(why) => Some(why.clone()), _ => None },
        "case": c,
        "collision": s.config.collision,
        "les": s.config.les,
        "time_d_over_u0": s.time,
        "window_d_over_u0": s.window,
        "root_steps": forest.steps(),
        "root_steps_requested": s.steps,
        "restarted_at_step": (first_step > 0).then_some(first_step),
        "precision": F::NAME,
        "backend": forest.backend().to_string(),
        "device": forest.device_name(),
        "cd_mean": mean(0),
        "cl_mean": mean(1),
        "cs_mean": mean(2),
        "solid_volume": solid_volume(&cells) / c.diameter().powi(3),
        "wall_time_s": wall,
        "stepping_time_s": timings.stepping.as_secs_f64(),
        "mlups": forest.mlups(),
        "virtual_mlups": forest.virtual_mlups(),
        "adaptation_share": timings.adaptation_share(),
        "adaptations": timings.adapt.count,
        "geometry_ms_per_adaptation": geometry_ms,
        "series_outputs": outputs,
        "series_writer_seconds": writer_busy.as_secs_f64(),
        "blocks_per_level": forest.blocks_per_level(),
        "cells_per_level": forest.cells_per_level(),
    });
    if completed {
        let show = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.4}"));
        println!(
            "C_D = {}, C_L = {}, C_S = {} (means over the last {} D/U0), wall {wall:.1} s, {:.0} MLUPS ({:.0} finest-equivalent), adaptation {:.2} %{}",
            show(mean(0)),
            show(mean(1)),
            show(mean(2)),
            s.window,
            forest.mlups(),
            forest.virtual_mlups(),
            100.0 * timings.adaptation_share(),
            geometry_ms.map_or(String::new(), |g| format!(", solid cells and wall distances {g:.2} ms per adaptation")),
        );
    }
    let mut csv = String::from("t,cd,cl,cs\n");
    for (t, k) in t.iter().zip(&k) {
        csv += &format!("{t:.6},{:.8},{:.8},{:.8}\n", k[0], k[1], k[2]);
    }
    support::write_file(&s.out.join("forces.csv"), csv.as_bytes())?;
    if s.output.plots && !t.is_empty() {
        let (cd, cl): (Vec<f64>, Vec<f64>) = k.iter().map(|v| (v[0], v[1])).unzip();
        let window = completed.then_some((s.time - s.window, s.time));
        ramus::output::plot::force_history_plot(&s.out.join("forces.png"), &t, &cd, &cl, window, None)?;
        if finite {
            support::series_plots(&s.out, "t U0 / D")?;
        }
    }
    if s.output.vtu && finite && !diverged {
        ramus::output::write_leaf_cells_vtu_binary(
            s.out.join("obstacle.vtu"),
            3,
            &cells,
            support::vtu_options(&s.output.amr),
        )?;
        ramus::output::write_amr(&s.out, "obstacle", &forest.active_blocks()?, &s.output.amr)?;
    }
    support::write_json(&s.out.join("summary.json"), &summary)?;
    println!("wrote {} ({})", s.out.display(), outcome.status());
    Ok(outcome)
}
