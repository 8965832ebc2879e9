//! Time series of the examples (`--output-every`): numbered hierarchical outputs and a
//! `.pvd` collection, written by the library's writer thread ([`ramus::output::AmrSeries`])
//! while the run goes on. The run waits only for the copy of the solution to the host.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ramus::output::{AmrOutput, AmrSeries};
use ramus::{Dim, Float, Forest, PoolStorage, VelocitySet};

/// An optional series: every `every` root steps, if given.
pub struct Series {
    writer: Option<AmrSeries>,
    every: u64,
    last: Option<u64>,
    /// Time the run spent handing outputs over (the copy to the host included).
    pub stall: Duration,
    /// Of which copying the solution to the host.
    pub copy: Duration,
}

impl Series {
    /// A series in `out` (files `fields_NNNN.vthb`, `fields.pvd`) if `every` is given.
    pub fn new(out: &Path, every: Option<u64>, format: AmrOutput) -> Result<Self> {
        let writer = match every {
            Some(_) => Some(AmrSeries::new(out, "fields", format)?),
            None => None,
        };
        Ok(Series { writer, every: every.unwrap_or(u64::MAX), last: None, stall: Duration::ZERO, copy: Duration::ZERO })
    }

    /// Writes an output if the forest is at a multiple of `every` root steps (and not
    /// already written there); `time` gives its `.pvd` label from the root steps.
    pub fn at<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
        &mut self,
        forest: &mut Forest<D, Q, F, S>,
        time: &dyn Fn(u64) -> f64,
    ) -> Result<()> {
        if forest.steps() % self.every == 0 {
            self.write(forest, time)?;
        }
        Ok(())
    }

    /// Writes an output now unless one was written at this step.
    pub fn write<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
        &mut self,
        forest: &mut Forest<D, Q, F, S>,
        time: &dyn Fn(u64) -> f64,
    ) -> Result<()> {
        let Some(w) = self.writer.as_mut() else { return Ok(()) };
        if self.last == Some(forest.steps()) {
            return Ok(());
        }
        let t = Instant::now();
        let solution = forest.host_solution()?;
        self.copy += t.elapsed();
        w.write(time(forest.steps()), solution).context("writing the field series")?;
        self.stall += t.elapsed();
        self.last = Some(forest.steps());
        Ok(())
    }

    /// Waits for the writer; returns (outputs, the writer's busy time).
    pub fn finish(self) -> Result<(usize, Duration)> {
        match self.writer {
            Some(w) => {
                let n = w.outputs();
                Ok((n, w.finish().context("writing the field series")?))
            }
            None => Ok((0, Duration::ZERO)),
        }
    }
}

/// Removes `NAME.pvd`, `NAME.vthb`, `NAME_NNNN.vthb` and their folders of an earlier run
/// from `out`, for each of `names` (the folder never mixes two runs' series).
pub fn remove_series(out: &Path, names: &[&str]) -> Result<()> {
    let entries = std::fs::read_dir(out).with_context(|| format!("reading {}", out.display()))?;
    for e in entries {
        let e = e?;
        let file = e.file_name();
        let Some(f) = file.to_str() else { continue };
        let ours = names.iter().any(|n| {
            let rest = f.strip_prefix(n).unwrap_or("#");
            let stem = rest.strip_suffix(".vthb").or_else(|| rest.strip_suffix(".pvd")).unwrap_or(rest);
            stem.is_empty()
                || (stem.starts_with('_') && stem[1..].chars().all(|c| c.is_ascii_digit()) && stem.len() > 1)
        });
        if !ours {
            continue;
        }
        let p = e.path();
        let r = if e.file_type()?.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
        r.with_context(|| format!("removing the earlier result {}", p.display()))?;
    }
    Ok(())
}

/// How the examples write `.vthb` files: raw appended data, zlib with `--zlib`, in SI
/// with `[units]` (lattice units otherwise).
pub fn amr_output(zlib: bool, scales: Option<ramus::config::Scales>) -> AmrOutput {
    use ramus::output::{Compression, VtkFormat};
    let format =
        VtkFormat { compression: if zlib { Compression::Zlib } else { Compression::None }, ..Default::default() };
    match scales {
        Some(s) => AmrOutput {
            root_cell: s.dx,
            velocity: s.velocity(),
            rate: 1.0 / s.dt,
            density: s.density,
            units: "SI",
            format,
        },
        None => AmrOutput { format, ..Default::default() },
    }
}

/// The leaf-cell `.vtu` of the examples: binary like the `.vthb` files, shared points,
/// in the same units.
pub fn vtu_options(amr: &AmrOutput) -> ramus::output::VtuOptions {
    ramus::output::VtuOptions {
        format: amr.format,
        shared_points: true,
        length: amr.root_cell,
        velocity: amr.velocity,
        density: amr.density,
    }
}
