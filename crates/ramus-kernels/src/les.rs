//! Large-eddy simulation: the Smagorinsky eddy viscosity from the local non-equilibrium
//! stress, on every level, and its level-consistent grid transfers.
//!
//! Smagorinsky (*Mon. Weather Rev.* 91 (1963) 99): `ν_t = (C Δ)² |S|`, `|S| = √(2 S:S)`,
//! with the filter width `Δ` = the cell size of each level (1 in the level's lattice
//! units). In the LBM the strain rate is local: `Π^neq = Σ c c (f − f^eq) ≈ −2ρ c_s² τ S`
//! with the total relaxation time `τ = τ₀ + 3ν_t` (Hou, Sterling, Chen & Doolen, *Fields
//! Inst. Commun.* 6 (1996) 151; Krüger et al. 2017, §10.? on LES). Solving
//! `τ = τ₀ + 3 C² √2 |Π|/(2ρ c_s² τ)` for τ gives
//!
//! `τ = ½ (τ₀ + √(τ₀² + 18 √2 C² |Π| / ρ))`, `|Π| = √(Π:Π)`,
//!
//! no finite differences and no neighbours. TRT keeps its magic parameter per cell,
//! `τ⁻ = ½ + Λ/(τ − ½)` ([`StepParams::magic`]).
//!
//! **Levels.** In a level's lattice units `ν_t,L = C² |S| Δt_L` (Δ = Δx_L): the same
//! physical `|S|` gives half the lattice eddy viscosity on the next finer level, while
//! the molecular part doubles (`τ₀_F − ½ = 2(τ₀_C − ½)`). A transfer therefore computes
//! the source cell's `τ_s` from its own `Π`, the target's `τ_t = τ₀_t + k (τ_s − τ₀_s)`
//! (`k = ½` to the finer level, 2 to the coarser), and rescales the non-equilibrium part
//! by `k τ_t/τ_s` (BGK's `τ_F/(2τ_C)` with the cells' total relaxation times; per parity
//! part for TRT) — [`les_factors`].
//!
//! The square roots are IEEE-rounded on both backends ([`sqrt`]), which keeps CPU and
//! CUDA bitwise equal.

use crate::collide::{equilibrium_dir, moments, usq_term};
use crate::collision::{forced_velocity, has_force};
use crate::lattice::VelocitySet;
use crate::real::Real;
use crate::stream::StepParams;

/// `√x` for `x ≥ 0` (0 otherwise), correctly rounded (IEEE 754) on both backends, hence
/// bit for bit the same: PTX's `sqrt.rn.f64` on the GPU, `libm`'s on the CPU (`core` has
/// none). A hand-written Newton iteration, deterministic too, made the LES kernels
/// compute-bound (BENCHMARKS.md).
#[inline(always)]
pub fn sqrt(x: f64) -> f64 {
    if !(x > 0.0) {
        return 0.0;
    }
    #[cfg(target_arch = "nvptx64")]
    {
        core::intrinsics::sqrtf64(x)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        libm::sqrt(x)
    }
}

/// `|Π| = √(Π:Π)` of the non-equilibrium part `neq` (off-diagonal entries counted twice).
#[inline(always)]
pub fn stress_norm<L: VelocitySet, F: Real>(neq: &L::Pop<F>) -> f64 {
    let (mut xx, mut yy, mut zz) = (F::ZERO, F::ZERO, F::ZERO);
    let (mut xy, mut xz, mut yz) = (F::ZERO, F::ZERO, F::ZERO);
    L::unroll(
        #[inline(always)]
        |i| {
            let n = neq[i];
            let c = L::C[i];
            if c[0] != 0 {
                xx += n;
            }
            if c[1] != 0 {
                yy += n;
            }
            if c[2] != 0 {
                zz += n;
            }
            let s = |p: i32, acc: &mut F| {
                if p == 1 {
                    *acc += n;
                } else if p == -1 {
                    *acc -= n;
                }
            };
            s(c[0] * c[1], &mut xy);
            s(c[0] * c[2], &mut xz);
            s(c[1] * c[2], &mut yz);
        },
    );
    let d = |v: F| v.to_f64() * v.to_f64();
    sqrt(d(xx) + d(yy) + d(zz) + 2.0 * (d(xy) + d(xz) + d(yz)))
}

/// The Smagorinsky relaxation time `½ (τ₀ + √(τ₀² + 18 √2 C² |Π|/ρ))` (see the module
/// docs) for `c2 = C²`.
#[inline(always)]
pub fn smagorinsky_tau(tau0: f64, norm: f64, rho: f64, c2: f64) -> f64 {
    const K: f64 = 18.0 * core::f64::consts::SQRT_2;
    0.5 * (tau0 + sqrt(tau0 * tau0 + K * c2 * norm / rho))
}

/// TRT's odd relaxation time for the magic parameter `magic` and the even one `tau`.
#[inline(always)]
pub fn magic_tau(tau: f64, magic: f64) -> f64 {
    0.5 + magic / (tau - 0.5)
}

/// Whether the launch runs LES (`StepParams::smagorinsky > 0`).
#[inline(always)]
pub fn has_les<F: Real>(p: &StepParams<F>) -> bool {
    p.smagorinsky > F::ZERO
}

/// The cell's relaxation rates `(ω⁺, ω⁻)` with the Smagorinsky eddy viscosity, from its
/// pre-collision populations `h` (the level's `τ₀ = 1/p.omega`; `ω⁻` from
/// [`StepParams::magic`] when it is positive, `ω⁺` otherwise).
#[inline(always)]
pub fn les_rates<L: VelocitySet, F: Real>(h: &L::Pop<F>, p: &StepParams<F>) -> (F, F) {
    let tau = les_tau::<L, F>(h, p);
    let magic = p.magic.to_f64();
    let tau_odd = if magic > 0.0 { magic_tau(tau, magic) } else { tau };
    (F::from_f64(1.0 / tau), F::from_f64(1.0 / tau_odd))
}

/// The cell's total relaxation time `τ` with the Smagorinsky eddy viscosity (the first
/// of [`les_rates`], `1/ω⁺`, before rounding to `F`).
#[inline(always)]
pub fn les_tau<L: VelocitySet, F: Real>(h: &L::Pop<F>, p: &StepParams<F>) -> f64 {
    let (rho, u0) = moments::<L, F>(h);
    let u = if has_force(p) { forced_velocity(rho, u0, p.force) } else { u0 };
    let usq = usq_term(u);
    let mut neq = L::Pop::<F>::default();
    L::unroll(
        #[inline(always)]
        |i| neq[i] = h[i] - equilibrium_dir::<L, F>(i, rho, u, usq),
    );
    let norm = stress_norm::<L, F>(&neq);
    let tau0 = 1.0 / p.omega.to_f64();
    smagorinsky_tau(tau0, norm, rho.to_f64(), p.smagorinsky.to_f64())
}

/// The total relaxation times `(τ_s, τ_t)` of a transfer's source cell and of the target,
/// `τ_t = τ₀_t + k (τ_s − τ₀_s)` (see [`les_factors`]): `τ_s` from the cell's `|Π|` under
/// Smagorinsky's model, `τ₀_s + 3ν_t` from the eddy viscosity `nu` it carries under a
/// gradient model ([`LesTransfer::eddy`], [`crate::eddy`]).
#[inline(always)]
pub fn les_transfer_taus<L: VelocitySet, F: Real>(neq: &L::Pop<F>, rho: F, nu: F, les: &LesTransfer<F>) -> (f64, f64) {
    let (t0s, t0t, k) = (les.tau_source.to_f64(), les.tau_target.to_f64(), les.ratio.to_f64());
    let ts = if les.eddy > F::ZERO {
        t0s + 3.0 * nu.to_f64()
    } else {
        smagorinsky_tau(t0s, stress_norm::<L, F>(neq), rho.to_f64(), les.c2.to_f64())
    };
    (ts, t0t + k * (ts - t0s))
}

/// The LES fields of a grid transfer (see [`les_factors`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LesTransfer<F> {
    /// Smagorinsky's `C²` (0: the factors do not come from the cell's stress).
    pub c2: F,
    /// `τ₀` (molecular) of the source and the target level.
    pub tau_source: F,
    pub tau_target: F,
    /// TRT's `Λ` of the source and the target level (0: one relaxation time).
    pub magic_source: F,
    pub magic_target: F,
    /// `k`: ½ to the finer level, 2 to the coarser.
    pub ratio: F,
    /// Positive under a gradient model ([`crate::eddy`]): the factors come from the eddy
    /// viscosity each cell carries, which the transfer carries along (`k ν_t`).
    pub eddy: F,
}

impl<F: Real> LesTransfer<F> {
    /// Whether the transfer rescales with the cells' own relaxation times (any LES model).
    #[inline(always)]
    pub fn active(&self) -> bool {
        self.c2 > F::ZERO || self.eddy > F::ZERO
    }
}

// SAFETY: `#[repr(C)]`, seven fields of one `Real` type: no padding.
unsafe impl<F: Real> bytemuck::Zeroable for LesTransfer<F> {}
unsafe impl<F: Real> bytemuck::Pod for LesTransfer<F> {}

crate::memory::arg_bytes_by_field!(LesTransfer<F>: c2, tau_source, tau_target, magic_source, magic_target, ratio, eddy);

/// Rescaling factors `(even, odd)` of a transfer of a source cell with non-equilibrium
/// part `neq`, density `rho` and eddy viscosity `nu` (gradient models only) under LES
/// (see the module docs): `k τ_t/τ_s` with the total times of [`les_transfer_taus`]; the
/// odd factor with TRT's `τ⁻` of each level's `Λ`.
#[inline(always)]
pub fn les_factors<L: VelocitySet, F: Real>(neq: &L::Pop<F>, rho: F, nu: F, les: &LesTransfer<F>) -> (F, F) {
    let (ts, tt) = les_transfer_taus::<L, F>(neq, rho, nu, les);
    let k = les.ratio.to_f64();
    let even = k * tt / ts;
    let (ms, mt) = (les.magic_source.to_f64(), les.magic_target.to_f64());
    let odd = if ms > 0.0 { k * magic_tau(tt, mt) / magic_tau(ts, ms) } else { even };
    (F::from_f64(even), F::from_f64(odd))
}
