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

use crate::collide::{bgk, c_dot, moments, usq_term};
use crate::lattice::VelocitySet;
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
        bgk::<L, F>(h, p.omega)
    }
}

/// The TRT operator with `ω⁺ = p.omega`, `ω⁻ = p.omega_minus` (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trt;

impl Collision for Trt {
    const NAME: &'static str = "trt";
    #[inline(always)]
    fn collide<L: VelocitySet, F: Real>(h: &mut L::Pop<F>, p: &StepParams<F>) -> (F, [F; 3]) {
        trt::<L, F>(h, p.omega, p.omega_minus)
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
    let (rho, u) = moments::<L, F>(h);
    let usq = usq_term(u);
    let half = F::from_f64(0.5);
    let three = F::from_f64(3.0);
    let four_half = F::from_f64(4.5);
    L::unroll(
        #[inline(always)]
        |i| {
            let w = F::from_f64(L::W[i]);
            if i == 0 {
                // c_0 = 0: only the even part, h^eq_0 = w_0 (ρ − 1 − ρ 3/2 u·u).
                let heq = w * ((rho - F::ONE) - rho * usq);
                h[0] = h[0] + omega_plus * (heq - h[0]);
            } else if i % 2 == 1 {
                // Directions come in pairs (i, i + 1) with c_{i+1} = −c_i.
                let j = i + 1;
                let cu = c_dot(L::C[i], u);
                let even_eq = w * ((rho - F::ONE) + rho * (four_half * cu * cu - usq));
                let odd_eq = w * (rho * (three * cu));
                let (a, b) = (h[i], h[j]);
                let plus = (a + b) * half;
                let minus = (a - b) * half;
                let dp = omega_plus * (even_eq - plus);
                let dm = omega_minus * (odd_eq - minus);
                h[i] = a + dp + dm;
                h[j] = b + dp - dm;
            }
        },
    );
    (rho, u)
}
