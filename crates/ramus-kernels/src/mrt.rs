//! The multiple-relaxation-time (MRT) operator in a weighted-orthogonal Hermite moment
//! basis, one generic code path for D2Q9, D3Q19 and D3Q27.
//!
//! **Basis.** MRT relaxes the moments `m_k = Σ_i φ_k(c_i) f_i` of a basis `{φ_k}` at
//! their own rates `s_k` (d'Humières, *Prog. Astronaut. Aeronaut.* 159 (1992) 450).
//! Lallemand & Luo (*Phys. Rev. E* 61 (2000) 6546; D2Q9) and d'Humières, Ginzburg,
//! Krafczyk, Lallemand & Luo (*Phil. Trans. R. Soc. A* 360 (2002) 437; D3Q19) take
//! polynomials orthogonal without weights, written out lattice by lattice; their energy
//! `e` mixes the trace of the stress with fourth-order terms. Here the basis is the
//! lattice's Hermite polynomials, orthogonal under the weights (`Σ_i w_i φ_k φ_l = 0`),
//! as in Shan & Chen's general MRT model (*Int. J. Mod. Phys. C* 18 (2007) 635) and the
//! Hermite-moment MRT of Coreixas, Chopard & Latt (*Phys. Rev. E* 100 (2019) 033305):
//!
//! | group | polynomials | D2Q9 | D3Q19 | D3Q27 | rate |
//! | --- | --- | --- | --- | --- | --- |
//! | conserved | `1`, `c_α` | 3 | 4 | 4 | — |
//! | shear | `c_α c_β − δ_αβ c²/D` | 2 | 5 | 5 | `ω = 1/τ` ([`crate::stream::StepParams::omega`]) |
//! | bulk | `c² − D c_s²` | 1 | 1 | 1 | `ω_b` ([`crate::stream::StepParams::omega_bulk`]) |
//! | odd ghosts | `H_ααβ`, `H_xyz`, `H_ααββγ` | 2 | 6 | 10 | `ω_o` ([`crate::stream::StepParams::omega_minus`]) |
//! | even ghosts | `H_ααββ`, `H_ααβγ`, `H_xxyyzz` | 1 | 3 | 7 | `ω_e` ([`crate::stream::StepParams::omega_even`]) |
//!
//! (`H` the Hermite polynomials of third to sixth order orthogonalised on each lattice:
//! D3Q19 has no `H_xyz`, D2Q9 no z.) Because the groups are orthogonal under the
//! weights, the collision needs no moment matrix: the parity parts `n^±` of the
//! non-equilibrium part `n = f − f^eq` and its second moment `Π = Σ c c n` determine every
//! group. The projection of `n` on the second-order Hermite space is `P₂ n = w_i (c c −
//! c_s² I):Π/(2 c_s⁴)` (what the regularized operator keeps, [`crate::regularized`]), split
//! into its deviatoric (shear) part `w_i 9/2 (c·Π·c − c² tr Π/D)` and its trace (bulk)
//! part `w_i 9/2 tr Π (c²/D − 1/3)`; the ghosts are the rest of each parity part. Hence
//!
//! `f ← f^eq + (1 − ω_e) n⁺ + (1 − ω_o) n⁻ + (ω_e − ω) P_shear n + (ω_e − ω_b) P_bulk n`,
//!
//! a few dozen flops on top of TRT and no moment matrix ([`mrt`]). With every rate equal
//! it is BGK; with `ω_b = ω_e = ω` it is TRT with `ω⁻ = ω_o`.
//!
//! **Rates** (the host's `Collision::Mrt`): `ω = 1/τ` sets the viscosity `ν = c_s²(τ − ½)`;
//! the bulk rate sets the bulk viscosity `(2/D) c_s² (τ_b − ½)` (Dellar, *Phys. Rev. E*
//! 64 (2001) 031203), which damps the acoustic waves; the ghost rates do not enter the
//! Navier–Stokes equations to second order. Their defaults on the root level are the
//! D3Q19 values of d'Humières et al. (2002) for the moments of the same orders: energy
//! `e` 1.19 (bulk), fourth-order `ε`, `π` 1.4 (even ghosts), energy flux `q` 1.2 (odd
//! ghosts; the third-order `m` of that paper, 1.98, shares our odd group).
//!
//! **Body force.** Guo's source `S` (see [`crate::collision`]) has a first-order (odd)
//! part `3 w c·F` and a second-order (even) part; each group's share of it is relaxed
//! with `1 − s_k/2` (Guo & Zheng, *Int. J. Comput. Fluid Dyn.* 22 (2008) 465, for MRT): the odd
//! part with `1 − ω_o/2` (as TRT's with `1 − ω⁻/2`), the shear and bulk parts of the
//! even part with `1 − ω/2` and `1 − ω_b/2`. The momentum then gains exactly `F`.
//!
//! **LES**: with the Smagorinsky model the shear rate is the cell's own, from its total
//! relaxation time `τ` ([`crate::les::les_tau`]), and the odd ghosts keep the level's
//! ratio `(τ_o − ½)/(τ₀ − ½)` to it per cell ([`les_odd_tau`]; `τ₀` the molecular one),
//! as they keep it from level to level; the bulk and even-ghost rates are the level's.
//! The transfers rescale the shear and odd groups with the cells' own times
//! ([`les_group_factors`], [`crate::les::les_factors`]'s rule). Measured in Couette flow
//! through a refined patch with C = 1 and `ω_b = ω` (`tests/multilevel.rs`): relative L2
//! 1.35e-7 against the uniform grid's 9.1e-8, within BGK's tolerance of twice the
//! uniform error (BGK: 7.0e-8 against 1.2e-7); with the odd ghosts at the level's rate
//! instead, 2.4e-7 against 8.9e-8, and 1.5e-7 at half the speed (an `O(U²)` defect).
//!
//! **Levels.** Chapman–Enskog per group: the steady non-equilibrium part of the scheme
//! expands as `n = −T ∂e + T ∂(T − ½)∂e + O(∂³)`, with `∂ = c·∇` (lattice units of the
//! level), `e` the equilibrium and `T = Σ_k τ_k P_k` the relaxation times on the groups'
//! projectors `P_k` (from `e + n = e^{−∂}(e + (I − T⁻¹) n)`, the TRT expansion of
//! `Collision::Trt`'s level docs per group). To first order `P_k n = −τ_k P_k ∂e`, and
//! `∂` halves on the next finer level (the physical gradient times `Δx`): each group
//! rescales between levels with its own `τ_k,F/(2τ_k,C)` ([`scale_neq_mrt`]; BGK's factor
//! per group). The second-order term of group `k` passes through the groups `j` of `∂e`
//! (the odd ghosts and first moments of `∂e⁺`, the shear, bulk and density moments of
//! `∂e⁻`; `e` has no ghost part, so the even ghosts never appear there) and scales as
//! `τ_k,F (τ_j,F − ½)/(4 τ_k,C (τ_j,C − ½))`: it follows the transfer's factor only if
//! `τ_j − ½` doubles per level like the shear's. Hence the level rules: `τ_b − ½` and
//! `τ_o − ½` double per level (which also keeps the physical bulk viscosity the same on
//! every level), while the even ghosts keep their rate on every level (factor ½ to the
//! finer level, 2 to the coarser), which keeps them damped on fine levels. A linear
//! shear flow crosses the interfaces exactly with these rules (`tests/multilevel.rs`,
//! plane Couette flow through a refined patch: relative L2 1.0e-7 against the uniform
//! grid's 8.2e-8; with `τ_o` fixed per level instead, 7.3e-6; with `τ_b` fixed per
//! level, 1.5e-7; with `τ_e` doubling too, 8.6e-8, as the derivation predicts).
//!
//! **Walls.** Half-way bounce-back is exact for a linear shear flow when all even
//! non-conserved moments relax at one rate (BGK, TRT); with a bulk rate other than the
//! shear rate it leaves an `O(U²)` steady error of its own (Couette flow at U = 0.05,
//! τ = 1, `ω_b` = 1.19: relative L2 1.6e-6 and |δρ| 5e-6, four times smaller at half the
//! speed; the ghost rates make no such difference). The same holds under LES, where the
//! shear rate is the cell's and the bulk rate the level's.

use crate::collide::{equilibrium_dir, moments, usq_term};
use crate::collision::{forced_velocity, guo_parts, has_force, Collision};
use crate::lattice::{Dim, VelocitySet};
use crate::les::{has_les, les_tau, les_transfer_taus, LesTransfer};
use crate::real::Real;
use crate::stream::StepParams;

/// The MRT operator with `ω = p.omega`, `ω_b = p.omega_bulk`, `ω_o = p.omega_minus`,
/// `ω_e = p.omega_even` (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mrt;

impl Collision for Mrt {
    const NAME: &'static str = "mrt";
    #[inline(always)]
    fn collide<L: VelocitySet, F: Real>(h: &mut L::Pop<F>, p: &StepParams<F>) -> (F, [F; 3]) {
        let (shear, odd) = if has_les(p) {
            let tau = les_tau::<L, F>(h, p);
            let odd = les_odd_tau(tau, 1.0 / p.omega.to_f64(), 1.0 / p.omega_minus.to_f64());
            (F::from_f64(1.0 / tau), F::from_f64(1.0 / odd))
        } else {
            (p.omega, p.omega_minus)
        };
        let r = Rates { shear, bulk: p.omega_bulk, odd, even: p.omega_even };
        if has_force(p) {
            mrt::<L, F, true>(h, r, p.force)
        } else {
            mrt::<L, F, false>(h, r, [F::ZERO; 3])
        }
    }
}

/// One value per moment group (relaxation rates, or rescaling factors).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rates<F> {
    /// Deviatoric second-order moments (the viscosity's).
    pub shear: F,
    /// The trace of the second-order moments.
    pub bulk: F,
    /// The odd ghost moments (third order, and fifth on D3Q27).
    pub odd: F,
    /// The even ghost moments (fourth order, and sixth on D3Q27).
    pub even: F,
}

/// The bulk and even-ghost factors of a grid transfer ([`crate::interpolate::CommArgs::mrt`]);
/// the shear and odd factors are the transfer's `factor` and `factor_odd` (under LES
/// from the cells' own relaxation times, [`les_group_factors`]). `bulk = 0`: not MRT (the
/// transfer rescales by parity alone, [`crate::interpolate::scale_neq`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MrtTransfer<F> {
    /// `τ_b,t/(2τ_b,s)`-type factor of the bulk part (0: not MRT).
    pub bulk: F,
    /// The factor of the even ghosts.
    pub even: F,
    /// The odd ghosts' `τ_o` of the source and the target level (LES only).
    pub odd_source: F,
    pub odd_target: F,
}

// SAFETY: `#[repr(C)]`, fields of one `Real` type: no padding.
unsafe impl<F: Real> bytemuck::Zeroable for MrtTransfer<F> {}
unsafe impl<F: Real> bytemuck::Pod for MrtTransfer<F> {}

crate::memory::arg_bytes_by_field!(MrtTransfer<F>: bulk, even, odd_source, odd_target);

/// The odd ghosts' relaxation time of a cell with total relaxation time `tau` under LES,
/// on a level with molecular `tau0` and odd-ghost `tau_odd`: `½ + (τ_o − ½)(τ − ½)/(τ₀ − ½)`
/// (see the module docs).
#[inline(always)]
pub fn les_odd_tau(tau: f64, tau0: f64, tau_odd: f64) -> f64 {
    0.5 + (tau_odd - 0.5) * ((tau - 0.5) / (tau0 - 0.5))
}

/// The shear and odd-ghost factors `(k τ_t/τ_s, k τ_o,t/τ_o,s)` of a transfer under LES of
/// a source cell with non-equilibrium part `neq`, density `rho` and eddy viscosity `nu`
/// (gradient models): the cells' total
/// times as in [`crate::les::les_factors`], the odd ghosts' from them ([`les_odd_tau`]).
#[inline(always)]
pub fn les_group_factors<L: VelocitySet, F: Real>(
    neq: &L::Pop<F>,
    rho: F,
    nu: F,
    les: &LesTransfer<F>,
    mrt: &MrtTransfer<F>,
) -> (F, F) {
    let (ts, tt) = les_transfer_taus::<L, F>(neq, rho, nu, les);
    let k = les.ratio.to_f64();
    let os = les_odd_tau(ts, les.tau_source.to_f64(), mrt.odd_source.to_f64());
    let ot = les_odd_tau(tt, les.tau_target.to_f64(), mrt.odd_target.to_f64());
    (F::from_f64(k * tt / ts), F::from_f64(k * ot / os))
}

/// The second moment `Π = Σ c c n` of a non-equilibrium part, by adds and subtracts.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stress<F> {
    pub xx: F,
    pub yy: F,
    pub zz: F,
    pub xy: F,
    pub xz: F,
    pub yz: F,
}

/// `v`, `−v` or 0 for a product of velocity components of 1, −1 or 0.
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

impl<F: Real> Stress<F> {
    /// `Π` of the populations `n(i)`.
    #[inline(always)]
    pub fn of<L: VelocitySet>(mut n: impl FnMut(usize) -> F) -> Self {
        let mut s = Stress::<F>::default();
        L::unroll(
            #[inline(always)]
            |i| {
                let v = n(i);
                let c = L::C[i];
                if c[0] != 0 {
                    s.xx += v;
                }
                if c[1] != 0 {
                    s.yy += v;
                }
                if c[2] != 0 {
                    s.zz += v;
                }
                s.xy += sel(c[0] * c[1], v);
                s.xz += sel(c[0] * c[2], v);
                s.yz += sel(c[1] * c[2], v);
            },
        );
        s
    }

    /// `tr Π`.
    #[inline(always)]
    pub fn trace(&self) -> F {
        self.xx + self.yy + self.zz
    }

    /// `c·Π·c` for a lattice velocity `c`.
    #[inline(always)]
    pub fn cpc(&self, c: [i32; 3]) -> F {
        let mut s = F::ZERO;
        if c[0] != 0 {
            s += self.xx;
        }
        if c[1] != 0 {
            s += self.yy;
        }
        if c[2] != 0 {
            s += self.zz;
        }
        let two = F::from_f64(2.0);
        s += sel(c[0] * c[1], two * self.xy);
        s += sel(c[0] * c[2], two * self.xz);
        s += sel(c[1] * c[2], two * self.yz);
        s
    }
}

/// `c²/D` and `9/2 (c²/D − 1/3)` of direction `i` (constants after unrolling): the
/// weights of `tr Π` in the shear and bulk projections.
#[inline(always)]
fn trace_coefficients<L: VelocitySet>(i: usize) -> (f64, f64) {
    let c = L::C[i];
    let c2 = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) as f64;
    let d = <L::Dim as Dim>::D as f64;
    (c2 / d, 4.5 * (c2 / d - 1.0 / 3.0))
}

/// `ds P_shear n + db P_bulk n` of direction `i` for `n` with second moment `s` (see the
/// module docs), `w_i [ds 9/2 (c·Π·c − c² tr Π/D) + db 9/2 (c²/D − 1/3) tr Π]`.
#[inline(always)]
fn second_order<L: VelocitySet, F: Real>(i: usize, s: &Stress<F>, tr: F, ds: F, db: F) -> F {
    let (kd, kb) = trace_coefficients::<L>(i);
    let w = F::from_f64(L::W[i]);
    let shear = F::from_f64(4.5) * (s.cpc(L::C[i]) - F::from_f64(kd) * tr);
    w * (ds * shear + db * (F::from_f64(kb) * tr))
}

/// MRT collision in place, with Guo's body force when `FORCED`; returns `(ρ, u)` (`u`
/// with the half force). Scalars and constant-indexed populations only (no local
/// memory on the GPU).
#[inline(always)]
pub fn mrt<L: VelocitySet, F: Real, const FORCED: bool>(h: &mut L::Pop<F>, r: Rates<F>, force: [F; 3]) -> (F, [F; 3]) {
    let (rho, u0) = moments::<L, F>(h);
    let u = if FORCED { forced_velocity(rho, u0, force) } else { u0 };
    let usq = usq_term(u);
    let mut heq = L::Pop::<F>::default();
    L::unroll(
        #[inline(always)]
        |i| heq[i] = equilibrium_dir::<L, F>(i, rho, u, usq),
    );
    let s = Stress::<F>::of::<L>(|i| h[i] - heq[i]);
    let tr = s.trace();
    let half = F::from_f64(0.5);
    let (ds, db) = (r.even - r.shear, r.even - r.bulk);
    let (keep_e, keep_o) = (F::ONE - r.even, F::ONE - r.odd);
    // Forcing: (1 − ω/2) S⁺ + (ω − ω_b)/2 · (bulk part of S⁺) + (1 − ω_o/2) S⁻; the bulk
    // part of S⁺ = 9/2 w (c c − c_s² I):(uF + Fu) is 9 w (c²/D − 1/3) u·F, so its extra
    // term is (ω − ω_b) w 9/2 (c²/D − 1/3) u·F.
    let uf = if FORCED { u[0] * force[0] + u[1] * force[1] + u[2] * force[2] } else { F::ZERO };
    let (keep_s, keep_of, dbf) = if FORCED {
        (F::ONE - r.shear * half, F::ONE - r.odd * half, (r.shear - r.bulk) * uf)
    } else {
        (F::ZERO, F::ZERO, F::ZERO)
    };
    L::unroll(
        #[inline(always)]
        |i| {
            if i == 0 || i % 2 == 1 {
                // The rest direction, or the pair (i, i + 1) with c_{i+1} = −c_i.
                let j = if i == 0 { 0 } else { i + 1 };
                let (a, b) = (h[i] - heq[i], h[j] - heq[j]);
                let (plus, minus) = if i == 0 { (a, F::ZERO) } else { ((a + b) * half, (a - b) * half) };
                let mut even = keep_e * plus + second_order::<L, F>(i, &s, tr, ds, db);
                let mut odd = keep_o * minus;
                if FORCED {
                    let (sp, sm) = guo_parts::<L, F>(i, u, force, uf);
                    let kb = trace_coefficients::<L>(i).1;
                    even += keep_s * sp + F::from_f64(kb) * F::from_f64(L::W[i]) * dbf;
                    odd += keep_of * sm;
                }
                if i == 0 {
                    h[0] = heq[0] + even;
                } else {
                    h[i] = heq[i] + (even + odd);
                    h[j] = heq[j] + (even - odd);
                }
            }
        },
    );
    (rho, u)
}

/// Rescales a non-equilibrium part group by group: `f.shear` on the shear moments,
/// `f.bulk` on the trace, `f.even` and `f.odd` on the even and odd ghosts (the
/// transfer of [`Mrt`] between levels, see the module docs). With every factor equal
/// this is the plain product (to round-off). `neq` must carry no mass (true of the
/// transfers' splits, [`crate::interpolate::split`]).
#[inline(always)]
pub fn scale_neq_mrt<L: VelocitySet, F: Real>(neq: &mut L::Pop<F>, f: Rates<F>) {
    let s = Stress::<F>::of::<L>(|i| neq[i]);
    let tr = s.trace();
    let half = F::from_f64(0.5);
    let (ds, db) = (f.shear - f.even, f.bulk - f.even);
    L::unroll(
        #[inline(always)]
        |i| {
            if i == 0 {
                neq[0] = f.even * neq[0] + second_order::<L, F>(0, &s, tr, ds, db);
            } else if i % 2 == 1 {
                let (a, b) = (neq[i], neq[i + 1]);
                let e = f.even * ((a + b) * half) + second_order::<L, F>(i, &s, tr, ds, db);
                let o = f.odd * ((a - b) * half);
                neq[i] = e + o;
                neq[i + 1] = e - o;
            }
        },
    );
}
