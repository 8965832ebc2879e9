//! Initial conditions: equilibrium populations from a macroscopic state.

use ramus_kernels::block::{cell_coords, EDGE};
use ramus_kernels::collide::equilibrium;
use ramus_kernels::stream::pool_index;
use ramus_kernels::{Dim, Real, VelocitySet};

use crate::amr::RootGrid;

/// A distribution pool of `capacity` blocks holding `h^eq(ρ, u)` of `state(x)` in every
/// cell of the root grid, `x` being the cell centre in root lattice units.
pub(crate) fn equilibrium_pool<Q: VelocitySet, F: Real>(
    root: &RootGrid<Q::Dim>,
    capacity: usize,
    state: &dyn Fn([f64; 3]) -> (f64, [f64; 3]),
) -> Vec<F> {
    let m = <Q::Dim as Dim>::BLOCK_CELLS;
    let mut f = vec![F::ZERO; capacity * Q::Q * m];
    for b in 0..root.len() {
        let p = root.position(b);
        for t in 0..m {
            let x = cell_coords(t);
            let mut pos = [0.0; 3];
            for a in 0..<Q::Dim as Dim>::D {
                pos[a] = (p[a] * EDGE) as f64 + x[a] as f64 + 0.5;
            }
            let (rho, u) = state(pos);
            let feq = equilibrium::<Q, F>(F::from_f64(rho), u.map(F::from_f64));
            for i in 0..Q::Q {
                f[pool_index::<Q>(b, i, t)] = feq[i];
            }
        }
    }
    f
}
