//! In-place streaming fused with collision: the AA pattern (paper, section "Streaming").
//!
//! The paper streams in a separate pass (its block-based esoteric twist), which reads and
//! writes every distribution twice per step. The AA pattern (Bailey et al. 2009) keeps the
//! paper's key property — one distribution array, no second copy — and fuses streaming
//! with collision so that each step reads and writes every value exactly once:
//!
//! - **even step** (after an even number of steps; natural layout): cell `x` reads `h_i`
//!   from its own slot `i`, collides, and writes `h*_i` to its own slot `ī`;
//! - **odd step** (swapped layout): cell `x` gathers `h_i` from slot `ī` of `x − c_i`,
//!   collides, and scatters `h*_i` to slot `i` of `x + c_i`, which restores the natural
//!   layout.
//!
//! Every memory location is read and written by the same cell within a step, so a step
//! is race-free in place.
//!
//! **Boundaries** are applied when a population is stored ("bounce at store"): a
//! post-collision `h*_i` whose link leaves the fluid (a domain face, a solid cell, or no
//! block on the level) is turned into the population `h_ī` that comes back and written to
//! the cell's own slot `ī`, the slot the cell reads `ī` from next step in either layout.
//! The collision's moments are at hand then, which the pressure condition needs. The
//! rules (paper, section "Lattice Boltzmann Method", from Krüger et al. 2017, §5.3):
//!
//! - **velocity** (no-slip and moving walls, inlets, far field) by half-way bounce-back
//!   with a known wall velocity, `f_ī = f*_i − 2 w_i ρ_w (c_i·u_w)/c_s²`, `ρ_w = 1`:
//!   second-order accurate for a wall half-way between cell centres;
//! - **pressure** (outlets) by anti-bounce-back with a known density,
//!   `f_ī = −f*_i + 2 w_i ρ_w (1 + (c_i·u_w)²/(2c_s⁴) − u_w·u_w/(2c_s²))`, with `u_w`
//!   the velocity of the boundary cell (the paper's estimate; the wall value would need an
//!   extrapolation). That estimate makes it first-order accurate in `u_w`; the paper
//!   refines the outlet to make the error negligible. (The paper prints `c_i·u_w` where
//!   Krüger et al. have `(c_i·u_w)²`; the square is the equilibrium's even part.)
//! - **solid cells** (obstacles) by resting half-way bounce-back, `f_ī = f*_i`.
//!
//! Populations are stored shifted, `h = f − w` (see [`crate::collide`]); with `w_ī = w_i`
//! the rules become `h_ī = h*_i − 6 w_i (c_i·u_w)` and
//! `h_ī = −h*_i + 2 w_i (ρ_w − 1) + 2 w_i ρ_w (9/2 (c_i·u)² − 3/2 u·u)`.

use crate::block::{self, boundary_faces, cell_coords, cell_index, link_face};
use crate::collide::{c_dot, usq_term};
use crate::collision::Collision;
use crate::eddy::{cell_params, EddyField};
use crate::lattice::{Dim, VelocitySet};
use crate::launch::wait_for_prior_kernels;
use crate::profile::{wall_velocity, ProfileTable};
use crate::real::Real;
use crate::storage::Storage;

mod step;
pub use step::{
    bulk_faster, layered_pairs, step_cell, Step, StreamArgs, StreamCollide, StreamCollideBulk, StreamCollideGradient,
    BULK_MIN_CELLS,
};

/// Face kind in [`StepParams::face_kind`]: half-way bounce-back with a known velocity.
pub const FACE_VELOCITY: u32 = 0;
/// Face kind in [`StepParams::face_kind`]: anti-bounce-back with a known density.
pub const FACE_PRESSURE: u32 = 1;

/// Per-block flag in `onb`: a neighbour link of the block is negative (domain boundary or
/// no block on the level), the paper's `cblock_ID_onb`.
pub const ONB_LINKS: u32 = 1;
/// Per-block flag in `onb`: the block or one of its neighbours has solid cells.
pub const ONB_SOLID: u32 = 2;

/// Link value of a neighbour cell that is solid (an obstacle): distinct from
/// [`block::N_SKIP`] and every [`block::boundary_link`].
pub const SOLID_LINK: i32 = i32::MIN;

/// Parameters shared by all cells of one launch.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepParams<F> {
    /// Relaxation rate `ω = Δt/τ` of the level (TRT: `ω⁺`, the viscosity's).
    pub omega: F,
    /// TRT's rate of the odd non-equilibrium part, `ω⁻` (unused by BGK; see
    /// [`crate::collision`]); MRT's rate of the odd ghost moments ([`crate::mrt`]).
    pub omega_minus: F,
    /// MRT's rate of the trace of the second-order moments, `ω_b` (the bulk viscosity's;
    /// unused by the other operators).
    pub omega_bulk: F,
    /// MRT's rate of the even ghost moments, `ω_e` (unused by the other operators).
    pub omega_even: F,
    /// Body force density of the level (lattice units of the level; zero: none), applied
    /// by Guo's scheme (see [`crate::collision`]).
    pub force: [F; 3],
    /// `C²` of the Smagorinsky model (0: no LES; see [`crate::les`]).
    pub smagorinsky: F,
    /// TRT's magic parameter `Λ` of the level, for its `τ⁻` under LES (0: unused).
    pub magic: F,
    /// The constant of the gradient LES model [`Self::les_model`] (WALE: `C_w²`; Vreman:
    /// `c`; see [`crate::eddy`]).
    pub eddy_constant: F,
    /// Wall velocity of each domain face, in the order of [`crate::block::face`].
    pub wall_u: [[F; 3]; 6],
    /// Wall density `ρ_w` of each face ([`FACE_PRESSURE`] faces).
    pub wall_rho: [F; 6],
    /// [`FACE_VELOCITY`] or [`FACE_PRESSURE`] per face.
    pub face_kind: [u32; 6],
    /// The LES model that needs velocity gradients ([`crate::eddy::LES_NONE`],
    /// [`crate::eddy::LES_WALE`], [`crate::eddy::LES_VREMAN`]); uniform over a launch.
    pub les_model: u32,
    /// Bit `k` set: face `k` ([`FACE_VELOCITY`]) takes its wall velocity per boundary link
    /// from the profile table ([`crate::profile`]) instead of `wall_u[k]`.
    pub profiled: u32,
}

// SAFETY: `#[repr(C)]`; `F` fields (34 of them) then 8 `u32`: 4-byte types pack, and for
// 8-byte `F` the `u32` block starts and ends on an 8-byte boundary, so there is no padding.
unsafe impl<F: Real> bytemuck::Zeroable for StepParams<F> {}
unsafe impl<F: Real> bytemuck::Pod for StepParams<F> {}

crate::memory::arg_bytes_by_field!(StepParams<F>: omega, omega_minus, omega_bulk, omega_even, force, smagorinsky, magic, eddy_constant, wall_u, wall_rho, face_kind, les_model, profiled);

/// Raw view of the distribution pool and the mesh arrays the step reads.
///
/// Pool layout: block `b` owns the contiguous range `[b Q 4^D, (b + 1) Q 4^D)`, direction
/// `i` of its cell `t` at `(b Q + i) 4^D + t` — a block's cells contiguous, structure of
/// arrays by direction within the block (see [`pool_index`]).
#[derive(Clone, Copy, Debug)]
pub struct Field<P> {
    /// Shifted distributions, as stored ([`Storage::Elem`]).
    pub f: *mut P,
    /// Neighbour links, `3^D` per block.
    pub nbr: *const i32,
    /// Per block: [`ONB_LINKS`] | [`ONB_SOLID`] flags. Lets every other block skip the
    /// boundary logic (uniform across a block: no divergence on the GPU).
    pub onb: *const u32,
    /// Per block: bit `t` set if cell `t` is solid. Read only for blocks flagged
    /// [`ONB_SOLID`] (may be null when none is).
    pub solid: *const u64,
}

/// Stores `x` at index `k` of the pool in its storage ([`Storage::narrow`], the index
/// seeding the rounding).
///
/// # Safety
/// `k` must be in bounds of the pool `f`.
#[inline(always)]
pub unsafe fn put<F: Real, S: Storage<F>>(f: *mut S::Elem, k: usize, x: F) {
    *f.add(k) = S::narrow(x, k);
}

/// Index of direction `i` of cell `t` of block `b` in the pool.
#[inline(always)]
pub const fn pool_index<L: VelocitySet>(b: usize, i: usize, t: usize) -> usize {
    let m = <L::Dim as Dim>::BLOCK_CELLS;
    (b * L::Q + i) * m + t
}

/// Whether cell `t` of block `b` is solid (`b` flagged [`ONB_SOLID`] or a neighbour of
/// one, so that `solid` is allocated).
#[inline(always)]
unsafe fn is_solid<P>(fld: &Field<P>, b: usize, t: usize) -> bool {
    (*fld.solid.add(b) >> t) & 1 != 0
}

/// The population `h_ī` that comes back to cell `t` of block `b` from a link that leaves
/// the fluid, given the post-collision `hs = h*_i` sent into it and the cell's velocity
/// `u` (see the module documentation for the rules). A profiled face
/// ([`StepParams::profiled`]) takes the link's wall velocity from `tab`.
///
/// # Safety
/// With a profiled face, `tab` must cover block `b` ([`wall_velocity`]).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn bounce<L: VelocitySet, F: Real>(
    p: &StepParams<F>,
    tab: &ProfileTable<F>,
    b: usize,
    t: usize,
    link: i32,
    i: usize,
    hs: F,
    u: [F; 3],
) -> F {
    let faces = boundary_faces(link);
    if faces == 0 {
        // A solid cell, or no block on the level: a resting wall.
        return hs;
    }
    let face = link_face(faces);
    // Constant indices: a run-time index into the parameter array would copy it to local
    // memory on the GPU for every thread.
    let mut uw = [F::ZERO; 3];
    let mut rho = F::ONE;
    let mut kind = FACE_VELOCITY;
    for k in 0..6 {
        if k == face {
            uw = p.wall_u[k];
            rho = p.wall_rho[k];
            kind = p.face_kind[k];
        }
    }
    let w = F::from_f64(L::W[i]);
    if kind == FACE_PRESSURE {
        let cu = c_dot(L::C[i], u);
        let two_w = w + w;
        -hs + two_w * (rho - F::ONE) + two_w * rho * (F::from_f64(4.5) * cu * cu - usq_term(u))
    } else {
        if (p.profiled >> face) & 1 != 0 {
            uw = wall_velocity(tab, b, face / 2, cell_coords(t), L::C[i], uw);
        }
        hs - F::from_f64(6.0) * w * c_dot(L::C[i], uw)
    }
}

/// Local index of the neighbour of local cell `x` at offset `d`, wrapped into its block.
#[inline(always)]
pub(crate) fn wrapped(x: [i32; 3], d: [i32; 3]) -> usize {
    cell_index([(x[0] + d[0]) & 3, (x[1] + d[1]) & 3, (x[2] + d[2]) & 3])
}

/// For every direction `i`, the link crossed by the offset `−c_i` from cell `x` of block
/// `b` (the block itself when it stays inside), or [`SOLID_LINK`] when `solid` and the
/// neighbour cell there is solid. In the odd step, direction `i` is read through
/// `links[i]`, and direction `ī` is written through the same link to the same location:
/// each location is read and written by one cell.
///
/// # Safety
/// `fld.nbr` must hold the links of block `b`; with `solid`, `fld.solid` the masks of its
/// neighbours.
#[inline(always)]
pub unsafe fn odd_links<L: VelocitySet, P>(fld: &Field<P>, b: usize, x: [i32; 3], solid: bool) -> L::Pop<i32> {
    let mut links = L::Pop::<i32>::default();
    L::unroll(
        #[inline(always)]
        |i| {
            let c = L::C[i];
            let (link, local) =
                block::resolve(fld.nbr, b, x, [-c[0], -c[1], -c[2]], <L::Dim as Dim>::D, <L::Dim as Dim>::NEIGHBORS);
            links[i] =
                if solid && i != 0 && link >= 0 && is_solid(fld, link as usize, local) { SOLID_LINK } else { link };
        },
    );
    links
}

/// Pre-collision populations of cell `t` of block `b`, for a state reached after an even
/// (`ODD = false`) or odd (`ODD = true`, `links` from [`odd_links`]) number of steps.
/// `WALLS = false` assumes no link of `b` leaves the fluid, which keeps the addressing
/// free of branches; [`stream_collide`] and [`load_cell`] pick it from `onb`.
///
/// # Safety
/// `fld` must describe live allocations that hold block `b` and all its linked blocks.
#[inline(always)]
pub unsafe fn load<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool, const WALLS: bool>(
    fld: &Field<S::Elem>,
    b: usize,
    t: usize,
    links: &L::Pop<i32>,
) -> L::Pop<F> {
    let x = cell_coords(t);
    let mut h = L::Pop::<F>::default();
    L::unroll(
        #[inline(always)]
        |i| {
            let link = links[i];
            h[i] = if ODD && i != 0 && (!WALLS || link >= 0) {
                // Slot ī of x − c_i.
                let c = L::C[i];
                S::widen(*fld.f.add(pool_index::<L>(link as usize, L::opposite(i), wrapped(x, [-c[0], -c[1], -c[2]]))))
            } else {
                // Own slot i: the natural layout, or what bounced back from a boundary.
                S::widen(*fld.f.add(pool_index::<L>(b, i, t)))
            };
        },
    );
    h
}

/// Writes post-collision populations `h` of cell `t` of block `b`, whose pre-collision
/// velocity was `u` (see [`load`]); links that leave the fluid bounce back.
///
/// # Safety
/// As for [`load`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn store<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool, const WALLS: bool>(
    fld: &Field<S::Elem>,
    p: &StepParams<F>,
    tab: &ProfileTable<F>,
    b: usize,
    t: usize,
    links: &L::Pop<i32>,
    h: &L::Pop<F>,
    u: [F; 3],
) {
    let x = cell_coords(t);
    L::unroll(
        #[inline(always)]
        |i| {
            let ib = L::opposite(i);
            // x + c_i = x − c_ī: the link was resolved for direction ī.
            let link = links[ib];
            if i != 0 && WALLS && link < 0 {
                put::<F, S>(fld.f, pool_index::<L>(b, ib, t), bounce::<L, F>(p, tab, b, t, link, i, h[i], u));
            } else if ODD && i != 0 {
                // Slot i of x + c_i.
                put::<F, S>(fld.f, pool_index::<L>(link as usize, i, wrapped(x, L::C[i])), h[i]);
            } else {
                put::<F, S>(fld.f, pool_index::<L>(b, ib, t), h[i]);
            }
        },
    );
}

/// Collides and stores one cell whose pre-collision populations `h` are loaded, with the
/// boundary logic on or off. With `GRAD` (a gradient LES model,
/// [`StepParams::les_model`]) the cell relaxes with its own rates
/// ([`crate::eddy::cell_params`]) and records its eddy viscosity.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn collide_store<
    L: VelocitySet,
    F: Real,
    S: Storage<F>,
    C: Collision,
    const ODD: bool,
    const WALLS: bool,
    const GRAD: bool,
>(
    fld: &Field<S::Elem>,
    p: &StepParams<F>,
    les: &EddyField<F>,
    tab: &ProfileTable<F>,
    b: usize,
    t: usize,
    links: &L::Pop<i32>,
    mut h: L::Pop<F>,
) {
    // A compile-time choice: the gradient model's registers would otherwise lower the
    // occupancy of every step (−3.5 % on uniform D3Q19 f32 as a run-time branch).
    let (_, u) = if GRAD {
        let q = cell_params::<L, F, S::Elem>(p, fld, les, b, t);
        C::collide::<L, F>(&mut h, &q)
    } else {
        C::collide::<L, F>(&mut h, p)
    };
    store::<L, F, S, ODD, WALLS>(fld, p, tab, b, t, links, &h, u);
}

/// One fused collide-and-stream step of cell `t` in block `b`. Solid cells are skipped:
/// no link leads into them, so their slots are never read. With `GRAD` the cells relax
/// with the gradient LES model of `p` ([`crate::eddy`]).
///
/// With `EARLY` the mesh (the odd step's links, the block's flags) is read before the
/// wait for the kernel before ([`wait_for_prior_kernels`]), so that with programmatic
/// dependent launch those loads overlap that kernel's end and the populations wait for no
/// mesh load after it; without, the caller has waited already, and the even step's own
/// slots are loaded first. Either way they are loaded before the flags arrive (they are
/// read by this cell alone, and written only by it, whatever the flags: solid or not).
/// The odd step's populations wait for the flags: a solid cell must not read its
/// neighbours' slots, which they write when they bounce back from it.
///
/// With `BULK` only blocks without boundary flags are stepped and the others are left
/// alone (another launch steps them, see [`bulk_faster`]): the boundary logic is then not
/// compiled in, and with it go the registers it holds.
///
/// # Safety
/// As for [`load`]; the step must cover all cells of the level before the next starts.
/// With `GRAD`, `les` must hold the current velocities of the level's cells
/// ([`crate::eddy::CellVelocity`]), room for their eddy viscosities and the cell masks.
#[inline(always)]
pub unsafe fn stream_collide<
    L: VelocitySet,
    F: Real,
    S: Storage<F>,
    C: Collision,
    const ODD: bool,
    const GRAD: bool,
    const EARLY: bool,
    const BULK: bool,
>(
    fld: &Field<S::Elem>,
    p: &StepParams<F>,
    les: &EddyField<F>,
    tab: &ProfileTable<F>,
    b: usize,
    t: usize,
) {
    let x = cell_coords(t);
    let none = L::Pop::<i32>::default();
    // The even step's own slots: first when the caller has waited (`!EARLY`), else after
    // the wait below.
    let own_first = if EARLY { L::Pop::<F>::default() } else { own_slots::<L, F, S, ODD>(fld, b, t) };
    let fluid_links = if ODD { odd_links::<L, _>(fld, b, x, false) } else { none };
    // Uniform across the cells of a block: no divergence on the GPU.
    let flags = *fld.onb.add(b);
    if EARLY {
        // The mesh is read: the populations are the kernel before's.
        wait_for_prior_kernels();
    }
    let own = if EARLY { own_slots::<L, F, S, ODD>(fld, b, t) } else { own_first };
    stream_collide_with::<L, F, S, C, ODD, GRAD, BULK>(fld, p, les, tab, b, t, own, fluid_links, flags)
}

/// The even step's pre-collision populations of cell `t` of block `b` (its own slots);
/// nothing for the odd step, which gathers them in [`stream_collide_with`].
///
/// # Safety
/// As for [`load`].
#[inline(always)]
unsafe fn own_slots<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool>(
    fld: &Field<S::Elem>,
    b: usize,
    t: usize,
) -> L::Pop<F> {
    if ODD {
        L::Pop::<F>::default()
    } else {
        load::<L, F, S, false, false>(fld, b, t, &L::Pop::<i32>::default())
    }
}

/// [`stream_collide`] past its first loads: the even step's own slots `own`, the odd
/// step's links `fluid_links` (as for a block without solid cells) and the block's
/// `flags`; with `BULK` a block with flags is skipped.
///
/// # Safety
/// As for [`stream_collide`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn stream_collide_with<
    L: VelocitySet,
    F: Real,
    S: Storage<F>,
    C: Collision,
    const ODD: bool,
    const GRAD: bool,
    const BULK: bool,
>(
    fld: &Field<S::Elem>,
    p: &StepParams<F>,
    les: &EddyField<F>,
    tab: &ProfileTable<F>,
    b: usize,
    t: usize,
    own: L::Pop<F>,
    fluid_links: L::Pop<i32>,
    flags: u32,
) {
    let x = cell_coords(t);
    if flags == 0 {
        let h = if ODD { load::<L, F, S, true, false>(fld, b, t, &fluid_links) } else { own };
        return collide_store::<L, F, S, C, ODD, false, GRAD>(fld, p, les, tab, b, t, &fluid_links, h);
    }
    if BULK {
        return;
    }
    let solid = flags & ONB_SOLID != 0;
    if solid && is_solid(fld, b, t) {
        return;
    }
    let links = if ODD && !solid { fluid_links } else { odd_links::<L, _>(fld, b, x, solid) };
    let h = if ODD { load::<L, F, S, true, true>(fld, b, t, &links) } else { own };
    collide_store::<L, F, S, C, ODD, true, GRAD>(fld, p, les, tab, b, t, &links, h);
}

/// Pre-collision populations of cell `t` of block `b` after an even (`ODD = false`) or
/// odd number of steps, picking the boundary handling from `onb`; zero (the rest state)
/// for a solid cell. As in [`stream_collide`], the even layout's own slots and the odd
/// layout's links are loaded before the flags.
///
/// # Safety
/// As for [`load`].
#[inline(always)]
pub unsafe fn load_cell<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool>(
    fld: &Field<S::Elem>,
    b: usize,
    t: usize,
) -> L::Pop<F> {
    let x = cell_coords(t);
    let none = L::Pop::<i32>::default();
    let own = if ODD { L::Pop::<F>::default() } else { load::<L, F, S, false, false>(fld, b, t, &none) };
    let fluid_links = if ODD { odd_links::<L, _>(fld, b, x, false) } else { none };
    let flags = *fld.onb.add(b);
    let solid = flags & ONB_SOLID != 0;
    if solid && is_solid(fld, b, t) {
        return L::Pop::<F>::default();
    }
    if !ODD {
        return own;
    }
    if flags == 0 {
        return load::<L, F, S, true, false>(fld, b, t, &fluid_links);
    }
    let links = if solid { odd_links::<L, _>(fld, b, x, true) } else { fluid_links };
    load::<L, F, S, true, true>(fld, b, t, &links)
}

/// Writes `h` as the pre-collision populations of cell `t` of block `b` in the layout of
/// a state reached after an even (`ODD = false`) or odd number of steps: the inverse of
/// [`load_cell`], so that `load_cell` returns `h` afterwards. Grid communication needs it
/// to overwrite cells of a level that is between steps (paper, section "Grid
/// Communication": averaging into coarse cells). Solid cells are left alone: their slots
/// belong to no one.
///
/// Every location written is one that `load_cell` of this cell reads, so concurrent
/// calls for distinct cells do not race.
///
/// # Safety
/// As for [`load`].
#[inline(always)]
pub unsafe fn store_cell<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool>(
    fld: &Field<S::Elem>,
    b: usize,
    t: usize,
    h: &L::Pop<F>,
) {
    let flags = *fld.onb.add(b);
    let solid = flags & ONB_SOLID != 0;
    if solid && is_solid(fld, b, t) {
        return;
    }
    let x = cell_coords(t);
    let links = if ODD { odd_links::<L, _>(fld, b, x, solid) } else { L::Pop::<i32>::default() };
    L::unroll(
        #[inline(always)]
        |i| {
            let link = links[i];
            if ODD && i != 0 && link >= 0 {
                let c = L::C[i];
                put::<F, S>(
                    fld.f,
                    pool_index::<L>(link as usize, L::opposite(i), wrapped(x, [-c[0], -c[1], -c[2]])),
                    h[i],
                );
            } else {
                put::<F, S>(fld.f, pool_index::<L>(b, i, t), h[i]);
            }
        },
    );
}
