//! Which launches may start before the kernel before them ends, given what they read
//! first.
//!
//! With programmatic dependent launch a kernel's CTAs may start while the kernels before
//! it still run, and they wait for those kernels' writes at `griddepcontrol.wait`. The
//! step kernels read the mesh (their ID set, links and block flags) before that wait, and
//! the grid communication's kernels theirs (block lists, parent and child links, cell
//! masks) ([`ramus_kernels::launch::wait_for_prior_kernels`]), so that those loads overlap the
//! end of the kernel before; that is sound only if no kernel still running may write the
//! mesh. The kernels of a root step do not ([`ramus_kernels::launch::Kernel::WRITES_MESH`]);
//! the adaptation's do, and a copy may. [`MeshWrites`] follows one stream's launches and
//! lets such a kernel start early only behind kernels that leave the mesh alone; otherwise
//! it is launched without the attribute, after everything before it has ended.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a kernel that may write the mesh, or another operation that may, could still
/// run when the next launch starts, along one stream (or one graph capture).
#[derive(Debug)]
pub(crate) struct MeshWrites {
    pending: AtomicBool,
    /// A capture with branches: a launch without the attribute waits only for the
    /// launches it depends on, not for every launch before it, so nothing clears
    /// `pending`.
    branched: bool,
}

impl MeshWrites {
    /// Along a stream: anything may have written the mesh before.
    pub fn stream() -> Self {
        MeshWrites { pending: AtomicBool::new(true), branched: false }
    }

    /// Along a graph capture, which starts after everything before its launch has ended.
    pub fn capture(branched: bool) -> Self {
        MeshWrites { pending: AtomicBool::new(false), branched }
    }

    /// Whether a launch goes with programmatic stream serialisation: `dependent` launches
    /// are on, and the kernel either reads nothing before its wait (`reads_mesh_early`
    /// false) or no operation that may write the mesh may still run. Records the launch
    /// (`writes_mesh`: it may write the mesh).
    pub fn admit(&self, dependent: bool, reads_mesh_early: bool, writes_mesh: bool) -> bool {
        let pending = self.pending.load(Ordering::Relaxed);
        let programmatic = dependent && !(reads_mesh_early && pending);
        // A launch without the attribute starts after everything before it has ended.
        let still = pending && (programmatic || self.branched);
        self.pending.store(writes_mesh || still, Ordering::Relaxed);
        programmatic
    }

    /// An operation other than a launch of a kernel that leaves the mesh alone (a copy, a
    /// fill, a graph launch) was issued: the next kernel that reads the mesh early waits
    /// for it.
    pub fn unsettle(&self) {
        self.pending.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The step kernel (reads early, writes no mesh) behind an adaptation kernel (writes
    /// the mesh) starts after it; behind other step kernels it starts early.
    #[test]
    fn early_readers_start_early_only_behind_kernels_that_leave_the_mesh_alone() {
        let s = MeshWrites::stream();
        // Anything may have come before: the first early reader waits.
        assert!(!s.admit(true, true, false));
        assert!(s.admit(true, true, false));
        assert!(s.admit(true, false, false));
        assert!(s.admit(true, true, false));
        // An adaptation kernel (no early reads) starts early itself, then holds the next
        // early reader back, and so does anything after it until that reader has run.
        assert!(s.admit(true, false, true));
        assert!(s.admit(true, false, false));
        assert!(!s.admit(true, true, false));
        assert!(s.admit(true, true, false));
        // A copy.
        s.unsettle();
        assert!(s.admit(true, false, false));
        assert!(!s.admit(true, true, false));
        // Dependent launches off: never programmatic.
        assert!(!s.admit(false, true, false));
        assert!(!s.admit(false, false, false));
    }

    #[test]
    fn a_capture_starts_settled_and_with_branches_stays_unsettled_after_a_writer() {
        let c = MeshWrites::capture(false);
        assert!(c.admit(true, true, false));
        assert!(c.admit(true, false, true));
        assert!(!c.admit(true, true, false));
        assert!(c.admit(true, true, false));
        let b = MeshWrites::capture(true);
        assert!(b.admit(true, true, false));
        assert!(b.admit(true, false, true));
        assert!(!b.admit(true, true, false));
        assert!(!b.admit(true, true, false), "a branch may still run the writer");
    }
}
