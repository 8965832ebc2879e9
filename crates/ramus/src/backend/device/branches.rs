//! Branches in a recorded root step's graph ([`crate::backend::graph`], "Branches"): the
//! solver says which earlier launches a launch must wait for, and a captured graph lets
//! the GPU run the launches that need not wait for each other at the same time.
//! Launched directly (the CPU, graphs off, a driver without the capture calls), launches
//! run in the order issued, which keeps every dependency; these calls then do nothing.

use super::super::graph::Dependencies;
use super::Device;

impl Device {
    /// The launches the next launch of this thread's recording will depend on (after a
    /// launch: that launch). Of no recording, and without effect, when nothing is being
    /// recorded or the driver cannot capture branches.
    pub(crate) fn dependencies(&self) -> Dependencies {
        match self {
            Device::Cuda(c) if c.branches => c.graphs.dependencies(),
            _ => Dependencies::default(),
        }
    }

    /// Makes the next launch of this thread's recording depend on exactly `deps` (from
    /// [`Self::dependencies`], possibly joined); the launches after it chain on it as
    /// usual. The caller vouches that the launch touches no memory that a launch
    /// recorded since and not in `deps` writes, or writes memory such a launch reads.
    pub(crate) fn set_dependencies(&self, deps: &Dependencies) {
        if let Device::Cuda(c) = self {
            if c.branches {
                c.graphs.set_dependencies(deps);
            }
        }
    }
}
