//! Refinement criteria computed from the solution (paper, section "Adaptive Mesh
//! Refinement" of the solver, Algorithm "Refinement/Coarsening Criterion").
//!
//! The vorticity criterion runs in one launch over the levels' ID sets ([`LevelSets`]; two
//! after an odd number of root steps, whose root level is in the odd layout): every
//! cell of a leaf computes its velocity and `|ω|²` with the paper's first-order
//! differences, the block's maximum goes through the paper's log₂ level rule
//! ([`desired_level`]), and the block is marked refine / coarsen / keep. On CUDA one CTA
//! of [`CRITERION_CTA`] threads covers `CRITERION_CTA / 4^D` blocks
//! ([`vorticity_mark_cooperative`]): each cell loads its populations once and shares its
//! velocity through shared memory, so a difference inside the block costs no load (only
//! the `+x`/`+y`/`+z` faces read the neighbour block), and the block maximum is a
//! shared-memory reduction. On the CPU one work item does a whole block
//! ([`VorticityMarkSerial`]) with the same arithmetic: the marks agree bit for bit.
//!
//! **Units.** The paper keeps "physical" scales: Δx = Δt = 1/N on the root grid of a
//! domain of length 1 and velocity in lattice units, so its `|ω|` is (lattice velocity)
//! per (domain length). Here `|ω|` is computed in root lattice units and multiplied by
//! `length` (the reference length in root cells; the domain length reproduces the paper),
//! which is the same number.

use crate::memory::Lens;
use core::marker::PhantomData;

use crate::amr::level_sets::LevelSets;
use crate::amr::{status, MARK_COARSEN, MARK_NONE, MARK_REFINE, MAX_LEVELS};
use crate::block::{cell_coords, resolve};
use crate::collide::moments;
use crate::kernel_args;
use crate::lattice::{Dim, VelocitySet};
use crate::launch::Kernel;
use crate::primitives::Cta;
use crate::real::Real;
use crate::storage::Storage;
use crate::stream::{load_cell, Field};

/// Threads per CTA of [`vorticity_mark_cooperative`] (a multiple of `4^D` in 2D and 3D).
pub const CRITERION_CTA: u32 = 128;
/// Shared memory of [`vorticity_mark_cooperative`]: per thread three velocity words and
/// one criterion word (`u64` each).
pub const CRITERION_SHARED_BYTES: u32 = CRITERION_CTA * 4 * 8;

kernel_args! {
    /// Arguments of the vorticity criterion ([`VorticityMarkSerial`],
    /// [`vorticity_mark_cooperative`]).
    pub struct CriterionArgs<F, P> {
        /// Distribution pool.
        pub f: mut P,
        /// Neighbour links.
        pub nbr: ref i32,
        /// Per-block boundary flags.
        pub onb: ref u32,
        /// Per-block solid-cell masks (see [`Field::solid`]).
        pub solid: ref u64,
        /// The levels' ID sets: item `i` (of a block) is their `i`-th block, on level `l`
        /// ([`LevelSets::block`]); only leaves are evaluated and marked.
        pub sets: args LevelSets<M>,
        /// Per-block statuses.
        pub status: ref i32,
        /// Per-block marks of the pool (written for the listed leaves).
        pub mark: mut i32,
        /// The reference length in root cells: `length · 2^l` converts a velocity
        /// difference per cell of level `l` to (lattice velocity) per reference length.
        pub length: val F,
        /// Grid levels allowed (`L_max`).
        pub max_levels: val i32,
        /// The paper's `N_start`.
        pub n_start: val f32,
        /// The paper's `N_inc`.
        pub n_inc: val f32,
    }
}

/// Velocity of cell `t` of block `b`.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn velocity<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool>(
    fld: &Field<S::Elem>,
    b: usize,
    t: usize,
) -> [F; 3] {
    let h = load_cell::<L, F, S, ODD>(fld, b, t);
    moments::<L, F>(&h).1
}

/// `∂u/∂x_AXIS` at cell `t` (coordinates `x`) of block `b`, `u0` its velocity, by a
/// first-order difference as in the paper: forward where the neighbour exists on the
/// level, else backward. `local(t')` is the velocity of cell `t'` of the same block; only
/// the forward neighbour of a cell on the block's upper face is loaded (a backward
/// neighbour is always inside the block, blocks being 4 cells wide).
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn derivative<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool, const AXIS: usize>(
    fld: &Field<S::Elem>,
    b: usize,
    x: [i32; 3],
    t: usize,
    u0: [F; 3],
    local: &impl Fn(usize) -> [F; 3],
) -> [F; 3] {
    let stride = 1usize << (2 * AXIS);
    let diff = |a: [F; 3], b: [F; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    if x[AXIS] < 3 {
        return diff(local(t + stride), u0);
    }
    let mut e = [0i32; 3];
    e[AXIS] = 1;
    let (lp, tp) = resolve(fld.nbr, b, x, e, <L::Dim as Dim>::D, <L::Dim as Dim>::NEIGHBORS);
    if lp >= 0 {
        diff(velocity::<L, F, S, ODD>(fld, lp as usize, tp), u0)
    } else {
        diff(u0, local(t - stride))
    }
}

/// `|ω|²` (squared, in reference-length units, see the module) of cell `t` of block `b`.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn cell_w2<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool>(
    fld: &Field<S::Elem>,
    b: usize,
    t: usize,
    scale: F,
    local: &impl Fn(usize) -> [F; 3],
) -> f32 {
    let x = cell_coords(t);
    let u0 = local(t);
    let gx = derivative::<L, F, S, ODD, 0>(fld, b, x, t, u0, local);
    let gy = derivative::<L, F, S, ODD, 1>(fld, b, x, t, u0, local);
    let gz =
        if <L::Dim as Dim>::D == 3 { derivative::<L, F, S, ODD, 2>(fld, b, x, t, u0, local) } else { [F::ZERO; 3] };
    let wx = gy[2] - gz[1];
    let wy = gz[0] - gx[2];
    let wz = gx[1] - gy[0];
    // |ω|², so that no square root is needed on the device: the rule takes ½ log₂.
    ((wx * wx + wy * wy + wz * wz) * (scale * scale)).to_f64() as f32
}

/// `length · 2^level` (exact: a power of two scales without rounding), the factor of
/// [`cell_w2`] on `level`.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn level_scale<F: Real>(length: F, level: usize) -> F {
    length * F::from_f64((1u64 << level) as f64)
}

/// The mark of a leaf of `level` whose cells' largest `|ω|²` is `w2`: refine if the
/// desired level is above, coarsen if below.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn level_mark<F, P>(w2: f32, level: usize, a: &CriterionArgs<F, P>) -> i32 {
    let des = desired_level(w2, a.max_levels, a.n_start, a.n_inc);
    let level = level as i32;
    if des > level {
        MARK_REFINE
    } else if des < level {
        MARK_COARSEN
    } else {
        MARK_NONE
    }
}

/// The vorticity criterion on the CPU: work item `i` evaluates every cell of the `i`-th
/// block of the sets (if a leaf) and writes its mark (CUDA runs
/// [`vorticity_mark_cooperative`] instead, with the same result).
pub struct VorticityMarkSerial<L, F, S, const ODD: bool>(PhantomData<(L, F, S)>);

impl<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool> Kernel for VorticityMarkSerial<L, F, S, ODD> {
    type Args = CriterionArgs<F, S::Elem>;

    fn max_items(l: &CriterionArgs<F, S::Elem, Lens>) -> Option<usize> {
        Some(l.sets.items())
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &CriterionArgs<F, S::Elem>) {
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        let (level, _, b) = a.sets.block(i);
        let b = b as usize;
        if *a.status.add(b) != status::UNREFINED {
            return;
        }
        let fld = Field { f: a.f, nbr: a.nbr, onb: a.onb, solid: a.solid };
        let mut u = [[F::ZERO; 3]; 64];
        for (t, ut) in u.iter_mut().enumerate().take(m) {
            *ut = velocity::<L, F, S, ODD>(&fld, b, t);
        }
        let local = |t: usize| u[t];
        let scale = level_scale(a.length, level);
        let mut w = 0.0f32;
        for t in 0..m {
            w = w.max(cell_w2::<L, F, S, ODD>(&fld, b, t, scale, &local));
        }
        *a.mark.add(b) = level_mark(w, level, a);
    }
}

/// The vorticity criterion on a CUDA CTA of [`CRITERION_CTA`] threads: thread `t` of CTA
/// `c` handles cell `i mod 4^D` of the sets' `(i / 4^D)`-th block, `i = c·CRITERION_CTA +
/// t` (a CTA holds whole blocks, of any levels).
///
/// 1. every cell of a leaf loads its populations and puts its velocity in shared memory;
/// 2. each computes `|ω|²` from the shared velocities (loading only a forward neighbour
///    in the next block) and puts it in shared memory;
/// 3. a tree reduction over each block's `4^D` slots, then the block's first thread
///    writes the mark.
///
/// Every thread reaches every [`Cta::sync`]; velocities travel through shared memory as
/// `f64` bits, which is exact for `f32` and `f64`, so the result equals
/// [`VorticityMarkSerial`]'s bit for bit (the maximum of non-negative values does not
/// depend on the order).
///
/// # Safety
/// Launched with [`CRITERION_CTA`] threads per CTA, `⌈n 4^D / CRITERION_CTA⌉` CTAs for the
/// sets' `n` blocks and [`CRITERION_SHARED_BYTES`] of shared memory; pointers as for
/// [`CriterionArgs`], the sets as [`LevelSets::items`] accepts them.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub unsafe fn vorticity_mark_cooperative<C: Cta, L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool>(
    cta: &C,
    a: &CriterionArgs<F, S::Elem>,
) {
    const CTA: usize = CRITERION_CTA as usize;
    let m = <L::Dim as Dim>::BLOCK_CELLS;
    let smem = cta.shared();
    let w2s = smem.add(3 * CTA);
    let th = cta.thread();
    let i = cta.block() * CTA + th;
    let t = i & (m - 1);
    let slot = |k: usize, axis: usize| smem.add(3 * k + axis);
    let mut b = 0usize;
    let mut level = 0usize;
    let mut leaf = false;
    if i / m < a.sets.start[MAX_LEVELS] as usize {
        let (l, _, block) = a.sets.block(i / m);
        (level, b) = (l, block as usize);
        leaf = *a.status.add(b) == status::UNREFINED;
    }
    let fld = Field { f: a.f, nbr: a.nbr, onb: a.onb, solid: a.solid };
    let u0 = if leaf { velocity::<L, F, S, ODD>(&fld, b, t) } else { [F::ZERO; 3] };
    *slot(th, 0) = u0[0].to_f64().to_bits();
    *slot(th, 1) = u0[1].to_f64().to_bits();
    *slot(th, 2) = u0[2].to_f64().to_bits();
    cta.sync();

    // Cells of one block are consecutive threads: cell `t'` of this block is thread
    // `th - t + t'`.
    let first = th - t;
    let local = |k: usize| {
        let get = |axis| F::from_f64(f64::from_bits(*slot(first + k, axis)));
        [get(0), get(1), get(2)]
    };
    let w2 = if leaf { cell_w2::<L, F, S, ODD>(&fld, b, t, level_scale(a.length, level), &local) } else { 0.0 };
    *w2s.add(th) = w2.to_bits() as u64;
    cta.sync();

    let mut s = m >> 1;
    while s > 0 {
        if t < s {
            let x = f32::from_bits(*w2s.add(th) as u32);
            let y = f32::from_bits(*w2s.add(th + s) as u32);
            *w2s.add(th) = x.max(y).to_bits() as u64;
        }
        cta.sync();
        s >>= 1;
    }
    if leaf && t == 0 {
        let w = 0.0f32.max(f32::from_bits(*w2s.add(th) as u32));
        *a.mark.add(b) = level_mark(w, level, a);
    }
}

/// The paper's Algorithm "Refinement/Coarsening Criterion": desired level from the
/// block-maximum squared criterion value `w2 = |ω|²`, `ε = min(1, log₂ |ω|)`, `L_des = L_max − 1`, then for
/// `p = 1 … L_max − 1`: if `ε < N_start − p N_inc`, `L_des = L_max − 1 − p`.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
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
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
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
