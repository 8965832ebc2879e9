//! # ramus
//!
//! GPU-native adaptive mesh refinement with a lattice Boltzmann solver, after
//! *"GPU-native adaptive mesh refinement with application to lattice Boltzmann
//! simulations"* (the paper in `shared/reference`). The mesh is a forest of
//! quadtrees/octrees of `4^D`-cell blocks; the solver is BGK LBM (D2Q9, D3Q19, D3Q27;
//! `f32`, `f64`) with in-place streaming.
//!
//! Kernels are written once, in the `no_std` crate `ramus-kernels`, and run both on the
//! CPU (rayon) and on NVIDIA GPUs (PTX embedded in this crate, loaded with `cudarc`).
//!
//! Layout: [`Forest`] (the public type) owns the mesh ([`amr`]) and the solution
//! ([`solver`]); [`backend`] holds the CPU and CUDA backends; [`config`] the validated
//! configuration; [`cases`] the paper's test cases; [`output`] the files for ParaView and
//! people. The [`guide`] goes from an empty project to a refined 3D flow in ParaView.
//!
//! ```
//! use ramus::cases::cavity::Cavity;
//! use ramus::output::{write_amr, AmrOutput};
//! use ramus::{Backend, Forest, Refinement, D2, D2Q9};
//!
//! // A lid-driven cavity at Re 100 on a 32² root grid with two finer levels chosen by
//! // the paper's vorticity criterion, on the GPU when there is one.
//! let cavity = Cavity { dim: 2, n: 32, re: 100.0, lid: 0.1 };
//! let config = cavity.forest_config(Backend::Auto)?.refinement(Refinement { levels: 3, ..Refinement::default() });
//! let mut forest = Forest::<D2, D2Q9, f32>::new(config)?;
//! forest.advance(64)?;
//! println!("{:.1} MLUPS, blocks per level {:?}", forest.mlups(), forest.blocks_per_level());
//! // Every level's blocks for ParaView's AMR reader.
//! let dir = std::env::temp_dir().join("ramus-crate-example");
//! std::fs::create_dir_all(&dir).unwrap();
//! write_amr(&dir, "cavity", &forest.active_blocks()?, &AmrOutput::default())?;
//! # Ok::<(), ramus::Error>(())
//! ```

// Numerical code indexes several arrays by axis or direction in one loop, and rejects NaN
// by writing checks as `!(x <= max)`: both on purpose.
#![allow(clippy::needless_range_loop, clippy::neg_cmp_op_on_partial_ord)]
#![warn(missing_docs)]

pub mod amr;
pub mod backend;
pub mod cases;
pub mod checkpoint;
pub mod config;
mod error;
mod forest;
pub mod output;
pub mod solver;
pub mod stl;
pub mod variants;

#[doc = include_str!("../../../docs/guide.md")]
pub mod guide {}

pub use amr::{Mark, Status};
pub use backend::cuda::{cuda_available, kernels_ptx, KERNELS_PTX_ZST};
pub use backend::Backend;
pub use config::{
    Axis, Boundary, Collision, Criterion, Face, Fluid, ForestConfig, Guard, Interpolation, Les, MagicLevels, Obstacle,
    Profile, Refinement, Shape, SurfaceBody, WallRefinement, Walls,
};
pub use error::{CheckpointProblem, Error, Quantity, Result};
pub use forest::{Adaptation, Forest, UserCriterion};
pub use ramus_kernels::lattice::{Dim, VelocitySet, D2, D2Q9, D3, D3Q19, D3Q27};
pub use ramus_kernels::storage::{Half, Native, Storage};
pub use ramus_kernels::Real;
pub use solver::{ActiveBlocks, Fields, HostSolution, Integrals, LeafCells, ProfileFn, SolidFn, Timings};
pub use variants::{BulkSteps, LatticeKind, PairedCells, Precision, StorageKind};

/// The kernel crate, for users who write their own kernels against the same layout.
pub use ramus_kernels as kernels;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for ramus_kernels::Native {}
    impl Sealed for ramus_kernels::Half {}
}

/// A precision the backends support: `f32` or `f64`.
pub trait Float: Real + backend::Elem + sealed::Sealed {}
impl Float for f32 {}
impl Float for f64 {}

/// How the distribution pool stores populations computed in `F` ([`ramus_kernels::storage`]):
/// [`Native`] (`F` itself) or [`Half`] (IEEE binary16 of `f32` arithmetic: half the memory
/// and the memory traffic of `f32`). The fourth parameter of [`Forest`].
pub trait PoolStorage<F: Float>: Storage<F, Elem: backend::Elem> + sealed::Sealed {}
impl<F: Float> PoolStorage<F> for Native {}
impl PoolStorage<f32> for Half {}
