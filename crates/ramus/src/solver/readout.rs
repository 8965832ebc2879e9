//! Reading the solution to the host: the moments of every active cell, computed on the
//! device ([`ramus_kernels::readout`]) in chunks of a bounded scratch buffer and copied
//! down, `1 + D` values per cell instead of the `Q` populations.

use ramus_kernels::readout::{values_per_cell, CellMoments, ReadoutArgs};
use ramus_kernels::{Dim, VelocitySet};

use super::obstacles::walls;
use super::state::Solver;
use crate::amr::Mesh;
use crate::backend::{Buffer, Device, Views};
use crate::error::Result;
use crate::{Float, PoolStorage};

/// Blocks per readout chunk: bounds the device scratch (3D: 2^20 cells, 16 MiB of
/// moments in f32) while keeping the launches and copies few.
const CHUNK_BLOCKS: usize = 1 << 14;

impl<Q: VelocitySet, F: Float, S: PoolStorage<F>> Solver<Q, F, S> {
    /// `(ρ, u_0 … u_{D−1})` of every cell of every active block, level by level in ID-set
    /// order (`1 + D` values per cell); `root_odd` as in [`Self::check_health`]. The
    /// levels must be synchronised first for parents to hold current values.
    pub fn read_moments(&mut self, mesh: &Mesh<Q::Dim>, root_odd: bool) -> Result<Vec<F>> {
        let dev = mesh.device();
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let s = values_per_cell(<Q::Dim as Dim>::D);
        let total: usize = mesh.blocks_per_level().iter().sum();
        let chunk = CHUNK_BLOCKS.min(total) * m * s;
        if self.readout.len() < chunk || matches!((dev, &self.readout), (Device::Cuda(_), Buffer::Host(_))) {
            self.readout = dev.zeros(chunk)?;
        }
        let mut out = Vec::new();
        out.try_reserve_exact(total * m * s).map_err(|_| crate::error::Error::OutOfMemory {
            what: format!("host copy of the moments of {} cells", total * m),
            needed: (total * m * s * std::mem::size_of::<F>()) as u64,
            available: 0,
        })?;
        for l in 0..mesh.max_levels() {
            let n = mesh.blocks_per_level()[l];
            for start in (0..n).step_by(CHUNK_BLOCKS) {
                let end = (start + CHUNK_BLOCKS).min(n);
                let items = (end - start) * m;
                let (onb, solid) = walls(&self.solids, mesh);
                let args = ReadoutArgs::<F, S::Elem, Views> {
                    f: self.f.view_mut(),
                    nbr: mesh.arrays().nbr.view(),
                    onb,
                    solid,
                    ids: mesh.id_sets()[l].slice(start..end)?,
                    out: self.readout.slice_mut(0..items * s)?,
                    force: self.params[l].force,
                };
                // SAFETY: the ID set lists active blocks of the pool, whose links, flags
                // and masks are complete; the kernel only reads the pool.
                unsafe {
                    if l == 0 && root_odd {
                        dev.launch::<CellMoments<Q, F, S, true>>(items, args)?
                    } else {
                        dev.launch::<CellMoments<Q, F, S, false>>(items, args)?
                    }
                }
                out.extend_from_slice(&dev.read(&self.readout, 0..items * s)?);
            }
        }
        Ok(out)
    }
}
