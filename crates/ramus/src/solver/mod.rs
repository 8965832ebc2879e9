//! The lattice Boltzmann solver on the forest (paper, section "Lattice Boltzmann Solver").
//!
//! The per-cell kernels (collision, in-place streaming, boundary links, grid communication,
//! criteria) live in the device crate `ramus-kernels`; this module holds what the host
//! needs around them, one file each: the distribution pool and per-level relaxation
//! (`state.rs`), the recursive advance (`advance.rs`), the
//! step of a level and the choice of its kernel (`step.rs`), the per-level work lists
//! (`schedule.rs`) and the per-level lists of one selector (`by_level.rs`), the
//! synchronisation of levels for adaptation and output (`sync.rs`), the vorticity criterion
//! (`criterion.rs`), the moments read to the host (`readout.rs`), initial conditions,
//! macroscopic fields ([`Fields`], [`LeafCells`]) and metrics ([`metrics`]).

mod active;
pub(crate) mod advance;
pub(crate) mod blocks;
pub(crate) mod by_level;
pub(crate) mod criterion;
pub(crate) mod curved;
mod fields;
mod guard;
pub(crate) mod hazards;
mod init;
pub mod metrics;
pub(crate) mod obstacles;
mod params;
pub(crate) mod profiles;
mod readout;
pub(crate) mod schedule;
pub(crate) mod state;
mod step;
pub(crate) mod surface;
pub(crate) mod sync;

pub use active::{ActiveBlocks, Integrals};

pub use fields::{Fields, HostSolution, LeafCells};
pub(crate) use init::{equilibrium_pool, stored, Gradient};
pub use metrics::{amr_updates, AdaptTimes, LevelTimes, Timings};
pub use obstacles::SolidFn;
pub(crate) use params::step_params;
pub use profiles::ProfileFn;
