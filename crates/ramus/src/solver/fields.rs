//! Macroscopic fields ρ and u on the host: the root grid, all leaf cells, or samples at
//! points (paper, section "Lattice Boltzmann Method": moments of the populations).

use std::collections::HashMap;

use ramus_kernels::amr::units;
use ramus_kernels::block::{cell_coords, cell_index, EDGE};
use ramus_kernels::readout::values_per_cell;
use ramus_kernels::{Dim, Real, VelocitySet};

use crate::amr::MeshSnapshot;
use crate::error::{Error, Result};

/// Density and velocity on the cells of a uniform grid, x fastest.
#[derive(Clone, Debug, PartialEq)]
pub struct Fields {
    /// Cells per axis (1 on the unused axis in 2D).
    pub dims: [usize; 3],
    /// Density per cell.
    pub rho: Vec<f64>,
    /// Velocity per cell (lattice units).
    pub u: Vec<[f64; 3]>,
}

impl Fields {
    /// Linear index of cell `(i, j, k)` (x fastest); `None` outside the grid (an index
    /// at or past `dims` on any axis).
    pub fn index(&self, i: usize, j: usize, k: usize) -> Option<usize> {
        let [nx, ny, nz] = self.dims;
        (i < nx && j < ny && k < nz).then(|| i + nx * (j + ny * k))
    }

    /// Velocity of cell `(i, j, k)`; `None` outside the grid.
    pub fn velocity(&self, i: usize, j: usize, k: usize) -> Option<[f64; 3]> {
        self.u.get(self.index(i, j, k)?).copied()
    }

    /// Density of cell `(i, j, k)`; `None` outside the grid.
    pub fn density(&self, i: usize, j: usize, k: usize) -> Option<f64> {
        self.rho.get(self.index(i, j, k)?).copied()
    }

    /// Total mass `Σ ρ` (cell volume 1).
    pub fn mass(&self) -> f64 {
        self.rho.iter().sum()
    }
}

/// Density and velocity of every leaf cell of a forest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LeafCells {
    /// Cell centres, in root cells.
    pub center: Vec<[f64; 3]>,
    /// Cell widths, in root cells (`2^-level`).
    pub width: Vec<f64>,
    /// Grid levels.
    pub level: Vec<u8>,
    /// Ghost cells (paper, "Grid Communication"): the two fine layers next to a coarser
    /// region. Their values are interpolated from the coarse level (the coarse cells
    /// under them carry the solution there), so error measures may leave them out.
    pub ghost: Vec<bool>,
    /// Solid cells (obstacles): they carry the rest state (ρ = 1, u = 0).
    pub solid: Vec<bool>,
    /// Densities.
    pub rho: Vec<f64>,
    /// Velocities (lattice units; the same on every level).
    pub u: Vec<[f64; 3]>,
}

impl LeafCells {
    /// Number of cells.
    pub fn len(&self) -> usize {
        self.rho.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rho.is_empty()
    }

    /// Total fluid mass `Σ ρ Δx^D` over the non-solid cells, in root-cell volumes. An
    /// [`Error::InvalidParameter`] if `dim` is not 2 or 3 or the vectors differ in length
    /// (see [`Self::check_lengths`]).
    pub fn mass(&self, dim: usize) -> Result<f64> {
        if dim != 2 && dim != 3 {
            return Err(Error::invalid("dim", dim, "2 or 3"));
        }
        self.check_lengths()?;
        let dx = |w: f64| w.powi(dim as i32);
        Ok(self.rho.iter().zip(&self.width).zip(&self.solid).filter(|(_, &s)| !s).map(|((r, &w), _)| r * dx(w)).sum())
    }

    /// Checks that every vector has one entry per cell (they are public and may be edited);
    /// an [`Error::InvalidParameter`] giving the lengths otherwise.
    pub fn check_lengths(&self) -> Result<()> {
        let n = self.rho.len();
        let lens =
            [self.center.len(), self.width.len(), self.level.len(), self.ghost.len(), self.solid.len(), self.u.len()];
        if lens.iter().any(|&l| l != n) {
            return Err(Error::invalid(
                "leaf cells",
                format!(
                    "center {}, width {}, level {}, ghost {}, solid {}, u {}, rho {n}",
                    lens[0], lens[1], lens[2], lens[3], lens[4], lens[5]
                ),
                "vectors of one length (one entry per cell)",
            ));
        }
        Ok(())
    }
}

/// A host copy of a forest's solution: the moments `(ρ, u)` of every cell of every active
/// block (computed on the device, [`ramus_kernels::readout`]) with the mesh, to evaluate
/// fields anywhere ([`crate::Forest::host_solution`]). It owns its data (`Send`), so the
/// evaluation and the files can be done on another thread while the forest goes on.
pub struct HostSolution<Q: VelocitySet, F: Real> {
    /// `1 + D` values per cell (ρ, then u), blocks in the order of `mesh.id_sets`.
    pub(crate) moments: Vec<F>,
    /// Position of each block ID (below `mesh.capacity`) in that order; `u32::MAX` for an
    /// inactive ID.
    pub(crate) position: Vec<u32>,
    pub(crate) mesh: MeshSnapshot,
    /// The solver's per-block solid masks (empty without obstacles).
    pub(crate) solid: Vec<u64>,
    /// Root steps done.
    pub(crate) steps: u64,
    pub(crate) _q: std::marker::PhantomData<Q>,
}

impl<Q: VelocitySet, F: Real> HostSolution<Q, F> {
    /// A solution from the moments read in the order of `mesh.id_sets`; an error if their
    /// count does not match the mesh (a broken read-back, never a wrong field).
    pub(crate) fn new(moments: Vec<F>, mesh: MeshSnapshot, solid: Vec<u64>, steps: u64) -> Result<Self> {
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let s = values_per_cell(<Q::Dim as Dim>::D);
        let mut position = vec![u32::MAX; mesh.capacity];
        let mut n = 0usize;
        for &b in mesh.id_sets.iter().flatten() {
            let slot = position.get_mut(b as usize).ok_or_else(|| {
                Error::invalid("host solution block", b, format!("below the snapshot's capacity {}", mesh.capacity))
            })?;
            *slot = n as u32;
            n += 1;
        }
        if moments.len() != n * m * s {
            return Err(Error::invalid(
                "host solution moments",
                moments.len(),
                format!("{} values ({n} active blocks of {m} cells, {s} values each)", n * m * s),
            ));
        }
        Ok(HostSolution { moments, position, mesh, solid, steps, _q: std::marker::PhantomData })
    }

    /// Root steps done when the copy was taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// `(ρ, u)` of cell `t` of active block `b` (`u[2] = 0` in 2D).
    pub(crate) fn moments(&self, b: usize, t: usize) -> (f64, [f64; 3]) {
        let d = <Q::Dim as Dim>::D;
        let s = values_per_cell(d);
        let i = (self.position[b] as usize * <Q::Dim as Dim>::BLOCK_CELLS + t) * s;
        let v = &self.moments[i..i + s];
        let mut u = [0.0; 3];
        for a in 0..d {
            u[a] = v[1 + a].to_f64();
        }
        (v[0].to_f64(), u)
    }

    /// Centre of cell `t` of block `b`, in root cells.
    pub fn center(&self, b: usize, t: usize) -> [f64; 3] {
        let d = <Q::Dim as Dim>::D;
        let level = self.mesh.level[b];
        let w = units::cell(level) as f64 / units::ROOT_CELL as f64;
        let x = cell_coords(t);
        let mut c = [0.0; 3];
        for a in 0..d {
            c[a] = self.mesh.origin[3 * b + a] as f64 / units::ROOT_CELL as f64 + (x[a] as f64 + 0.5) * w;
        }
        c
    }

    /// The root grid (root blocks are IDs `0 … n_root − 1`, x fastest).
    pub fn root_fields(&self) -> Fields {
        let d = <Q::Dim as Dim>::D;
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let nb = self.mesh.root_blocks;
        let mut dims = [1; 3];
        for a in 0..d {
            dims[a] = nb[a] * EDGE;
        }
        let n = dims.iter().product();
        let mut fields = Fields { dims, rho: vec![0.0; n], u: vec![[0.0; 3]; n] };
        for b in 0..nb.iter().product::<usize>() {
            for t in 0..m {
                let c = self.center(b, t);
                let (rho, u) = self.moments(b, t);
                // Root cells' centres lie inside the grid.
                if let Some(idx) = fields.index(c[0] as usize, c[1] as usize, if d == 3 { c[2] as usize } else { 0 }) {
                    fields.rho[idx] = rho;
                    fields.u[idx] = u;
                }
            }
        }
        fields
    }

    /// Every cell of every leaf, in ascending block ID order.
    pub fn leaf_cells(&self) -> LeafCells {
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let mut out = LeafCells::default();
        for b in self.mesh.leaves() {
            let b = b as usize;
            let level = self.mesh.level[b];
            for t in 0..m {
                let (rho, u) = self.moments(b, t);
                out.center.push(self.center(b, t));
                out.width.push(1.0 / (1u64 << level) as f64);
                out.level.push(level as u8);
                out.ghost.push(self.mesh.cell_mask[b * m + t] == ramus_kernels::amr::CELL_GHOST);
                out.solid.push(self.solid.get(b).is_some_and(|s| (s >> t) & 1 != 0));
                out.rho.push(rho);
                out.u.push(u);
            }
        }
        out
    }

    /// `(ρ, u)` at each point (root cells), multilinear between the cell centres of the
    /// finest level whose blocks cover all `2^D` cells around the point (every active
    /// block holds valid data after a synchronisation, parents included); indices are
    /// clamped at the domain faces (constant extrapolation over the last half cell).
    pub fn sample(&self, points: &[[f64; 3]]) -> Vec<(f64, [f64; 3])> {
        let d = <Q::Dim as Dim>::D;
        let levels = self.mesh.max_levels;
        // (level, block index per axis) → block ID.
        let mut blocks: HashMap<(usize, [i64; 3]), usize> = HashMap::new();
        for ids in &self.mesh.id_sets {
            for &b in ids {
                let b = b as usize;
                let l = self.mesh.level[b];
                let w = units::block(l) as i64;
                let key = [0, 1, 2].map(|a| self.mesh.origin[3 * b + a] as i64 / w);
                blocks.insert((l as usize, key), b);
            }
        }
        let root_cells = self.mesh.root_blocks.map(|n| (n * EDGE) as i64);
        let mut out = Vec::with_capacity(points.len());
        for p in points {
            let mut value = None;
            for l in (0..levels).rev() {
                let scale = (1u64 << l) as f64;
                let mut i0 = [0i64; 3];
                let mut w = [0.0; 3];
                for a in 0..d {
                    let g = p[a] * scale - 0.5;
                    i0[a] = g.floor() as i64;
                    w[a] = g - i0[a] as f64;
                }
                let n_l = root_cells.map(|n| n << l);
                let mut acc = (0.0, [0.0; 3]);
                let mut complete = true;
                for corner in 0..(1usize << d) {
                    let mut weight = 1.0;
                    let mut cell = [0i64; 3];
                    for a in 0..d {
                        let e = ((corner >> a) & 1) as i64;
                        weight *= if e == 1 { w[a] } else { 1.0 - w[a] };
                        cell[a] = (i0[a] + e).clamp(0, n_l[a] - 1);
                    }
                    let key = [cell[0] >> 2, cell[1] >> 2, cell[2] >> 2];
                    let Some(&b) = blocks.get(&(l, key)) else {
                        complete = false;
                        break;
                    };
                    let t = cell_index([(cell[0] & 3) as i32, (cell[1] & 3) as i32, (cell[2] & 3) as i32]);
                    let (rho, u) = self.moments(b, t);
                    acc.0 += weight * rho;
                    for a in 0..3 {
                        acc.1[a] += weight * u[a];
                    }
                }
                if complete {
                    value = Some(acc);
                    break;
                }
            }
            // Level 0 covers the domain: a point inside always finds a value.
            out.push(value.unwrap_or((f64::NAN, [f64::NAN; 3])));
        }
        out
    }
}
