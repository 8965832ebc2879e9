//! Synchronising all levels between root steps, and filling new blocks (paper, solver
//! section "Adaptive Mesh Refinement": "a global averaging procedure is performed over
//! the entire grid hierarchy starting with the second-finest level and ascending to L = 0
//! ... Next, interpolation is performed to ghost cells on all levels in the opposite
//! direction").

use ramus_kernels::average::AVERAGE_NOT_GHOST;
use ramus_kernels::schedule::{ExpandArgs, ExpandChildren, SELECT_COARSENING};
use ramus_kernels::{Dim, VelocitySet};

use super::schedule::flag;
use super::state::Solver;
use crate::amr::workspace::ensure;
use crate::amr::Mesh;
use crate::backend::primitives::{self as prim, Scratch};
use crate::backend::{Buffer, Device};
use crate::error::Result;
use crate::Float;

/// Device temporaries of the synchronisation and the criterion.
pub(crate) struct SyncScratch {
    pub list: Buffer<u32>,
    pub by_level: Vec<Buffer<u32>>,
    pub flags: Buffer<u32>,
    pub counts: Buffer<u64>,
    pub scratch: Scratch,
}

impl SyncScratch {
    pub fn new(dev: &crate::backend::Device) -> Self {
        SyncScratch {
            list: Buffer::Host(Vec::new()),
            by_level: Vec::new(),
            flags: Buffer::Host(Vec::new()),
            counts: Buffer::Host(Vec::new()),
            scratch: Scratch::new(dev),
        }
    }
}

impl<Q: VelocitySet, F: Float> Solver<Q, F> {
    /// Brings every level to the state of the current root step, at a root-step boundary
    /// (`root_odd`: the root level has taken an odd number of steps): averages every
    /// parent from its children (cells under ghosts excepted, whose coarse values are the
    /// valid ones), finest first, then interpolates every ghost layer, coarsest first.
    /// Afterwards every cell of every active block (leaf or not) holds valid data.
    ///
    /// At a root-step boundary this changes no leaf cell that the next step reads as
    /// valid: interfaces were just averaged, and ghosts are refilled at the next step.
    pub fn synchronize(&mut self, mesh: &Mesh<Q::Dim>, root_odd: bool) -> Result<()> {
        let levels = mesh.max_levels();
        let odd = |l: usize| l == 0 && root_odd;
        for l in (0..levels.saturating_sub(1)).rev() {
            // The whole ID set: the averaging kernel skips blocks without children.
            if mesh.id_counts[l + 1] > 0 {
                let (list, n) = (mesh.device.cptr(&mesh.id_sets[l]), mesh.id_counts[l]);
                self.average(mesh, list, n, l, odd(l), AVERAGE_NOT_GHOST)?;
            }
        }
        for l in 0..levels.saturating_sub(1) {
            if mesh.id_counts[l + 1] > 0 {
                self.interpolate_ghosts(mesh, l, odd(l))?;
            }
        }
        Ok(())
    }

    /// Interpolates every ghost layer, coarsest first, at a root-step boundary: before the
    /// criterion (ghost cells of leaves count) and the mesh routine (ghosts that become
    /// interior cells, and leaves that are refined, must hold current data).
    pub fn refresh_ghosts(&mut self, mesh: &Mesh<Q::Dim>, root_odd: bool) -> Result<()> {
        for l in 0..mesh.max_levels().saturating_sub(1) {
            if mesh.id_counts[l + 1] > 0 {
                self.interpolate_ghosts(mesh, l, l == 0 && root_odd)?;
            }
        }
        Ok(())
    }

    /// Averages the parents that have a child marked for coarsening (every cell not under
    /// a ghost cell), finest first, so that a parent that becomes a leaf carries its children's solution (its
    /// children are leaves, so they are current). Other parents step with their level and
    /// need no averaging for the mesh to change: this replaces the paper's global
    /// averaging before adaptation with the part of it that matters.
    pub fn average_coarsening(&mut self, mesh: &Mesh<Q::Dim>, root_odd: bool, s: &mut SyncScratch) -> Result<()> {
        let dev = &mesh.device;
        let levels = mesh.max_levels();
        if s.counts.len() < levels || matches!((dev, &s.counts), (Device::Cuda(_), Buffer::Host(_))) {
            s.counts = dev.zeros(levels)?;
        }
        s.by_level.resize_with(levels, || Buffer::Host(Vec::new()));
        let nc = <Q::Dim as Dim>::CHILDREN as i32;
        // Levels without children have no candidates: their slots are not written or read.
        let built = |l: usize| mesh.id_counts[l] > 0 && mesh.id_counts[l + 1] > 0;
        let mut last = 0;
        for l in (0..levels.saturating_sub(1)).filter(|&l| built(l)) {
            let (ids, n) = (&mesh.id_sets[l], mesh.id_counts[l]);
            flag(mesh, ids, n, SELECT_COARSENING, nc, None, &mut s.flags)?;
            ensure(dev, &mut s.by_level[l], n)?;
            prim::compact_deferred(dev, &mut s.scratch, &s.flags, ids, n, &mut s.by_level[l], &mut s.counts, l)?;
            last = l + 1;
        }
        let counts = dev.read(&s.counts, 0..last)?;
        for l in (0..last).rev() {
            let n = if built(l) { counts[l] as usize } else { 0 };
            if n > 0 {
                let list = dev.cptr(&s.by_level[l]);
                self.average(mesh, list, n, l, l == 0 && root_odd, AVERAGE_NOT_GHOST)?;
            }
        }
        Ok(())
    }

    /// Fills every cell of the children of the parents just refined by interpolation from
    /// their parents, at a root-step boundary. `parents` groups them by the level of their
    /// children: level `l`'s are `parents[offsets[l] .. offsets[l + 1]]` (see
    /// [`crate::amr::AdaptWorkspace`]); empty `offsets`: nothing to fill.
    pub fn fill_children(
        &mut self,
        mesh: &Mesh<Q::Dim>,
        parents: &Buffer<u32>,
        offsets: &[usize],
        root_odd: bool,
        s: &mut SyncScratch,
    ) -> Result<()> {
        let dev = &mesh.device;
        let nc = <Q::Dim as Dim>::CHILDREN;
        for l in 1..offsets.len().saturating_sub(1).min(mesh.max_levels()) {
            let n = offsets[l + 1] - offsets[l];
            if n == 0 {
                continue;
            }
            ensure(dev, &mut s.list, n * nc)?;
            let first = dev.cptr(parents).wrapping_add(offsets[l]);
            let args = ExpandArgs { parents: first, child: dev.cptr(&mesh.child), out: dev.ptr(&mut s.list) };
            // SAFETY: `parents[offsets[l]..]` holds `n` refined blocks; `s.list` `n N_c` items.
            unsafe { dev.launch::<ExpandChildren<Q::Dim>>(n * nc, args)? };
            // Queued after the expansion: the next level's expansion reuses the list only
            // after this interpolation has read it (one stream).
            self.interpolate(mesh, dev.cptr(&s.list), n * nc, l - 1, l == 1 && root_odd, false)?;
        }
        Ok(())
    }
}
