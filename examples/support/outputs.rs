//! The output flags every simulation example has (`--no-vtu`, `--output-every`, `--zlib`,
//! `--no-plots`, `--series-every`, `--probe`), flattened into its arguments and case file,
//! and their validation in the case's own units of time and length.

use anyhow::{bail, Result};
use ramus::config::Scales;
use ramus::output::AmrOutput;
use serde::{Deserialize, Serialize};

use super::monitor::{check_probes, parse_probe, Probe};
use super::series::amr_output;

/// What a run writes besides its own results (case-file keys of the same names).
#[derive(clap::Args, Serialize, Deserialize, Clone, Debug)]
pub struct OutputFlags {
    /// Skip the final field files: NAME.vtu (the leaf cells, one hexahedron each, binary)
    /// and NAME.vthb (every level).
    #[arg(long)]
    pub no_vtu: bool,
    /// Write the fields every this many time units of the case (lid passes for the
    /// cavity, D/U0 for the cylinder): OUT/fields_NNNN.vthb (every level, ParaView's AMR
    /// reader) and OUT/fields.pvd (the series, with the time in that unit).
    #[arg(long)]
    pub output_every: Option<f64>,
    /// Compress the binary data of the .vthb and .vtu outputs with zlib (smaller, slower
    /// to write).
    #[arg(long)]
    pub zlib: bool,
    /// Skip the PNG plots (the cavity's centreline profiles against Ghia et al. or the
    /// cylinder's C_D and C_L; cells per level and MLUPS over time).
    #[arg(long)]
    pub no_plots: bool,
    /// Sample OUT/series.csv (mass, kinetic energy, max |u|, cells per level, MLUPS) and
    /// OUT/probes.csv every this many time units of the case, at the start and at the end.
    #[arg(long, default_value_t = 1.0)]
    pub series_every: f64,
    /// A point probe `name=x,y[,z]` in the case's length unit (cavity sides, 0..1; for
    /// the cylinder D from the lower-left corner of the channel), repeatable; in a case
    /// file, `[[probes]]` tables with `name` and `position`.
    #[arg(long = "probe", value_parser = parse_probe)]
    #[serde(default)]
    pub probes: Vec<Probe>,
}

/// [`OutputFlags`] checked and converted to root steps.
#[derive(Clone, Debug)]
pub struct Outputs {
    /// Write NAME.vtu and NAME.vthb at the end.
    pub vtu: bool,
    /// Root steps between series outputs.
    pub output_every: Option<u64>,
    /// How the .vthb and .vtu files are written (format, SI scales).
    pub amr: AmrOutput,
    pub plots: bool,
    /// Root steps between samples of series.csv and probes.csv.
    pub series_every: u64,
    pub probes: Vec<Probe>,
}

impl OutputFlags {
    /// Checks the flags: times are finite and positive in `unit` (converted by
    /// `steps_for`, at least one root step), probes lie in the `dim`-dimensional box
    /// `extent` (the case's length unit).
    pub fn validate(
        &self,
        unit: &str,
        steps_for: impl Fn(f64) -> u64,
        scales: Option<Scales>,
        dim: usize,
        extent: [f64; 3],
    ) -> Result<Outputs> {
        let output_every = match self.output_every {
            Some(t) if !(t.is_finite() && t > 0.0) => {
                bail!("invalid output_every = {t}: a finite time > 0 (in {unit})")
            }
            Some(t) => Some(steps_for(t).max(1)),
            None => None,
        };
        if !(self.series_every.is_finite() && self.series_every > 0.0) {
            bail!("invalid series_every = {}: a finite time > 0 (in {unit})", self.series_every);
        }
        check_probes(&self.probes, dim, extent)?;
        Ok(Outputs {
            vtu: !self.no_vtu,
            output_every,
            amr: amr_output(self.zlib, scales),
            plots: !self.no_plots,
            series_every: steps_for(self.series_every).max(1),
            probes: self.probes.clone(),
        })
    }
}
