//! Execution backends: the same kernel functions (crate `ramus-kernels`) run on the CPU
//! through rayon or on an NVIDIA GPU through the embedded PTX ([`cuda`]); [`Device`]
//! launches them and owns the memory ([`Buffer`]) on either.

pub mod cpu;
pub mod cuda;
pub mod device;
pub(crate) mod graph;
pub mod memory;
pub mod primitives;
pub(crate) mod ptx;
pub mod slice;
pub(crate) mod stopwatch;
pub mod timeline;

pub use device::{Buffer, Device, DeviceCounters, Elem, KernelTimeline};
pub use slice::{DeviceSlice, DeviceSliceMut, Views};
pub use stopwatch::Lap;
pub use timeline::KernelSpan;

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// Where a forest runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// CUDA when a usable device is present, the CPU otherwise.
    #[default]
    Auto,
    /// The parallel CPU backend (rayon).
    Cpu,
    /// The CUDA backend; an error if no usable GPU is present.
    Cuda,
}

impl FromStr for Backend {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Backend::Auto),
            "cpu" => Ok(Backend::Cpu),
            "cuda" | "gpu" => Ok(Backend::Cuda),
            _ => Err(Error::UnknownOption { field: "backend", value: s.into(), allowed: "auto, cpu, cuda (or gpu)" }),
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Auto => "auto",
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
        })
    }
}
