//! Reading the solution: the moments `(ρ, u)` of every cell of a level's blocks, computed
//! where the distributions live, so that a host copy of the solution (output, probes,
//! time series) moves `1 + D` values per cell instead of `Q` (19 → 4 for D3Q19: the copy
//! is what the solver waits for while a time series is written).
//!
//! The values are exactly those of [`load_cell`] followed by [`moments`] on the host, in
//! the storage precision: both backends run this one function.

use crate::memory::Lens;
use core::marker::PhantomData;

use crate::collide::moments;
use crate::collision::forced_velocity;
use crate::kernel_args;
use crate::lattice::{Dim, VelocitySet};
use crate::launch::Kernel;
use crate::real::Real;
use crate::storage::Storage;
use crate::stream::{load_cell, Field};

/// Values per cell in the output of [`CellMoments`] for dimension `D`: ρ, then `u_0 …
/// u_{D−1}`.
pub const fn values_per_cell(d: usize) -> usize {
    1 + d
}

kernel_args! {
    /// Arguments of [`CellMoments`].
    pub struct ReadoutArgs<F, P> {
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
        /// `out[(i · (1 + D)) + c]`: ρ (`c = 0`) and `u_{c−1}` of item `i`.
        pub out: mut F,
        /// The level's body force density (`StepParams::force`): the velocity written is
        /// `u + F/(2ρ)`, Guo's, as the collision uses it (see [`crate::collision`]).
        pub force: val [F; 3],
    }
}

/// Writes `(ρ, u)` of every cell of a level's blocks (list order) in the layout of `ODD`
/// steps (see [`load_cell`]). Solid cells are written like fluid ones (the output marks
/// them from the mask).
pub struct CellMoments<L, F, S, const ODD: bool>(PhantomData<(L, F, S)>);

impl<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool> Kernel for CellMoments<L, F, S, ODD> {
    type Args = ReadoutArgs<F, S::Elem>;

    fn max_items(l: &ReadoutArgs<F, S::Elem, Lens>) -> Option<usize> {
        let d = <L::Dim as Dim>::D;
        Some((l.ids * <L::Dim as Dim>::BLOCK_CELLS).min(l.out / values_per_cell(d)))
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &ReadoutArgs<F, S::Elem>) {
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        let d = <L::Dim as Dim>::D;
        let b = *a.ids.add(i / m) as usize;
        let t = i & (m - 1);
        let fld = Field { f: a.f, nbr: a.nbr, onb: a.onb, solid: a.solid };
        let h = load_cell::<L, F, S, ODD>(&fld, b, t);
        let (rho, mut u) = moments::<L, F>(&h);
        if a.force != [F::ZERO; 3] {
            u = forced_velocity(rho, u, a.force);
        }
        let out = a.out.add(i * values_per_cell(d));
        *out = rho;
        for c in 0..d {
            *out.add(1 + c) = u[c];
        }
    }
}
