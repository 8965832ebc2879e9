//! What a run tracks over time: `series.csv` (mass, kinetic energy, largest speed, leaf
//! cells per level and MLUPS at each sample) and `probes.csv` (ρ and u at the case's
//! `[[probes]]`, interpolated on the finest level around each point, see
//! [`ramus::Forest::sample`]). Samples are taken every `--series-every T` (the case's time unit), at
//! the start and at the end; each is a copy of the solution to the host, evaluated and
//! written on an output thread ([`ramus::output::series::Writer`]) while the run goes on.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use ramus::output::series::Writer;
use ramus::{Dim, Float, Forest, PoolStorage, VelocitySet};
use serde::{Deserialize, Serialize};

/// A point probe: `name` and its position in the case's length unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// Column prefix in `probes.csv` (letters, digits, `_`).
    pub name: String,
    /// Position (2 or 3 coordinates, the case's length unit).
    pub position: Vec<f64>,
}

/// Parses `--probe name=x,y[,z]`.
pub fn parse_probe(s: &str) -> std::result::Result<Probe, String> {
    let (name, pos) = s.split_once('=').ok_or_else(|| format!("'{s}': expected name=x,y[,z]"))?;
    let position = pos
        .split(',')
        .map(|v| v.trim().parse::<f64>().map_err(|_| format!("'{v}' in '{s}' is not a number")))
        .collect::<std::result::Result<Vec<f64>, String>>()?;
    Ok(Probe { name: name.trim().to_string(), position })
}

/// Checks `probes` for a `dim`-dimensional domain `[0, extent]` (case units): names
/// distinct and plain, positions finite and inside; an error naming the probe otherwise.
pub fn check_probes(probes: &[Probe], dim: usize, extent: [f64; 3]) -> Result<()> {
    for (i, p) in probes.iter().enumerate() {
        if p.name.is_empty() || !p.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            bail!("invalid probes[{i}].name = '{}': letters, digits and _ (a CSV column prefix)", p.name);
        }
        if probes[..i].iter().any(|q| q.name == p.name) {
            bail!("invalid probes[{i}].name = '{}': used by an earlier probe", p.name);
        }
        if p.position.len() != dim {
            bail!("invalid probes[{i}].position = {:?}: {dim} coordinates in {dim}D", p.position);
        }
        for (a, &x) in p.position.iter().enumerate() {
            if !(x.is_finite() && (0.0..=extent[a]).contains(&x)) {
                bail!("invalid probes[{i}].position = {:?}: coordinate {a} within 0 ..= {}", p.position, extent[a]);
            }
        }
    }
    Ok(())
}

/// CSV lines so far (kept to rewrite the files atomically).
#[derive(Default)]
struct Lines {
    series: String,
    probes: String,
}

/// Samples of one run (see the module documentation).
pub struct Monitor {
    out: PathBuf,
    every: u64,
    /// Root cells per case length unit.
    length: f64,
    probes: Vec<Probe>,
    lines: Arc<Mutex<Lines>>,
    writer: Writer,
    last: Option<u64>,
    /// Stepping time and updates at the previous sample (for the MLUPS since then).
    previous: (Duration, f64),
    /// Time the run spent handing samples over.
    pub stall: Duration,
    /// Samples taken.
    pub samples: usize,
    /// Factors from lattice units to the files' units: (mass, energy, speed, density).
    factors: [f64; 4],
    /// Seconds per root step (`[units]`): adds a `time_s` column after the case's time.
    seconds_per_step: Option<f64>,
}

impl Monitor {
    /// A monitor writing to `out` every `every` root steps; `length` root cells per case
    /// length unit; `time_unit` names the time column (`lid_passes`, `t_d_over_u0`).
    /// With `scales` (`[units]`), the columns are in SI: mass in kg (kg per metre of depth
    /// in 2D), energy in J (J/m in 2D), speeds in m/s, densities in kg/m³, and a `time_s`
    /// column gives the simulated time in seconds.
    pub fn new(
        out: &Path,
        every: u64,
        length: f64,
        probes: Vec<Probe>,
        dim: usize,
        time_unit: &str,
        scales: Option<ramus::config::Scales>,
    ) -> Result<Self> {
        let (factors, [m, e, v, r]) = match scales {
            Some(s) => {
                let volume = s.dx.powi(dim as i32) * s.density;
                let depth = if dim == 2 { "_per_m" } else { "" };
                (
                    [volume, volume * s.velocity() * s.velocity(), s.velocity(), s.density],
                    [format!("_kg{depth}"), format!("_J{depth}"), "_m_s".to_string(), "_kg_m3".to_string()],
                )
            }
            None => ([1.0; 4], Default::default()),
        };
        let time = match scales {
            Some(_) => format!("{time_unit},time_s"),
            None => time_unit.to_string(),
        };
        let mut lines =
            Lines { series: format!("step,{time},mass{m},kinetic_energy{e},max_speed{v},mlups"), ..Default::default() };
        lines.probes = format!("step,{time}");
        for p in &probes {
            lines.probes += &format!(",{0}_rho{r},{0}_ux{v},{0}_uy{v}", p.name);
            if dim == 3 {
                lines.probes += &format!(",{}_uz{v}", p.name);
            }
        }
        lines.probes.push('\n');
        Ok(Monitor {
            out: out.to_path_buf(),
            every: every.max(1),
            length,
            probes,
            lines: Arc::new(Mutex::new(lines)),
            writer: Writer::new(out)?,
            last: None,
            previous: (Duration::ZERO, 0.0),
            stall: Duration::ZERO,
            samples: 0,
            factors,
            seconds_per_step: scales.map(|s| s.dt),
        })
    }

    /// Samples if the forest is at a multiple of `every` root steps.
    pub fn at<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
        &mut self,
        forest: &mut Forest<D, Q, F, S>,
        time: &dyn Fn(u64) -> f64,
    ) -> Result<()> {
        if forest.steps() % self.every == 0 {
            self.sample(forest, time)?;
        }
        Ok(())
    }

    /// Samples now unless a sample was taken at this step.
    pub fn sample<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
        &mut self,
        forest: &mut Forest<D, Q, F, S>,
        time: &dyn Fn(u64) -> f64,
    ) -> Result<()> {
        let step = forest.steps();
        if self.last == Some(step) {
            return Ok(());
        }
        let t0 = Instant::now();
        let timings = forest.timings();
        let (stepping, updates) = (timings.stepping, timings.updates);
        let dt = stepping.saturating_sub(self.previous.0).as_secs_f64();
        let mlups = if dt > 0.0 { (updates - self.previous.1) / dt / 1e6 } else { f64::NAN };
        self.previous = (stepping, updates);
        let solution = forest.host_solution().context("copying the solution for series.csv")?;
        let time = time(step);
        let seconds = self.seconds_per_step.map(|dt| step as f64 * dt);
        let points: Vec<[f64; 3]> = self
            .probes
            .iter()
            .map(|p| {
                let mut x = [0.0; 3];
                for (a, &c) in p.position.iter().enumerate() {
                    x[a] = c * self.length;
                }
                x
            })
            .collect();
        let (lines, out, dim) = (self.lines.clone(), self.out.clone(), D::D);
        let header_levels = self.samples == 0;
        let [fm, fe, fv, fr] = self.factors;
        self.writer.submit(Box::new(move || {
            let t = Instant::now();
            let s = solution.integrals();
            let probes = solution.sample(&points);
            // A panicking job ends the thread; the lines themselves stay whole.
            let mut l = lines.lock().unwrap_or_else(|e| e.into_inner());
            if header_levels {
                for k in 0..s.cells_per_level.len() {
                    l.series += &format!(",cells_level{k}");
                }
                l.series.push('\n');
            }
            // Non-finite values are written empty: no file holds a number standing for NaN.
            let num = |v: f64| if v.is_finite() { format!("{v:.10e}") } else { String::new() };
            let time = match seconds {
                Some(s) => format!("{},{}", num(time), num(s)),
                None => num(time),
            };
            l.series += &format!(
                "{step},{time},{},{},{},{}",
                num(s.mass * fm),
                num(s.kinetic_energy * fe),
                num(s.max_speed * fv),
                num(mlups)
            );
            for c in &s.cells_per_level {
                l.series += &format!(",{c}");
            }
            l.series.push('\n');
            l.probes += &format!("{step},{time}");
            for (rho, u) in &probes {
                l.probes += &format!(",{},{},{}", num(rho * fr), num(u[0] * fv), num(u[1] * fv));
                if dim == 3 {
                    l.probes += &format!(",{}", num(u[2] * fv));
                }
            }
            l.probes.push('\n');
            ramus::output::write_atomic(out.join("series.csv"), l.series.as_bytes())?;
            if !probes.is_empty() {
                ramus::output::write_atomic(out.join("probes.csv"), l.probes.as_bytes())?;
            }
            Ok(t.elapsed())
        }))?;
        self.stall += t0.elapsed();
        self.samples += 1;
        self.last = Some(step);
        Ok(())
    }

    /// Waits for the writer; returns its busy time.
    pub fn finish(self) -> Result<Duration> {
        self.writer.finish().context("writing series.csv")
    }
}
