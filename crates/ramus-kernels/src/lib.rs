//! Device kernels of ramus.
//!
//! Everything here is plain generic `no_std` Rust. The host crate calls these functions
//! directly in its CPU backend (rayon), and `cargo xtask ptx` compiles the very same
//! functions to PTX for the CUDA backend through the entry points that [`registry`] generates
//! (only for `target_arch = "nvptx64"`). Both backends therefore run one source, with the same
//! operation order, so their results agree bit for bit.
//!
//! **Inlining.** On the GPU every helper is `#[inline(always)]`: a call there costs
//! registers and local memory. On the host that is kept only where the CPU backend's
//! speed needs it: the per-cell step and its collisions (`stream`, `collision`,
//! `collide`, `mrt`, `regularized`, `les`, `eddy`, `storage`, `lattice`, `block`, `real`,
//! `profile`, `launch`) and the grid communication (`interpolate`, `average`,
//! `exchange`); elsewhere the host gets `#[inline]`, a hint, and the pair step's per-cell
//! path stays out of line ([`pairs`]). Forced everywhere, it made the build after a
//! kernel change 1.6× as long (the host entry points of all 552 kernels; BENCHMARKS.md,
//! thirty-fifth session) with the CPU backend no faster. The attributes differ by target
//! only, and no floating-point result depends on inlining (no contraction): the two
//! backends still agree bit for bit.
//!
//! Module map (paper: `gpu-native-amr-lbm-paper.tex`):
//! - [`amr`]: forest metadata layout, status codes, and the kernels of the adapt routine.
//! - [`launch`]: the [`launch::Kernel`] trait: one data-parallel source for both backends.
//! - [`counted`]: launches over a list whose length stays on the device ([`counted::Counted`]).
//! - [`distinct`]: sorted distinct values of a short list by ranks (one launch of one CTA, no per-ID array).
//! - [`registry`]: the one list of kernel instantiations, their PTX entry points and names ([`registry::Entry`]).
//! - [`real`]: the floating-point precisions (`f32`, `f64`).
//! - [`storage`]: the pool's storage precision (the arithmetic's own, or IEEE half).
//! - [`lattice`]: velocity sets D2Q9, D3Q19, D3Q27 (section "Lattice Boltzmann Method").
//! - [`block`]: cell-block geometry, neighbour-link indexing and sentinels (section "Data Structures").
//! - [`collide`]: equilibrium, moments and BGK relaxation (section "Collision").
//! - [`collision`]: the collision operators of the streaming kernel (BGK, TRT) and the body force.
//! - [`mrt`]: the multiple-relaxation-time operator (weighted-orthogonal Hermite moments).
//! - [`regularized`]: the recursive regularized operator (the robust one for high Reynolds numbers).
//! - [`les`]: the Smagorinsky eddy viscosity from the local stress, and its level-consistent transfers.
//! - [`eddy`]: the WALE and Vreman eddy viscosities from finite-difference velocity gradients.
//! - [`readout`]: the moments of every cell, for reading the solution.
//! - [`pack`]: packing listed blocks' data into a contiguous buffer and back (saved around reads; later, migration).
//! - [`profile`]: per-cell wall velocities of profiled faces (inlet profiles).
//! - [`stream`]: in-place streaming fused with collision, boundary conditions (sections "Streaming", "Lattice Boltzmann Method").
//! - [`shape`]: the built-in solid shapes (boxes, spheres, cylinders, containers): inside tests, distances, link crossings, wall velocities.
//! - [`curved`]: interpolated bounce-back on curved walls and moving walls (a pass after the step).
//! - [`obstacle`]: solid cells, refinement toward obstacles, momentum-exchange forces (section "Flow Past a Square Cylinder").
//! - [`interpolate`], [`average`]: rescaling, coarse → fine interpolation and fine → coarse averaging (section "Grid Communication").
//! - [`schedule`]: the per-level work lists of the recursive advance (section "Grid Advancement").
//! - [`criterion`]: vorticity and the log₂ level rule (solver section "Adaptive Mesh Refinement").
//! - [`guard`]: the stability guard (first non-finite, non-positive-density or supersonic cell of a level).
#![no_std]
// Numerical code indexes several arrays by axis or direction in one loop, and rejects NaN
// by writing checks as `!(x <= max)`: both on purpose.
#![allow(clippy::needless_range_loop, clippy::neg_cmp_op_on_partial_ord)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_ptx,
        stdarch_nvptx,
        core_intrinsics,
        gpu_launch_sized_workgroup_mem,
        gpu_intrinsics,
        f16,
        asm_experimental_arch
    ),
    allow(internal_features)
)]

pub mod amr;
pub mod average;
pub mod block;
pub mod collide;
pub mod collision;
pub mod counted;
pub mod criterion;
pub mod curved;
pub mod distinct;
pub mod eddy;
// Tests' CTA emulator (host threads and a barrier): host only, not part of the API.
#[cfg(not(target_arch = "nvptx64"))]
#[doc(hidden)]
pub mod emulate;
pub mod exchange;
pub mod guard;
pub mod interpolate;
pub mod lattice;
pub mod launch;
pub mod les;
pub mod memory;
pub mod mrt;
pub mod obstacle;
pub mod pack;
pub mod pairs;
pub mod primitives;
pub mod profile;
pub mod readout;
pub mod real;
pub mod registry;
pub mod regularized;
pub mod schedule;
pub mod shape;
pub mod storage;
pub mod stream;
pub mod surface;

#[cfg(target_arch = "nvptx64")]
pub mod ptx;

pub use lattice::{Dim, VelocitySet, D2, D2Q9, D3, D3Q19, D3Q27};
pub use real::Real;
pub use storage::{Half, Native, Storage};
