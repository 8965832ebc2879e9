//! The stability guard: a device reduction that finds the first cell of a level whose
//! state is not physical — a non-finite population, a density `ρ ≤ 0` (or not finite), or
//! a speed above the Mach limit — so that a run that blows up stops with the step, the
//! level and the position instead of writing garbage.
//!
//! Only leaf blocks are checked: they carry the solution. The cells of a parent block step
//! on the coarse level but, away from the grid interfaces, nothing reads them (they are
//! averaged from their children before anything does: coarsening, output); with the
//! coarse level's τ and boundary conditions they may drift, even blow up, while the
//! solution is fine. Measured: the paper's square cylinder (root 256, 2 and 4 levels)
//! keeps |u| ≤ 0.07 in every leaf cell to t = 240 D/U_0, while root-level parent cells
//! under the refined outlet pass Ma 1 at t ≈ 39.
//!
//! One launch over the cells of every level's ID set ([`LevelSets`]); a bad cell folds
//! `(item << 2) | code` (its item within the level) into the level's slot with an atomic
//! minimum, so the reported cell is the first bad one in list order on both backends,
//! whatever the thread order. Good
//! cells write nothing: a healthy run only reads the distributions.

use crate::memory::Lens;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::amr::level_sets::LevelSets;
use crate::collide::moments;
use crate::kernel_args;
use crate::lattice::{Dim, VelocitySet};
use crate::launch::Kernel;
use crate::real::Real;
use crate::storage::Storage;
use crate::stream::{load_cell, Field, ONB_SOLID};

/// Code of a healthy cell.
pub const HEALTHY: u64 = 0;
/// Code: a population is NaN or infinite.
pub const BAD_POPULATION: u64 = 1;
/// Code: the density is not finite or not positive.
pub const BAD_DENSITY: u64 = 2;
/// Code: the speed exceeds the limit.
pub const BAD_SPEED: u64 = 3;
/// Value of a level's slot when no cell is bad.
pub const NONE_BAD: u64 = u64::MAX;

/// The health of one cell's pre-collision shifted populations `h`: a `BAD_*` code (or
/// [`HEALTHY`]) and the offending value (the first non-finite population, ρ, or |u|²).
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
// `x − x ≠ 0` is the finiteness test on purpose (`Real` has no `is_finite`).
#[allow(clippy::eq_op)]
pub fn cell_health<L: VelocitySet, F: Real>(h: &L::Pop<F>, max_speed2: F) -> (u64, F) {
    let mut bad = F::ZERO;
    let mut finite = true;
    L::unroll(
        #[cfg_attr(target_arch = "nvptx64", inline(always))]
        #[cfg_attr(not(target_arch = "nvptx64"), inline)]
        |i| {
            // `x − x` is 0 for every finite x and NaN for NaN and ±∞.
            let hi = h[i];
            if finite && hi - hi != F::ZERO {
                finite = false;
                bad = hi;
            }
        },
    );
    if !finite {
        return (BAD_POPULATION, bad);
    }
    let (rho, u) = moments::<L, F>(h);
    if !(rho > F::ZERO && rho - rho == F::ZERO) {
        return (BAD_DENSITY, rho);
    }
    let u2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
    if !(u2 <= max_speed2) {
        return (BAD_SPEED, u2);
    }
    (HEALTHY, F::ZERO)
}

kernel_args! {
    /// Arguments of [`GuardCheck`].
    pub struct GuardArgs<F, P> {
        /// Distribution pool.
        pub f: mut P,
        /// Neighbour links.
        pub nbr: ref i32,
        /// First child of each block, `-1` for a leaf (only leaves are checked).
        pub child: ref i32,
        /// Per-block boundary flags.
        pub onb: ref u32,
        /// Per-block solid-cell masks (may be null when no block is flagged solid).
        pub solid: ref u64,
        /// The levels' ID sets: item `i` is cell `i mod 4^D` of their `(i / 4^D)`-th block
        /// ([`LevelSets::block`]), the `j`-th of level `l`'s.
        pub sets: args LevelSets<M>,
        /// One slot per level: the minimum of `((j 4^D + cell) << 2) | code` over the
        /// level's bad cells ([`NONE_BAD`] before the launch).
        pub out: mut u64,
        /// Square of the largest allowed speed (lattice units).
        pub max_speed2: val F,
    }
}

/// Checks every non-solid cell of the leaf blocks of the levels in the layout of `ODD`
/// steps, every level in one launch (see the module documentation).
pub struct GuardCheck<L, F, S, const ODD: bool>(PhantomData<(L, F, S)>);

impl<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool> Kernel for GuardCheck<L, F, S, ODD> {
    type Args = GuardArgs<F, S::Elem>;

    fn max_items(l: &GuardArgs<F, S::Elem, Lens>) -> Option<usize> {
        Some(if l.out < l.sets.levels() { 0 } else { l.sets.items() * <L::Dim as Dim>::BLOCK_CELLS })
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &GuardArgs<F, S::Elem>) {
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        let (level, j, b) = a.sets.block(i / m);
        let b = b as usize;
        let t = i & (m - 1);
        if *a.child.add(b) >= 0 {
            return;
        }
        let fld = Field { f: a.f, nbr: a.nbr, onb: a.onb, solid: a.solid };
        if *a.onb.add(b) & ONB_SOLID != 0 && (*a.solid.add(b) >> t) & 1 != 0 {
            return;
        }
        let h = load_cell::<L, F, S, ODD>(&fld, b, t);
        let (code, _) = cell_health::<L, F>(&h, a.max_speed2);
        if code != HEALTHY {
            // SAFETY: `out` holds a valid, 8-byte aligned u64 per level with items (see
            // `max_items`) that only atomics touch during the launch.
            let key = (((j * m + t) as u64) << 2) | code;
            AtomicU64::from_ptr(a.out.add(level)).fetch_min(key, Ordering::Relaxed);
        }
    }
}
