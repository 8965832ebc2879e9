//! Initial conditions: equilibrium populations from a macroscopic state, optionally with
//! the first-order non-equilibrium part of a given velocity gradient.

use ramus_kernels::amr::units;
use ramus_kernels::block::cell_coords;
use ramus_kernels::collide::equilibrium;
use ramus_kernels::stream::pool_index;
use ramus_kernels::{Dim, Real, Storage, VelocitySet};

use crate::amr::MeshSnapshot;
use crate::error::{Error, Result};

/// The velocity gradient of an initial state and the relaxation time of each level: what
/// the first-order non-equilibrium populations need (see [`equilibrium_pool`]).
pub(crate) struct Gradient<'a> {
    /// `g[a][b] = ∂u_b/∂x_a` at a point, in root lattice units (per root cell).
    pub grad: &'a dyn Fn([f64; 3]) -> [[f64; 3]; 3],
    /// Relaxation time of each level.
    pub taus: &'a [f64],
}

/// A distribution pool of `mesh.capacity` blocks holding `h^eq(ρ, u)` of `state(x)` in every
/// cell of every active block (leaves and parents), `x` being the cell centre in root
/// lattice units. Velocities are in lattice units, the same on every level. A state that
/// is not finite, has `ρ ≤ 0` or a speed above `max_speed` is an error naming the cell.
///
/// With `gradient`, each population also carries the Chapman–Enskog non-equilibrium part
/// of that velocity gradient, `f_i^neq = −(w_i τ Δt / c_s²) ρ Q_iαβ ∂_α u_β` with
/// `Q_i = c_i c_i − c_s² I` (Krüger et al. 2017, *The Lattice Boltzmann Method*, §5.5;
/// Mei, Luo, Lallemand & d'Humières, *Comput. Fluids* 35 (2006) 855–862): the viscous
/// stress is then present from the first step instead of building up through an initial
/// layer whose populations alternate from step to step as τ → ½. On level `L`, `τ` is
/// that level's and the gradient is taken per level cell (`× 2^−L`).
pub(crate) fn equilibrium_pool<Q: VelocitySet, F: Real>(
    mesh: &MeshSnapshot,
    state: &dyn Fn([f64; 3]) -> (f64, [f64; 3]),
    gradient: Option<&Gradient<'_>>,
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
            let neq = match gradient {
                Some(g) => non_equilibrium::<Q>(rho, (g.grad)(pos), w, g.taus[mesh.level[b] as usize], pos)?,
                None => [0.0; 27],
            };
            for i in 0..Q::Q {
                f[pool_index::<Q>(b, i, t)] = feq[i] + F::from_f64(neq[i]);
            }
        }
    }
    Ok(f)
}

/// `f_i^neq = −3 w_i τ ρ Σ_ab (c_ia c_ib − δ_ab/3) g_ab · width` for every direction (at
/// most 27; the sums over the lattice's dimensions), the gradient `g` given per root cell
/// and `width` the cell width in root cells.
fn non_equilibrium<Q: VelocitySet>(
    rho: f64,
    g: [[f64; 3]; 3],
    width: f64,
    tau: f64,
    pos: [f64; 3],
) -> Result<[f64; 27]> {
    if !g.iter().flatten().all(|v| v.is_finite()) {
        return Err(Error::invalid(
            "initial velocity gradient",
            format!("{g:?} at ({:.3}, {:.3}, {:.3})", pos[0], pos[1], pos[2]),
            "finite components",
        ));
    }
    let mut neq = [0.0; 27];
    for (i, n) in neq.iter_mut().enumerate().take(Q::Q) {
        let c = Q::C[i].map(f64::from);
        let mut q_g = 0.0;
        // Q_i = c_i c_i − c_s² I in the lattice's own dimension (in 2D the z components
        // of the gradient are not read).
        let d = <Q::Dim as Dim>::D;
        for a in 0..d {
            for b in 0..d {
                let delta = if a == b { 1.0 / 3.0 } else { 0.0 };
                q_g += (c[a] * c[b] - delta) * g[a][b];
            }
        }
        *n = -3.0 * Q::W[i] * tau * rho * q_g * width;
    }
    Ok(neq)
}

/// `f` in the pool's storage `S`, rounded as the kernels store ([`Storage::narrow`],
/// seeded by the pool index).
pub(crate) fn stored<F: Real, S: Storage<F>>(f: &[F]) -> Vec<S::Elem> {
    f.iter().enumerate().map(|(k, &x)| S::narrow(x, k)).collect()
}
