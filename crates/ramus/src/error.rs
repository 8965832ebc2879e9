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
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn invalid(field: &'static str, value: impl fmt::Display, allowed: impl Into<String>) -> Self {
        Error::InvalidParameter { field, value: value.to_string(), allowed: allowed.into() }
    }
}
