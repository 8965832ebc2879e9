//! Moments, equilibrium and BGK relaxation (paper, sections "Lattice Boltzmann Method"
//! and "Collision").
//!
//! Sums run over the directions in order, with velocity components applied by adding or
//! subtracting (never multiplying by 0 or ±1), so CPU and GPU perform the same operations.

use crate::lattice::VelocitySet;
use crate::real::Real;

/// Density and velocity of a population: `ρ = Σ f_i`, `ρu = Σ f_i c_i`.
#[inline(always)]
pub fn moments<L: VelocitySet, F: Real>(f: &L::Pop<F>) -> (F, [F; 3]) {
    let mut rho = F::ZERO;
    let mut m = [F::ZERO; 3];
    L::unroll(
        #[inline(always)]
        |i| {
            let fi = f[i];
            rho += fi;
            let c = L::C[i];
            for a in 0..3 {
                if c[a] == 1 {
                    m[a] += fi;
                } else if c[a] == -1 {
                    m[a] -= fi;
                }
            }
        },
    );
    let inv = F::ONE / rho;
    (rho, [m[0] * inv, m[1] * inv, m[2] * inv])
}

/// `c_i · u`, by adds and subtracts.
#[inline(always)]
pub fn c_dot<F: Real>(c: [i32; 3], u: [F; 3]) -> F {
    let mut s = F::ZERO;
    for a in 0..3 {
        if c[a] == 1 {
            s += u[a];
        } else if c[a] == -1 {
            s -= u[a];
        }
    }
    s
}

/// Second-order equilibrium
/// `f_i^eq = w_i ρ (1 + 3 c·u + 9/2 (c·u)^2 - 3/2 u·u)` (c_s² = 1/3).
#[inline(always)]
pub fn equilibrium_dir<L: VelocitySet, F: Real>(i: usize, rho: F, u: [F; 3], usq_term: F) -> F {
    let cu = c_dot(L::C[i], u);
    let three = F::from_f64(3.0);
    let four_half = F::from_f64(4.5);
    F::from_f64(L::W[i]) * rho * (F::ONE + three * cu + four_half * cu * cu - usq_term)
}

/// `3/2 u·u`, shared by all directions of [`equilibrium_dir`].
#[inline(always)]
pub fn usq_term<F: Real>(u: [F; 3]) -> F {
    F::from_f64(1.5) * (u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
}

/// The full equilibrium population.
#[inline(always)]
pub fn equilibrium<L: VelocitySet, F: Real>(rho: F, u: [F; 3]) -> L::Pop<F> {
    let mut feq = L::Pop::<F>::default();
    let usq = usq_term(u);
    L::unroll(
        #[inline(always)]
        |i| feq[i] = equilibrium_dir::<L, F>(i, rho, u, usq),
    );
    feq
}

/// BGK collision in place: `f_i ← f_i + ω (f_i^eq − f_i)`, with `ω = Δt/τ`.
/// Returns the moments of the pre-collision population (conserved by the collision).
#[inline(always)]
pub fn bgk<L: VelocitySet, F: Real>(f: &mut L::Pop<F>, omega: F) -> (F, [F; 3]) {
    let (rho, u) = moments::<L, F>(f);
    let usq = usq_term(u);
    L::unroll(
        #[inline(always)]
        |i| {
            let feq = equilibrium_dir::<L, F>(i, rho, u, usq);
            f[i] = f[i] + omega * (feq - f[i]);
        },
    );
    (rho, u)
}
