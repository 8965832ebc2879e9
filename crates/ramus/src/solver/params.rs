//! Relaxation and boundary parameters of a step (paper, sections "Collision" and "Lattice
//! Boltzmann Method").

use ramus_kernels::stream::{StepParams, FACE_PRESSURE, FACE_VELOCITY};
use ramus_kernels::Real;

use crate::config::Boundary;

/// Step parameters of a level with relaxation time `tau` (in that level's time step) and
/// `tau_odd` for the odd non-equilibrium part (TRT's `τ⁻`; `tau` for BGK): `ω = 1/τ`,
/// `ω⁻ = 1/τ⁻`, and each face's rule, velocity and density (lattice units are the same on
/// every level, `Δx_L/Δt_L = 1`).
pub(crate) fn step_params<F: Real>(tau: f64, tau_odd: f64, boundaries: &[Boundary; 6]) -> StepParams<F> {
    let mut p = StepParams::<F> {
        omega: F::from_f64(1.0 / tau),
        omega_minus: F::from_f64(1.0 / tau_odd),
        ..Default::default()
    };
    for (face, b) in boundaries.iter().enumerate() {
        p.wall_rho[face] = F::ONE;
        p.face_kind[face] = FACE_VELOCITY;
        match *b {
            Boundary::Wall { velocity } | Boundary::Velocity { velocity } => {
                p.wall_u[face] = velocity.map(F::from_f64);
            }
            Boundary::Pressure { density } => {
                p.face_kind[face] = FACE_PRESSURE;
                p.wall_rho[face] = F::from_f64(density);
            }
            Boundary::Periodic => {}
        }
    }
    p
}
