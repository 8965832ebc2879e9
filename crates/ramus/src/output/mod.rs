//! Output of the forest for visualisation (paper, section "Adaptive Mesh Refinement":
//! the grids coloured by level in the results are leaf blocks drawn this way).
//!
//! [`vtu`] writes VTK XML unstructured grids (`.vtu`, ASCII) that ParaView and VisIt read,
//! and reads back the subset it writes (for tests and tools). [`plot`] draws PNG plots of
//! the validation cases (centreline profiles, force histories, time series) with a bundled
//! font and no system library.

pub mod atomic;
pub mod plot;
pub mod vtu;

pub use atomic::write_atomic;

pub use vtu::{
    leaf_blocks_writer, read_vtu, write_leaf_blocks_vtu, write_leaf_cells_vtu, CellArray, VtuFile, VtuWriter,
};
