//! A host copy of the whole mesh, for checking, output and tests (never used by `adapt`).

use ramus_kernels::Dim;

use super::Mesh;
use crate::config::Boundary;
use crate::error::Result;

/// Every array of a [`Mesh`], copied to the host. Layouts as in [`ramus_kernels::amr`].
#[derive(Clone, Debug, PartialEq)]
pub struct MeshSnapshot {
    /// Spatial dimension (2 or 3).
    pub dim: usize,
    /// Pool size in blocks.
    pub capacity: usize,
    /// Grid levels allowed.
    pub max_levels: usize,
    /// Root blocks per axis (1 on unused axes).
    pub root_blocks: [usize; 3],
    /// Face boundaries (periodic faces wrap links).
    pub boundaries: [Boundary; 6],
    // The pool's arrays, one entry per ID (or per ID and direction or cell), as laid out
    // and documented in `ramus_kernels::amr`.
    /// Grid level of each ID (−1: inactive).
    pub level: Vec<i32>,
    /// Lower corner of each block, `origin[3b + a]`, in [`ramus_kernels::amr::units`].
    pub origin: Vec<i32>,
    /// Refinement status of each ID ([`ramus_kernels::amr::status`] codes).
    pub status: Vec<i32>,
    /// Parent ID (−1: a root block or inactive).
    pub parent: Vec<i32>,
    /// First child ID (children are `child + k`, `k < 2^D`; −1: none).
    pub child: Vec<i32>,
    /// Neighbour links, `nbr[b 3^D + k]` (centre = `b`; negative: a sentinel, see
    /// [`ramus_kernels::block`]).
    pub nbr: Vec<i32>,
    /// First child of each neighbour (`NO_CHILD` if it is a leaf, the link's sentinel if
    /// there is no neighbour).
    pub nbr_child: Vec<i32>,
    /// 1 if any `nbr` link of the block is negative.
    pub onb: Vec<u32>,
    /// `BLOCK_HAS_GHOSTS` / `BLOCK_CHILD_HAS_GHOSTS` bits.
    pub block_mask: Vec<u32>,
    /// Per cell (`4^D` per block): interior, interface or ghost.
    pub cell_mask: Vec<u8>,
    /// Active IDs of each level, in ID-set order.
    pub id_sets: Vec<Vec<u32>>,
    /// Free IDs in gap-set order (the next ones handed out are at the end).
    pub gaps: Vec<u32>,
}

impl MeshSnapshot {
    /// Neighbour links per block (`3^D`).
    pub fn neighbors(&self) -> usize {
        if self.dim == 3 {
            27
        } else {
            9
        }
    }

    /// Cells per block (`4^D`).
    pub fn block_cells(&self) -> usize {
        if self.dim == 3 {
            64
        } else {
            16
        }
    }

    /// IDs of the leaves (active blocks without children), ascending (IDs past the arrays
    /// of a hand-made snapshot are left out).
    pub fn leaves(&self) -> Vec<u32> {
        let leaf = |b: u32| self.child.get(b as usize).is_some_and(|&c| c < 0);
        let mut v: Vec<u32> = self.id_sets.iter().flatten().copied().filter(|&b| leaf(b)).collect();
        v.sort_unstable();
        v
    }
}

impl<D: Dim> Mesh<D> {
    /// Copies the whole mesh to the host (every array of the pool's capacity: meant for
    /// checks, output and tests). IDs never handed out show their free state, also where
    /// the device still holds the allocation's zeros (see `Mesh::prepare_ids`).
    pub fn snapshot(&self) -> Result<MeshSnapshot> {
        let dev = &self.device;
        let mut id_sets = Vec::with_capacity(self.id_sets.len());
        for (ids, &n) in self.id_sets.iter().zip(&self.id_counts) {
            id_sets.push(dev.read(ids, 0..n)?);
        }
        let mut s = MeshSnapshot {
            dim: D::D,
            capacity: self.capacity,
            max_levels: self.spec.max_levels,
            root_blocks: self.root_blocks,
            boundaries: self.spec.boundaries,
            level: dev.download(&self.level)?,
            origin: dev.download(&self.origin)?,
            status: dev.download(&self.status)?,
            parent: dev.download(&self.parent)?,
            child: dev.download(&self.child)?,
            nbr: dev.download(&self.nbr)?,
            nbr_child: dev.download(&self.nbr_child)?,
            onb: dev.download(&self.onb)?,
            block_mask: dev.download(&self.block_mask)?,
            cell_mask: dev.download(&self.cell_mask)?,
            id_sets,
            gaps: dev.read(&self.gaps, 0..self.gap_count)?,
        };
        // Never used and not yet prepared: the free state, and their gap entries.
        let from = self.untouched_from();
        let nb = D::NEIGHBORS;
        s.level[from..].fill(-1);
        s.status[from..].fill(ramus_kernels::amr::status::INACTIVE);
        s.parent[from..].fill(-1);
        s.child[from..].fill(-1);
        s.nbr[from * nb..].fill(ramus_kernels::block::N_SKIP);
        s.nbr_child[from * nb..].fill(ramus_kernels::block::N_SKIP);
        for (i, g) in s.gaps.iter_mut().enumerate().take(self.capacity - from) {
            *g = (self.capacity - 1 - i) as u32;
        }
        Ok(s)
    }

    /// The block arrays of IDs `0 … max active ID` only (IDs are handed out lowest first,
    /// so this is about the active part of a large pool), with `capacity` set to that
    /// count and no gap set: what reading the solution needs, without copying the whole
    /// preallocated pool.
    pub(crate) fn snapshot_active(&self) -> Result<MeshSnapshot> {
        let dev = &self.device;
        let mut id_sets = Vec::with_capacity(self.id_sets.len());
        for (ids, &n) in self.id_sets.iter().zip(&self.id_counts) {
            id_sets.push(dev.read(ids, 0..n)?);
        }
        let n = id_sets.iter().flatten().max().map_or(0, |&b| b as usize + 1);
        let (nb, m) = (D::NEIGHBORS, D::BLOCK_CELLS);
        Ok(MeshSnapshot {
            dim: D::D,
            capacity: n,
            max_levels: self.spec.max_levels,
            root_blocks: self.root_blocks,
            boundaries: self.spec.boundaries,
            level: dev.read(&self.level, 0..n)?,
            origin: dev.read(&self.origin, 0..3 * n)?,
            status: dev.read(&self.status, 0..n)?,
            parent: dev.read(&self.parent, 0..n)?,
            child: dev.read(&self.child, 0..n)?,
            nbr: dev.read(&self.nbr, 0..n * nb)?,
            nbr_child: dev.read(&self.nbr_child, 0..n * nb)?,
            onb: dev.read(&self.onb, 0..n)?,
            block_mask: dev.read(&self.block_mask, 0..n)?,
            cell_mask: dev.read(&self.cell_mask, 0..n * m)?,
            id_sets,
            gaps: Vec::new(),
        })
    }
}
