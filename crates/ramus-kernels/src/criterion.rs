//! Refinement criteria computed from the solution (paper, section "Adaptive Mesh
//! Refinement" of the solver, Algorithm "Refinement/Coarsening Criterion").
//!
//! The vorticity criterion runs in two launches over the leaves of one level: a per-cell
//! kernel ([`CellVorticity`]) writes `|ω|` of every cell, and a per-block kernel
//! ([`MarkByLevelRule`]) reduces the block's cells to their maximum and turns it into a
//! refine / coarsen / keep mark with the paper's log₂ level rule. Two launches instead of
//! the paper's shared-memory reduction: every cell-thread stays independent (the kernel
//! contract of [`crate::launch`]), and the second pass reads only `4^D` floats per block.
//!
//! **Units.** The paper keeps "physical" scales: Δx = Δt = 1/N on the root grid of a
//! domain of length 1 and velocity in lattice units, so its `|ω|` is (lattice velocity)
//! per (domain length). Here `|ω|` is computed in root lattice units and multiplied by
//! `length` (the reference length in root cells; the domain length reproduces the paper),
//! which is the same number.

use core::marker::PhantomData;

use crate::amr::{status, MARK_COARSEN, MARK_NONE, MARK_REFINE};
use crate::block::{cell_coords, resolve};
use crate::collide::moments;
use crate::kernel_args;
use crate::lattice::{Dim, VelocitySet};
use crate::launch::Kernel;
use crate::real::Real;
use crate::stream::{lattice_suffix, load_cell, Field};

kernel_args! {
    /// Arguments of [`CellVorticity`].
    pub struct VorticityArgs<F> {
        /// Distribution pool.
        pub f: *mut F,
        /// Neighbour links.
        pub nbr: *const i32,
        /// Per-block boundary flags.
        pub onb: *const u32,
        /// Blocks of one level; item `i` is cell `i mod 4^D` of `list[i / 4^D]`.
        pub list: *const u32,
        /// Per-block statuses: only leaves are evaluated (others get 0).
        pub status: *const i32,
        /// `|ω|²` per item.
        pub out: *mut f32,
        /// `length · 2^level`: converts a velocity difference per cell of the level to
        /// (lattice velocity) per reference length.
        pub scale: F,
        /// Per-block solid-cell masks (see [`Field::solid`]).
        pub solid: *const u64,
    }
}

/// Velocity of cell `t` of block `b`.
#[inline(always)]
unsafe fn velocity<L: VelocitySet, F: Real, const ODD: bool>(fld: &Field<F>, b: usize, t: usize) -> [F; 3] {
    let h = load_cell::<L, F, ODD>(fld, b, t);
    moments::<L, F>(&h).1
}

/// `∂u/∂x_a` at cell `x` of block `b` (`u0` its velocity) along the unit offset `e`, by
/// a first-order difference as in the paper: forward where the neighbour exists on the
/// level, else backward, else zero. One neighbour per axis: `1 + D` cell loads per cell.
#[inline(always)]
unsafe fn derivative<L: VelocitySet, F: Real, const ODD: bool>(
    fld: &Field<F>,
    b: usize,
    x: [i32; 3],
    u0: [F; 3],
    e: [i32; 3],
) -> [F; 3] {
    let d = <L::Dim as Dim>::D;
    let nb = <L::Dim as Dim>::NEIGHBORS;
    let (lp, tp) = resolve(fld.nbr, b, x, e, d, nb);
    if lp >= 0 {
        let u = velocity::<L, F, ODD>(fld, lp as usize, tp);
        return [u[0] - u0[0], u[1] - u0[1], u[2] - u0[2]];
    }
    let (lm, tm) = resolve(fld.nbr, b, x, [-e[0], -e[1], -e[2]], d, nb);
    if lm >= 0 {
        let u = velocity::<L, F, ODD>(fld, lm as usize, tm);
        return [u0[0] - u[0], u0[1] - u[1], u0[2] - u[2]];
    }
    [F::ZERO; 3]
}

/// Squared vorticity magnitude of every cell of a list of blocks of one level, from the
/// pre-collision moments in AA layout `ODD`, with the paper's first-order differences
/// (see [`derivative`]).
pub struct CellVorticity<L, F, const ODD: bool>(PhantomData<(L, F)>);

impl<L: VelocitySet, F: Real, const ODD: bool> Kernel for CellVorticity<L, F, ODD> {
    const NAME: &'static str = if ODD { "cell_vorticity_odd" } else { "cell_vorticity_even" };
    const SUFFIX: &'static str = lattice_suffix(L::NAME, F::NAME);
    type Args = VorticityArgs<F>;
    const THREADS: u32 = 128;

    #[inline(always)]
    unsafe fn run(i: usize, a: &VorticityArgs<F>) {
        let d = <L::Dim as Dim>::D;
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        let b = *a.list.add(i / m) as usize;
        if *a.status.add(b) != status::UNREFINED {
            *a.out.add(i) = 0.0;
            return;
        }
        let t = i & (m - 1);
        let fld = Field { f: a.f, nbr: a.nbr, onb: a.onb, solid: a.solid };
        let x = cell_coords(t);
        let u0 = velocity::<L, F, ODD>(&fld, b, t);
        // Constant axes only: a run-time-indexed gradient array would go to local memory.
        let gx = derivative::<L, F, ODD>(&fld, b, x, u0, [1, 0, 0]);
        let gy = derivative::<L, F, ODD>(&fld, b, x, u0, [0, 1, 0]);
        let gz = if d == 3 { derivative::<L, F, ODD>(&fld, b, x, u0, [0, 0, 1]) } else { [F::ZERO; 3] };
        let wx = gy[2] - gz[1];
        let wy = gz[0] - gx[2];
        let wz = gx[1] - gy[0];
        // |ω|², so that no square root is needed on the device: the rule takes ½ log₂.
        let s2 = a.scale * a.scale;
        *a.out.add(i) = ((wx * wx + wy * wy + wz * wz) * s2).to_f64() as f32;
    }
}

kernel_args! {
    /// Arguments of [`MarkByLevelRule`].
    pub struct LevelRuleArgs {
        /// Blocks of one level (the list [`CellVorticity`] ran over).
        pub list: *const u32,
        /// Per-block statuses: only leaves are marked.
        pub status: *const i32,
        /// Squared criterion value per cell of the listed blocks.
        pub value: *const f32,
        /// Per-block marks of the pool.
        pub mark: *mut i32,
        /// Level of the listed blocks.
        pub level: i32,
        /// Grid levels allowed (`L_max`).
        pub max_levels: i32,
        /// The paper's `N_start`.
        pub n_start: f32,
        /// The paper's `N_inc`.
        pub n_inc: f32,
    }
}

/// The paper's Algorithm "Refinement/Coarsening Criterion": desired level from the
/// block-maximum squared criterion value `w2 = |ω|²`, `ε = min(1, log₂ |ω|)`, `L_des = L_max − 1`, then for
/// `p = 1 … L_max − 1`: if `ε < N_start − p N_inc`, `L_des = L_max − 1 − p`.
#[inline(always)]
pub fn desired_level(w2: f32, max_levels: i32, n_start: f32, n_inc: f32) -> i32 {
    // log₂ 0 = −∞: a block at rest wants the root level.
    let eps = if w2 > 0.0 { (0.5 * libm_log2(w2)).min(1.0) } else { f32::NEG_INFINITY };
    let mut des = max_levels - 1;
    for p in 1..max_levels {
        if eps < n_start - p as f32 * n_inc {
            des = max_levels - 1 - p;
        }
    }
    des
}

/// `log₂ x` for `x > 0` without `std`: exponent from the bits, mantissa by a short
/// series (absolute error below 1e-4, far below the rule's unit steps).
#[inline(always)]
fn libm_log2(x: f32) -> f32 {
    let bits = x.to_bits();
    let exp = ((bits >> 23) & 0xff) as i32 - 127;
    // Mantissa in [1, 2); subnormals are far below any threshold and read as 2^-127.
    let m = f32::from_bits((bits & 0x007f_ffff) | 0x3f80_0000);
    // log₂ m = ln m / ln 2 with ln m = 2 artanh((m − 1)/(m + 1)), |s| ≤ 1/3.
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let ln = 2.0 * s * (1.0 + s2 * (1.0 / 3.0 + s2 * (1.0 / 5.0 + s2 * (1.0 / 7.0 + s2 / 9.0))));
    exp as f32 + ln * core::f32::consts::LOG2_E
}

/// Per block of the list: the maximum of its cells' (squared) criterion values, the desired level
/// ([`desired_level`]), and the mark: refine if above the block's level, coarsen if below.
pub struct MarkByLevelRule<D>(PhantomData<D>);

impl<D: Dim> Kernel for MarkByLevelRule<D> {
    const NAME: &'static str = "mark_by_level_rule";
    const SUFFIX: &'static str = D::NAME;
    type Args = LevelRuleArgs;

    #[inline(always)]
    unsafe fn run(i: usize, a: &LevelRuleArgs) {
        let m = D::BLOCK_CELLS;
        let b = *a.list.add(i) as usize;
        if *a.status.add(b) != status::UNREFINED {
            return;
        }
        let mut w = 0.0f32;
        for t in 0..m {
            w = w.max(*a.value.add(i * m + t));
        }
        let des = desired_level(w, a.max_levels, a.n_start, a.n_inc);
        *a.mark.add(b) = if des > a.level {
            MARK_REFINE
        } else if des < a.level {
            MARK_COARSEN
        } else {
            MARK_NONE
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_matches_std_within_1e4() {
        let mut x = 1e-12f32;
        while x < 1e12 {
            let want = (x as f64).log2();
            assert!((libm_log2(x) as f64 - want).abs() < 1e-4, "log2({x})");
            x *= 1.37;
        }
    }

    #[test]
    fn level_rule_follows_the_paper() {
        // L_max = 4, N_start = −3, N_inc = 1: thresholds −4, −5, −6.
        let des = |w: f32| desired_level(w * w, 4, -3.0, 1.0);
        assert_eq!(des(0.0), 0);
        assert_eq!(des(2f32.powi(-7)), 0);
        assert_eq!(des(2f32.powf(-5.5)), 1);
        assert_eq!(des(2f32.powf(-4.5)), 2);
        assert_eq!(des(2f32.powf(-3.5)), 3);
        assert_eq!(des(1e6), 3);
    }
}
