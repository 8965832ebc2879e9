//! Fine → coarse grid communication: averaging (paper, section "Grid Communication",
//! subsection "Averaging").
//!
//! Coarse cell `j` (local coordinates `j_a ∈ 0..4`) of a parent block is covered by child
//! `k` with position `cp_a = j_a / 2` (`k = cp_x + 2 cp_y + 4 cp_z`, the paper's
//! `octant_l`), and within that child by the `2^D` fine cells with coordinates
//! `2 (j_a mod 2) + e_a`, `e ∈ {0,1}^D` (the paper's `ID_{l,c}` plus the offsets `e`).
//! The coarse value has their mean density and momentum, and their mean non-equilibrium
//! part rescaled with `2τ_C/τ_F` (the paper's "f^C ≈ f^{F,eq} + (f^F − f^{F,eq}) τ^C/τ^F"
//! in per-level lattice units), on the equilibrium of the mean momentum ([`average`]):
//! mass and momentum are conserved as with the paper's mean of populations.
//!
//! For the linear scheme averaging is an exact left inverse of interpolation: the fine
//! cells of coarse cell `j` lie at `±1/4` around its centre, all inside the same unit
//! cell, and the mean of a multilinear function over points placed symmetrically about a
//! node is its value there — for density, momentum and the non-equilibrium part alike.

use crate::memory::Lens;
use core::marker::PhantomData;

use crate::amr::{child_position, coarsening_candidate, CELL_GHOST, CELL_INTERFACE};

/// [`AverageToParents`] mode: every coarse cell (e.g. before children are removed by
/// coarsening, or to present the finer solution on the coarse level).
pub const AVERAGE_ALL: u32 = 0;
/// [`AverageToParents`] mode: every coarse cell not under a ghost cell. Used with cubic
/// interpolation, which reads all `4^D` cells of a parent: the cells under interior fine
/// cells then carry the fine solution rather than the coarse level's own.
pub const AVERAGE_NOT_GHOST: u32 = 1;
/// [`AverageToParents`] mode: the parents of interface cells only (paper, "Averaging"):
/// enough for linear interpolation, whose samples all lie under ghost or interface cells
/// (every cell of a block with ghosts is a ghost or interface cell, the two layers being
/// four cells deep).
pub const AVERAGE_INTERFACE: u32 = 2;
/// [`AverageToParents`] mode: as [`AVERAGE_NOT_GHOST`], for the candidates for coarsening
/// only ([`crate::amr::coarsening_candidate`]: the blocks the mesh routine may coarsen,
/// which become leaves carrying their children's solution). The other blocks of the list
/// are skipped, so that a launch over a whole ID set needs no list of candidates.
pub const AVERAGE_COARSENING: u32 = 3;
use crate::block::{cell_coords, cell_index};
use crate::interpolate::{
    add_scaled, cell_eddy, join, scale_neq, set_cell_eddy, shift_momentum, split, CommArgs, Split,
};
use crate::lattice::{Dim, VelocitySet};
use crate::launch::{wait_for_prior_kernels, Kernel};
use crate::les::{les_factors, LesTransfer};
use crate::mrt::{les_group_factors, scale_neq_mrt, MrtTransfer, Rates};
use crate::real::Real;
use crate::storage::Storage;
use crate::stream::{load_cell, store_cell, Field};

/// The child `k` covering coarse cell `j` of a parent, and the local index of the
/// lowest-corner fine cell of the `2^D` covering it (the others are `+1`, `+4`, `+16`).
#[inline(always)]
pub const fn covering_child(j: usize) -> (usize, usize) {
    let c = cell_coords(j);
    let k = (c[0] >> 1) | ((c[1] >> 1) << 1) | ((c[2] >> 1) << 2);
    let t0 = cell_index([2 * (c[0] & 1), 2 * (c[1] & 1), 2 * (c[2] & 1)]);
    (k as usize, t0)
}

/// Local index of fine cell `e` (`e = child_position`-style corner offset index) of the
/// group starting at `t0`.
#[inline(always)]
fn group_cell(t0: usize, n: usize) -> usize {
    let e = child_position(n);
    t0 + cell_index(e)
}

/// The coarse population of cell `j` from the `2^D` fine cells covering it: the mean of
/// their densities, momenta and non-equilibrium parts, the latter rescaled by `factor`
/// (`2τ_C/τ_F`; `factor_odd` for the odd part, see [`scale_neq`]), the momentum shifted by
/// `shift` ([`shift_momentum`]); under LES the factors come from the mean
/// non-equilibrium part's stress or the mean eddy viscosity ([`les_factors`]); for MRT (`mrt.bulk ≠ 0`) group by
/// group ([`scale_neq_mrt`]: `factor` on the shear moments, `factor_odd` on the odd
/// ghosts, `mrt`'s on the bulk and even ghosts); joined as `h^eq(ρ̄, j̄/ρ̄) + neq` ([`crate::interpolate::join`]).
/// `fine(k, t)` returns the population of fine cell `t` of child `k`. Mass and momentum
/// are the fine cells' mean, as with the paper's mean of populations; the equilibrium is
/// rebuilt from the mean momentum instead of averaged, consistently with
/// [`crate::interpolate::interpolate_split`].
#[inline(always)]
pub fn average<L: VelocitySet, F: Real, G: FnMut(usize, usize) -> L::Pop<F>>(
    j: usize,
    factor: F,
    factor_odd: F,
    shift: [F; 3],
    les: &LesTransfer<F>,
    mrt: &MrtTransfer<F>,
    mut fine: G,
) -> L::Pop<F> {
    average_eddy::<L, F, _>(j, factor, factor_odd, shift, les, mrt, |k, t| (fine(k, t), F::ZERO)).0
}

/// [`average`] under any LES model: `fine(k, t)` also returns the fine cell's eddy
/// viscosity, and the result the coarse cell's. Under a gradient model (`les.eddy > 0`,
/// [`crate::eddy`]) the factors come from the fine cells' mean eddy viscosity
/// ([`les_factors`] with it), and the coarse cell's is that mean times `k = 2`;
/// otherwise the eddy viscosity returned is 0.
#[inline(always)]
pub fn average_eddy<L: VelocitySet, F: Real, G: FnMut(usize, usize) -> (L::Pop<F>, F)>(
    j: usize,
    factor: F,
    factor_odd: F,
    shift: [F; 3],
    les: &LesTransfer<F>,
    mrt: &MrtTransfer<F>,
    mut fine: G,
) -> (L::Pop<F>, F) {
    let nc = <L::Dim as Dim>::CHILDREN;
    let (k, t0) = covering_child(j);
    let mut acc = Split::<L::Pop<F>, F>::default();
    for n in 0..nc {
        let (h, nu) = fine(k, group_cell(t0, n));
        let mut s = split::<L, F>(&h, F::ONE, F::ONE);
        s.nu = nu;
        add_scaled::<L, F>(&mut acc, F::ONE, &s);
    }
    let inv = F::ONE / F::from_f64(nc as f64);
    acc.rho *= inv;
    for a in 0..3 {
        acc.j[a] *= inv;
    }
    let is_mrt = mrt.bulk != F::ZERO;
    let groups = |shear: F, scale: F| Rates {
        shear: scale * shear,
        bulk: scale * mrt.bulk,
        odd: scale * factor_odd,
        even: scale * mrt.even,
    };
    let mut nu = F::ZERO;
    if les.active() {
        // LES: the factors of the mean non-equilibrium part's own stress (Smagorinsky)
        // or of the fine cells' mean eddy viscosity (gradient models).
        scale_neq::<L, F>(&mut acc.neq, inv, inv);
        let mean = acc.nu * inv;
        if is_mrt {
            let (shear, odd) = les_group_factors::<L, F>(&acc.neq, acc.rho, mean, les, mrt);
            let mut r = groups(shear, F::ONE);
            r.odd = odd;
            scale_neq_mrt::<L, F>(&mut acc.neq, r);
        } else {
            let (even, odd) = les_factors::<L, F>(&acc.neq, acc.rho, mean, les);
            scale_neq::<L, F>(&mut acc.neq, even, odd);
        }
        if les.eddy > F::ZERO {
            nu = les.ratio * mean;
        }
    } else if is_mrt {
        scale_neq_mrt::<L, F>(&mut acc.neq, groups(factor, inv));
    } else {
        scale_neq::<L, F>(&mut acc.neq, inv * factor, inv * factor_odd);
    }
    shift_momentum(&mut acc, shift);
    (join::<L, F>(&acc), nu)
}

/// Fine → coarse averaging over the cells of a list of parent blocks: item `i` is coarse
/// cell `j = i mod 4^D` of parent `q = list[i / 4^D]`. Reads the `2^D` fine cells of
/// child `child[q] + k` covering `j` (natural layout), averages and rescales them by
/// `factor` (= `2τ_C/τ_F`), and writes the coarse cell in AA layout `ODD`.
///
/// `masked` selects the coarse cells written ([`AVERAGE_ALL`], [`AVERAGE_NOT_GHOST`],
/// [`AVERAGE_INTERFACE`]). Coarse cells covered by [`CELL_GHOST`] cells are never
/// written in the per-step exchange: ghosts hold interpolated data spoiled by the two
/// fine steps, and the coarse cells under them evolve on the coarse level and feed the
/// coarse leaves next door. The masks are uniform over a group of `2^D` fine cells (ghost
/// and interface layers come in pairs aligned with the coarse cells), so checking the
/// group is exact.
pub struct AverageToParents<L, F, S, const ODD: bool>(PhantomData<(L, F, S)>);

impl<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool> Kernel for AverageToParents<L, F, S, ODD> {
    type Args = CommArgs<F, S::Elem>;
    const WRITES_MESH: bool = false;

    fn max_items(l: &CommArgs<F, S::Elem, Lens>) -> Option<usize> {
        Some(l.list * <L::Dim as Dim>::BLOCK_CELLS)
    }
    const THREADS: u32 = 128;

    #[inline(always)]
    unsafe fn run(i: usize, a: &CommArgs<F, S::Elem>) {
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        let (q, j) = (*a.list.add(i / m) as usize, i & (m - 1));
        let first = averaged_from::<L, F, S::Elem>(a, q, j);
        // The mesh is read: the children's populations are the kernels before's. Every
        // thread waits, one with nothing to write too (see `wait_for_prior_kernels`).
        wait_for_prior_kernels();
        if let Some(first) = first {
            // Statuses and marks after the wait: the criterion just before wrote the marks.
            if a.masked != AVERAGE_COARSENING
                || coarsening_candidate(a.status, a.child, a.mark, q, <L::Dim as Dim>::CHILDREN)
            {
                average_from::<L, F, S, ODD>(a, q, j, first);
            }
        }
    }
}

/// Coarse cell `j` of parent `q` averaged from its children as [`AverageToParents`] does
/// (its item `i` is `average_cell(a, list[i / 4^D], i mod 4^D)`; also
/// [`crate::exchange`]).
///
/// # Safety
/// `q` a block of the pool of `a`, the pointers of `a` valid for it and its children.
#[inline(always)]
pub unsafe fn average_cell<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool>(
    a: &CommArgs<F, S::Elem>,
    q: usize,
    j: usize,
) {
    if let Some(first) = averaged_from::<L, F, S::Elem>(a, q, j) {
        average_from::<L, F, S, ODD>(a, q, j, first);
    }
}

/// The mesh's part of [`average_cell`]: the first child of `q` if coarse cell `j` is
/// written (`q` has children and the mode `a.masked` admits the cell by its children's
/// masks), `None` otherwise. Reads only the mesh (child links, cell masks), so a kernel
/// may call it before [`wait_for_prior_kernels`].
///
/// # Safety
/// As for [`average_cell`].
#[inline(always)]
pub unsafe fn averaged_from<L: VelocitySet, F: Real, P>(a: &CommArgs<F, P>, q: usize, j: usize) -> Option<usize> {
    let m = <L::Dim as Dim>::BLOCK_CELLS;
    // Lists may hold whole ID sets: blocks without children have nothing to average.
    let first = *a.child.add(q);
    if first < 0 {
        return None;
    }
    let first = first as usize;
    if a.masked != AVERAGE_ALL {
        let (k, t0) = covering_child(j);
        let mut ghost = false;
        let mut interface = false;
        for n in 0..<L::Dim as Dim>::CHILDREN {
            let v = *a.cell_mask.add((first + k) * m + group_cell(t0, n));
            ghost |= v == CELL_GHOST;
            interface |= v == CELL_INTERFACE;
        }
        if ghost || (a.masked == AVERAGE_INTERFACE && !interface) {
            return None;
        }
    }
    Some(first)
}

/// The data's part of [`average_cell`]: coarse cell `j` of `q` averaged from the children
/// from `first` on ([`averaged_from`]).
///
/// # Safety
/// As for [`average_cell`], with `first` from [`averaged_from`].
#[inline(always)]
pub unsafe fn average_from<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool>(
    a: &CommArgs<F, S::Elem>,
    q: usize,
    j: usize,
    first: usize,
) {
    let fld = Field { f: a.f, nbr: a.nbr, onb: a.onb, solid: a.solid };
    let (h, nu) = average_eddy::<L, F, _>(j, a.factor, a.factor_odd, a.shift, &a.les, &a.mrt, |k, t| {
        (load_cell::<L, F, S, false>(&fld, first + k, t), cell_eddy::<L, F, _>(a, first + k, t))
    });
    store_cell::<L, F, S, ODD>(&fld, q, j, &h);
    set_cell_eddy::<L, F, _>(a, q, j, nu);
}
