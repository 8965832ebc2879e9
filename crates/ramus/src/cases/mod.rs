//! Ready-made set-ups of the paper's test cases (section "Validation and Case Studies")
//! and of the validation cases beyond it (the Taylor–Green vortex).

pub mod cavity;
pub mod cylinder;
pub mod ghia;
pub mod obstacle;
pub mod shedding;
pub mod taylor_green;
pub mod taylor_green_dns;

use crate::config::{Criterion, Interpolation, Refinement, WallRefinement};

/// The refinement of the flows past a body (cylinder, obstacle): the wake adapts every 32
/// root steps by the vorticity criterion (`N_start = −3`, `N_inc = −1`, lengths in root
/// cells `root`; none without `adapt`), and `walls` is frozen at construction.
pub(crate) fn wake_refinement(
    levels: usize,
    interpolation: Interpolation,
    adapt: bool,
    root: usize,
    walls: WallRefinement,
) -> Refinement {
    Refinement {
        levels,
        interpolation,
        every: 32,
        on_demand: false,
        criterion: if adapt {
            Criterion::Vorticity { n_start: -3.0, n_inc: -1.0, length: Some(root as f64) }
        } else {
            Criterion::None
        },
        walls: Some(walls),
        capacity: None,
    }
}
