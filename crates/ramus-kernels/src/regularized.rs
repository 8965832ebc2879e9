//! The recursive regularized operator (Malaspinas, arXiv:1505.06900, 2015; Coreixas,
//! Wissocq, Puigt, Boussuge & Sagaut, *Phys. Rev. E* 96 (2017) 033306): before relaxing,
//! the non-equilibrium part is replaced by its Hermite projection, rebuilt from the
//! second-order non-equilibrium moment `Π = Σ c c (f − f^eq)` alone,
//!
//! `f ← f^eq + (1 − ω) f^{neq,RR}`, `f^{neq,RR}_i = w_i [ (c_i c_i − c_s² I) : Π / (2 c_s⁴)
//! + Σ_k H_{k,i} b_k ]`,
//!
//! (with a body force also the first-order term of the momentum `−F/2` that Guo's
//! scheme leaves in it), the third-order part from the recursion `a_αβγ = u_α Π_βγ + u_β Π_αγ + u_γ Π_αβ` (the
//! Chapman–Enskog relation of the non-equilibrium moments). Every non-hydrodynamic
//! ("ghost") moment is thereby dropped at every step, which is what keeps the scheme
//! stable where BGK's ghost modes are barely damped (`τ → ½`).
//!
//! **Why this operator** (the issue asks for one of recursive regularized, cumulant, KBC):
//! on a refined grid the transfers rescale the non-equilibrium part from level to level
//! ([`crate::interpolate::rescale`]). The regularized non-equilibrium part is a linear
//! function of `Π ∝ τ ∂u`, so the BGK rescaling `τ_F/(2τ_C)` is exactly its own, and the
//! shear-flow consistency of the interfaces carries over unchanged. The cumulant operator
//! (Geier et al., *Comput. Math. Appl.* 70 (2015) 507) relaxes each cumulant at its own
//! rate: a consistent transfer needs the cumulant transform of every sample (the moments
//! relax non-linearly in the populations). KBC (Karlin, Bösch & Chikatamarla, *Phys. Rev.
//! E* 90 (2014) 031302) picks a per-cell, per-step stabiliser `γ` from an entropy
//! condition: the non-equilibrium part it leaves depends on the cell's state, not on `τ`
//! alone, so no level factor describes it. Both are at least as robust in uniform grids;
//! on refined grids the recursive regularized operator is the one whose interfaces stay
//! exact, at the cost of a few dozen flops per cell (memory-bound kernels hide them).
//!
//! **Third order per lattice.** The third-order terms are those the lattice carries,
//! `H_ααβ = (c_α² − c_s²) c_β` (and `H_xyz = c_x c_y c_z` on D3Q27), with coefficients
//! `b` chosen so that the rebuilt population has exactly the recursive moments
//! `Σ c_α² c_β f^{neq,RR} = a_ααβ`. On the tensor-product lattices (D2Q9, D3Q27) the `H`
//! are orthogonal under the weights and this is the Hermite formula `b = a/(2c_s⁶)`
//! (`a/c_s⁶` for `xyz`). On D3Q19 `H_xxy` and `H_zzy` are not orthogonal (their weighted
//! product is −1/27 instead of 0), so each pair `(a_xxy, a_zzy)` is solved with the
//! lattice's 2×2 Gram matrix ([`third_order_gram`]); `H_xyz` vanishes on every D3Q19
//! velocity and is left out. The equilibrium is the second-order one of BGK, so the
//! grid transfers rebuild it unchanged.

use crate::collide::{c_dot, equilibrium_dir, moments, usq_term};
use crate::collision::{forced_velocity, Collision};
use crate::lattice::{VelocitySet, CS2};
use crate::real::Real;
use crate::stream::StepParams;

/// The recursive regularized operator with `ω = p.omega` (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rr;

impl Collision for Rr {
    const NAME: &'static str = "rr";
    #[inline(always)]
    fn collide<L: VelocitySet, F: Real>(h: &mut L::Pop<F>, p: &StepParams<F>) -> (F, [F; 3]) {
        let omega = if crate::les::has_les(p) { crate::les::les_rates::<L, F>(h, p).0 } else { p.omega };
        if crate::collision::has_force(p) {
            rr::<L, F, true>(h, omega, p.force)
        } else {
            rr::<L, F, false>(h, omega, [F::ZERO; 3])
        }
    }
}

/// The weighted products of `H_xxy` with itself and with `H_zzy` over the lattice `L`,
/// `(Σ w H_xxy², Σ w H_xxy H_zzy)`, and `Σ w H_xyz²` (by symmetry the same for every
/// pair of axes). `(2/27, 0, 1/27)` on D2Q9 (where `H_zzy` and `H_xyz` vanish: the
/// coupling is 0) and D3Q27; `(2/27, −1/27, 0)` on D3Q19.
pub const fn third_order_gram<L: VelocitySet>() -> (f64, f64, f64) {
    let (mut diag, mut off, mut xyz) = (0.0, 0.0, 0.0);
    let mut i = 0;
    while i < L::Q {
        let c = L::C[i];
        let w = L::W[i];
        let (x, y, z) = (c[0] as f64, c[1] as f64, c[2] as f64);
        let hxxy = (x * x - CS2) * y;
        let hzzy = (z * z - CS2) * y;
        diag += w * hxxy * hxxy;
        // In 2D z = 0 for every velocity, and H_zzy = −c_s² c_y is not a moment the
        // lattice resolves independently: leave the coupling out.
        if L::Q != 9 {
            off += w * hxxy * hzzy;
        }
        xyz += w * (x * y * z) * (x * y * z);
        i += 1;
    }
    (diag, off, xyz)
}

/// The inverse of [`third_order_gram`]'s 2×2 matrix `[[d, o], [o, d]]` as `(d, o)` entries,
/// and `1/Σ w H_xyz²` (0 where the lattice has no `xyz` moment).
pub const fn third_order_inverse<L: VelocitySet>() -> (f64, f64, f64) {
    let (d, o, xyz) = third_order_gram::<L>();
    let det = d * d - o * o;
    (d / det, -o / det, if xyz > 0.0 { 1.0 / xyz } else { 0.0 })
}

/// `v`, `−v` or 0 for a velocity component `c` of 1, −1 or 0 (adds and subtracts only).
#[inline(always)]
fn sel<F: Real>(c: i32, v: F) -> F {
    if c == 1 {
        v
    } else if c == -1 {
        F::ZERO - v
    } else {
        F::ZERO
    }
}

/// `c_α² − c_s²` for a velocity component `c_α`.
#[inline(always)]
fn sq<F: Real>(c: i32) -> F {
    if c != 0 {
        F::from_f64(1.0 - CS2)
    } else {
        F::from_f64(-CS2)
    }
}

/// Recursive regularized collision in place, with Guo's body force when `FORCED`;
/// returns `(ρ, u)` (`u` with the half force). Written with scalars only: arrays indexed
/// in loops here end up in local memory on the GPU.
#[inline(always)]
pub fn rr<L: VelocitySet, F: Real, const FORCED: bool>(h: &mut L::Pop<F>, omega: F, force: [F; 3]) -> (F, [F; 3]) {
    let (rho, u0) = moments::<L, F>(h);
    let u = if FORCED { forced_velocity(rho, u0, force) } else { u0 };
    let usq = usq_term(u);
    let mut heq = L::Pop::<F>::default();
    // Π = Σ c c (h − h^eq).
    let (mut pxx, mut pyy, mut pzz) = (F::ZERO, F::ZERO, F::ZERO);
    let (mut pxy, mut pxz, mut pyz) = (F::ZERO, F::ZERO, F::ZERO);
    L::unroll(
        #[inline(always)]
        |i| {
            heq[i] = equilibrium_dir::<L, F>(i, rho, u, usq);
            let n = h[i] - heq[i];
            let c = L::C[i];
            if c[0] != 0 {
                pxx += n;
            }
            if c[1] != 0 {
                pyy += n;
            }
            if c[2] != 0 {
                pzz += n;
            }
            pxy += sel(c[0] * c[1], n);
            pxz += sel(c[0] * c[2], n);
            pyz += sel(c[1] * c[2], n);
        },
    );
    let two = F::from_f64(2.0);
    let [ux, uy, uz] = u;
    // Recursive third-order moments a_aab = 2 u_a Π_ab + u_b Π_aa.
    let (a_xxy, a_zzy) = (two * ux * pxy + uy * pxx, two * uz * pyz + uy * pzz);
    let (a_yyx, a_zzx) = (two * uy * pxy + ux * pyy, two * uz * pxz + ux * pzz);
    let (a_xxz, a_yyz) = (two * ux * pxz + uz * pxx, two * uy * pyz + uz * pyy);
    let a_xyz = ux * pyz + uy * pxz + uz * pxy;
    // Coefficients b = G⁻¹ a per pair (see the module docs); in 2D only H_xxy and H_yyx.
    let (g_inv_d, g_inv_o, g_inv_xyz) = const { third_order_inverse::<L>() };
    let (gd, go) = (F::from_f64(g_inv_d), F::from_f64(g_inv_o));
    let d3 = <L::Dim as crate::lattice::Dim>::D == 3;
    let (b_xxy, b_zzy, b_yyx, b_zzx, b_xxz, b_yyz) = if d3 {
        (
            gd * a_xxy + go * a_zzy,
            go * a_xxy + gd * a_zzy,
            gd * a_yyx + go * a_zzx,
            go * a_yyx + gd * a_zzx,
            gd * a_xxz + go * a_yyz,
            go * a_xxz + gd * a_yyz,
        )
    } else {
        (gd * a_xxy, F::ZERO, gd * a_yyx, F::ZERO, F::ZERO, F::ZERO)
    };
    let b_xyz = F::from_f64(g_inv_xyz) * a_xyz;
    let cs2 = F::from_f64(CS2);
    let tr = pxx + pyy + pzz;
    let keep = F::ONE - omega;
    let four_half = F::from_f64(4.5);
    let (keep_f, uf) = if FORCED {
        (F::ONE - omega * F::from_f64(0.5), ux * force[0] + uy * force[1] + uz * force[2])
    } else {
        (F::ZERO, F::ZERO)
    };
    L::unroll(
        #[inline(always)]
        |i| {
            let c = L::C[i];
            let w = F::from_f64(L::W[i]);
            // c·Π·c − c_s² tr Π.
            let mut cpc = F::ZERO;
            if c[0] != 0 {
                cpc += pxx;
            }
            if c[1] != 0 {
                cpc += pyy;
            }
            if c[2] != 0 {
                cpc += pzz;
            }
            cpc += sel(c[0] * c[1], two * pxy);
            cpc += sel(c[0] * c[2], two * pxz);
            cpc += sel(c[1] * c[2], two * pyz);
            // Σ_k H_k b_k with H_aab = (c_a² − c_s²) c_b.
            let mut third = sel(c[1], sq::<F>(c[0]) * b_xxy) + sel(c[0], sq::<F>(c[1]) * b_yyx);
            if d3 {
                third += sel(c[1], sq::<F>(c[2]) * b_zzy);
                third += sel(c[0], sq::<F>(c[2]) * b_zzx);
                third += sel(c[2], sq::<F>(c[0]) * b_xxz);
                third += sel(c[2], sq::<F>(c[1]) * b_yyz);
                if g_inv_xyz != 0.0 {
                    third += sel(c[0] * c[1] * c[2], b_xyz);
                }
            }
            let mut neq = w * (four_half * (cpc - cs2 * tr) + third);
            if FORCED {
                // The first-order Hermite term: about the equilibrium of the forced
                // velocity the non-equilibrium part carries the momentum −F/2, which the
                // projection keeps (`w c·a₁/c_s²` with `a₁ = −F/2`).
                neq -= w * F::from_f64(1.5) * c_dot(c, force);
            }
            let mut post = heq[i] + keep * neq;
            if FORCED {
                let cf = c_dot(c, force);
                let cu = c_dot(c, u);
                let three = F::from_f64(3.0);
                post += keep_f * w * (three * (cf - uf) + F::from_f64(9.0) * cu * cf);
            }
            h[i] = post;
        },
    );
    (rho, u)
}
