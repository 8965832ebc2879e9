//! Macroscopic fields ρ and u of all cells.

use ramus_kernels::block::{cell_coords, EDGE};
use ramus_kernels::collide::moments;
use ramus_kernels::stream::{load_cell, Field, StepParams};
use ramus_kernels::{Dim, Real, VelocitySet};

use crate::amr::RootGrid;

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
    /// Linear index of cell `(i, j, k)`.
    pub fn index(&self, i: usize, j: usize, k: usize) -> usize {
        i + self.dims[0] * (j + self.dims[1] * k)
    }

    /// Velocity of cell `(i, j, k)`.
    pub fn velocity(&self, i: usize, j: usize, k: usize) -> [f64; 3] {
        self.u[self.index(i, j, k)]
    }

    /// Density of cell `(i, j, k)`.
    pub fn density(&self, i: usize, j: usize, k: usize) -> f64 {
        self.rho[self.index(i, j, k)]
    }

    /// Total mass `Σ ρ` (cell volume 1).
    pub fn mass(&self) -> f64 {
        self.rho.iter().sum()
    }
}

/// Moments of the pre-collision populations of every root cell, from a host copy `f` of
/// the pool after `steps` steps (the AA layout alternates with the step parity).
pub(crate) fn extract<Q: VelocitySet, F: Real>(
    root: &RootGrid<Q::Dim>,
    f: &mut [F],
    params: &StepParams<F>,
    steps: u64,
) -> Fields {
    let d = <Q::Dim as Dim>::D;
    let m = <Q::Dim as Dim>::BLOCK_CELLS;
    let nb = root.blocks_per_axis();
    let mut dims = [1; 3];
    for a in 0..d {
        dims[a] = nb[a] * EDGE;
    }
    let n = dims.iter().product();
    let mut fields = Fields { dims, rho: vec![0.0; n], u: vec![[0.0; 3]; n] };
    let fld = Field { f: f.as_mut_ptr(), nbr: root.links().as_ptr(), onb: root.on_boundary().as_ptr() };
    for b in 0..root.len() {
        let p = root.position(b);
        for t in 0..m {
            // SAFETY: `f` holds the whole pool and the links point into it.
            let pop = unsafe {
                if steps % 2 == 1 {
                    load_cell::<Q, F, true>(&fld, params, b, t)
                } else {
                    load_cell::<Q, F, false>(&fld, params, b, t)
                }
            };
            let (rho, u) = moments::<Q, F>(&pop);
            let x = cell_coords(t);
            let mut c = [0usize; 3];
            for a in 0..d {
                c[a] = p[a] * EDGE + x[a] as usize;
            }
            let idx = fields.index(c[0], c[1], c[2]);
            fields.rho[idx] = rho.to_f64();
            fields.u[idx] = u.map(Real::to_f64);
        }
    }
    fields
}
