//! The mesh: a forest of quadtrees/octrees of cell-blocks (paper, section "Adaptive Mesh
//! Refinement").
//!
//! So far this holds the root grid (level 0): a structured grid of blocks with explicit
//! neighbour links, the base from which refinement grows the trees.

mod root;

pub use root::RootGrid;
