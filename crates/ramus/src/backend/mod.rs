//! Execution backends: the same kernel functions (crate `ramus-kernels`) run on the CPU
//! through rayon ([`cpu`]) or on an NVIDIA GPU through the embedded PTX ([`cuda`]).

pub mod cpu;
pub mod cuda;
pub mod device;
pub mod primitives;

pub use device::{Buffer, Device, Elem};

use std::fmt;
use std::str::FromStr;

use ramus_kernels::stream::StepParams;
use ramus_kernels::VelocitySet;

use crate::error::{Error, Result};
use crate::Float;

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

/// Mesh arrays the solver kernels read.
pub(crate) struct MeshArrays<'a> {
    /// Neighbour links, `3^D` per block.
    pub links: &'a [i32],
    /// Per block: nonzero if any link is negative.
    pub on_boundary: &'a [u32],
    /// Active block IDs.
    pub ids: &'a [u32],
}

/// Device data of a forest (distributions, links, ID set) on the chosen backend.
pub(crate) enum Engine<F: Float> {
    Cpu(cpu::CpuEngine<F>),
    Cuda(cuda::CudaEngine<F>),
}

impl<F: Float> Engine<F> {
    /// Allocates the pools on `backend` and uploads the initial state.
    pub fn new(backend: Backend, f: Vec<F>, mesh: &MeshArrays<'_>) -> Result<Self> {
        match backend {
            Backend::Cpu => Ok(Engine::Cpu(cpu::CpuEngine::new(f, mesh))),
            Backend::Cuda => Ok(Engine::Cuda(cuda::CudaEngine::new(&f, mesh)?)),
            Backend::Auto => match cuda::CudaEngine::new(&f, mesh) {
                Ok(e) => Ok(Engine::Cuda(e)),
                Err(Error::CudaUnavailable(why)) => {
                    tracing::info!("CUDA unavailable ({why}); using the CPU backend");
                    Ok(Engine::Cpu(cpu::CpuEngine::new(f, mesh)))
                }
                Err(e) => Err(e),
            },
        }
    }

    /// One fused collide-and-stream step over the first `n_ids` blocks of the ID set.
    pub fn stream_collide<Q: VelocitySet>(&mut self, odd: bool, params: &StepParams<F>, n_ids: usize) -> Result<()> {
        match self {
            Engine::Cpu(e) => {
                e.stream_collide::<Q>(odd, params, n_ids);
                Ok(())
            }
            Engine::Cuda(e) => e.stream_collide::<Q>(odd, params, n_ids),
        }
    }

    /// Waits for queued work.
    pub fn synchronize(&self) -> Result<()> {
        match self {
            Engine::Cpu(_) => Ok(()),
            Engine::Cuda(e) => e.synchronize(),
        }
    }

    /// Copies the distribution pool to the host.
    pub fn download(&self) -> Result<Vec<F>> {
        match self {
            Engine::Cpu(e) => Ok(e.distributions().to_vec()),
            Engine::Cuda(e) => e.download(),
        }
    }

    /// Overwrites the distribution pool.
    pub fn upload(&mut self, f: &[F]) -> Result<()> {
        match self {
            Engine::Cpu(e) => {
                e.distributions_mut().copy_from_slice(f);
                Ok(())
            }
            Engine::Cuda(e) => e.upload(f),
        }
    }

    /// Backend in use.
    pub fn backend(&self) -> Backend {
        match self {
            Engine::Cpu(_) => Backend::Cpu,
            Engine::Cuda(_) => Backend::Cuda,
        }
    }

    /// Device name (CPU model and thread count, or the GPU's name).
    pub fn device_name(&self) -> String {
        match self {
            Engine::Cpu(_) => cpu::device_name(),
            Engine::Cuda(e) => e.device_name().to_string(),
        }
    }
}
