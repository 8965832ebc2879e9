//! The decaying three-dimensional Taylor–Green vortex (Taylor & Green, *Proc. R. Soc.
//! Lond. A* 158 (1937) 499–521; at Re = 1600 the test case C3.5 of the International
//! Workshops on High-Order CFD Methods, reference DNS in [`super::taylor_green_dns`]).
//!
//! In units of the length `L = 1/k` and the velocity `U₀`, on the periodic box
//! `[0, 2πL]³`:
//!
//! ```text
//! u =  U₀ sin(x/L) cos(y/L) cos(z/L)
//! v = −U₀ cos(x/L) sin(y/L) cos(z/L)
//! w =  0
//! p = p₀ + ρ₀U₀²/16 (cos(2x/L) + cos(2y/L)) (cos(2z/L) + 2)
//! ```
//!
//! with `Re = U₀L/ν` and time in `L/U₀` (the workshop's definitions; van Rees, Leonard,
//! Pullin & Koumoutsakos, *J. Comput. Phys.* 230 (2011) 2794–2805, eq. 10 with θ = 0).
//! On a lattice of `n` cells per `2πL` the wavenumber is `k = 2π/n` (per cell), so
//! `ν = U₀/(k Re) = U₀ n/(2π Re)` and one root step is `U₀ k` convective time units. The
//! pressure enters the weakly compressible lattice Boltzmann model through the density,
//! `ρ = ρ₀ + (p − p₀)/c_s² = 1 + 3 (p − p₀)` (`ρ₀ = 1`, `c_s² = 1/3`).
//!
//! Diagnostics: the kinetic energy per unit mass `E = Σ ½ρ|u|² / Σ ρ` in units of `U₀²`
//! (`E(0) = 1/8`), and the dissipation rate `ε = −dE/dt` in `U₀³/L`, here by central
//! differences of sampled energies ([`dissipation_rate`]). For the initial field every
//! velocity component is a single Fourier mode with `|k|² = 3/L²`, so the incompressible
//! dissipation `ε = ν ⟨|∇u|²⟩` starts at `ε(0) = 3ν U₀² k²/4`, i.e. `3/(4 Re)` in
//! convective units ([`TaylorGreen::initial_dissipation`]).

use std::f64::consts::PI;

use crate::backend::Backend;
use crate::config::{Boundary, Face, Fluid, ForestConfig, MAX_WALL_SPEED, TAU_MARGIN};
use crate::error::{Error, Result};
use crate::solver::Fields;

/// Parameters of a Taylor–Green vortex on a uniform periodic root grid.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaylorGreen {
    /// Cells per period `2πL` along every axis (a multiple of 4, at least 8).
    pub n: usize,
    /// Reynolds number `U₀ L / ν` (`L = 1/k`).
    pub re: f64,
    /// Velocity amplitude `U₀` in lattice units (`Ma = U₀ √3`).
    pub u0: f64,
}

impl TaylorGreen {
    /// `U₀` at Mach number 0.1 (`0.1 c_s = 0.1/√3`), the Mach number of the workshop's
    /// compressible set-up (case C3.5) and a low enough one for the weakly compressible
    /// model.
    pub const U0_MACH_01: f64 = 0.057_735_026_918_962_58;

    /// Wavenumber `k = 2π/n` in inverse root cells.
    pub fn k(&self) -> f64 {
        2.0 * PI / self.n as f64
    }

    /// Kinematic viscosity `ν = U₀ / (k Re)` in root lattice units.
    pub fn viscosity(&self) -> f64 {
        self.u0 / (self.k() * self.re)
    }

    /// Convective time units (`L/U₀`) per root step: `U₀ k`.
    pub fn time_per_step(&self) -> f64 {
        self.u0 * self.k()
    }

    /// The convective time after `steps` root steps.
    pub fn time(&self, steps: u64) -> f64 {
        steps as f64 * self.time_per_step()
    }

    /// The root step nearest to convective time `t`.
    pub fn steps_for_time(&self, t: f64) -> u64 {
        (t / self.time_per_step()).round().max(0.0) as u64
    }

    /// The incompressible dissipation rate of the initial field, `3/(4 Re)` in `U₀³/L`.
    pub fn initial_dissipation(&self) -> f64 {
        0.75 / self.re
    }

    /// Validates the parameters (naming the field at fault) and builds the forest
    /// configuration: `n³` cells, periodic on every face, `ν` from `Re`.
    pub fn forest_config(&self, backend: Backend) -> Result<ForestConfig> {
        if self.n < 8 || self.n % 4 != 0 {
            return Err(Error::invalid("n", self.n, "a multiple of 4 (the block edge) and at least 8"));
        }
        if !(self.re.is_finite() && self.re > 0.0) {
            return Err(Error::invalid("re", self.re, "a finite Reynolds number > 0"));
        }
        if !(self.u0.is_finite() && self.u0 > 0.0 && self.u0 < MAX_WALL_SPEED) {
            return Err(Error::invalid(
                "u0",
                self.u0,
                format!(
                    "0 < u0 < {MAX_WALL_SPEED} (lattice units; the weakly compressible LBM needs a small Mach number)"
                ),
            ));
        }
        let mut config =
            ForestConfig::new([self.n; 3]).fluid(Fluid::Viscosity { nu: self.viscosity() }).backend(backend);
        for face in Face::ALL {
            config = config.boundary(face, Boundary::Periodic);
        }
        config.validate(3).map_err(|e| match e {
            // The one bound the user meets at high Re: name the three knobs.
            Error::InvalidParameter { field, value, .. } if field == "tau" => Error::InvalidParameter {
                field,
                value,
                allowed: format!(
                    "tau = 3 nu + 1/2 > {} (BGK is unstable as tau -> 1/2), with nu = u0 n / (2 pi Re) = {:.3e}: \
                     raise u0 or n, or lower re",
                    0.5 + TAU_MARGIN,
                    self.viscosity()
                ),
            },
            e => e,
        })?;
        Ok(config)
    }

    /// The initial state `(ρ, u)` at `x` (root lattice units; cell centres at `i + ½`).
    pub fn state(&self, x: [f64; 3]) -> (f64, [f64; 3]) {
        let k = self.k();
        let (sx, cx) = (k * x[0]).sin_cos();
        let (sy, cy) = (k * x[1]).sin_cos();
        let cz = (k * x[2]).cos();
        let u = [self.u0 * sx * cy * cz, -self.u0 * cx * sy * cz, 0.0];
        let dp = self.u0 * self.u0 / 16.0
            * ((2.0 * k * x[0]).cos() + (2.0 * k * x[1]).cos())
            * ((2.0 * k * x[2]).cos() + 2.0);
        (1.0 + 3.0 * dp, u)
    }

    /// The velocity gradient of the initial state at `x`: `g[a][b] = ∂u_b/∂x_a` (root
    /// lattice units), for [`crate::Forest::initialize_with_gradient`].
    pub fn gradient(&self, x: [f64; 3]) -> [[f64; 3]; 3] {
        let k = self.k();
        let (sx, cx) = (k * x[0]).sin_cos();
        let (sy, cy) = (k * x[1]).sin_cos();
        let (sz, cz) = (k * x[2]).sin_cos();
        let a = self.u0 * k;
        [
            [a * cx * cy * cz, a * sx * sy * cz, 0.0],
            [-a * sx * sy * cz, -a * cx * cy * cz, 0.0],
            [-a * sx * cy * sz, a * cx * sy * sz, 0.0],
        ]
    }

    /// Kinetic energy per unit mass `Σ ½ρ|u|² / Σ ρ` of `fields`, in units of `U₀²`.
    /// Not finite if any cell is not.
    pub fn kinetic_energy(&self, fields: &Fields) -> f64 {
        let (mut energy, mut mass) = (0.0, 0.0);
        for (rho, u) in fields.rho.iter().zip(&fields.u) {
            energy += 0.5 * rho * (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
            mass += rho;
        }
        energy / mass / (self.u0 * self.u0)
    }
}

/// `ε = −dE/dt` at every sample of `(t, E)`: central differences inside, one-sided at
/// the two ends (`NaN` where fewer than two samples exist or times do not increase).
pub fn dissipation_rate(t: &[f64], e: &[f64]) -> Vec<f64> {
    let n = t.len().min(e.len());
    (0..n)
        .map(|i| {
            let (a, b) = (i.saturating_sub(1), (i + 1).min(n.saturating_sub(1)));
            if b > a && t[b] > t[a] {
                -(e[b] - e[a]) / (t[b] - t[a])
            } else {
                f64::NAN
            }
        })
        .collect()
}

/// The largest `ε` of a sampled history and its time, refined by the parabola through
/// the largest sample and its two neighbours (`None` without a finite value).
pub fn peak(t: &[f64], eps: &[f64]) -> Option<(f64, f64)> {
    let i = (0..t.len().min(eps.len())).filter(|&i| eps[i].is_finite()).max_by(|&a, &b| eps[a].total_cmp(&eps[b]))?;
    if i == 0 || i + 1 >= t.len().min(eps.len()) || !eps[i - 1].is_finite() || !eps[i + 1].is_finite() {
        return Some((t[i], eps[i]));
    }
    // Vertex of the parabola through three points (uneven spacing allowed).
    let (x0, x1, x2) = (t[i - 1], t[i], t[i + 1]);
    let (y0, y1, y2) = (eps[i - 1], eps[i], eps[i + 1]);
    let d01 = (y1 - y0) / (x1 - x0);
    let d12 = (y2 - y1) / (x2 - x1);
    let curvature = (d12 - d01) / (x2 - x0);
    if !(curvature < 0.0) {
        return Some((x1, y1));
    }
    let slope_at_x1 = d01 + curvature * (x1 - x0);
    let dx = -slope_at_x1 / (2.0 * curvature);
    let dx = dx.clamp(x0 - x1, x2 - x1);
    Some((x1 + dx, y1 + slope_at_x1 * dx + curvature * dx * dx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_initial_dissipation() {
        let c = TaylorGreen { n: 64, re: 1600.0, u0: 0.06 };
        assert!((c.viscosity() - 0.06 * 64.0 / (2.0 * PI * 1600.0)).abs() < 1e-18);
        assert_eq!(c.steps_for_time(c.time(1234)), 1234);
        assert!((c.initial_dissipation() - 4.6875e-4).abs() < 1e-15);
    }

    #[test]
    fn central_differences_and_parabolic_peak() {
        let t: Vec<f64> = (0..41).map(|i| 0.25 * i as f64).collect();
        // E = 1 − (t − 3)³/3 + 4t: ε = (t − 3)² − 4, exact for central differences up to h²/3.
        let e: Vec<f64> = t.iter().map(|&t| 1.0 - (t - 3.0).powi(3) / 3.0 + 4.0 * t).collect();
        let eps = dissipation_rate(&t, &e);
        for i in 1..40 {
            let exact = (t[i] - 3.0).powi(2) - 4.0;
            assert!((eps[i] - exact - 0.25 * 0.25 / 3.0).abs() < 1e-12, "{i}: {} {exact}", eps[i]);
        }
        let bump: Vec<f64> = t.iter().map(|&t| 2.0 - (t - 4.1).powi(2)).collect();
        let (tp, vp) = peak(&t, &bump).unwrap();
        assert!((tp - 4.1).abs() < 1e-12 && (vp - 2.0).abs() < 1e-12, "{tp} {vp}");
        assert!(dissipation_rate(&[1.0], &[1.0])[0].is_nan());
    }
}
