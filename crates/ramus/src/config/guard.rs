//! The stability guard: how often [`crate::Forest::advance`] checks the solution, and the
//! Mach limit it enforces.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Speed of sound of the D2Q9/D3Q19/D3Q27 lattices, `c_s = 1/√3` (lattice units).
pub const SOUND_SPEED: f64 = 0.577_350_269_189_625_8;

/// When and what the stability guard checks (see [`crate::Error::Diverged`]).
///
/// Every `every` root steps [`crate::Forest::advance`] reduces, on the device, every
/// cell of the leaf blocks of every level (the cells that carry the solution; see
/// [`ramus_kernels::guard`] for why parents are left out): a population that is not finite, a density `ρ ≤ 0` (or not
/// finite), or a speed `|u| > max_mach · c_s` stops the run with
/// [`crate::Error::Diverged`], naming the step, the level and the cell. A check reads the
/// distributions once (half the memory traffic of one root-level step): at the default
/// 100 steps it costs under 1 % of a uniform grid's stepping, less with refinement
/// (BENCHMARKS.md has the measured figure), and a divergence is caught within 100 root
/// steps.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Guard {
    /// Root steps between checks (0: never check; not recommended).
    pub every: u64,
    /// Largest allowed Mach number `|u|/c_s`. The weakly compressible LBM is only
    /// meaningful at Ma ≪ 1; a cell at Ma ≥ 1 means the run has blown up.
    pub max_mach: f64,
}

impl Default for Guard {
    fn default() -> Self {
        Guard { every: 100, max_mach: 1.0 }
    }
}

impl Guard {
    /// Checks the fields.
    pub fn validate(&self) -> Result<()> {
        if !(self.max_mach.is_finite() && self.max_mach > 0.0 && self.max_mach <= 2.0) {
            return Err(Error::invalid("guard.max_mach", self.max_mach, "a Mach limit in (0, 2]"));
        }
        Ok(())
    }

    /// The speed limit in lattice units, `max_mach · c_s`.
    pub fn max_speed(&self) -> f64 {
        self.max_mach * SOUND_SPEED
    }
}
