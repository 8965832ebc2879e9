//! Physical units of a case: the SI inputs from which the lattice parameters follow
//! (acoustic scaling: Δx = L / N, Δt = u_lattice Δx / U, ν_lattice = ν Δt / Δx²; paper,
//! section "Lattice Boltzmann Method"), checked where a lattice run would leave the
//! weakly compressible regime or BGK's stable range, with errors naming the inputs.

use serde::{Deserialize, Serialize};

use super::{MAX_TAU, MAX_WALL_SPEED, TAU_MARGIN};
use crate::error::{Error, Result};

/// SI inputs of a case (`[units]` in a case file).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Units {
    /// Reference length in m (the cavity side, the cylinder's side D).
    pub length: f64,
    /// Reference velocity in m/s (the lid speed, the inflow speed U_0).
    pub velocity: f64,
    /// Density in kg/m³.
    pub density: f64,
    /// Kinematic viscosity in m²/s.
    pub viscosity: f64,
    /// Root time step in s; if absent, the case's lattice velocity sets it
    /// (`Δt = u_lattice Δx / U`). If given, it sets the lattice velocity instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dt: Option<f64>,
}

/// What [`Units::scales`] derives: the lattice run and the factors to SI.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scales {
    /// Root cell width Δx in m.
    pub dx: f64,
    /// Root time step Δt in s.
    pub dt: f64,
    /// Density in kg/m³ of lattice density 1.
    pub density: f64,
    /// The reference velocity in lattice units (`U Δt / Δx`).
    pub lattice_velocity: f64,
    /// Reynolds number `U L / ν`.
    pub reynolds: f64,
    /// Root-level relaxation time `3 ν Δt / Δx² + 1/2`.
    pub tau: f64,
}

impl Scales {
    /// m/s per lattice velocity unit (`Δx / Δt`).
    pub fn velocity(&self) -> f64 {
        self.dx / self.dt
    }
}

fn positive(field: &'static str, v: f64, unit: &str) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(field, v, format!("a finite value > 0 in {unit}")))
    }
}

impl Units {
    /// Checks every input is finite and positive, naming the field.
    pub fn validate(&self) -> Result<()> {
        positive("units.length", self.length, "m")?;
        positive("units.velocity", self.velocity, "m/s")?;
        positive("units.density", self.density, "kg/m³")?;
        positive("units.viscosity", self.viscosity, "m²/s")?;
        if let Some(dt) = self.dt {
            positive("units.dt", dt, "s")?;
        }
        Ok(())
    }

    /// The lattice run for `cells` root cells per reference length, with the case's
    /// `lattice_velocity` unless `dt` is given. Errors name the physical inputs: a Mach
    /// number `√3 u_lattice` of 0.3 or more (`units.dt` or the lattice velocity too
    /// large), or a relaxation time outside BGK's range (`units.viscosity` with `Δt`).
    pub fn scales(&self, cells: f64, lattice_velocity: f64) -> Result<Scales> {
        self.validate()?;
        positive("cells per reference length", cells, "root cells")?;
        let dx = self.length / cells;
        let (dt, u) = match self.dt {
            Some(dt) => (dt, self.velocity * dt / dx),
            None => {
                positive("lattice velocity", lattice_velocity, "lattice units")?;
                (lattice_velocity * dx / self.velocity, lattice_velocity)
            }
        };
        let inputs = format!(
            "length {} m over {cells} cells, velocity {} m/s, viscosity {} m²/s, dt {dt:e} s",
            self.length, self.velocity, self.viscosity
        );
        let mach = u * 3f64.sqrt();
        if !(u < MAX_WALL_SPEED) || mach >= 0.3 {
            return Err(Error::invalid(
                if self.dt.is_some() { "units.dt" } else { "units.velocity" },
                inputs,
                format!(
                    "a lattice velocity U·dt/dx = {u:.4} with Mach number {mach:.3} below 0.3 (weakly \
                     compressible): a smaller dt or more cells per length"
                ),
            ));
        }
        let tau = 3.0 * self.viscosity * dt / (dx * dx) + 0.5;
        if !(tau > 0.5 + TAU_MARGIN && tau <= MAX_TAU) {
            return Err(Error::invalid(
                "units.viscosity",
                inputs,
                format!(
                    "a relaxation time tau = 3 nu dt/dx^2 + 1/2 = {tau:.6} within ({}, {MAX_TAU}]: change dt \
                     (or the lattice velocity) or the cells per length",
                    0.5 + TAU_MARGIN
                ),
            ));
        }
        Ok(Scales {
            dx,
            dt,
            density: self.density,
            lattice_velocity: u,
            reynolds: self.velocity * self.length / self.viscosity,
            tau,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Water (ν = 1.0e-6 m²/s, ρ = 998.2 kg/m³ at 20 °C) in a 0.1 m cavity with a lid at
    /// 0.01 m/s: Re = U L / ν = 1000 exactly; on 64 cells with lattice lid speed 0.1,
    /// Δx = 0.1/64 m, Δt = 0.1 Δx / 0.01 m/s, τ = 3 (U_lat N / Re) + 1/2 = 0.5192.
    #[test]
    fn water_cavity_at_re_1000() {
        let u = Units { length: 0.1, velocity: 0.01, density: 998.2, viscosity: 1.0e-6, dt: None };
        let s = u.scales(64.0, 0.1).unwrap();
        assert_eq!(s.dx, 0.1 / 64.0);
        assert!((s.dt - 0.1 * (0.1 / 64.0) / 0.01).abs() < 1e-18);
        assert!((s.reynolds - 1000.0).abs() < 1e-9);
        assert!((s.tau - (3.0 * 0.1 * 64.0 / 1000.0 + 0.5)).abs() < 1e-12, "{}", s.tau);
        assert!((s.velocity() - 0.01 / 0.1).abs() < 1e-15);
        // The same run through dt: the lattice velocity follows.
        let by_dt = Units { dt: Some(s.dt), ..u }.scales(64.0, 0.0).unwrap();
        assert!((by_dt.lattice_velocity - 0.1).abs() < 1e-12);
    }

    #[test]
    fn supersonic_and_unstable_inputs_are_named() {
        let u = Units { length: 0.1, velocity: 0.01, density: 998.2, viscosity: 1.0e-6, dt: Some(0.01) };
        // U dt / dx = 0.01 · 0.01 / (0.1/64) = 0.064: fine; dt = 0.1 s gives 0.64.
        assert!(u.scales(64.0, 0.0).is_ok());
        let e = Units { dt: Some(0.1), ..u }.scales(64.0, 0.0).unwrap_err().to_string();
        assert!(e.contains("units.dt") && e.contains("Mach"), "{e}");
        // A tiny viscosity at a coarse dt: tau -> 1/2.
        let e = Units { viscosity: 1e-12, ..u }.scales(64.0, 0.0).unwrap_err().to_string();
        assert!(e.contains("units.viscosity") && e.contains("tau"), "{e}");
        let e = Units { length: -1.0, ..u }.validate().unwrap_err().to_string();
        assert!(e.contains("units.length"), "{e}");
    }
}
