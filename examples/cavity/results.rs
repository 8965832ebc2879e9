//! The end of a cavity run: the last checks, the results read from the forest, the
//! summary printed and written (`summary.json`), the result files.

use std::time::Duration;

use anyhow::Result;
use ramus::cases::cavity::Centerlines;
use ramus::{Dim, Float, Forest, PoolStorage, StorageKind, VelocitySet};

use super::support::{self, Monitor, Outcome, Series};
use super::{centerlines, save, History, Setup, Switches};

/// What a finished, interrupted or diverged run leaves to report and write.
pub(crate) struct Results {
    pub outcome: Outcome,
    first_step: u64,
    lines: Centerlines,
    cells: ramus::LeafCells,
    /// Every reported value is finite and the guard did not stop the run: results exist.
    pub finite: bool,
    /// The largest change of the centreline profiles over the last lid pass (NaN when
    /// the run did not reach its end).
    change: f64,
    mass_drift: f64,
    ghia: Option<(f64, f64)>,
    /// Field-series outputs, the run's wait for them and its copy to the host, the writer
    /// thread's busy time.
    outputs: usize,
    stall: Duration,
    copy: Duration,
    writer_busy: Duration,
}

/// Checks the last steps, saves the checkpoint a run ends with, reads the results and
/// decides whether they are results (finite, not stopped by the guard); finishes the
/// series and the monitor.
pub(crate) fn conclude<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    s: &Setup,
    forest: &mut Forest<D, Q, F, S>,
    history: &History,
    mut outcome: Outcome,
    first_step: u64,
    mut series: Series,
    mut monitor: Monitor,
) -> Result<Results> {
    let passes_of = |steps: u64| s.passes(steps);
    // The last steps since the guard's previous check: checked before anything is saved.
    outcome = outcome.after_last_check(forest)?;
    if outcome.ends_with_checkpoint(s.checkpoint_every) {
        save(s, forest, history)?;
    }
    let lines = centerlines(&s.cavity, forest)?;
    let cells = forest.leaf_cells()?;
    let finite = cells.u.iter().flatten().chain(&cells.rho).all(|v| v.is_finite())
        && lines.u.values.iter().chain(&lines.v.values).all(|v| v.is_finite());
    if !finite && outcome == Outcome::Completed {
        // The guard checks every `guard.every` root steps; the last few may not be checked.
        outcome = Outcome::Diverged(format!(
            "the solution is not finite at root step {} (lower the Reynolds number or the lid speed, or add cells)",
            forest.steps()
        ));
    }
    // Results only of a run the guard did not stop (the field of a diverged run may be
    // finite but supersonic: not a solution).
    let finite = finite && !matches!(outcome, Outcome::Diverged(_));
    if finite {
        series.write(forest, &passes_of)?;
        monitor.sample(forest, &passes_of)?;
    }
    monitor.finish()?;
    let (stall, copy) = (series.stall, series.copy);
    let (outputs, writer_busy) = series.finish()?;
    let before = history.before_last_pass.as_ref().map(|b| b.iter().map(|&x| f64::from_bits(x)).collect::<Vec<_>>());
    let now: Vec<f64> = lines.u.values.iter().chain(&lines.v.values).copied().collect();
    let change = match &before {
        Some(b) if forest.steps() == s.steps => {
            support::max_propagating_nan(b.iter().zip(&now).map(|(x, y)| (x - y).abs()))
        }
        _ => f64::NAN,
    };
    let mass0 = f64::from_bits(history.mass0);
    let mass_drift = (cells.mass(D::D)? - mass0) / mass0;
    let c = &s.cavity;
    let ghia = if finite && c.dim == 2 { ramus::cases::ghia::ghia_deviation(c.re, &lines) } else { None };
    Ok(Results {
        outcome,
        first_step,
        lines,
        cells,
        finite,
        change,
        mass_drift,
        ghia,
        outputs,
        stall,
        copy,
        writer_busy,
    })
}

/// The run's summary on standard output.
pub(crate) fn print_summary<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    s: &Setup,
    forest: &Forest<D, Q, F, S>,
    r: &Results,
    switches: Switches,
) {
    let (c, done) = (&s.cavity, forest.steps());
    println!(
        "cavity {}D {} {}{}: n = {}, Re = {}, lid = {}, tau = {:.4}, levels = {}, collision {}, les {}",
        c.dim,
        s.lattice,
        s.precision,
        if s.storage == StorageKind::Native { String::new() } else { format!(" ({} storage)", s.storage) },
        c.n,
        c.re,
        c.lid,
        forest.tau(),
        s.config.refinement.levels,
        s.config.collision.name(),
        s.config.les.name()
    );
    println!(
        "backend: {} ({}){}",
        forest.backend(),
        forest.device_name(),
        if switches.dependent { "; programmatic dependent launches" } else { "" }
    );
    println!(
        "lid passes: {:.3}, steps: {done} of {}{}, time in advance: {:.2} s",
        s.passes(done),
        s.steps,
        if r.first_step > 0 { format!(" (restarted at {})", r.first_step) } else { String::new() },
        forest.timings().stepping.as_secs_f64()
    );
    support::print_performance(forest, s.profile);
    if r.outputs > 0 {
        let t = forest.timings();
        let run = t.stepping + t.adapt.total() + r.stall;
        println!(
            "field series: {} outputs (fields.pvd); the run waited {:.3} s ({:.2}%; copying to the host {:.3} s), \
             the writer thread worked {:.3} s",
            r.outputs,
            r.stall.as_secs_f64(),
            100.0 * r.stall.as_secs_f64() / run.as_secs_f64().max(1e-12),
            r.copy.as_secs_f64(),
            r.writer_busy.as_secs_f64()
        );
    }
    if r.finite {
        println!("mass drift: {:.3e}", r.mass_drift);
        println!("change over the last pass: {:.2e} U_lid", r.change);
        if let Some((du, dv)) = r.ghia {
            println!("max deviation from Ghia et al. (1982): u {du:.4} U_lid, v {dv:.4} U_lid");
        }
    }
}

/// `summary.json`: the case, the outcome, the results and the performance figures.
/// serde_json writes non-finite numbers as null: a diverged run never reads as converged.
pub(crate) fn summary_json<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    s: &Setup,
    forest: &Forest<D, Q, F, S>,
    r: &Results,
    switches: Switches,
) -> Result<serde_json::Value> {
    let (c, rf, done) = (&s.cavity, &s.config.refinement, forest.steps());
    let error = match &r.outcome {
        Outcome::Diverged(why) => Some(why.clone()),
        _ => None,
    };
    let mut summary = serde_json::json!({
        "status": r.outcome.status(),
        "error": error,
        "lattice": s.lattice.to_string(),
        "precision": s.precision.to_string(),
        "storage": s.storage.to_string(),
        "dim": c.dim,
        "n": c.n,
        "re": c.re,
        "lid": c.lid,
        "tau": forest.tau(),
        "levels": rf.levels,
        "refine_every": rf.every,
        "criterion": rf.criterion,
        "interpolation": rf.interpolation,
        "collision": s.config.collision,
        "les": s.config.les,
        "passes": s.passes(done),
        "steps": done,
        "steps_requested": s.steps,
        "restarted_at_step": (r.first_step > 0).then_some(r.first_step),
        "units": s.scales.map(|u| serde_json::json!({ "dx_m": u.dx, "dt_s": u.dt, "density_kg_m3": u.density,
            "velocity_m_s_per_lattice": u.velocity(), "reynolds": u.reynolds, "tau": u.tau })),
        "series_outputs": r.outputs,
        "series_wait_seconds": r.stall.as_secs_f64(),
        "series_copy_seconds": r.copy.as_secs_f64(),
        "series_writer_seconds": r.writer_busy.as_secs_f64(),
        "mass_drift": if r.finite { r.mass_drift } else { f64::NAN },
        "last_pass_change": r.change,
        "ghia_max_deviation": r.ghia.map(|(u, v)| serde_json::json!({ "u": u, "v": v })),
        "dependent_launches": switches.dependent,
        "concurrent_levels": !s.no_concurrent_levels,
        "fused_exchanges": !s.no_fused_exchanges,
        "graph_updates": switches.graph_updates,
        "paired_cells": s.paired_cells.to_string(),
        "bulk_steps": s.bulk_steps.to_string(),
    });
    support::performance_json(forest, s.profile, &mut summary);
    Ok(summary)
}

/// The result files of a run with results: centrelines, plots, leaf cells and AMR blocks.
pub(crate) fn write_results<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    s: &Setup,
    forest: &mut Forest<D, Q, F, S>,
    r: &Results,
) -> Result<()> {
    support::write_centerlines(&s.out, s.cavity.dim, &r.lines)?;
    if s.output.plots {
        support::cavity_plots(&s.out, &s.cavity, &r.lines)?;
        support::series_plots(&s.out, "lid passes")?;
    }
    if s.output.vtu {
        let options = support::vtu_options(&s.output.amr);
        ramus::output::write_leaf_cells_vtu_binary(s.out.join("cavity.vtu"), D::D, &r.cells, options)?;
        let blocks = forest.active_blocks()?;
        ramus::output::write_amr(&s.out, "cavity", &blocks, &s.output.amr)?;
    }
    Ok(())
}
