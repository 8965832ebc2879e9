//! Relaxation and boundary parameters of a step (paper, sections "Collision" and "Lattice
//! Boltzmann Method").

use ramus_kernels::stream::{StepParams, FACE_PRESSURE, FACE_VELOCITY};
use ramus_kernels::Real;

use crate::config::Boundary;

/// Step parameters of a level with relaxation time `tau` (in that level's time step) and
/// `tau_odd` for the odd non-equilibrium part (TRT's `τ⁻`; `tau` for BGK): `ω = 1/τ`,
/// `ω⁻ = 1/τ⁻`, the level's body force density `force` (see [`level_force`]), and each
/// face's rule, velocity and density (lattice units are the same on every level,
/// `Δx_L/Δt_L = 1`).
pub(crate) fn step_params<F: Real>(
    tau: f64,
    tau_odd: f64,
    force: [f64; 3],
    boundaries: &[Boundary; 6],
) -> StepParams<F> {
    let mut p = StepParams::<F> {
        omega: F::from_f64(1.0 / tau),
        omega_minus: F::from_f64(1.0 / tau_odd),
        force: force.map(F::from_f64),
        ..Default::default()
    };
    for (face, b) in boundaries.iter().enumerate() {
        p.wall_rho[face] = F::ONE;
        p.face_kind[face] = FACE_VELOCITY;
        match *b {
            Boundary::Wall { velocity } | Boundary::Velocity { velocity, .. } => {
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

/// The body force density of level `l` in its lattice units for `root` in the root's:
/// `F_L = F_0 / 2^L`. A force density is `ρ a` with the acceleration `a` in lattice units
/// `a Δt²/Δx`, which halves per level with `Δx_L = Δt_L = 2^{-L}`.
pub(crate) fn level_force(root: [f64; 3], l: usize) -> [f64; 3] {
    let s = 1.0 / (1u64 << l) as f64;
    root.map(|f| f * s)
}
