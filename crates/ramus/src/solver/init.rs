//! Initial conditions: equilibrium populations from a macroscopic state.

use ramus_kernels::amr::units;
use ramus_kernels::block::cell_coords;
use ramus_kernels::collide::equilibrium;
use ramus_kernels::stream::pool_index;
use ramus_kernels::{Dim, Real, VelocitySet};

use crate::amr::MeshSnapshot;
use crate::error::{Error, Result};

/// A distribution pool of `mesh.capacity` blocks holding `h^eq(ρ, u)` of `state(x)` in every
/// cell of every active block (leaves and parents), `x` being the cell centre in root
/// lattice units. Velocities are in lattice units, the same on every level. A state that
/// is not finite, has `ρ ≤ 0` or a speed above `max_speed` is an error naming the cell.
pub(crate) fn equilibrium_pool<Q: VelocitySet, F: Real>(
    mesh: &MeshSnapshot,
    state: &dyn Fn([f64; 3]) -> (f64, [f64; 3]),
    max_speed: f64,
) -> Result<Vec<F>> {
    let m = <Q::Dim as Dim>::BLOCK_CELLS;
    let d = <Q::Dim as Dim>::D;
    let n = mesh.capacity * Q::Q * m;
    let mut f = Vec::new();
    f.try_reserve_exact(n).map_err(|_| Error::OutOfMemory {
        what: "the initial distributions (host copy)".into(),
        needed: (n * std::mem::size_of::<F>()) as u64,
        available: 0,
    })?;
    f.resize(n, F::ZERO);
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
            let speed = (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]).sqrt();
            if !(rho.is_finite() && rho > 0.0 && speed.is_finite() && speed <= max_speed) {
                return Err(Error::invalid(
                    "initial state",
                    format!("rho = {rho}, u = {u:?} at ({:.3}, {:.3}, {:.3})", pos[0], pos[1], pos[2]),
                    format!("a finite density > 0 and a finite speed <= {max_speed:.4} (the guard's Mach limit)"),
                ));
            }
            let feq = equilibrium::<Q, F>(F::from_f64(rho), u.map(F::from_f64));
            for i in 0..Q::Q {
                f[pool_index::<Q>(b, i, t)] = feq[i];
            }
        }
    }
    Ok(f)
}
