//! Eddy viscosities from the resolved velocity gradient: WALE and Vreman, on every level.
//!
//! Unlike Smagorinsky's (see [`crate::les`]), these models need the full velocity gradient
//! `g_ij = ∂u_i/∂x_j`, rotation included, which the non-equilibrium stress of a cell does
//! not carry (it gives the strain rate only). They take it by finite differences of the
//! cell velocities, the one place of the solver that looks at neighbour cells' moments:
//!
//! 1. before a level steps, [`CellVelocity`] writes the velocity of each of its cells
//!    (the pre-collision state of the step about to be taken, Guo's `u + F/(2ρ)` under a
//!    body force) into a per-cell buffer;
//! 2. the level's stream-and-collide ([`crate::stream::StreamCollide`]) reads the six (3D)
//!    or four (2D) face neighbours of a cell through the block links — the same links the
//!    streaming follows, so neighbour blocks of the level act as the ghost layer — and
//!    takes central differences ([`velocity_gradient`]); where a neighbour is missing (a
//!    domain wall, a solid cell, or no block of the level: the edge of a refined region)
//!    the difference is one-sided, and zero where both are;
//! 3. the eddy viscosity `ν_t` of the model ([`eddy_viscosity`]) gives the cell's total
//!    relaxation time `τ = τ₀ + 3ν_t` (TRT keeps its magic parameter per cell, as with
//!    Smagorinsky), which the collision uses and which is stored per cell
//!    ([`EddyField::eddy`]) for the grid transfers.
//!
//! The filter width is the cell size of each level (1 in the level's lattice units), so
//! in lattice units `ν_t,L = C² Δx_L² OP(g) Δt_L/Δx_L² = C² OP(g_L)` with the gradient in
//! the level's units: the same physical flow gives half the lattice eddy viscosity on the
//! next finer level, as for Smagorinsky. The transfers therefore carry `ν_t` with the
//! populations (`k ν_t` with `k = ½` to the finer level, 2 to the coarser) and rescale the
//! non-equilibrium part with the cells' total relaxation times ([`crate::les::les_factors`]'s
//! rule with `τ_s = τ₀_s + 3ν_t`).
//!
//! - **WALE** (Nicoud & Ducros, *Flow Turb. Combust.* 62 (1999) 183, eq. 13):
//!   `ν_t = (C_w Δ)² (S^d:S^d)^{3/2} / ((S:S)^{5/2} + (S^d:S^d)^{5/4})`, with
//!   `S^d_ij = ½ (g²_ij + g²_ji) − ⅓ δ_ij g²_kk` and `g² = g·g`. It vanishes in pure shear
//!   (`g` nilpotent, `g² = 0`) and near walls like `y³`.
//! - **Vreman** (Vreman, *Phys. Fluids* 16 (2004) 3670, eqs. 5–8):
//!   `ν_t = c √(B_β / (α_ij α_ij))`, `α_ij = ∂u_j/∂x_i`, `β_ij = Δ² α_mi α_mj`,
//!   `B_β = β₁₁β₂₂ − β₁₂² + β₁₁β₃₃ − β₁₃² + β₂₂β₃₃ − β₂₃²`, with `c ≈ 2.5 C_s²`. `B_β` is
//!   the second invariant of `β = Δ² g gᵀ`, which vanishes exactly when `g` has rank ≤ 1:
//!   pure shear and every other one-directional gradient (Vreman's "320 flows"). It does
//!   **not** vanish in solid-body rotation (rank 2: `ν_t = c Ω/√2` for angular velocity
//!   `Ω`); no eddy-viscosity model of the three does except Smagorinsky's (`S = 0`), as
//!   Nicoud, Baya Toda, Cabrit, Bose & Lee, *Phys. Fluids* 23 (2011) 085106, Table I list.
//!
//! Powers with fractional exponents are products of IEEE square roots ([`sqrt`]), so
//! CPU and CUDA agree bit for bit.

use core::marker::PhantomData;

use crate::amr::CELL_GHOST;
use crate::block::{self, cell_coords};
use crate::collide::moments;
use crate::collision::forced_velocity;
use crate::kernel_args;
use crate::lattice::{Dim, VelocitySet};
use crate::launch::Kernel;
use crate::les::{magic_tau, sqrt};
use crate::memory::Lens;
use crate::mrt::les_odd_tau;
use crate::real::Real;
use crate::storage::Storage;
use crate::stream::{load_cell, Field, StepParams, ONB_SOLID};

/// [`StepParams::les_model`]: no gradient model (Smagorinsky, if any, is
/// [`StepParams::smagorinsky`]).
pub const LES_NONE: u32 = 0;
/// [`StepParams::les_model`]: WALE, `StepParams::eddy_constant = C_w²`.
pub const LES_WALE: u32 = 1;
/// [`StepParams::les_model`]: Vreman, `StepParams::eddy_constant = c`.
pub const LES_VREMAN: u32 = 2;

/// A velocity gradient, `g[i][j] = ∂u_i/∂x_j`.
pub type Gradient = [[f64; 3]; 3];

/// WALE's eddy viscosity for `cw2 = C_w²` and `Δ = 1` (see the module docs); 0 where
/// the gradient vanishes. Written out entry by entry: loops over small arrays end up in
/// local memory on the GPU.
#[inline(always)]
pub fn wale_viscosity(g: Gradient, cw2: f64) -> f64 {
    let [[a, b, c], [d, e, f], [h, i, j]] = g;
    // g² = g·g.
    let (q11, q12, q13) = (a * a + b * d + c * h, a * b + b * e + c * i, a * c + b * f + c * j);
    let (q21, q22, q23) = (d * a + e * d + f * h, d * b + e * e + f * i, d * c + e * f + f * j);
    let (q31, q32, q33) = (h * a + i * d + j * h, h * b + i * e + j * i, h * c + i * f + j * j);
    let third = (q11 + q22 + q33) / 3.0;
    // S^d: symmetric part of g² without its trace; S: symmetric part of g.
    let (d11, d22, d33) = (q11 - third, q22 - third, q33 - third);
    let (d12, d13, d23) = (0.5 * (q12 + q21), 0.5 * (q13 + q31), 0.5 * (q23 + q32));
    let sd = d11 * d11 + d22 * d22 + d33 * d33 + 2.0 * (d12 * d12 + d13 * d13 + d23 * d23);
    let (s12, s13, s23) = (0.5 * (b + d), 0.5 * (c + h), 0.5 * (f + i));
    let ss = a * a + e * e + j * j + 2.0 * (s12 * s12 + s13 * s13 + s23 * s23);
    let den = ss * ss * sqrt(ss) + sd * sqrt(sqrt(sd));
    if !(den > 0.0) {
        return 0.0;
    }
    cw2 * sd * sqrt(sd) / den
}

/// Vreman's eddy viscosity for the constant `c` and `Δ = 1` (see the module docs); 0
/// where `B_β ≤ 0` (rank ≤ 1, up to round-off) or the gradient vanishes.
#[inline(always)]
pub fn vreman_viscosity(g: Gradient, c: f64) -> f64 {
    let [r1, r2, r3] = g;
    // β_ij = α_mi α_mj = Σ_m g[i][m] g[j][m]: products of the rows of g.
    let dot = |x: [f64; 3], y: [f64; 3]| x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
    let (b11, b22, b33) = (dot(r1, r1), dot(r2, r2), dot(r3, r3));
    let (b12, b13, b23) = (dot(r1, r2), dot(r1, r3), dot(r2, r3));
    let bb = b11 * b22 - b12 * b12 + b11 * b33 - b13 * b13 + b22 * b33 - b23 * b23;
    let aa = b11 + b22 + b33;
    if !(bb > 0.0 && aa > 0.0) {
        return 0.0;
    }
    c * sqrt(bb / aa)
}

/// The eddy viscosity of `model` ([`LES_WALE`], [`LES_VREMAN`]; 0 otherwise) with its
/// constant (`C_w²` or `c`).
#[inline(always)]
pub fn eddy_viscosity(model: u32, g: Gradient, constant: f64) -> f64 {
    if model == LES_WALE {
        wale_viscosity(g, constant)
    } else if model == LES_VREMAN {
        vreman_viscosity(g, constant)
    } else {
        0.0
    }
}

/// The per-cell buffers of a gradient model, indexed by pool block like the populations.
#[derive(Clone, Copy, Debug)]
pub struct EddyField<F> {
    /// Cell velocities: component `a` of cell `t` of block `b` at `(3b + a) 4^D + t`.
    pub vel: *const F,
    /// Eddy viscosity of the cell's last collision (or transfer), in its level's lattice
    /// units: `eddy[b 4^D + t]`.
    pub eddy: *mut F,
    /// The mesh's per-cell masks ([`CELL_GHOST`]): ghost cells keep the eddy viscosity
    /// interpolated from the coarse level (see [`cell_params`]).
    pub cell_mask: *const u8,
}

/// Velocity of cell `t` of block `b` (see [`EddyField::vel`]).
#[inline(always)]
unsafe fn velocity<L: VelocitySet, F: Real>(vel: *const F, b: usize, t: usize) -> [F; 3] {
    let m = <L::Dim as Dim>::BLOCK_CELLS;
    [*vel.add(3 * b * m + t), *vel.add((3 * b + 1) * m + t), *vel.add((3 * b + 2) * m + t)]
}

/// The derivative of the velocity along the offset `off` (a unit vector) at cell `x` of
/// block `b` with velocity `u0`: central where both neighbours `x ± off` are fluid cells
/// of the level, one-sided where one is, zero where none is.
///
/// # Safety
/// As for [`velocity_gradient`].
#[inline(always)]
unsafe fn derivative<L: VelocitySet, F: Real, P>(
    fld: &Field<P>,
    vel: *const F,
    (b, x, solid): (usize, [i32; 3], bool),
    off: [i32; 3],
    u0: [F; 3],
) -> [f64; 3] {
    let d = <L::Dim as Dim>::D;
    let n = <L::Dim as Dim>::NEIGHBORS;
    let (lo, lo_at) = block::resolve(fld.nbr, b, x, [-off[0], -off[1], -off[2]], d, n);
    let (hi, hi_at) = block::resolve(fld.nbr, b, x, off, d, n);
    let fluid = |link: i32, at: usize| link >= 0 && !(solid && (*fld.solid.add(link as usize) >> at) & 1 != 0);
    let (has_lo, has_hi) = (fluid(lo, lo_at), fluid(hi, hi_at));
    let ul = if has_lo { velocity::<L, F>(vel, lo as usize, lo_at) } else { u0 };
    let uh = if has_hi { velocity::<L, F>(vel, hi as usize, hi_at) } else { u0 };
    let scale = if has_lo && has_hi { 0.5 } else { 1.0 };
    [(uh[0] - ul[0]).to_f64() * scale, (uh[1] - ul[1]).to_f64() * scale, (uh[2] - ul[2]).to_f64() * scale]
}

/// The velocity gradient at cell `t` of block `b` from the cell velocities `vel`: central
/// differences where both face neighbours along an axis are fluid cells of the level,
/// one-sided where one is, zero where none is (see the module docs).
///
/// # Safety
/// `fld.nbr`, `fld.onb` (and `fld.solid` for blocks flagged [`ONB_SOLID`]) must describe
/// block `b` and its neighbours; `vel` must hold the velocities of all of them.
#[inline(always)]
pub unsafe fn velocity_gradient<L: VelocitySet, F: Real, P>(
    fld: &Field<P>,
    vel: *const F,
    b: usize,
    t: usize,
) -> Gradient {
    let at = (b, cell_coords(t), *fld.onb.add(b) & ONB_SOLID != 0);
    let u0 = velocity::<L, F>(vel, b, t);
    // Columns ∂u/∂x, ∂u/∂y, ∂u/∂z (the latter zero in 2D).
    let gx = derivative::<L, F, P>(fld, vel, at, [1, 0, 0], u0);
    let gy = derivative::<L, F, P>(fld, vel, at, [0, 1, 0], u0);
    let gz = if <L::Dim as Dim>::D == 3 { derivative::<L, F, P>(fld, vel, at, [0, 0, 1], u0) } else { [0.0; 3] };
    [[gx[0], gy[0], gz[0]], [gx[1], gy[1], gz[1]], [gx[2], gy[2], gz[2]]]
}

/// The step parameters of cell `t` of block `b` under the gradient model of `p`
/// ([`StepParams::les_model`] ≠ [`LES_NONE`]): `p` with the cell's total relaxation rates
/// `ω⁺ = 1/(τ₀ + 3ν_t)` and `ω⁻` (TRT's magic parameter kept when [`StepParams::magic`]
/// is positive, MRT's odd-ghost rule [`les_odd_tau`] when [`StepParams::omega_bulk`] is,
/// `ω⁺` otherwise); it also stores `ν_t`.
///
/// Ghost cells (fine cells filled from the coarse level before each coarse step) relax
/// with the eddy viscosity the interpolation gave them, like their populations: their
/// outer rim has no neighbours on the level, so after the first of the two fine steps
/// its velocities are not the flow's, and a gradient through them would feed a wrong
/// `ν_t` into the ghost cells that stream into the interior (the layer is two cells deep
/// so that the populations reaching the interior stay exact; the gradient stencil would
/// reach one cell further).
///
/// # Safety
/// As for [`velocity_gradient`]; `les.eddy` and `les.cell_mask` must hold block `b`.
#[inline(always)]
pub unsafe fn cell_params<L: VelocitySet, F: Real, P>(
    p: &StepParams<F>,
    fld: &Field<P>,
    les: &EddyField<F>,
    b: usize,
    t: usize,
) -> StepParams<F> {
    let m = <L::Dim as Dim>::BLOCK_CELLS;
    let slot = les.eddy.add(b * m + t);
    let nu = if *les.cell_mask.add(b * m + t) == CELL_GHOST {
        (*slot).to_f64()
    } else {
        let g = velocity_gradient::<L, F, P>(fld, les.vel, b, t);
        let nu = eddy_viscosity(p.les_model, g, p.eddy_constant.to_f64());
        *slot = F::from_f64(nu);
        nu
    };
    let tau0 = 1.0 / p.omega.to_f64();
    let tau = tau0 + 3.0 * nu;
    let magic = p.magic.to_f64();
    let tau_odd = if magic > 0.0 {
        magic_tau(tau, magic)
    } else if p.omega_bulk > F::ZERO {
        // MRT: the odd ghosts keep the level's (τ_o − ½)/(τ₀ − ½), as under Smagorinsky.
        les_odd_tau(tau, tau0, 1.0 / p.omega_minus.to_f64())
    } else {
        tau
    };
    let mut q = *p;
    q.omega = F::from_f64(1.0 / tau);
    q.omega_minus = F::from_f64(1.0 / tau_odd);
    q
}

kernel_args! {
    /// Arguments of [`CellVelocity`].
    pub struct VelocityArgs<F, P> {
        /// Distribution pool (only read).
        pub f: mut P,
        /// Neighbour links.
        pub nbr: ref i32,
        /// Per-block boundary flags.
        pub onb: ref u32,
        /// Per-block solid-cell masks (may be null when no block is flagged solid).
        pub solid: ref u64,
        /// Blocks of the level (an ID set); item `i` is cell `i mod 4^D` of `ids[i / 4^D]`.
        pub ids: ref u32,
        /// Cell velocities, pool-indexed ([`EddyField::vel`]).
        pub vel: mut F,
        /// The level's body force density: the velocity written is Guo's `u + F/(2ρ)`.
        pub force: val [F; 3],
    }
}

/// Writes the velocity of every cell of a level's blocks, in the layout of `ODD` steps,
/// into the pool-indexed velocity buffer (see the module docs); solid cells read as the
/// rest state (zero velocity).
pub struct CellVelocity<L, F, S, const ODD: bool>(PhantomData<(L, F, S)>);

impl<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool> Kernel for CellVelocity<L, F, S, ODD> {
    type Args = VelocityArgs<F, S::Elem>;
    const WRITES_MESH: bool = false;

    fn max_items(l: &VelocityArgs<F, S::Elem, Lens>) -> Option<usize> {
        Some(l.ids * <L::Dim as Dim>::BLOCK_CELLS)
    }

    #[inline(always)]
    unsafe fn run(i: usize, a: &VelocityArgs<F, S::Elem>) {
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        let b = *a.ids.add(i / m) as usize;
        let t = i & (m - 1);
        let fld = Field { f: a.f, nbr: a.nbr, onb: a.onb, solid: a.solid };
        let h = load_cell::<L, F, S, ODD>(&fld, b, t);
        let (rho, mut u) = moments::<L, F>(&h);
        if a.force != [F::ZERO; 3] {
            u = forced_velocity(rho, u, a.force);
        }
        for c in 0..3 {
            *a.vel.add((3 * b + c) * m + t) = u[c];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `g` scaled by `s`.
    fn scaled(g: Gradient, s: f64) -> Gradient {
        g.map(|r| r.map(|v| v * s))
    }

    #[test]
    fn wale_vanishes_in_pure_shear() {
        // u_i = γ x_j for every pair i ≠ j (Nicoud & Ducros 1999, sec. 3: g² = 0).
        for i in 0..3 {
            for j in 0..3 {
                if i != j {
                    let mut g = [[0.0; 3]; 3];
                    g[i][j] = 0.37;
                    assert_eq!(wale_viscosity(g, 0.25), 0.0, "shear u_{i} = γ x_{j}");
                }
            }
        }
        // A generic gradient does not vanish, and ν_t scales like |g| (S^d:S^d ∝ g⁴, S:S ∝
        // g²: a sixth power over a fifth).
        let g = [[0.1, 0.3, -0.2], [0.05, -0.15, 0.4], [0.2, -0.1, 0.05]];
        let nu = wale_viscosity(g, 0.25);
        assert!(nu > 0.0);
        assert!((wale_viscosity(scaled(g, 2.0), 0.25) / nu - 2.0).abs() < 1e-12);
    }

    #[test]
    fn vreman_vanishes_for_one_directional_gradients_not_in_rotation() {
        // Pure shear and every rank-one gradient g = a bᵀ: B_β = 0 (Vreman 2004, sec. II).
        for i in 0..3 {
            for j in 0..3 {
                let mut g = [[0.0; 3]; 3];
                g[i][j] = -0.21;
                assert_eq!(vreman_viscosity(g, 0.07), 0.0, "u_{i} = γ x_{j}");
            }
        }
        let (a, b) = ([0.5, -1.0, 2.0], [0.25, 0.75, -0.5]);
        let rank_one = [0, 1, 2].map(|i| [0, 1, 2].map(|j| a[i] * b[j]));
        assert!(vreman_viscosity(rank_one, 0.07) < 1e-12);
        // Solid rotation about z, u = Ω (−y, x, 0): B_β = Ω⁴, α:α = 2Ω², ν_t = c Ω/√2
        // (Nicoud et al. 2011, Table I: the Vreman model does not vanish in rotation).
        let omega = 0.3;
        let g = [[0.0, -omega, 0.0], [omega, 0.0, 0.0], [0.0; 3]];
        let nu = vreman_viscosity(g, 0.07);
        assert!((nu - 0.07 * omega / core::f64::consts::SQRT_2).abs() < 1e-15, "{nu}");
    }

    #[test]
    fn wale_in_rotation_and_strain_matches_the_closed_form() {
        // Solid rotation: S = 0, g² = −Ω² diag(1, 1, 0), S^d = Ω² diag(−1/3, −1/3, 2/3), S^d:S^d = 2/3 Ω⁴,
        // ν_t = C_w² (S^d:S^d)^{3/2 − 5/4} = C_w² (2/3)^{1/4} Ω.
        let omega = 0.2;
        let g = [[0.0, -omega, 0.0], [omega, 0.0, 0.0], [0.0; 3]];
        let expected = 0.25 * libm::pow(2.0 / 3.0, 0.25) * omega;
        assert!((wale_viscosity(g, 0.25) - expected).abs() < 1e-15);
        // Plane strain u = ε (x, −y, 0): g² = ε² diag(1, 1, 0), S^d = ε² diag(1/3, 1/3, −2/3),
        // S^d:S^d = 2/3 ε⁴, S:S = 2ε², ν_t = C_w² (2/3)^{3/2} ε⁶ / ((2ε²)^{5/2} + (2/3)^{5/4} ε⁵).
        let e: f64 = 0.1;
        let g = [[e, 0.0, 0.0], [0.0, -e, 0.0], [0.0; 3]];
        let sd: f64 = 2.0 / 3.0 * e.powi(4);
        let expected = 0.25 * libm::pow(sd, 1.5) / (libm::pow(2.0 * e * e, 2.5) + libm::pow(sd, 1.25));
        assert!((wale_viscosity(g, 0.25) / expected - 1.0).abs() < 1e-13);
    }
}
