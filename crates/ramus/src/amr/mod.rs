//! The mesh: a forest of quadtrees/octrees of cell-blocks (paper, section "Adaptive Mesh
//! Refinement").
//!
//! So far this holds the root grid (level 0): a structured grid of blocks with explicit
//! neighbour links, the base from which refinement grows the trees.

mod adapt;
mod check;
mod mesh;
mod root;
mod snapshot;
mod workspace;
mod mark;

pub use adapt::{AdaptReport, ADAPT_STEPS};
pub use check::{check, Violation};
pub use mark::{BlockGeometry, Region};
pub use workspace::AdaptWorkspace;
pub use mesh::{metadata_bytes_per_block, Capacity, Mesh, MeshSpec};
pub use root::RootGrid;
pub use snapshot::MeshSnapshot;
