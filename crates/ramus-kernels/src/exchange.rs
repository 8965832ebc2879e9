//! The averaging into a level's parents and the ghost interpolation from them in one
//! launch (issue "Performance to the limit": fewer routines on a root step's critical
//! path).
//!
//! Between a level's two steps of a coarse step (paper, "Grid Advancement") the first
//! step ends by averaging the next finer level into the level's parents and the second
//! begins by interpolating those parents into the finer level's ghost cells. Both touch
//! one parent block and its children only: the averaging writes the parent's cells under
//! its children's interface cells, the interpolation reads the parent's cells (a quadrant
//! or all of them) to fill the ghost cells of its own children. So a CTA that holds whole
//! parents can do the first, synchronise, and do the second
//! ([`average_interpolate_cooperative`]); on the CPU one item does a whole parent
//! ([`AverageInterpolate`]). Both call the per-cell functions of the two separate
//! kernels ([`average_cell`], [`interpolate_cell`]) with the same arguments, in the same
//! order for every cell: the values are bit for bit those of the two launches.
//!
//! The coarse level is in the swapped AA layout at that point (it has taken one step of
//! the pair), the finer one in the natural layout, as for the separate kernels' `ODD`
//! variants.

use core::marker::PhantomData;

use crate::average::{average_cell, average_from, averaged_from};
use crate::interpolate::{interpolate_cell, interpolate_from, interpolated_from, CommArgs};
use crate::kernel_args;
use crate::lattice::{Dim, VelocitySet};
use crate::launch::{wait_for_prior_kernels, Kernel};
use crate::les::LesTransfer;
use crate::memory::Lens;
use crate::mrt::MrtTransfer;
use crate::primitives::Cta;
use crate::real::Real;
use crate::storage::Storage;

/// Threads of a CTA of [`average_interpolate_cooperative`].
pub const EXCHANGE_CTA: u32 = 128;

/// Parents one CTA of [`average_interpolate_cooperative`] holds: as many as give each
/// thread one child cell to interpolate (two in 2D), at least one (3D: each thread then
/// interpolates four child cells).
pub const fn exchange_parents<L: VelocitySet>() -> usize {
    let per_parent = <L::Dim as Dim>::CHILDREN * <L::Dim as Dim>::BLOCK_CELLS;
    let p = EXCHANGE_CTA as usize / per_parent;
    if p == 0 {
        1
    } else {
        p
    }
}

kernel_args! {
    /// Arguments of [`AverageInterpolate`] and [`average_interpolate_cooperative`].
    pub struct ExchangeArgs<F, P> {
        /// The averaging's arguments: `list` the parents, `masked` the averaging mode
        /// ([`crate::average::AVERAGE_INTERFACE`] or
        /// [`crate::average::AVERAGE_NOT_GHOST`]), the transfer fine → coarse.
        pub comm: args CommArgs<F, P, M>,
        /// Number of listed parents.
        pub n: val u32,
        /// The interpolation's rescaling factor coarse → fine ([`CommArgs::factor`]).
        pub factor: val F,
        /// Its odd part's ([`CommArgs::factor_odd`]).
        pub factor_odd: val F,
        /// Its momentum shift ([`CommArgs::shift`]).
        pub shift: val [F; 3],
        /// Its LES transfer ([`CommArgs::les`]).
        pub les: val LesTransfer<F>,
        /// Its MRT transfer ([`CommArgs::mrt`]).
        pub mrt: val MrtTransfer<F>,
    }
}

/// The interpolation's arguments: the averaging's with the coarse → fine transfer, ghost
/// cells only.
#[inline(always)]
fn interpolation<F: Real, P: Copy>(a: &ExchangeArgs<F, P>) -> CommArgs<F, P> {
    let mut c = a.comm;
    c.factor = a.factor;
    c.factor_odd = a.factor_odd;
    c.shift = a.shift;
    c.les = a.les;
    c.mrt = a.mrt;
    c.masked = 1;
    c
}

/// Interpolation item `idx` of the CTA whose parents start at list position
/// `first_parent`: its child block `c`, the cell `t` and what [`interpolated_from`] gives
/// (the parent `q`, the child's position `k`), if that cell is written. Reads only the
/// mesh.
///
/// # Safety
/// As for [`average_interpolate_cooperative`].
#[inline(always)]
unsafe fn interpolated_item<L: VelocitySet, F: Real, S: Storage<F>>(
    a: &ExchangeArgs<F, S::Elem>,
    interp: &CommArgs<F, S::Elem>,
    first_parent: usize,
    idx: usize,
) -> Option<(usize, usize, usize, usize)> {
    let m = <L::Dim as Dim>::BLOCK_CELLS;
    let per_parent = <L::Dim as Dim>::CHILDREN * m;
    let p = first_parent + idx / per_parent;
    if idx >= exchange_parents::<L>() * per_parent || p >= a.n as usize {
        return None;
    }
    let first = *a.comm.child.add(*a.comm.list.add(p) as usize);
    if first < 0 {
        return None;
    }
    let r = idx % per_parent;
    let (c, t) = (first as usize + r / m, r % m);
    interpolated_from::<L, F, S::Elem>(interp, c, t).map(|(q, k)| (c, t, q, k))
}

/// Averaging then ghost interpolation, one item per listed parent: the CPU counterpart
/// of [`average_interpolate_cooperative`] (and its registration in the PTX registry).
/// `CUBIC`: cubic interpolation.
pub struct AverageInterpolate<L, F, S, const CUBIC: bool>(PhantomData<(L, F, S)>);

impl<L: VelocitySet, F: Real, S: Storage<F>, const CUBIC: bool> Kernel for AverageInterpolate<L, F, S, CUBIC> {
    type Args = ExchangeArgs<F, S::Elem>;
    const WRITES_MESH: bool = false;

    fn max_items(l: &ExchangeArgs<F, S::Elem, Lens>) -> Option<usize> {
        Some(l.comm.list.min(l.n as usize))
    }

    #[inline(always)]
    unsafe fn run(i: usize, a: &ExchangeArgs<F, S::Elem>) {
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        let q = *a.comm.list.add(i) as usize;
        for j in 0..m {
            average_cell::<L, F, S, true>(&a.comm, q, j);
        }
        let first = *a.comm.child.add(q);
        if first < 0 {
            return;
        }
        let interp = interpolation(a);
        for k in 0..<L::Dim as Dim>::CHILDREN {
            for t in 0..m {
                interpolate_cell::<L, F, S, true, CUBIC>(&interp, first as usize + k, t);
            }
        }
    }
}

/// Averaging then ghost interpolation on a CUDA CTA of [`EXCHANGE_CTA`] threads holding
/// [`exchange_parents`] parents: thread `t` averages cell `t mod 4^D` of parent
/// `t / 4^D` (if there is one), the CTA synchronises, then the threads interpolate the
/// parents' children cell by cell (ghost cells only).
///
/// Every thread reaches the barrier (no early exit before it). Each reads the mesh of its
/// averaging and of its first interpolated cell first and then waits for the kernels
/// before ([`wait_for_prior_kernels`]).
///
/// # Safety
/// Launched with [`EXCHANGE_CTA`] threads per CTA and `⌈n / exchange_parents⌉` CTAs;
/// pointers as for [`AverageInterpolate`].
#[inline(always)]
pub unsafe fn average_interpolate_cooperative<C: Cta, L: VelocitySet, F: Real, S: Storage<F>, const CUBIC: bool>(
    cta: &C,
    a: &ExchangeArgs<F, S::Elem>,
) {
    let m = <L::Dim as Dim>::BLOCK_CELLS;
    let per_parent = <L::Dim as Dim>::CHILDREN * m;
    let parents = exchange_parents::<L>();
    let first_parent = cta.block() * parents;
    let th = cta.thread();
    let n = a.n as usize;
    let mut average = None;
    if th < parents * m && first_parent + th / m < n {
        let q = *a.comm.list.add(first_parent + th / m) as usize;
        average = averaged_from::<L, F, S::Elem>(&a.comm, q, th % m).map(|first| (q, first));
    }
    let interp = interpolation(a);
    // The mesh of the thread's first child cell (in 2D its only one) too: after the
    // barrier only the populations' loads are left on its path.
    let first_item = interpolated_item::<L, F, S>(a, &interp, first_parent, th);
    // The mesh is read: the populations are the kernels before's. Every thread waits, as
    // every thread reads them after the barrier.
    wait_for_prior_kernels();
    if let Some((q, first)) = average {
        average_from::<L, F, S, true>(&a.comm, q, th % m, first);
    }
    cta.sync();
    let (mut idx, mut item) = (th, first_item);
    while idx < parents * per_parent {
        if let Some((c, t, q, k)) = item {
            interpolate_from::<L, F, S, true, CUBIC>(&interp, c, t, q, k);
        }
        idx += EXCHANGE_CTA as usize;
        item = interpolated_item::<L, F, S>(a, &interp, first_parent, idx);
    }
}
