//! The mesh: a forest of quadtrees/octrees of cell-blocks (paper, section "Adaptive Mesh
//! Refinement").
//!
//! [`Mesh`] holds the block pool on a device: per-block metadata in preallocated arrays,
//! one ID set per level and the reverse-enumerated gap set of free IDs, explicit
//! neighbour and neighbour-child links (layout in [`ramus_kernels::amr`]). Marks from the
//! marking functions ([`Mesh::mark_blocks`], [`Mesh::mark_region`],
//! [`Mesh::mark_wall_distance`], [`Mesh::mark_with`]) are applied by [`Mesh::adapt`]:
//! the paper's routine (Preparation, steps 1–8), run as kernels on the mesh's device with
//! only scalar counts read back. [`check()`] verifies every invariant on a [`MeshSnapshot`].
//!
//! ```
//! use ramus::amr::{check, AdaptWorkspace, Capacity, Mesh, MeshSpec, Region};
//! use ramus::backend::Device;
//! use ramus::Mark;
//! use ramus::{Backend, Boundary, D3};
//!
//! let spec = MeshSpec {
//!     cells: [16; 3],
//!     boundaries: [Boundary::NO_SLIP; 6],
//!     max_levels: 3,
//!     capacity: Capacity::Blocks { blocks: 4096 },
//! };
//! let mut mesh = Mesh::<D3>::new(Device::new(Backend::Cpu)?, spec, 0)?;
//! let mut ws = AdaptWorkspace::new(mesh.device())?;
//! mesh.mark_region(Region::SphereSurface { center: [8.0; 3], radius: 4.0 }, Mark::Refine)?;
//! let report = mesh.adapt_with(&mut ws)?;
//! assert!(report.refined > 0);
//! check(&mesh.snapshot()?).expect("a valid forest");
//! # Ok::<(), ramus::Error>(())
//! ```

mod adapt;
mod check;
mod codes;
mod hooks;
mod id_sets;
mod lists;
mod mark;
mod mesh;
mod root;
mod snapshot;
pub(crate) mod state;
pub(crate) mod workspace;

pub use adapt::{AdaptReport, ADAPT_STEPS};
pub use check::{check, Violation};
pub use codes::{Mark, Status};
pub use hooks::{AdaptStage, BlockData, HookTimes, RefinedBlocks, RelinkedBlocks};
pub use mark::{BlockGeometry, Region};
pub use mesh::{
    metadata_bytes_per_block, Capacity, Mesh, MeshSpec, PoolArrays, AUTO_MEMORY_FRACTION, DEFAULT_POOL_BYTES,
    MAX_CELLS, MAX_MEMORY_FRACTION,
};
pub use root::RootGrid;
pub use snapshot::MeshSnapshot;
pub use workspace::{AdaptWorkspace, COUNTED_MAX_ITEMS, DISTINCT_SHORT_MAX, LEVEL_GROUPS_MAX};
