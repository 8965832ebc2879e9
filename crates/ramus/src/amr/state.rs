//! The mesh's state as plain host data, for checkpoints (and, later, for moving blocks
//! between processes): every array of the IDs handed out so far, the ID sets and the
//! freed IDs. Restoring it into a pool of any capacity ≥ the high-water mark gives a mesh
//! that hands out the same IDs in the same order, so a restarted run is bitwise the same.

use ramus_kernels::amr::status;
use ramus_kernels::block::N_SKIP;
use ramus_kernels::Dim;

use super::Mesh;
use crate::backend::memory::try_vec;
use crate::error::{Error, Result};

/// Host copy of a [`Mesh`]'s state (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct MeshState {
    /// IDs below this have been handed out at least once.
    pub high_water: usize,
    /// Per block `0 … high_water`: level, status, mark, parent, child, boundary flags and
    /// block mask.
    pub level: Vec<i32>,
    pub status: Vec<i32>,
    pub mark: Vec<i32>,
    pub parent: Vec<i32>,
    pub child: Vec<i32>,
    pub onb: Vec<u32>,
    pub block_mask: Vec<u32>,
    /// `3` per block.
    pub origin: Vec<i32>,
    /// `3^D` per block.
    pub nbr: Vec<i32>,
    pub nbr_child: Vec<i32>,
    /// `4^D` per block.
    pub cell_mask: Vec<u8>,
    /// Active IDs of each level, in ID-set order.
    pub id_sets: Vec<Vec<u32>>,
    /// IDs below `high_water` that were freed and not handed out again, in gap-set order
    /// (the never-used IDs `high_water … capacity − 1` precede them in the pool's gap set).
    pub freed: Vec<u32>,
}

impl<D: Dim> Mesh<D> {
    /// Copies the state to the host.
    pub(crate) fn save_state(&self) -> Result<MeshState> {
        let dev = &self.device;
        let n = self.high_water;
        let (nb, m) = (D::NEIGHBORS, D::BLOCK_CELLS);
        let never_used = self.capacity - self.high_water;
        let mut id_sets = Vec::with_capacity(self.id_sets.len());
        for (ids, &count) in self.id_sets.iter().zip(&self.id_counts) {
            id_sets.push(dev.read(ids, 0..count)?);
        }
        Ok(MeshState {
            high_water: n,
            level: dev.read(&self.level, 0..n)?,
            status: dev.read(&self.status, 0..n)?,
            mark: dev.read(&self.mark, 0..n)?,
            parent: dev.read(&self.parent, 0..n)?,
            child: dev.read(&self.child, 0..n)?,
            onb: dev.read(&self.onb, 0..n)?,
            block_mask: dev.read(&self.block_mask, 0..n)?,
            origin: dev.read(&self.origin, 0..3 * n)?,
            nbr: dev.read(&self.nbr, 0..nb * n)?,
            nbr_child: dev.read(&self.nbr_child, 0..nb * n)?,
            cell_mask: dev.read(&self.cell_mask, 0..m * n)?,
            id_sets,
            freed: dev.read(&self.gaps, never_used..self.gap_count)?,
        })
    }

    /// Replaces the state of this mesh (same cells, boundaries and levels; any capacity
    /// that holds the state) by `s`. Checks the sizes; the contents are trusted (the
    /// checkpoint that carried them has a checksum).
    pub(crate) fn restore_state(&mut self, s: &MeshState) -> Result<()> {
        let n = s.high_water;
        let (nb, m) = (D::NEIGHBORS, D::BLOCK_CELLS);
        if n > self.capacity {
            return Err(Error::OutOfMemory {
                what: format!("restoring a forest of {n} block IDs into a pool of {} blocks", self.capacity),
                needed: n as u64,
                available: self.capacity as u64,
            });
        }
        let sizes_ok = [s.level.len(), s.status.len(), s.mark.len(), s.parent.len(), s.child.len(), s.onb.len()]
            .iter()
            .chain(&[s.block_mask.len()])
            .all(|&k| k == n)
            && s.origin.len() == 3 * n
            && s.nbr.len() == nb * n
            && s.nbr_child.len() == nb * n
            && s.cell_mask.len() == m * n
            && s.id_sets.len() == self.id_sets.len()
            && s.id_sets.iter().flatten().chain(&s.freed).all(|&b| (b as usize) < n);
        if !sizes_ok {
            return Err(Error::invalid(
                "checkpoint",
                "mesh arrays of inconsistent sizes",
                format!("arrays for {n} block IDs, {} levels, {}D", self.id_sets.len(), D::D),
            ));
        }
        let dev = self.device.clone();
        // IDs this pool handed out or prepared past the restored ones go back to the free
        // state (a fresh forest has none: restarts restore into one).
        let touched = self.untouched_from();
        if touched > n {
            let k = touched - n;
            let what = "the free state of unused block IDs (host copy)";
            let minus_one = try_vec(what, -1i32, k)?;
            dev.write(&mut self.level, n, &minus_one)?;
            dev.write(&mut self.status, n, &try_vec(what, status::INACTIVE, k)?)?;
            dev.write(&mut self.mark, n, &try_vec(what, 0i32, k)?)?;
            dev.write(&mut self.parent, n, &minus_one)?;
            dev.write(&mut self.child, n, &minus_one)?;
            dev.write(&mut self.onb, n, &try_vec(what, 0u32, k)?)?;
            dev.write(&mut self.block_mask, n, &try_vec(what, 0u32, k)?)?;
            dev.write(&mut self.origin, 3 * n, &try_vec(what, 0i32, 3 * k)?)?;
            let links = try_vec(what, N_SKIP, nb * k)?;
            dev.write(&mut self.nbr, nb * n, &links)?;
            dev.write(&mut self.nbr_child, nb * n, &links)?;
            dev.write(&mut self.cell_mask, m * n, &try_vec(what, 0u8, m * k)?)?;
        }
        self.fresh = touched.max(n);
        dev.write(&mut self.level, 0, &s.level)?;
        dev.write(&mut self.status, 0, &s.status)?;
        dev.write(&mut self.mark, 0, &s.mark)?;
        dev.write(&mut self.parent, 0, &s.parent)?;
        dev.write(&mut self.child, 0, &s.child)?;
        dev.write(&mut self.onb, 0, &s.onb)?;
        dev.write(&mut self.block_mask, 0, &s.block_mask)?;
        dev.write(&mut self.origin, 0, &s.origin)?;
        dev.write(&mut self.nbr, 0, &s.nbr)?;
        dev.write(&mut self.nbr_child, 0, &s.nbr_child)?;
        dev.write(&mut self.cell_mask, 0, &s.cell_mask)?;
        for (l, ids) in s.id_sets.iter().enumerate() {
            dev.write(&mut self.id_sets[l], 0, ids)?;
            self.id_counts[l] = ids.len();
        }
        // Gap set: the never-used IDs of this pool, descending, then the freed ones.
        let mut gaps: Vec<u32> = (n as u32..self.capacity as u32).rev().collect();
        gaps.extend_from_slice(&s.freed);
        dev.write(&mut self.gaps, 0, &gaps)?;
        self.gap_count = gaps.len();
        self.high_water = n;
        Ok(())
    }
}
