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

use crate::memory::Lens;
use core::marker::PhantomData;

use crate::block::{self, boundary_faces, cell_coords, cell_index, link_face};
use crate::collide::{c_dot, usq_term};
use crate::collision::Collision;
use crate::eddy::{cell_params, EddyField};
use crate::kernel_args;
use crate::lattice::{Dim, VelocitySet};
use crate::launch::Kernel;
use crate::profile::{wall_velocity, ProfileTable};
use crate::real::Real;
use crate::storage::Storage;

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
/// Loads are issued before the block's flags arrive, so that the populations wait for
/// one dependent load instead of two: the even step's own slots (read by this cell
/// alone, and written only by it, whatever the flags: solid or not), the odd step's links
/// (read-only). The odd step's populations wait for the flags: a solid cell must not read
/// its neighbours' slots, which they write when they bounce back from it.
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
    let own = if ODD { L::Pop::<F>::default() } else { load::<L, F, S, false, false>(fld, b, t, &none) };
    let fluid_links = if ODD { odd_links::<L, _>(fld, b, x, false) } else { none };
    // Uniform across the cells of a block: no divergence on the GPU.
    let flags = *fld.onb.add(b);
    if flags == 0 {
        let h = if ODD { load::<L, F, S, true, false>(fld, b, t, &fluid_links) } else { own };
        return collide_store::<L, F, S, C, ODD, false, GRAD>(fld, p, les, tab, b, t, &fluid_links, h);
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

kernel_args! {
    /// Arguments of [`StreamCollide`].
    pub struct StreamArgs<F, P> {
        /// Distribution pool ([`Storage::Elem`]).
        pub f: mut P,
        /// Neighbour links.
        pub nbr: ref i32,
        /// Per-block boundary flags ([`ONB_LINKS`], [`ONB_SOLID`]).
        pub onb: ref u32,
        /// Per-block solid-cell masks (see [`Field::solid`]).
        pub solid: ref u64,
        /// Blocks to advance (an ID set); which item takes which cell: [`step_cell`].
        pub ids: ref u32,
        /// Relaxation rate and face conditions.
        pub params: val StepParams<F>,
        /// Cell velocities of the level, pool-indexed, under a gradient LES model
        /// ([`crate::eddy::EddyField::vel`]; unread otherwise, may be empty).
        pub vel: ref F,
        /// Per-cell eddy viscosities, written under a gradient LES model
        /// ([`crate::eddy::EddyField::eddy`]; may be empty otherwise).
        pub eddy: mut F,
        /// The mesh's per-cell masks, read under a gradient LES model
        /// ([`crate::eddy::EddyField::cell_mask`]).
        pub cell_mask: ref u8,
        /// Per block, its row of `profile_u` ([`crate::profile::ProfileTable::slot`]; read
        /// only for profiled faces, may be empty otherwise).
        pub profile_slot: ref u32,
        /// Wall velocities of the profiled faces ([`crate::profile::ProfileTable::u`]).
        pub profile_u: ref F,
        /// Blocks in `ids` (the step's items are their `blocks · 4^D` cells; see
        /// [`step_cell`]).
        pub blocks: val u32,
    }
}

/// Which cell item `i` of a step over `blocks` blocks takes: the index in the ID set of
/// its block, and the cell in that block.
///
/// Items `4^D k` to `4^D (k + 1) − 1` are the cells of block `k` in order, so a warp (32
/// items) holds two consecutive blocks whole in 2D, one block's two cell layers in 3D.
/// With `layered` (3D only; [`layered_pairs`]) every 128 items hold two consecutive
/// blocks instead, and warp `w` of them the cell layer `z = w` of both (lanes 0–15 the
/// first block's, 16–31 the second's): where the two are neighbours along `x` (the rows
/// of a uniform grid), the odd step's gathers across their shared face fall into sectors
/// that the same warp's own cells read. The last block of an odd count takes its own 64
/// items. Either way a bijection of `0..blocks · 4^D` onto the cells, so the results do
/// not depend on it.
#[inline(always)]
pub fn step_cell<D: Dim>(i: usize, blocks: usize, layered: bool) -> (usize, usize) {
    let m = D::BLOCK_CELLS;
    let pair = i / (2 * m);
    if !layered || D::D == 2 || 2 * pair + 1 >= blocks {
        return (i / m, i & (m - 1)); // m is a power of two: a shift and a mask
    }
    let j = i & (2 * m - 1);
    let (layer, lane) = (j >> 5, j & 31);
    (2 * pair + (lane >> 4), (layer << 4) | (lane & 15))
}

/// The most items of a step ([`Kernel::max_items`]): the cells of its `blocks` blocks,
/// and none at all if `blocks` claims more than `ids` holds, as [`step_cell`] would then
/// read past the ID set.
fn step_items<D: Dim>(l: &StreamArgs<impl Copy, impl Copy, Lens>) -> Option<usize> {
    let blocks = l.blocks as usize;
    Some(if blocks <= l.ids { blocks * D::BLOCK_CELLS } else { 0 })
}

/// Whether the step of lattice `L` with storage `S` gives each warp one cell layer of two
/// blocks ([`step_cell`]): where that measured faster on the uniform 256³ grid (H200,
/// BENCHMARKS.md, twenty-eighth session). D3Q27 with every storage (f32 +3.9 %, f64
/// +1.8 %, f16 +1.6 %: its odd step moves about a fifth fewer sectors per warp) and
/// D3Q19 with f64 (+0.7 %); not D3Q19 f32 (+0.3 %, within the spread) nor D3Q19 with
/// 16-bit storage (−12 %).
#[inline(always)]
pub fn layered_pairs<L: VelocitySet, F: Real, S: Storage<F>>() -> bool {
    <L::Dim as Dim>::D == 3 && (L::Q == 27 || S::BYTES == 8)
}

impl<F: Real, P> StreamArgs<F, P> {
    /// The pool and mesh arrays, the gradient LES fields and the profile table these
    /// arguments point to (what [`stream_collide`] takes).
    #[inline(always)]
    pub fn views(&self) -> (Field<P>, EddyField<F>, ProfileTable<F>) {
        (
            Field { f: self.f, nbr: self.nbr, onb: self.onb, solid: self.solid },
            EddyField { vel: self.vel, eddy: self.eddy, cell_mask: self.cell_mask },
            ProfileTable { slot: self.profile_slot, u: self.profile_u },
        )
    }
}

/// One fused collide-and-stream step over the cells of the blocks in an ID set with the
/// collision operator `C`: even (`ODD = false`) or odd AA step.
pub struct StreamCollide<L, F, S, C, const ODD: bool>(PhantomData<(L, F, S, C)>);

impl<L: VelocitySet, F: Real, S: Storage<F>, C: Collision, const ODD: bool> Kernel for StreamCollide<L, F, S, C, ODD> {
    type Args = StreamArgs<F, S::Elem>;

    fn max_items(l: &StreamArgs<F, S::Elem, Lens>) -> Option<usize> {
        step_items::<L::Dim>(l)
    }
    /// 2 cell-blocks in 3D, 8 in 2D: measured best on the H100 (BENCHMARKS.md).
    const THREADS: u32 = 128;

    #[inline(always)]
    unsafe fn run(i: usize, a: &StreamArgs<F, S::Elem>) {
        let (k, t) = step_cell::<L::Dim>(i, a.blocks as usize, layered_pairs::<L, F, S>());
        let b = *a.ids.add(k) as usize;
        let (fld, les, tab) = a.views();
        stream_collide::<L, F, S, C, ODD, false>(&fld, &a.params, &les, &tab, b, t);
    }
}

/// [`StreamCollide`] under a gradient LES model (WALE, Vreman: [`crate::eddy`]), a kernel
/// of its own so that the plain step keeps its registers. The host launches it after
/// [`crate::eddy::CellVelocity`] has written the level's velocities.
pub struct StreamCollideGradient<L, F, S, C, const ODD: bool>(PhantomData<(L, F, S, C)>);

impl<L: VelocitySet, F: Real, S: Storage<F>, C: Collision, const ODD: bool> Kernel
    for StreamCollideGradient<L, F, S, C, ODD>
{
    type Args = StreamArgs<F, S::Elem>;

    fn max_items(l: &StreamArgs<F, S::Elem, Lens>) -> Option<usize> {
        step_items::<L::Dim>(l)
    }
    const THREADS: u32 = 128;

    #[inline(always)]
    unsafe fn run(i: usize, a: &StreamArgs<F, S::Elem>) {
        let (k, t) = step_cell::<L::Dim>(i, a.blocks as usize, layered_pairs::<L, F, S>());
        let b = *a.ids.add(k) as usize;
        let (fld, les, tab) = a.views();
        stream_collide::<L, F, S, C, ODD, true>(&fld, &a.params, &les, &tab, b, t);
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lattice::{D2, D3};

    /// Every cell of every block is taken by exactly one item, whatever the number of
    /// blocks; in 3D each warp of a full pair holds one layer of both blocks.
    #[test]
    fn step_items_cover_every_cell_once() {
        fn check<D: Dim>() {
            let m = D::BLOCK_CELLS;
            for (blocks, layered) in (0..=7).flat_map(|b| [(b, false), (b, true)]) {
                let mut seen = [[false; 64]; 7];
                for i in 0..blocks * m {
                    let (k, t) = step_cell::<D>(i, blocks, layered);
                    assert!(k < blocks && t < m, "{} item {i} of {blocks}: ({k}, {t})", D::D);
                    assert!(!seen[k][t], "{} item {i} of {blocks}: ({k}, {t}) twice", D::D);
                    seen[k][t] = true;
                }
            }
        }
        check::<D2>();
        check::<D3>();
        // 3D, two full pairs: warp 5 is the second pair's layer z = 1.
        for lane in 0..32 {
            let (k, t) = step_cell::<D3>(5 * 32 + lane, 4, true);
            assert_eq!(step_cell::<D3>(5 * 32 + lane, 4, false), (2, 32 + lane));
            assert_eq!((k, t), (2 + lane / 16, 16 + lane % 16));
        }
        // The fifth block of five takes its own items, in order.
        assert_eq!(step_cell::<D3>(4 * 64 + 37, 5, true), (4, 37));
    }

    /// A launch may cover the cells of the blocks it names, and none if it names more
    /// blocks than its ID set holds (the mapping would read past it).
    #[test]
    fn step_items_are_bounded_by_the_id_set() {
        use crate::collision::Bgk;
        use crate::lattice::{D2Q9, D3Q27};
        use crate::storage::Native;
        let lens = |ids: usize, blocks: u32| StreamArgs::<f32, f32, Lens> {
            f: 0,
            nbr: 0,
            onb: 0,
            solid: 0,
            ids,
            params: StepParams::default(),
            vel: 0,
            eddy: 0,
            cell_mask: 0,
            profile_slot: 0,
            profile_u: 0,
            blocks,
        };
        type Odd27 = StreamCollide<D3Q27, f32, Native, Bgk, true>;
        type Even9 = StreamCollideGradient<D2Q9, f32, Native, Bgk, false>;
        assert_eq!(Odd27::max_items(&lens(5, 5)), Some(5 * 64));
        assert_eq!(Odd27::max_items(&lens(5, 3)), Some(3 * 64));
        assert_eq!(Odd27::max_items(&lens(5, 6)), Some(0));
        assert_eq!(Even9::max_items(&lens(7, 7)), Some(7 * 16));
        assert_eq!(Even9::max_items(&lens(7, 8)), Some(0));
    }
}
