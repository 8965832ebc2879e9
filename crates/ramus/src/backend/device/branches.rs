//! Branches in a recorded root step's graph ([`crate::backend::graph`], "Branches"): the
//! solver says which stretches of launches are independent, and a captured graph lets
//! the GPU run them at the same time. Launched directly (the CPU, graphs off, a driver
//! without the capture calls), the launches run in the order issued, which keeps every
//! dependency; these calls then do nothing.

use super::super::graph::Dependencies;
use super::Device;

impl Device {
    /// The launches the next launch of this thread's recording will depend on: where
    /// independent branches may start ([`Self::branch_from`]). Empty, and without effect,
    /// when nothing is being recorded or the driver cannot capture branches.
    pub(crate) fn dependencies(&self) -> Dependencies {
        match self {
            Device::Cuda(c) if c.branches => c.graphs.dependencies(),
            _ => Dependencies::default(),
        }
    }

    /// Ends the branch recorded since `from` (given by [`Self::dependencies`]): the next
    /// launches depend on `from` alone, not on that branch, whose end is returned for
    /// [`Self::join`]. The caller vouches that the two branches touch disjoint memory.
    pub(crate) fn branch_from(&self, from: &Dependencies) -> Dependencies {
        match self {
            Device::Cuda(c) if c.branches => c.graphs.branch_from(from),
            _ => Dependencies::default(),
        }
    }

    /// Joins `branch` (from [`Self::branch_from`]): the next launch depends on it too.
    pub(crate) fn join(&self, branch: Dependencies) {
        if let Device::Cuda(c) = self {
            if c.branches {
                c.graphs.join(branch);
            }
        }
    }
}
