//! Coarse → fine grid communication: rescaling and interpolation (paper, section "Grid
//! Communication", subsections "Linear Interpolation" and "Cubic Interpolation").
//!
//! Geometry (nodal interpretation of the cell-centred arrangement). Along each axis, coarse
//! cell `j` of a parent block has its centre at coordinate `j` (0..3). Child `k` sits at
//! position `cp = child_position(k)` (0 or 1 per axis) and covers coarse cells `2cp` and
//! `2cp + 1`; its fine cell `I` (0..3) has its centre at `2cp + I/2 − 1/4`. Hence
//!
//! - **linear**: the unit square/cube spanned by the centres of the coarse cells
//!   `2cp + {0, 1}` (the parent's quadrant/octant `cp`), local coordinate
//!   `s = −1/4 + I/2 ∈ {−0.25, 0.25, 0.75, 1.25}` (the paper's `x_local`): the outer fine
//!   cells extrapolate by a quarter of a coarse cell, as in the paper;
//! - **cubic**: all `4^D` coarse cells of the parent, `s = 2cp + I/2 − 1/4 ∈ [−0.25, 3.25]`.
//!
//! Each coarse sample is split into density, momentum and its non-equilibrium part, the
//! latter rescaled with the sample's own moments ([`split`], [`rescale`]); the three are
//! interpolated separately and the fine population rebuilt on the equilibrium of the
//! interpolated momentum ([`interpolate_split`]; the paper interpolates the rescaled
//! populations, see there for why this differs).
//!
//! The interpolants are written as weighted sums of the samples (Lagrange form) rather
//! than through the paper's monomial coefficients `a_n` / `α_ijk`: the two are the same
//! polynomial, but the sum needs only one accumulator population in registers while the
//! samples stream in (all `2^D` or `4^D` samples at once would not fit for D3Q27 f64).
//! Expanding the bilinear sum gives the paper's `a_0 … a_3` with `a_3` multiplying `x y`
//! (the paper's text prints `y`), and the trilinear one gives `a_7 = F111 − F110 − F101 −
//! F011 + F100 + F010 + F001 − F000` (the printed `a_7` has sign/term typos).
//!
//! The kernels ([`InterpolateChildren`], and [`crate::average::AverageToParents`] for the
//! opposite direction) read the coarse level in either AA layout with
//! [`load_cell`] / write it with [`store_cell`]; the fine level is always in the natural
//! layout at communication time (it takes two steps per coarse step).

use crate::memory::Lens;
use core::marker::PhantomData;

use crate::amr::CELL_GHOST;
use crate::collide::{equilibrium_dir, moments, usq_term};
use crate::kernel_args;
use crate::lattice::{Dim, VelocitySet};
use crate::launch::{wait_for_prior_kernels, Kernel};
use crate::les::{les_factors, LesTransfer};
use crate::mrt::{les_group_factors, scale_neq_mrt, MrtTransfer, Rates};
use crate::real::Real;
use crate::storage::Storage;
use crate::stream::{load_cell, store_cell, Field};

mod weights;
pub use weights::{cubic_weights, interpolate_cubic, interpolate_linear, linear_weights, weights};

/// Dupuis–Chopard rescaling of the non-equilibrium part (paper, eqs. "f^F ≈ f^{C,eq} +
/// (f^C − f^{C,eq}) τ^F/τ^C" and its fine → coarse counterpart): replaces `h` by
/// `h^eq(ρ, u) + (h − h^eq(ρ, u)) · factor`, with `(ρ, u)` the moments of `h`.
///
/// Storage is shifted (`h = f − w`), and `h − h^eq = f − f^eq`, so the formula is the same
/// for `h` as for `f`. Mass and momentum are unchanged (the non-equilibrium part carries
/// none), so `rescale(·, 1/a)` undoes `rescale(·, a)` to round-off.
///
/// Factors, in the lattice units of each level (`τ` = the level's relaxation time, the
/// inverse of `StepParams::omega`). The Chapman–Enskog estimate `f^neq ∝ τ Δt` holds with
/// the paper's `τ` including `Δt` (its footnote); in lattice units `τ_phys = τ Δt`, and the
/// fine step is half the coarse one, so `f^neq_F / f^neq_C = τ_F Δt_F / (τ_C Δt_C) =
/// τ_F / (2 τ_C)`. Equal viscosity `c_s²(τ − ½) Δx²/Δt` with both `Δx` and `Δt` halved
/// gives `τ_F − ½ = 2 (τ_C − ½)`.
///
/// - coarse → fine ([`coarse_to_fine_factor`]): `τ_F / (2 τ_C)`;
/// - fine → coarse ([`fine_to_coarse_factor`]): its inverse, `2 τ_C / τ_F`.
#[inline(always)]
pub fn rescale<L: VelocitySet, F: Real>(h: &mut L::Pop<F>, factor: F) {
    let (rho, u) = moments::<L, F>(h);
    let usq = usq_term(u);
    L::unroll(
        #[inline(always)]
        |i| {
            let heq = equilibrium_dir::<L, F>(i, rho, u, usq);
            h[i] = heq + (h[i] - heq) * factor;
        },
    );
}

/// Multiplies a non-equilibrium part by `even` in its even part under `c → −c` and by
/// `odd` in its odd part: the rescaling of an operator that relaxes the two parts at
/// different rates (TRT, [`crate::collision::Trt`]). The Chapman–Enskog expansion of TRT
/// gives `f^{neq±} ≈ −τ± Δt [(∂_t + c·∇) f^eq]^±` (Ginzburg et al., *Commun. Comput.
/// Phys.* 3 (2008) 427, sec. 2), the BGK estimate of [`rescale`] per part, so each part
/// scales with its own `τ±_F/(2τ±_C)`. With equal factors (BGK) this is the single
/// product `neq · even`, bit for bit.
#[inline(always)]
pub fn scale_neq<L: VelocitySet, F: Real>(neq: &mut L::Pop<F>, even: F, odd: F) {
    if even == odd {
        L::unroll(
            #[inline(always)]
            |i| neq[i] *= even,
        );
        return;
    }
    let half = F::from_f64(0.5);
    L::unroll(
        #[inline(always)]
        |i| {
            if i == 0 {
                neq[0] *= even;
            } else if i % 2 == 1 {
                // Opposite pairs (i, i + 1), see `crate::lattice`.
                let (a, b) = (neq[i], neq[i + 1]);
                let e = (a + b) * half * even;
                let o = (a - b) * half * odd;
                neq[i] = e + o;
                neq[i + 1] = e - o;
            }
        },
    );
}

/// Fine relaxation time for a coarse one: `τ_F = ½ + 2 (τ_C − ½)` (equal viscosity).
#[inline(always)]
pub fn fine_tau(tau_c: f64) -> f64 {
    0.5 + 2.0 * (tau_c - 0.5)
}

/// Rescaling factor for coarse → fine transfers, `τ_F / (2 τ_C)` (see [`rescale`]).
#[inline(always)]
pub fn coarse_to_fine_factor(tau_c: f64, tau_f: f64) -> f64 {
    tau_f / (2.0 * tau_c)
}

/// Rescaling factor for fine → coarse transfers, `2 τ_C / τ_F` (see [`rescale`]).
#[inline(always)]
pub fn fine_to_coarse_factor(tau_c: f64, tau_f: f64) -> f64 {
    2.0 * tau_c / tau_f
}

/// One-dimensional cubic weights `CUBIC_WEIGHTS[4 cp + I][j]` of coarse cell `j` for fine
/// cell `I` of a child at position `cp` along an axis (`s = 2cp + I/2 − 1/4`). The
/// tensor product of these is the inverse of the paper's Vandermonde matrix `A_UV` applied
/// to the samples and evaluated at the fine cell. A `static` (global memory on the GPU),
/// so run-time indices into it do not create local arrays.
pub static CUBIC_WEIGHTS: [[f64; 4]; 8] = weights::cubic_table();

/// A population split for grid transfers: density, momentum and the non-equilibrium part
/// (already rescaled by the transfer's factor), and under a gradient LES model the
/// eddy viscosity it carries, in the target level's units ([`crate::eddy`]; 0 otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Split<P, F> {
    pub rho: F,
    pub j: [F; 3],
    pub neq: P,
    pub nu: F,
}

/// `acc += w · s`, component by component.
#[inline(always)]
pub fn add_scaled<L: VelocitySet, F: Real>(acc: &mut Split<L::Pop<F>, F>, w: F, s: &Split<L::Pop<F>, F>) {
    acc.rho += w * s.rho;
    for a in 0..3 {
        acc.j[a] += w * s.j[a];
    }
    acc.nu += w * s.nu;
    L::unroll(
        #[inline(always)]
        |i| acc.neq[i] += w * s.neq[i],
    );
}

/// Splits `h` into `ρ`, `ρu` and `h − h^eq(ρ, u)` rescaled by `factor` in its even and
/// `factor_odd` in its odd part ([`scale_neq`]; see [`rescale`] for the factors).
#[inline(always)]
pub fn split<L: VelocitySet, F: Real>(h: &L::Pop<F>, factor: F, factor_odd: F) -> Split<L::Pop<F>, F> {
    let (rho, u) = moments::<L, F>(h);
    let usq = usq_term(u);
    let mut neq = L::Pop::<F>::default();
    L::unroll(
        #[inline(always)]
        |i| neq[i] = h[i] - equilibrium_dir::<L, F>(i, rho, u, usq),
    );
    scale_neq::<L, F>(&mut neq, factor, factor_odd);
    Split { rho, j: [rho * u[0], rho * u[1], rho * u[2]], neq, nu: F::ZERO }
}

/// Adds `shift` to a split's momentum unless it is zero: the transfers carry the first
/// moment of the populations, which under a body force is `ρu − F/2` with the force `F`
/// of each level (Guo et al. 2002, see [`crate::collision`]), so a transfer adds
/// `(F_source − F_target)/2` ([`CommArgs::shift`]).
///
/// The rest of the force's trace in the populations needs no term of its own: to first
/// order the non-equilibrium part about the equilibrium of the raw moment is
/// `−τ D f^eq + τ S⁻ + (τ − ½) S⁺ + O(F²)` (Chapman–Enskog of Guo's scheme, with `S⁻ =
/// 3 w c·F` the odd part of the source and `S⁺ = O(uF)` the even one), and its force part
/// `τ S⁻` scales from level to level like `τ F`, i.e. by the transfer's own factor
/// `τ_t/(2τ_s)` (the force halves per level). Only the `O(uF)` even part is off, by a
/// fraction of itself: an explicit correction of it did not change Poiseuille flow
/// through a refined patch in four digits (`tests/multilevel.rs`).
#[inline(always)]
pub fn shift_momentum<P, F: Real>(s: &mut Split<P, F>, shift: [F; 3]) {
    if shift != [F::ZERO; 3] {
        for a in 0..3 {
            s.j[a] += shift[a];
        }
    }
}

/// [`split`] with a transfer's factors: under LES ([`CommArgs::les`]) from the cell's
/// own relaxation time ([`les_factors`]: from its stress under Smagorinsky's model, from
/// the eddy viscosity `nu` it carries under a gradient model, which the split carries on
/// as `k ν_t`), `factor` and `factor_odd` otherwise; for MRT ([`CommArgs::mrt`]) group by
/// group ([`scale_neq_mrt`], the shear and odd factors the cell's own under LES,
/// [`les_group_factors`]); the momentum then shifted by [`CommArgs::shift`].
#[inline(always)]
pub fn split_for<L: VelocitySet, F: Real, P>(h: &L::Pop<F>, nu: F, a: &CommArgs<F, P>) -> Split<L::Pop<F>, F> {
    let mrt = a.mrt.bulk != F::ZERO;
    let mut s = if a.les.active() {
        let mut s = split::<L, F>(h, F::ONE, F::ONE);
        if mrt {
            let (shear, odd) = les_group_factors::<L, F>(&s.neq, s.rho, nu, &a.les, &a.mrt);
            let mut r = mrt_factors(shear, F::ONE, a);
            r.odd = odd;
            scale_neq_mrt::<L, F>(&mut s.neq, r);
        } else {
            let (even, odd) = les_factors::<L, F>(&s.neq, s.rho, nu, &a.les);
            scale_neq::<L, F>(&mut s.neq, even, odd);
        }
        if a.les.eddy > F::ZERO {
            s.nu = a.les.ratio * nu;
        }
        s
    } else if mrt {
        let mut s = split::<L, F>(h, F::ONE, F::ONE);
        scale_neq_mrt::<L, F>(&mut s.neq, mrt_factors(a.factor, F::ONE, a));
        s
    } else {
        split::<L, F>(h, a.factor, a.factor_odd)
    };
    shift_momentum(&mut s, a.shift);
    s
}

/// The per-group factors of an MRT transfer `a` with the shear factor `shear`, all
/// times `scale` (the averaging's `1/2^D`; 1 to interpolate): the bulk and even-ghost
/// factors of [`CommArgs::mrt`], the odd ghosts' `factor_odd`.
#[inline(always)]
pub fn mrt_factors<F: Real, P>(shear: F, scale: F, a: &CommArgs<F, P>) -> Rates<F> {
    Rates { shear: scale * shear, bulk: scale * a.mrt.bulk, odd: scale * a.factor_odd, even: scale * a.mrt.even }
}

/// The population `h^eq(ρ, j/ρ) + neq` of a split.
#[inline(always)]
pub fn join<L: VelocitySet, F: Real>(s: &Split<L::Pop<F>, F>) -> L::Pop<F> {
    let inv = F::ONE / s.rho;
    let u = [s.j[0] * inv, s.j[1] * inv, s.j[2] * inv];
    let usq = usq_term(u);
    let mut h = L::Pop::<F>::default();
    L::unroll(
        #[inline(always)]
        |i| h[i] = equilibrium_dir::<L, F>(i, s.rho, u, usq) + s.neq[i],
    );
    h
}

/// Interpolation as the solver does it: density, momentum and the rescaled
/// non-equilibrium part of the samples (`coarse(j)`, from [`split`]) are interpolated
/// separately, linearly or (`CUBIC`) cubically, and the fine population is rebuilt as
/// `h^eq(ρ, j/ρ) + neq`.
///
/// The paper interpolates the rescaled populations themselves. Both give the same density
/// and momentum (they are linear in the populations), but the equilibrium is quadratic in
/// u: interpolating it misses its curvature, while rebuilding it from the interpolated
/// momentum transfers a linear velocity field exactly. With the population form, plane
/// Couette flow through a refined patch lost 5.9e-10 of its mass per root step (∝ U²,
/// the signature of the u² term); with this form it is reproduced to the uniform grid's
/// accuracy (`tests/multilevel.rs`).
#[inline(always)]
pub fn interpolate_split<L: VelocitySet, F: Real, const CUBIC: bool, G: FnMut(usize) -> Split<L::Pop<F>, F>>(
    k: usize,
    t: usize,
    coarse: G,
) -> L::Pop<F> {
    join::<L, F>(&interpolate_acc::<L, F, CUBIC, G>(k, t, coarse))
}

/// The interpolated split of fine cell `t` of child `k` ([`interpolate_split`] before the
/// join): its eddy viscosity too.
#[inline(always)]
pub fn interpolate_acc<L: VelocitySet, F: Real, const CUBIC: bool, G: FnMut(usize) -> Split<L::Pop<F>, F>>(
    k: usize,
    t: usize,
    mut coarse: G,
) -> Split<L::Pop<F>, F> {
    let mut acc = Split::<L::Pop<F>, F>::default();
    // Always inlined: with two kernels sharing an instance (the exchange's and
    // `InterpolateChildren`'s), LLVM would otherwise keep it a call, through local memory.
    weights::<L::Dim, F, CUBIC>(
        k,
        t,
        #[inline(always)]
        |j, w| add_scaled::<L, F>(&mut acc, w, &coarse(j)),
    );
    acc
}

/// The eddy viscosity of cell `t` of block `b` under a gradient LES model (0 otherwise).
///
/// # Safety
/// Under a gradient model `a.eddy` must hold block `b`.
#[inline(always)]
pub unsafe fn cell_eddy<L: VelocitySet, F: Real, P>(a: &CommArgs<F, P>, b: usize, t: usize) -> F {
    if a.les.eddy > F::ZERO {
        *a.eddy.add(b * <L::Dim as Dim>::BLOCK_CELLS + t)
    } else {
        F::ZERO
    }
}

/// Writes the eddy viscosity `nu` of cell `t` of block `b` under a gradient LES model.
///
/// # Safety
/// As for [`cell_eddy`].
#[inline(always)]
pub unsafe fn set_cell_eddy<L: VelocitySet, F: Real, P>(a: &CommArgs<F, P>, b: usize, t: usize, nu: F) {
    if a.les.eddy > F::ZERO {
        *a.eddy.add(b * <L::Dim as Dim>::BLOCK_CELLS + t) = nu;
    }
}

kernel_args! {
    /// Arguments of [`InterpolateChildren`] and [`crate::average::AverageToParents`].
    pub struct CommArgs<F, P> {
        /// Distribution pool (shifted populations, all levels).
        pub f: mut P,
        /// Neighbour links (needed to read/write the coarse level in the odd AA layout).
        pub nbr: ref i32,
        /// Per-block boundary flags.
        pub onb: ref u32,
        /// Parent of each block.
        pub parent: ref i32,
        /// First child of each block.
        pub child: ref i32,
        /// Per-cell masks ([`crate::amr::CELL_GHOST`], ...); read only if `masked != 0`.
        pub cell_mask: ref u8,
        /// Blocks to work on: children ([`InterpolateChildren`]) or parents
        /// ([`crate::average::AverageToParents`]).
        pub list: ref u32,
        /// Rescaling factor: `τ_F/(2τ_C)` to interpolate, `2τ_C/τ_F` to average (TRT:
        /// of `τ⁺`, for the even non-equilibrium part; MRT: of the shear moments).
        pub factor: val F,
        /// The factor of the odd non-equilibrium part (TRT: of `τ⁻`; MRT: of the odd
        /// ghosts' `τ_o`; BGK: `factor`).
        pub factor_odd: val F,
        /// Added to the transferred momentum: `(F_source − F_target)/2` for a body force
        /// `F` on the levels ([`shift_momentum`]); zero without one.
        pub shift: val [F; 3],
        /// LES: the factors come from each cell's stress ([`crate::les::les_factors`])
        /// instead of `factor`, `factor_odd` (`les.c2 = 0`: no LES).
        pub les: val LesTransfer<F>,
        /// MRT ([`crate::mrt`]): the factors of the bulk and even-ghost moments; the
        /// shear moments take `factor` (or LES's), the odd ghosts `factor_odd`
        /// ([`scale_neq_mrt`]). `mrt.bulk = 0`: not MRT, the parity rescaling.
        pub mrt: val MrtTransfer<F>,
        /// Interpolation: nonzero writes ghost cells only, zero every cell. Averaging:
        /// the `AVERAGE_*` mode of [`crate::average`].
        pub masked: val u32,
        /// Per-block solid-cell masks (see [`crate::stream::Field::solid`]).
        pub solid: ref u64,
        /// Per-cell eddy viscosities of every level under a gradient LES model
        /// ([`crate::eddy::EddyField::eddy`]): read from the sources, written to the
        /// targets. Unused (may be empty) unless `les.eddy > 0`.
        pub eddy: mut F,
        /// Per-block statuses of the pool; read only by
        /// [`crate::average::AVERAGE_COARSENING`] (may be empty otherwise).
        pub status: ref i32,
        /// Per-block marks of the pool; read only by
        /// [`crate::average::AVERAGE_COARSENING`] (may be empty otherwise).
        pub mark: ref i32,
    }
}

/// Coarse → fine interpolation over the cells of a list of child blocks: item `i` is cell
/// `t = i mod 4^D` of child `c = list[i / 4^D]`, with parent `q = parent[c]` and child
/// position `k = c − child[q]`. Reads the coarse cells of `q` in AA layout `ODD`, splits
/// each with the rescaling `factor` (= `τ_F/(2τ_C)`), interpolates linearly or (`CUBIC`)
/// cubically ([`interpolate_split`]), and writes the fine cell in the natural layout.
///
/// With `masked != 0` only cells whose `cell_mask` is [`CELL_GHOST`] are written (the
/// per-step exchange); with `masked == 0` all of them (children just created by
/// refinement).
pub struct InterpolateChildren<L, F, S, const ODD: bool, const CUBIC: bool>(PhantomData<(L, F, S)>);

impl<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool, const CUBIC: bool> Kernel
    for InterpolateChildren<L, F, S, ODD, CUBIC>
{
    type Args = CommArgs<F, S::Elem>;
    const WRITES_MESH: bool = false;

    fn max_items(l: &CommArgs<F, S::Elem, Lens>) -> Option<usize> {
        Some(l.list * <L::Dim as Dim>::BLOCK_CELLS)
    }
    const THREADS: u32 = 128;

    #[inline(always)]
    unsafe fn run(i: usize, a: &CommArgs<F, S::Elem>) {
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        let (c, t) = (*a.list.add(i / m) as usize, i & (m - 1));
        let target = interpolated_from::<L, F, S::Elem>(a, c, t);
        // The mesh is read: the parent's populations are the kernels before's. Every thread
        // waits, one with nothing to write too (see `wait_for_prior_kernels`).
        wait_for_prior_kernels();
        if let Some((q, k)) = target {
            interpolate_from::<L, F, S, ODD, CUBIC>(a, c, t, q, k);
        }
    }
}

/// Cell `t` of child `c` interpolated from its parent as [`InterpolateChildren`] does (its
/// item `i` is `interpolate_cell(a, list[i / 4^D], i mod 4^D)`; also [`crate::exchange`]).
///
/// # Safety
/// `c` a block of the pool of `a` with an active parent, the pointers of `a` valid for
/// both.
#[inline(always)]
pub unsafe fn interpolate_cell<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool, const CUBIC: bool>(
    a: &CommArgs<F, S::Elem>,
    c: usize,
    t: usize,
) {
    if let Some((q, k)) = interpolated_from::<L, F, S::Elem>(a, c, t) {
        interpolate_from::<L, F, S, ODD, CUBIC>(a, c, t, q, k);
    }
}

/// The mesh's part of [`interpolate_cell`]: the parent `q` of child `c` and the child's
/// position `k` among its siblings if cell `t` is written (every cell, or with
/// `a.masked != 0` ghost cells only), `None` otherwise. Reads only the mesh (cell masks,
/// parent and child links), so a kernel may call it before [`wait_for_prior_kernels`].
///
/// # Safety
/// As for [`interpolate_cell`].
#[inline(always)]
pub unsafe fn interpolated_from<L: VelocitySet, F: Real, P>(
    a: &CommArgs<F, P>,
    c: usize,
    t: usize,
) -> Option<(usize, usize)> {
    let m = <L::Dim as Dim>::BLOCK_CELLS;
    if a.masked != 0 && *a.cell_mask.add(c * m + t) != CELL_GHOST {
        return None;
    }
    let q = *a.parent.add(c) as usize;
    Some((q, c - *a.child.add(q) as usize))
}

/// The data's part of [`interpolate_cell`]: cell `t` of child `c`, at position `k` under
/// parent `q` ([`interpolated_from`]), interpolated from the parent's cells.
///
/// # Safety
/// As for [`interpolate_cell`], with `q` and `k` from [`interpolated_from`].
#[inline(always)]
pub unsafe fn interpolate_from<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool, const CUBIC: bool>(
    a: &CommArgs<F, S::Elem>,
    c: usize,
    t: usize,
    q: usize,
    k: usize,
) {
    let fld = Field { f: a.f, nbr: a.nbr, onb: a.onb, solid: a.solid };
    let acc = interpolate_acc::<L, F, CUBIC, _>(
        k,
        t,
        #[inline(always)]
        |j: usize| split_for::<L, F, _>(&load_cell::<L, F, S, ODD>(&fld, q, j), cell_eddy::<L, F, _>(a, q, j), a),
    );
    // The fine level is between its two steps of a coarse step: natural layout.
    store_cell::<L, F, S, false>(&fld, c, t, &join::<L, F>(&acc));
    set_cell_eddy::<L, F, _>(a, c, t, acc.nu);
}

kernel_args! {
    /// Arguments of [`RescaleParents`] and [`InterpolateGhosts`]: those of the one-pass
    /// exchange (`comm.list` holds the parents for [`RescaleParents`], the children for
    /// [`InterpolateGhosts`]) and the scratch.
    pub struct GhostArgs<F, P> {
        pub comm: args CommArgs<F, P, M>,
        /// Per block: its position in the parent list (read for the children's parents).
        pub slot: mut u32,
        /// Split parent cells ([`split`]): component `i` of cell `t` at
        /// `((slot · (Q + 5)) + i) 4^D + t`, components `0 … Q − 1` the rescaled
        /// non-equilibrium part, then `ρ`, `ρu` and the carried eddy viscosity.
        pub scratch: mut F,
    }
}

/// Values per cell of a split in the ghost exchange's scratch ([`GhostArgs::scratch`]):
/// the `Q` non-equilibrium components, `ρ`, `ρu` and the eddy viscosity.
pub const fn split_values<L: VelocitySet>() -> usize {
    L::Q + 5
}

/// First half of the per-step ghost exchange: every cell of each listed parent, read in AA
/// layout `ODD` and split once ([`split`], with the rescaling), into `scratch` at the
/// parent's list position, which it records in `slot`. [`InterpolateGhosts`] then samples the rescaled
/// cells instead of rescaling each sample again: a coarse cell feeds up to `4^D` fine
/// cells (linear) or `4^D · 2^D` (cubic), and the rescaling costs the moments and `Q`
/// equilibria (the paper stages rescaled values in shared memory for the same reason).
pub struct RescaleParents<L, F, S, const ODD: bool>(PhantomData<(L, F, S)>);

impl<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool> Kernel for RescaleParents<L, F, S, ODD> {
    type Args = GhostArgs<F, S::Elem>;
    const WRITES_MESH: bool = false;

    fn max_items(l: &GhostArgs<F, S::Elem, Lens>) -> Option<usize> {
        Some(
            l.comm.list.min(l.scratch / (split_values::<L>() * <L::Dim as Dim>::BLOCK_CELLS))
                * <L::Dim as Dim>::BLOCK_CELLS,
        )
    }
    const THREADS: u32 = 128;

    #[inline(always)]
    unsafe fn run(i: usize, g: &GhostArgs<F, S::Elem>) {
        let a = &g.comm;
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        let pos = i / m;
        let q = *a.list.add(pos) as usize;
        let t = i & (m - 1);
        // The list is the mesh's: what follows is the kernels before's.
        wait_for_prior_kernels();
        if t == 0 {
            *g.slot.add(q) = pos as u32;
        }
        let fld = Field { f: a.f, nbr: a.nbr, onb: a.onb, solid: a.solid };
        let s = split_for::<L, F, _>(&load_cell::<L, F, S, ODD>(&fld, q, t), cell_eddy::<L, F, _>(a, q, t), a);
        let n = split_values::<L>();
        L::unroll(
            #[inline(always)]
            |k| *g.scratch.add((pos * n + k) * m + t) = s.neq[k],
        );
        *g.scratch.add((pos * n + L::Q) * m + t) = s.rho;
        for d in 0..3 {
            *g.scratch.add((pos * n + L::Q + 1 + d) * m + t) = s.j[d];
        }
        *g.scratch.add((pos * n + L::Q + 4) * m + t) = s.nu;
    }
}

/// Second half of the per-step ghost exchange: the ghost cells (`comm.masked != 0`; every
/// cell otherwise, to fill new children) of each listed child, interpolated linearly or
/// (`CUBIC`) cubically ([`interpolate_split`]) from its parent's split cells in `scratch`
/// (see [`RescaleParents`]), written in the natural layout. Gives the same values as
/// [`InterpolateChildren`] with the same `masked`.
pub struct InterpolateGhosts<L, F, S, const CUBIC: bool>(PhantomData<(L, F, S)>);

impl<L: VelocitySet, F: Real, S: Storage<F>, const CUBIC: bool> Kernel for InterpolateGhosts<L, F, S, CUBIC> {
    type Args = GhostArgs<F, S::Elem>;
    const WRITES_MESH: bool = false;

    fn max_items(l: &GhostArgs<F, S::Elem, Lens>) -> Option<usize> {
        Some(l.comm.list * <L::Dim as Dim>::BLOCK_CELLS)
    }
    const THREADS: u32 = 128;

    #[inline(always)]
    unsafe fn run(i: usize, g: &GhostArgs<F, S::Elem>) {
        let a = &g.comm;
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        let c = *a.list.add(i / m) as usize;
        let t = i & (m - 1);
        let target = interpolated_from::<L, F, S::Elem>(a, c, t);
        // The mesh is read: the parents' slots and split cells are the kernel before's.
        // Every thread waits, one with nothing to write too (see `wait_for_prior_kernels`).
        wait_for_prior_kernels();
        let Some((q, k)) = target else { return };
        let base = *g.slot.add(q) as usize * split_values::<L>() * m;
        let sample = |j: usize| {
            let mut s = Split::<L::Pop<F>, F>::default();
            L::unroll(
                #[inline(always)]
                |d| s.neq[d] = *g.scratch.add(base + d * m + j),
            );
            s.rho = *g.scratch.add(base + L::Q * m + j);
            for d in 0..3 {
                s.j[d] = *g.scratch.add(base + (L::Q + 1 + d) * m + j);
            }
            s.nu = *g.scratch.add(base + (L::Q + 4) * m + j);
            s
        };
        let acc = interpolate_acc::<L, F, CUBIC, _>(k, t, sample);
        let fld = Field { f: a.f, nbr: a.nbr, onb: a.onb, solid: a.solid };
        store_cell::<L, F, S, false>(&fld, c, t, &join::<L, F>(&acc));
        set_cell_eddy::<L, F, _>(a, c, t, acc.nu);
    }
}
