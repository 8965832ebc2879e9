//! Initial conditions: equilibrium populations from a macroscopic state.

use ramus_kernels::amr::units;
use ramus_kernels::block::cell_coords;
use ramus_kernels::collide::equilibrium;
use ramus_kernels::stream::pool_index;
use ramus_kernels::{Dim, Real, VelocitySet};

use crate::amr::MeshSnapshot;

/// A distribution pool of `mesh.capacity` blocks holding `h^eq(ρ, u)` of `state(x)` in every
/// cell of every active block (leaves and parents), `x` being the cell centre in root
/// lattice units. Velocities are in lattice units, the same on every level.
pub(crate) fn equilibrium_pool<Q: VelocitySet, F: Real>(
    mesh: &MeshSnapshot,
    state: &dyn Fn([f64; 3]) -> (f64, [f64; 3]),
) -> Vec<F> {
    let m = <Q::Dim as Dim>::BLOCK_CELLS;
    let d = <Q::Dim as Dim>::D;
    let mut f = vec![F::ZERO; mesh.capacity * Q::Q * m];
    let root = units::ROOT_CELL as f64;
    for &b in mesh.id_sets.iter().flatten() {
        let b = b as usize;
        let w = units::cell(mesh.level[b]) as f64 / root;
        for t in 0..m {
            let x = cell_coords(t);
            let mut pos = [0.0; 3];
            for a in 0..d {
                pos[a] = mesh.origin[3 * b + a] as f64 / root + (x[a] as f64 + 0.5) * w;
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
