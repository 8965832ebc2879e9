//! Collision operators: a type axis of the streaming kernel ([`crate::stream::StreamCollide`]
//! takes `C: Collision`), one PTX entry per operator in the kernel registry.
//!
//! - [`Bgk`]: the paper's single relaxation time, `h ← h + ω (h^eq − h)` ([`bgk`]).
//! - [`Trt`]: two relaxation times (Ginzburg, Verhaeghe & d'Humières, *Commun. Comput.
//!   Phys.* 3 (2008) 427–478): the even (symmetric) part of `h − h^eq` under `c → −c`
//!   relaxes with `ω⁺ = 1/τ⁺`, which sets the viscosity `ν = (τ⁺ − ½)/3`, the odd part
//!   with `ω⁻ = 1/τ⁻`, chosen through the "magic" parameter `Λ = (τ⁺ − ½)(τ⁻ − ½)`. With
//!   `Λ` fixed the steady solutions of the scheme, boundary locations of bounce-back
//!   included, do not depend on `τ⁺` (ibid., sec. 3); `Λ = 3/16` puts the half-way
//!   bounce-back wall of a Poiseuille flow exactly half-way for every viscosity.
//!
//! Each operator conserves ρ and ρu and returns the pre-collision moments, which the
//! boundary rules at store time need.
//!
//! **Body force** (`StepParams::force`, a force density in the level's lattice units) by
//! Guo, Zheng & Shi, *Phys. Rev. E* 65 (2002) 046308: the velocity of the equilibrium and
//! of the output is `u = (Σ h_i c_i + F/2)/ρ`, and the collision adds
//! `(1 − ω/2) S_i` with `S_i = w_i [3 (c_i − u)·F + 9 (c_i·u)(c_i·F)]`, which recovers the
//! Navier–Stokes equations with the force to second order. TRT splits `S` into its odd
//! part `3 w_i c_i·F` (relaxed with `1 − ω⁻/2`) and its even part (with `1 − ω⁺/2`), as
//! Ginzburg et al. (2008, sec. 2) do. With LES ([`crate::les`]) every operator relaxes
//! with the cell's own rates from the Smagorinsky model. Without a force (every component zero, uniform over
//! a launch) the operators run the unforced code, bit for bit.

use crate::collide::{bgk, c_dot, equilibrium_dir, moments, usq_term};
use crate::lattice::VelocitySet;
use crate::les::{has_les, les_rates};
use crate::real::Real;
use crate::stream::StepParams;

/// A collision operator of the streaming kernel.
pub trait Collision: Copy + Default + Send + Sync + core::fmt::Debug + 'static {
    /// Lower-case name, e.g. `"trt"` (the operator's key in the kernel registry).
    const NAME: &'static str;
    /// Relaxes the pre-collision shifted populations `h` in place with the level's rates
    /// in `p`; returns their moments `(ρ, u)` (unchanged by the collision).
    fn collide<L: VelocitySet, F: Real>(h: &mut L::Pop<F>, p: &StepParams<F>) -> (F, [F; 3]);
}

/// The BGK operator with `ω = p.omega` (paper, section "Collision").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bgk;

impl Collision for Bgk {
    const NAME: &'static str = "bgk";
    #[inline(always)]
    fn collide<L: VelocitySet, F: Real>(h: &mut L::Pop<F>, p: &StepParams<F>) -> (F, [F; 3]) {
        let omega = if has_les(p) { les_rates::<L, F>(h, p).0 } else { p.omega };
        if has_force(p) {
            bgk_forced::<L, F>(h, omega, p.force)
        } else {
            bgk::<L, F>(h, omega)
        }
    }
}

/// The TRT operator with `ω⁺ = p.omega`, `ω⁻ = p.omega_minus` (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trt;

impl Collision for Trt {
    const NAME: &'static str = "trt";
    #[inline(always)]
    fn collide<L: VelocitySet, F: Real>(h: &mut L::Pop<F>, p: &StepParams<F>) -> (F, [F; 3]) {
        let (wp, wm) = if has_les(p) { les_rates::<L, F>(h, p) } else { (p.omega, p.omega_minus) };
        if has_force(p) {
            trt_impl::<L, F, true>(h, wp, wm, p.force)
        } else {
            trt_impl::<L, F, false>(h, wp, wm, [F::ZERO; 3])
        }
    }
}

/// TRT collision in place. For each pair of opposite directions `(i, ī)`:
/// `h^± = (h_i ± h_ī)/2`, `h^{eq±}` likewise (`h^{eq+}_i = w_i (ρ − 1 + ρ (9/2 (c_i·u)² −
/// 3/2 u·u))`, `h^{eq−}_i = 3 w_i ρ c_i·u`), and
/// `h_i ← h_i + ω⁺ (h^{eq+} − h^+) + ω⁻ (h^{eq−}_i − h^−_i)`,
/// `h_ī ← h_ī + ω⁺ (h^{eq+} − h^+) − ω⁻ (h^{eq−}_i − h^−_i)`; the rest population relaxes
/// with `ω⁺`. With `ω⁻ = ω⁺` this is BGK (up to round-off).
#[inline(always)]
pub fn trt<L: VelocitySet, F: Real>(h: &mut L::Pop<F>, omega_plus: F, omega_minus: F) -> (F, [F; 3]) {
    trt_impl::<L, F, false>(h, omega_plus, omega_minus, [F::ZERO; 3])
}

/// Whether the launch applies a body force (any component nonzero).
#[inline(always)]
pub fn has_force<F: Real>(p: &StepParams<F>) -> bool {
    p.force[0] != F::ZERO || p.force[1] != F::ZERO || p.force[2] != F::ZERO
}

/// The velocity with half the force, `u + F/(2ρ)` (Guo et al. 2002): `u` is the first
/// moment of the populations over ρ.
#[inline(always)]
pub fn forced_velocity<F: Real>(rho: F, u: [F; 3], force: [F; 3]) -> [F; 3] {
    let s = F::from_f64(0.5) / rho;
    [u[0] + force[0] * s, u[1] + force[1] * s, u[2] + force[2] * s]
}

/// The parity parts of Guo's source of direction `i` (odd `i`, or 0): `(S⁺_i, S⁻_i)` with
/// `S⁺_i = w_i (9 (c_i·u)(c_i·F) − 3 u·F)`, `S⁻_i = 3 w_i c_i·F` (`S⁻_ī = −S⁻_i`).
#[inline(always)]
pub(crate) fn guo_parts<L: VelocitySet, F: Real>(i: usize, u: [F; 3], force: [F; 3], uf: F) -> (F, F) {
    let w = F::from_f64(L::W[i]);
    let cf = c_dot(L::C[i], force);
    let cu = c_dot(L::C[i], u);
    (w * (F::from_f64(9.0) * cu * cf - F::from_f64(3.0) * uf), w * (F::from_f64(3.0) * cf))
}

/// `u·F`.
#[inline(always)]
fn dot<F: Real>(a: [F; 3], b: [F; 3]) -> F {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// BGK with Guo's body force `force` (see the module docs); returns `(ρ, u + F/(2ρ))`.
#[inline(always)]
pub fn bgk_forced<L: VelocitySet, F: Real>(h: &mut L::Pop<F>, omega: F, force: [F; 3]) -> (F, [F; 3]) {
    let (rho, u0) = moments::<L, F>(h);
    let u = forced_velocity(rho, u0, force);
    let usq = usq_term(u);
    let uf = dot(u, force);
    let keep = F::ONE - omega * F::from_f64(0.5);
    L::unroll(
        #[inline(always)]
        |i| {
            let heq = equilibrium_dir::<L, F>(i, rho, u, usq);
            // S_i of the direction itself: c_ī = −c_i flips the odd part.
            let rep = if i == 0 || i % 2 == 1 { i } else { i - 1 };
            let (even, odd) = guo_parts::<L, F>(rep, u, force, uf);
            let s = if i == rep { even + odd } else { even - odd };
            h[i] = h[i] + omega * (heq - h[i]) + keep * s;
        },
    );
    (rho, u)
}

/// TRT, with Guo's body force when `FORCED` (then returns `(ρ, u + F/(2ρ))`).
#[inline(always)]
fn trt_impl<L: VelocitySet, F: Real, const FORCED: bool>(
    h: &mut L::Pop<F>,
    omega_plus: F,
    omega_minus: F,
    force: [F; 3],
) -> (F, [F; 3]) {
    let (rho, u0) = moments::<L, F>(h);
    let u = if FORCED { forced_velocity(rho, u0, force) } else { u0 };
    let usq = usq_term(u);
    let half = F::from_f64(0.5);
    let three = F::from_f64(3.0);
    let four_half = F::from_f64(4.5);
    let uf = if FORCED { dot(u, force) } else { F::ZERO };
    let keep_plus = F::ONE - omega_plus * half;
    let keep_minus = F::ONE - omega_minus * half;
    L::unroll(
        #[inline(always)]
        |i| {
            let w = F::from_f64(L::W[i]);
            if i == 0 {
                // c_0 = 0: only the even part, h^eq_0 = w_0 (ρ − 1 − ρ 3/2 u·u).
                let heq = w * ((rho - F::ONE) - rho * usq);
                h[0] = h[0] + omega_plus * (heq - h[0]);
                if FORCED {
                    h[0] += keep_plus * guo_parts::<L, F>(0, u, force, uf).0;
                }
            } else if i % 2 == 1 {
                // Directions come in pairs (i, i + 1) with c_{i+1} = −c_i.
                let j = i + 1;
                let cu = c_dot(L::C[i], u);
                let even_eq = w * ((rho - F::ONE) + rho * (four_half * cu * cu - usq));
                let odd_eq = w * (rho * (three * cu));
                let (a, b) = (h[i], h[j]);
                let plus = (a + b) * half;
                let minus = (a - b) * half;
                let mut dp = omega_plus * (even_eq - plus);
                let mut dm = omega_minus * (odd_eq - minus);
                if FORCED {
                    let (sp, sm) = guo_parts::<L, F>(i, u, force, uf);
                    dp += keep_plus * sp;
                    dm += keep_minus * sm;
                }
                h[i] = a + dp + dm;
                h[j] = b + dp - dm;
            }
        },
    );
    (rho, u)
}
