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
//! is race-free in place. Walls need work only in the odd step, where a link leaves the
//! level: half-way bounce-back with a wall velocity (paper eq. "Known u_w", ρ_w = 1),
//! `f_ī(x) = f*_i(x) − 2 w_i ρ_w (c_i·u_w)/c_s²`, lands in the cell's own slot. Half-way
//! bounce-back is second-order accurate for a wall half-way between cell centres.
//!
//! Populations are stored shifted, `h = f − w` (see [`crate::collide`]); the wall term is
//! additive, so it is the same for `h` and `f`.

use core::marker::PhantomData;

use crate::block::{self, boundary_faces, cell_coords, cell_index, link_face};
use crate::collide::{bgk, c_dot};
use crate::kernel_args;
use crate::lattice::{Dim, VelocitySet};
use crate::launch::Kernel;
use crate::real::Real;

/// Parameters shared by all cells of one launch.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepParams<F> {
    /// Relaxation rate `ω = Δt/τ` of the level.
    pub omega: F,
    /// Wall velocity of each domain face, in the order of [`crate::block::face`].
    pub wall_u: [[F; 3]; 6],
}

// SAFETY: `#[repr(C)]` and only `F` fields, so no padding; `F: Pod`.
unsafe impl<F: Real> bytemuck::Zeroable for StepParams<F> {}
unsafe impl<F: Real> bytemuck::Pod for StepParams<F> {}

/// Raw view of the distribution pool and the mesh arrays the step reads.
///
/// Pool layout: block `b` owns the contiguous range `[b Q 4^D, (b + 1) Q 4^D)`, direction
/// `i` of its cell `t` at `(b Q + i) 4^D + t` — a block's cells contiguous, structure of
/// arrays by direction within the block (see [`pool_index`]).
#[derive(Clone, Copy, Debug)]
pub struct Field<F> {
    /// Shifted distributions.
    pub f: *mut F,
    /// Neighbour links, `3^D` per block.
    pub nbr: *const i32,
    /// Per block: nonzero if any link is negative (domain boundary or no neighbour on the
    /// level), the paper's `cblock_ID_onb`. Lets every other block skip the wall logic.
    pub onb: *const u32,
}

/// Index of direction `i` of cell `t` of block `b` in the pool.
#[inline(always)]
pub const fn pool_index<L: VelocitySet>(b: usize, i: usize, t: usize) -> usize {
    let m = <L::Dim as Dim>::BLOCK_CELLS;
    (b * L::Q + i) * m + t
}

/// Bounce-back momentum term `2 w_i ρ_w (c_i·u_w)/c_s²` with `ρ_w = 1` for a link that
/// leaves the level through `link`; zero for in-level links and [`block::N_SKIP`].
#[inline(always)]
fn wall_term<L: VelocitySet, F: Real>(p: &StepParams<F>, link: i32, i: usize) -> F {
    let faces = boundary_faces(link);
    let face = if faces == 0 { 6 } else { link_face(faces) };
    // Constant indices: a run-time index into the parameter array would copy it to local
    // memory on the GPU for every thread.
    let mut u = [F::ZERO; 3];
    for k in 0..6 {
        if k == face {
            u = p.wall_u[k];
        }
    }
    F::from_f64(6.0 * L::W[i]) * c_dot(L::C[i], u)
}

/// Local index of the neighbour of local cell `x` at offset `d`, wrapped into its block.
#[inline(always)]
fn wrapped(x: [i32; 3], d: [i32; 3]) -> usize {
    cell_index([(x[0] + d[0]) & 3, (x[1] + d[1]) & 3, (x[2] + d[2]) & 3])
}

/// For every direction `i`, the link crossed by the offset `−c_i` from cell `x` of block
/// `b` (the block itself when it stays inside). In the odd step, direction `i` is read
/// through `links[i]`, and direction `ī` is written through the same link to the same
/// location: each location is read and written by one cell.
///
/// # Safety
/// `fld.nbr` must hold the links of block `b`.
#[inline(always)]
pub unsafe fn odd_links<L: VelocitySet, F>(fld: &Field<F>, b: usize, x: [i32; 3]) -> L::Pop<i32> {
    let mut links = L::Pop::<i32>::default();
    L::unroll(
        #[inline(always)]
        |i| {
            let c = L::C[i];
            links[i] = block::resolve(
                fld.nbr,
                b,
                x,
                [-c[0], -c[1], -c[2]],
                <L::Dim as Dim>::D,
                <L::Dim as Dim>::NEIGHBORS,
            )
            .0;
        },
    );
    links
}

/// Pre-collision populations of cell `t` of block `b`, for a state reached after an even
/// (`ODD = false`) or odd (`ODD = true`, `links` from [`odd_links`]) number of steps.
/// `WALLS = false` assumes no link of `b` is negative, which keeps the addressing free of
/// branches; [`stream_collide`] and [`load_cell`] pick it from `onb`.
///
/// # Safety
/// `fld` must describe live allocations that hold block `b` and all its linked blocks.
#[inline(always)]
pub unsafe fn load<L: VelocitySet, F: Real, const ODD: bool, const WALLS: bool>(
    fld: &Field<F>,
    p: &StepParams<F>,
    b: usize,
    t: usize,
    links: &L::Pop<i32>,
) -> L::Pop<F> {
    let x = cell_coords(t);
    let mut h = L::Pop::<F>::default();
    L::unroll(
        #[inline(always)]
        |i| {
            h[i] = if !ODD || i == 0 {
                *fld.f.add(pool_index::<L>(b, i, t))
            } else {
                let c = L::C[i];
                let link = links[i];
                if !WALLS || link >= 0 {
                    // Slot ī of x − c_i.
                    *fld.f.add(pool_index::<L>(link as usize, L::opposite(i), wrapped(x, [-c[0], -c[1], -c[2]])))
                } else {
                    // h*_ī went into the wall last step, was stored in the own slot i, and
                    // comes back as h_i.
                    *fld.f.add(pool_index::<L>(b, i, t)) + wall_term::<L, F>(p, link, i)
                }
            };
        },
    );
    h
}

/// Writes post-collision populations of cell `t` of block `b` (see [`load`]).
///
/// # Safety
/// As for [`load`].
#[inline(always)]
pub unsafe fn store<L: VelocitySet, F: Real, const ODD: bool, const WALLS: bool>(
    fld: &Field<F>,
    p: &StepParams<F>,
    b: usize,
    t: usize,
    links: &L::Pop<i32>,
    h: &L::Pop<F>,
) {
    let x = cell_coords(t);
    L::unroll(
        #[inline(always)]
        |i| {
            let ib = L::opposite(i);
            if !ODD || i == 0 {
                *fld.f.add(pool_index::<L>(b, ib, t)) = h[i];
            } else {
                // x + c_i = x − c_ī: the link was resolved for direction ī.
                let link = links[ib];
                if !WALLS || link >= 0 {
                    // Slot i of x + c_i.
                    *fld.f.add(pool_index::<L>(link as usize, i, wrapped(x, L::C[i]))) = h[i];
                } else {
                    // Bounced back into the own slot ī.
                    *fld.f.add(pool_index::<L>(b, ib, t)) = h[i] - wall_term::<L, F>(p, link, i);
                }
            }
        },
    );
}

/// One fused collide-and-stream step of cell `t` in block `b`.
///
/// # Safety
/// As for [`load`]; the step must cover all cells of the level before the next starts.
#[inline(always)]
pub unsafe fn stream_collide<L: VelocitySet, F: Real, const ODD: bool>(
    fld: &Field<F>,
    p: &StepParams<F>,
    b: usize,
    t: usize,
) {
    if !ODD {
        let none = L::Pop::<i32>::default();
        let mut h = load::<L, F, false, false>(fld, p, b, t, &none);
        bgk::<L, F>(&mut h, p.omega);
        store::<L, F, false, false>(fld, p, b, t, &none, &h);
        return;
    }
    let links = odd_links::<L, F>(fld, b, cell_coords(t));
    // Uniform across the cells of a block: no divergence on the GPU.
    if *fld.onb.add(b) != 0 {
        let mut h = load::<L, F, true, true>(fld, p, b, t, &links);
        bgk::<L, F>(&mut h, p.omega);
        store::<L, F, true, true>(fld, p, b, t, &links, &h);
    } else {
        let mut h = load::<L, F, true, false>(fld, p, b, t, &links);
        bgk::<L, F>(&mut h, p.omega);
        store::<L, F, true, false>(fld, p, b, t, &links, &h);
    }
}

/// Pre-collision populations of cell `t` of block `b` after an even (`ODD = false`) or
/// odd number of steps, picking the wall handling from `onb`.
///
/// # Safety
/// As for [`load`].
#[inline(always)]
pub unsafe fn load_cell<L: VelocitySet, F: Real, const ODD: bool>(
    fld: &Field<F>,
    p: &StepParams<F>,
    b: usize,
    t: usize,
) -> L::Pop<F> {
    if !ODD {
        return load::<L, F, false, false>(fld, p, b, t, &L::Pop::<i32>::default());
    }
    let links = odd_links::<L, F>(fld, b, cell_coords(t));
    if *fld.onb.add(b) != 0 {
        load::<L, F, true, true>(fld, p, b, t, &links)
    } else {
        load::<L, F, true, false>(fld, p, b, t, &links)
    }
}

kernel_args! {
    /// Arguments of [`StreamCollide`].
    pub struct StreamArgs<F> {
        /// Distribution pool.
        pub f: *mut F,
        /// Neighbour links.
        pub nbr: *const i32,
        /// Per-block boundary flags.
        pub onb: *const u32,
        /// Blocks to advance (an ID set); item `i` is cell `i mod 4^D` of block `ids[i / 4^D]`.
        pub ids: *const u32,
        /// Relaxation rate and wall velocities.
        pub params: StepParams<F>,
    }
}

/// One fused collide-and-stream step over the cells of the blocks in an ID set: even
/// (`ODD = false`) or odd AA step.
pub struct StreamCollide<L, F, const ODD: bool>(PhantomData<(L, F)>);

/// Kernel-name suffix of a (velocity set, precision) pair, e.g. `d3q19_f32` (the entry
/// points in `crate::ptx` exist for exactly these).
pub const fn lattice_suffix(lattice: &str, precision: &str) -> &'static str {
    match (lattice.as_bytes(), precision.as_bytes()) {
        (b"d2q9", b"f32") => "d2q9_f32",
        (b"d2q9", b"f64") => "d2q9_f64",
        (b"d3q19", b"f32") => "d3q19_f32",
        (b"d3q19", b"f64") => "d3q19_f64",
        (b"d3q27", b"f32") => "d3q27_f32",
        (b"d3q27", b"f64") => "d3q27_f64",
        _ => "unsupported",
    }
}

impl<L: VelocitySet, F: Real, const ODD: bool> Kernel for StreamCollide<L, F, ODD> {
    const NAME: &'static str = if ODD { "stream_collide_odd" } else { "stream_collide_even" };
    const SUFFIX: &'static str = lattice_suffix(L::NAME, F::NAME);
    type Args = StreamArgs<F>;
    /// 2 cell-blocks in 3D, 8 in 2D: measured best on the H100 (BENCHMARKS.md).
    const THREADS: u32 = 128;

    #[inline(always)]
    unsafe fn run(i: usize, a: &StreamArgs<F>) {
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        let b = *a.ids.add(i / m) as usize; // m is a power of two: a shift
        let fld = Field { f: a.f, nbr: a.nbr, onb: a.onb };
        stream_collide::<L, F, ODD>(&fld, &a.params, b, i & (m - 1));
    }
}

/// Writes `h` as the pre-collision populations of cell `t` of block `b` in the layout of
/// a state reached after an even (`ODD = false`) or odd number of steps: the inverse of
/// [`load_cell`], so that `load_cell` returns `h` afterwards (to round-off where a wall
/// term is added back). Grid communication needs it to overwrite cells of a level that is
/// between steps (paper, section "Grid Communication": averaging into coarse cells).
///
/// Every location written is one that `load_cell` of this cell reads, so concurrent
/// calls for distinct cells do not race.
///
/// # Safety
/// As for [`load`].
#[inline(always)]
pub unsafe fn store_cell<L: VelocitySet, F: Real, const ODD: bool>(
    fld: &Field<F>,
    p: &StepParams<F>,
    b: usize,
    t: usize,
    h: &L::Pop<F>,
) {
    let x = cell_coords(t);
    let links = if ODD { odd_links::<L, F>(fld, b, x) } else { L::Pop::<i32>::default() };
    L::unroll(
        #[inline(always)]
        |i| {
            if !ODD || i == 0 {
                *fld.f.add(pool_index::<L>(b, i, t)) = h[i];
            } else {
                let c = L::C[i];
                let link = links[i];
                if link >= 0 {
                    *fld.f.add(pool_index::<L>(link as usize, L::opposite(i), wrapped(x, [-c[0], -c[1], -c[2]]))) = h[i];
                } else {
                    *fld.f.add(pool_index::<L>(b, i, t)) = h[i] - wall_term::<L, F>(p, link, i);
                }
            }
        },
    );
}
