//! Errors of the public API.

use std::fmt;

/// Everything that can go wrong in ramus. Configuration errors name the field, the value
/// and the allowed range.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configuration value is out of range.
    #[error("invalid {field} = {value}: {allowed}")]
    InvalidParameter {
        /// The configuration field (e.g. `n`, `re`, `lid`, `tau`).
        field: &'static str,
        /// The offending value, as given.
        value: String,
        /// The allowed range, in words.
        allowed: String,
    },
    /// A velocity set that does not exist in the requested dimension.
    #[error("lattice {lattice} does not exist in {dim}D: allowed {allowed}")]
    UnsupportedLattice {
        /// The requested dimension.
        dim: u32,
        /// The requested velocity set.
        lattice: String,
        /// The velocity sets available in that dimension.
        allowed: &'static str,
    },
    /// An option value that is not one of the known names.
    #[error("unknown {field} '{value}': allowed {allowed}")]
    UnknownOption {
        /// The option.
        field: &'static str,
        /// The value given.
        value: String,
        /// The known values.
        allowed: &'static str,
    },
    /// The CUDA backend was asked for but cannot be used.
    #[error("CUDA backend unavailable: {0}")]
    CudaUnavailable(String),
    /// A CUDA driver call failed.
    #[error("CUDA error while {context}: {message}")]
    Cuda {
        /// What ramus was doing.
        context: String,
        /// The driver's message.
        message: String,
    },
    /// Not enough device (or pool) memory for what was asked.
    #[error("out of memory: {what} needs {needed} bytes, {available} bytes available")]
    OutOfMemory {
        /// What was being allocated.
        what: String,
        /// Bytes requested.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// A file could not be read or written.
    #[error("{action} {}: {message}", path.display())]
    Io {
        /// What ramus was doing (`writing`, `reading`, `creating the folder`, ...).
        action: &'static str,
        /// The file or folder.
        path: std::path::PathBuf,
        /// The operating system's message.
        message: String,
    },
    /// The solution became non-finite, non-positive in density, or faster than the Mach
    /// limit (the stability guard, [`crate::config::Guard`]): the run cannot go on.
    #[error(
        "the solution diverged at root step {step}: {quantity} = {value} on level {level} at \
         ({:.3}, {:.3}, {:.3}) (root cells)",
        position[0], position[1], position[2]
    )]
    Diverged {
        /// Root step count when the guard saw it.
        step: u64,
        /// Grid level of the offending cell.
        level: usize,
        /// Centre of the cell, in root lattice units.
        position: [f64; 3],
        /// What failed: `population`, `density` or `speed` (see [`Quantity`]).
        quantity: Quantity,
        /// The offending value (|u| in lattice units for `speed`).
        value: f64,
    },
    /// An output array holds a NaN or an infinity: the file is not written (no output
    /// ever holds a number that stands for one).
    #[error("output array '{array}' is not finite at tuple {index}: the file was not written")]
    NonFiniteOutput {
        /// The array's name.
        array: String,
        /// The first offending tuple (cell) of the array.
        index: usize,
    },
    /// An STL surface cannot be used as a solid (see [`crate::stl`]).
    #[error("STL {}: {problem}", path.display())]
    Stl {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        problem: crate::stl::StlProblem,
    },
    /// A checkpoint file cannot be restarted from.
    #[error("checkpoint {}: {problem}", path.display())]
    Checkpoint {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        problem: CheckpointProblem,
    },
}

/// Why a checkpoint was refused (see [`Error::Checkpoint`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointProblem {
    /// The file does not start with the checkpoint magic bytes.
    #[error("not a ramus checkpoint")]
    NotACheckpoint,
    /// Written in a layout version this ramus does not read.
    #[error("format version {found}, this ramus reads version {supported}")]
    Version {
        /// The file's version.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// The file ends early (e.g. the disk filled up while copying it).
    #[error("truncated (the file ends before its checksum)")]
    Truncated,
    /// The checksum does not match: the file was altered or damaged.
    #[error("corrupted (checksum mismatch)")]
    Corrupted,
    /// Written by a forest of another dimension, velocity set or precision.
    #[error("written by a forest of {found}, not {expected}")]
    WrongForest {
        /// The kind stored in the file.
        found: String,
        /// The kind of the forest restarting.
        expected: String,
    },
    /// A section is missing or inconsistent (a bug, or a file from a foreign writer).
    #[error("malformed section: {0}")]
    Malformed(String),
}

/// What the stability guard found wrong (see [`Error::Diverged`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// A population that is NaN or infinite.
    Population,
    /// A density that is not finite or not positive.
    Density,
    /// A speed above the Mach limit.
    Speed,
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Quantity::Population => "population",
            Quantity::Density => "density",
            Quantity::Speed => "speed |u|",
        })
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn invalid(field: &'static str, value: impl fmt::Display, allowed: impl Into<String>) -> Self {
        Error::InvalidParameter { field, value: value.to_string(), allowed: allowed.into() }
    }

    pub(crate) fn io(action: &'static str, path: impl AsRef<std::path::Path>, e: std::io::Error) -> Self {
        Error::Io { action, path: path.as_ref().to_path_buf(), message: e.to_string() }
    }
}
