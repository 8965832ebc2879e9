//! Output of the forest for visualisation (paper, section "Adaptive Mesh Refinement":
//! the grids coloured by level in the results are leaf blocks drawn this way).
//!
//! [`amr`] writes VTK's overlapping-AMR files (`.vthb` + `.vti`, binary: ParaView's AMR
//! reader shows the levels); [`vtu`] writes VTK XML unstructured grids (`.vtu`, ASCII) of
//! leaf cells that ParaView and VisIt read, and reads back the subset it writes (for
//! tests and tools); [`vtk`] encodes and decodes binary data arrays.

pub mod amr;
pub mod atomic;
pub mod series;
pub mod vtk;
pub mod vtu;

pub use amr::{write_amr, AmrOutput};
pub use atomic::write_atomic;
pub use series::AmrSeries;
pub use vtk::{Compression, Encoding, VtkFormat};

pub use vtu::{
    leaf_blocks_writer, read_vtu, write_leaf_blocks_vtu, write_leaf_cells_vtu, write_leaf_cells_vtu_binary, CellArray,
    VtuFile, VtuOptions, VtuWriter,
};
