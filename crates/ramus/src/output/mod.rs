//! Output of the forest for visualisation (paper, section "Adaptive Mesh Refinement":
//! the grids coloured by level in the results are leaf blocks drawn this way).
//!
//! [`amr`] writes VTK's overlapping-AMR files (`.vthb` + `.vti`, binary: ParaView's AMR
//! reader shows the levels); [`series`] writes them as a time series on a host thread;
//! [`vtu`] writes VTK XML unstructured grids of leaf cells (ASCII, or binary with shared
//! points) that ParaView and VisIt read, and reads back the ASCII ones (for tests and
//! tools); [`vtk`] encodes and decodes binary data arrays. [`plot`] draws PNG plots of
//! the validation cases (centreline profiles, force histories, time series) with a bundled
//! font and no system library.

pub mod amr;
pub mod atomic;
pub mod plot;
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
