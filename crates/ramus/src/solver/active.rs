//! Every active block with the moments of its cells, for hierarchical output: the
//! overlapping-AMR view of the forest (paper, section "Data Structures": every level
//! keeps its blocks, parents included, and each holds valid data after a
//! synchronisation).

use ramus_kernels::amr::units;
use ramus_kernels::block::{cell_coords, resolve};
use ramus_kernels::{Dim, Real, VelocitySet};

use rayon::prelude::*;

use super::fields::HostSolution;
use crate::error::{Error, Result};

/// The cells of every active block (all levels, parents included), block after block,
/// with `4^D` cells per block in the kernels' cell order ([`ramus_kernels::block`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ActiveBlocks {
    /// 2 or 3.
    pub dim: usize,
    /// Root blocks per axis (1 in z for 2D).
    pub root_blocks: [usize; 3],
    /// Grid levels allowed.
    pub max_levels: usize,
    /// Level of each block.
    pub level: Vec<u8>,
    /// Lower corner of each block, in cells of its level.
    pub corner: Vec<[u64; 3]>,
    /// Whether each block has children (its cells are covered by a finer level).
    pub refined: Vec<bool>,
    /// Density of each cell.
    pub rho: Vec<f64>,
    /// Velocity of each cell (lattice units; the same on every level).
    pub u: Vec<[f64; 3]>,
    /// Vorticity magnitude `|∇ × u|` of each cell, per root time step: first-order
    /// differences toward `+x`, `+y`, `+z` over same-level cells (the criterion's,
    /// [`ramus_kernels::criterion`]), backward where no same-level neighbour exists.
    pub vorticity: Vec<f64>,
    /// Whether each cell is solid (obstacles).
    pub solid: Vec<bool>,
}

impl ActiveBlocks {
    /// Cells per block (`4^D`).
    pub fn cells_per_block(&self) -> usize {
        4usize.pow(self.dim as u32)
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.level.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.level.is_empty()
    }

    /// Checks that the public vectors agree (one entry per block, `4^D` per cell, levels
    /// below `max_levels`, corners on block boundaries): an [`Error::InvalidParameter`]
    /// naming what differs otherwise.
    pub fn check(&self) -> Result<()> {
        if self.dim != 2 && self.dim != 3 {
            return Err(Error::invalid("active blocks dim", self.dim, "2 or 3"));
        }
        let (n, m) = (self.len(), self.cells_per_block());
        let blocks = [self.corner.len(), self.refined.len()];
        let cells = [self.rho.len(), self.u.len(), self.vorticity.len(), self.solid.len()];
        if blocks.iter().any(|&l| l != n) || cells.iter().any(|&l| l != n * m) {
            return Err(Error::invalid(
                "active blocks",
                format!(
                    "level {n}, corner {}, refined {}; rho {}, u {}, vorticity {}, solid {}",
                    blocks[0], blocks[1], cells[0], cells[1], cells[2], cells[3]
                ),
                format!("one entry per block and {m} per cell of each block"),
            ));
        }
        if let Some(i) = self.level.iter().position(|&l| l as usize >= self.max_levels.max(1)) {
            return Err(Error::invalid(
                "active blocks level",
                self.level[i],
                format!("below max_levels = {}", self.max_levels),
            ));
        }
        if let Some(c) = self.corner.iter().find(|c| c.iter().any(|&x| x % 4 != 0)) {
            return Err(Error::invalid("active blocks corner", format!("{c:?}"), "multiples of 4 (block boundaries)"));
        }
        Ok(())
    }
}

impl<Q: VelocitySet, F: Real> HostSolution<Q, F> {
    /// Every active block, in ascending level, then ID order.
    pub fn active_blocks(&self) -> ActiveBlocks {
        let d = <Q::Dim as Dim>::D;
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let nb = <Q::Dim as Dim>::NEIGHBORS;
        let mesh = &self.mesh;
        let mut ids: Vec<usize> = Vec::new();
        for set in &mesh.id_sets {
            let mut s: Vec<usize> = set.iter().map(|&b| b as usize).collect();
            s.sort_unstable();
            ids.extend(s);
        }
        let mut out =
            ActiveBlocks { dim: d, root_blocks: mesh.root_blocks, max_levels: mesh.max_levels, ..Default::default() };
        // Velocities of every active cell first: the differences read neighbours' cells.
        // Blocks are independent: rayon over blocks (this runs on the output thread of a
        // time series, while the solver goes on).
        let mut slot = vec![usize::MAX; mesh.capacity];
        for (i, &b) in ids.iter().enumerate() {
            slot[b] = i;
            let level = mesh.level[b];
            let w = units::cell(level) as u64;
            let mut c = [0u64; 3];
            for a in 0..d {
                c[a] = mesh.origin[3 * b + a] as u64 / w;
            }
            out.level.push(level as u8);
            out.corner.push(c);
            out.refined.push(ramus_kernels::amr::status::has_children(mesh.status[b]));
        }
        let cells: Vec<(f64, [f64; 3], bool)> = ids
            .par_iter()
            .flat_map_iter(|&b| {
                (0..m).map(move |t| {
                    let (rho, u) = self.moments(b, t);
                    (rho, u, self.solid.get(b).is_some_and(|s| (s >> t) & 1 != 0))
                })
            })
            .collect();
        out.rho = cells.iter().map(|c| c.0).collect();
        out.u = cells.iter().map(|c| c.1).collect();
        out.solid = cells.iter().map(|c| c.2).collect();
        let (u, slot) = (&out.u, &slot);
        let u_at = |b: i32, t: usize| -> Option<[f64; 3]> {
            let i = *slot.get(usize::try_from(b).ok()?)?;
            (i != usize::MAX).then(|| u[i * m + t])
        };
        let u_at = &u_at;
        let vort: Vec<f64> = ids
            .par_iter()
            .enumerate()
            .flat_map_iter(|(i, &b)| {
                let scale = (1u64 << mesh.level[b]) as f64;
                (0..m).map(move |t| vorticity(d, nb, &mesh.nbr, b, t, u[i * m + t], u_at) * scale)
            })
            .collect();
        out.vorticity = vort;
        out
    }
}

/// `|∇ × u|` of cell `t` of block `b` (velocity `here`) per cell of its level: forward
/// differences over same-level cells, backward where no forward neighbour exists.
fn vorticity(
    d: usize,
    nb: usize,
    nbr: &[i32],
    b: usize,
    t: usize,
    here: [f64; 3],
    u_at: &(impl Fn(i32, usize) -> Option<[f64; 3]> + Sync),
) -> f64 {
    let x = cell_coords(t);
    // grad[a] = ∂u/∂x_a.
    let mut grad = [[0.0f64; 3]; 3];
    for a in 0..d {
        let mut step = [0i32; 3];
        step[a] = 1;
        // SAFETY: `nbr` holds the links of every pool block up to the snapshot's
        // capacity, centre link = the block itself (the forest's invariants).
        let fwd = unsafe { resolve(nbr.as_ptr(), b, x, step, d, nb) };
        step[a] = -1;
        let bwd = unsafe { resolve(nbr.as_ptr(), b, x, step, d, nb) };
        grad[a] = match (u_at(fwd.0, fwd.1), u_at(bwd.0, bwd.1)) {
            (Some(f), _) => [f[0] - here[0], f[1] - here[1], f[2] - here[2]],
            (None, Some(g)) => [here[0] - g[0], here[1] - g[1], here[2] - g[2]],
            (None, None) => [0.0; 3],
        };
    }
    if d == 2 {
        (grad[0][1] - grad[1][0]).abs()
    } else {
        let wx = grad[1][2] - grad[2][1];
        let wy = grad[2][0] - grad[0][2];
        let wz = grad[0][1] - grad[1][0];
        (wx * wx + wy * wy + wz * wz).sqrt()
    }
}

/// Integrals and extremes of the solution over the leaf cells (fluid cells only), in
/// lattice units with the root cell as unit length: what a run's `series.csv` tracks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Integrals {
    /// Total mass `Σ ρ Δx^D`.
    pub mass: f64,
    /// Kinetic energy `Σ ½ ρ |u|² Δx^D`.
    pub kinetic_energy: f64,
    /// Largest `|u|`.
    pub max_speed: f64,
    /// Leaf cells per level.
    pub cells_per_level: Vec<usize>,
}

impl<Q: VelocitySet, F: Real> HostSolution<Q, F> {
    /// [`Integrals`] over the leaf cells (rayon over leaf blocks; summed in block order,
    /// so the result does not depend on the thread count).
    pub fn integrals(&self) -> Integrals {
        let d = <Q::Dim as Dim>::D;
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let leaves = self.mesh.leaves();
        let per_block: Vec<(f64, f64, f64)> = leaves
            .par_iter()
            .map(|&b| {
                let b = b as usize;
                let vol = (1.0 / (1u64 << self.mesh.level[b]) as f64).powi(d as i32);
                let (mut mass, mut ke, mut vmax) = (0.0, 0.0, 0.0f64);
                for t in 0..m {
                    if self.solid.get(b).is_some_and(|s| (s >> t) & 1 != 0) {
                        continue;
                    }
                    let (rho, u) = self.moments(b, t);
                    let u2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
                    mass += rho * vol;
                    ke += 0.5 * rho * u2 * vol;
                    let speed = u2.sqrt();
                    vmax = if speed.is_nan() || vmax.is_nan() { f64::NAN } else { vmax.max(speed) };
                }
                (mass, ke, vmax)
            })
            .collect();
        let mut out = Integrals { cells_per_level: vec![0; self.mesh.max_levels], ..Default::default() };
        for (&b, (mass, ke, vmax)) in leaves.iter().zip(per_block) {
            out.mass += mass;
            out.kinetic_energy += ke;
            // NaN propagates: a diverged field never reads as calm.
            out.max_speed = if vmax.is_nan() || out.max_speed.is_nan() { f64::NAN } else { out.max_speed.max(vmax) };
            out.cells_per_level[self.mesh.level[b as usize] as usize] += m;
        }
        out
    }
}
