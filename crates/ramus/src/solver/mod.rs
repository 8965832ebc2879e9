//! The lattice Boltzmann solver on the forest (paper, section "Lattice Boltzmann Solver").
//!
//! The per-cell kernels (collision, in-place streaming, boundary links) live in the device
//! crate `ramus-kernels`; this module holds what the host needs around them: relaxation
//! parameters, initial conditions and macroscopic fields.

mod fields;
mod init;
mod params;

pub use fields::Fields;
pub(crate) use fields::extract;
pub(crate) use init::equilibrium_pool;
pub(crate) use params::step_params;
