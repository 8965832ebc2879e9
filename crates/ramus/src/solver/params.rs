//! Relaxation and boundary parameters of a step (paper, section "Collision").

use ramus_kernels::stream::StepParams;
use ramus_kernels::Real;

use crate::config::Boundary;

/// Step parameters of a level with relaxation time `tau` (in that level's time step):
/// `ω = 1/τ`, and the wall velocity of each face (zero for periodic faces).
pub(crate) fn step_params<F: Real>(tau: f64, boundaries: &[Boundary; 6]) -> StepParams<F> {
    let mut wall_u = [[F::ZERO; 3]; 6];
    for (face, b) in boundaries.iter().enumerate() {
        if let Boundary::Wall { velocity } = b {
            for a in 0..3 {
                wall_u[face][a] = F::from_f64(velocity[a]);
            }
        }
    }
    StepParams { omega: F::from_f64(1.0 / tau), wall_u }
}
