//! Curved and moving walls: interpolated bounce-back (Bouzidi, Firdaouss and Lallemand,
//! Phys. Fluids 13 (2001) 3452, eqs. 5–6; Krüger et al. 2017, §11.3.3) on the links from
//! fluid into the solid cells of the built-in shapes ([`crate::shape`]).
//!
//! The step ([`crate::stream`]) bounces every such link half-way; a pass over the wall
//! links of a level right after its step replaces that value by Bouzidi's. For the link
//! `c_i` from fluid `x_f` whose wall lies at the fraction `q` of the link, with
//! `x_ff = x_f − c_i` the next fluid point behind it:
//!
//! - `q < ½`: `f_ī(x_f) = 2q f*_i(x_f) + (1 − 2q) f*_i(x_ff) − 2 w_i c_i·u_w/c_s²`;
//! - `q ≥ ½`: `f_ī(x_f) = f*_i(x_f)/(2q) + (2q − 1)/(2q) f*_ī(x_f) − 2 w_i c_i·u_w/(2q c_s²)`,
//!
//! with `ρ_w = 1` in the wall term, as for the velocity faces. Both are interpolations
//! (the weights lie in `[0, 1]`), stable for every `q`, and keep the shifted storage
//! `h = f − w` (the weights sum to one). A link whose `x_ff` is not a fluid cell of the
//! level (a solid cell: a gap one cell wide; a domain face; no block) keeps the half-way
//! rule plus the wall term, which is first order there.
//!
//! **Why a pass after the step.** The in-place AA step stores a cell's bounce-back value
//! when it has only its own populations, and the `q < ½` branch needs `f*_i(x_ff)`.
//! After the step every value is in the pool at a known place, the same two places in
//! either layout: the sent `f*_i(x_f)` in the slot the step bounced it to, `(x_f, ī)`;
//! `f*_i(x_ff)` and `f*_ī(x_f)` in `(x_f, i)` and `(x_ff, ī)` (which holds which depends on
//! the layout). The pass writes only `(x_f, ī)` of wall links and reads those three; one
//! item handles every link of a cell and reads before it writes, so the pass is race-free
//! in place. It also keeps each sent `f*_i(x_f)`, which the momentum exchange of
//! [`crate::obstacle::ObstacleForce`] needs (the pool no longer holds it).
//!
//! **Wall distances** `q` are computed on the device for the blocks next to solid cells
//! whenever the work lists are rebuilt (after an adaptation or a restart), by
//! [`LinkDistance`]: the link's first crossing into a shape's solid
//! ([`Shapes::link_wall`]). Links into solid cells of user geometry, which has no
//! surface to intersect, take `q = ½` (the staircase). With the staircase rule chosen and
//! moving shapes, `q = ½` everywhere and the pass adds only the wall term.

use crate::memory::Lens;
use core::marker::PhantomData;

use crate::amr::units;
use crate::block::{cell_coords, resolve};
use crate::collide::c_dot;
use crate::kernel_args;
use crate::lattice::{Dim, VelocitySet};
use crate::launch::Kernel;
use crate::obstacle::{cell_centre, scaled};
use crate::real::Real;
use crate::shape::Shapes;
use crate::storage::Storage;
use crate::stream::{odd_links, pool_index, put, Field};

/// `q` of a direction that is not a wall link.
pub const NO_WALL: f64 = -1.0;
/// Shape index of a wall link into user geometry (no surface, no motion).
pub const NO_SHAPE: u8 = u8::MAX;

/// Index of direction `i` of cell `t` in row `row` of the wall table (laid out as a block
/// of the pool, [`pool_index`]).
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub const fn wall_index<L: VelocitySet>(row: usize, i: usize, t: usize) -> usize {
    pool_index::<L>(row, i, t)
}

kernel_args! {
    /// Arguments of [`LinkDistance`] and [`CurvedWall`].
    pub struct WallArgs<F, P> {
        pub f: mut P,
        pub nbr: ref i32,
        /// The solver's per-block flags and solid masks.
        pub onb: ref u32,
        pub solid: ref u64,
        pub level: ref i32,
        pub origin: ref i32,
        /// The level's blocks flagged [`crate::stream::ONB_SOLID`]; block `list[j]` owns
        /// row `row0 + j` of the table.
        pub list: ref u32,
        pub row0: val u32,
        /// Per pool block: its row (written by [`LinkDistance`]).
        pub slot: mut u32,
        /// Per wall link: `q`, or [`NO_WALL`] ([`wall_index`]).
        pub q: mut F,
        /// Per wall link: the shape whose surface it meets (its wall velocity), or
        /// [`NO_SHAPE`] (user geometry).
        pub shape: mut u8,
        /// Per wall link: the `h*` the step sent into the wall (written by [`CurvedWall`]).
        pub post: mut F,
        pub shapes: val Shapes,
        /// Nonzero: the staircase rule (`q = ½` on every wall link).
        pub staircase: val u32,
    }
}

/// Item `i`: cell `i mod 4^D` of block `list[i / 4^D]`: its row of the table, and `q` of
/// each of its directions (see the module documentation).
pub struct LinkDistance<L, F, S>(PhantomData<(L, F, S)>);

impl<L: VelocitySet, F: Real, S: Storage<F>> Kernel for LinkDistance<L, F, S> {
    type Args = WallArgs<F, S::Elem>;

    fn max_items(l: &WallArgs<F, S::Elem, Lens>) -> Option<usize> {
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        Some((l.list * m).min(l.q / L::Q).min(l.shape / L::Q))
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &WallArgs<F, S::Elem>) {
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        let dim = <L::Dim as Dim>::D;
        let (j, t) = (i / m, i & (m - 1));
        let b = *a.list.add(j) as usize;
        let row = a.row0 as usize + j;
        if t == 0 {
            *a.slot.add(b) = row as u32;
        }
        let fluid = (*a.solid.add(b) >> t) & 1 == 0;
        let x = cell_coords(t);
        let level = *a.level.add(b);
        let o = [*a.origin.add(3 * b), *a.origin.add(3 * b + 1), *a.origin.add(3 * b + 2)];
        let centre = cell_centre(o, level, t);
        let w = units::cell(level) as f64 / units::ROOT_CELL as f64;
        // A rolled loop: the link test below is large, and this kernel runs once per
        // adaptation (an unrolled one made the module's PTX 30 % bigger).
        for k in 0..L::Q {
            let c = L::C[k];
            let (link, local) = resolve(a.nbr, b, x, c, dim, <L::Dim as Dim>::NEIGHBORS);
            let wall = fluid && k != 0 && link >= 0 && (*a.solid.add(link as usize) >> local) & 1 != 0;
            // The staircase keeps `q = ½` but still needs the shape of a moving wall.
            let hit = if wall { a.shapes.link_wall(centre, scaled(c, w), dim) } else { None };
            let (q, shape) = match hit {
                _ if !wall => (NO_WALL, NO_SHAPE),
                Some((q, shape)) => (if a.staircase != 0 { 0.5 } else { q }, shape as u8),
                None => (0.5, NO_SHAPE),
            };
            *a.q.add(wall_index::<L>(row, k, t)) = F::from_f64(q);
            *a.shape.add(wall_index::<L>(row, k, t)) = shape;
        }
    }
}

/// The wall pass after a step of a level, in the layout the step left (`ODD`: the level
/// has now taken an odd number of steps). Item `i`: cell `i mod 4^D` of block
/// `list[i / 4^D]` (see the module documentation).
pub struct CurvedWall<L, F, S, const ODD: bool>(PhantomData<(L, F, S)>);

impl<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool> Kernel for CurvedWall<L, F, S, ODD> {
    type Args = WallArgs<F, S::Elem>;
    const WRITES_MESH: bool = false;

    fn max_items(l: &WallArgs<F, S::Elem, Lens>) -> Option<usize> {
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        Some((l.list * m).min(l.q / L::Q).min(l.post / L::Q).min(l.shape / L::Q))
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &WallArgs<F, S::Elem>) {
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        let (j, t) = (i / m, i & (m - 1));
        let b = *a.list.add(j) as usize;
        let row = a.row0 as usize + j;
        let mut q = L::Pop::<F>::default();
        let mut any = false;
        L::unroll(
            #[cfg_attr(target_arch = "nvptx64", inline(always))]
            #[cfg_attr(not(target_arch = "nvptx64"), inline)]
            |k| {
                q[k] = *a.q.add(wall_index::<L>(row, k, t));
                any |= q[k] >= F::ZERO;
            },
        );
        if !any {
            return;
        }
        let fld = Field { f: a.f, nbr: a.nbr, onb: a.onb, solid: a.solid };
        let x = cell_coords(t);
        let links = odd_links::<L, _>(&fld, b, x, true);
        let moving = a.shapes.moving != 0;
        let (centre, w) = if moving {
            let level = *a.level.add(b);
            let o = [*a.origin.add(3 * b), *a.origin.add(3 * b + 1), *a.origin.add(3 * b + 2)];
            (cell_centre(o, level, t), units::cell(level) as f64 / units::ROOT_CELL as f64)
        } else {
            ([0.0; 3], 0.0)
        };
        // Every read before any write: the pass runs in place.
        let mut out = L::Pop::<F>::default();
        L::unroll(
            #[cfg_attr(target_arch = "nvptx64", inline(always))]
            #[cfg_attr(not(target_arch = "nvptx64"), inline)]
            |k| {
                if q[k] >= F::ZERO {
                    let kb = L::opposite(k);
                    let sent = S::widen(*fld.f.add(pool_index::<L>(b, kb, t)));
                    *a.post.add(wall_index::<L>(row, k, t)) = sent;
                    let mut wall = F::ZERO;
                    let shape = if moving { *a.shape.add(wall_index::<L>(row, k, t)) } else { NO_SHAPE };
                    if shape != NO_SHAPE {
                        let d = scaled(L::C[k], w);
                        let qk = q[k].to_f64();
                        let xw = [centre[0] + qk * d[0], centre[1] + qk * d[1], centre[2] + qk * d[2]];
                        let uw = a.shapes.velocity(shape as usize, xw).map(F::from_f64);
                        wall = F::from_f64(6.0 * L::W[k]) * c_dot(L::C[k], uw);
                    }
                    let link = links[k];
                    let two_q = q[k] + q[k];
                    out[k] = if link < 0 {
                        // No fluid point behind: the half-way rule (SOLID_LINK is negative).
                        sent - wall
                    } else {
                        let c = L::C[k];
                        let a_val = S::widen(*fld.f.add(pool_index::<L>(b, k, t)));
                        let x_ff = crate::block::cell_index([(x[0] - c[0]) & 3, (x[1] - c[1]) & 3, (x[2] - c[2]) & 3]);
                        let b_val = S::widen(*fld.f.add(pool_index::<L>(link as usize, kb, x_ff)));
                        // Swapped layout: f*_k(x_ff) stayed at x_ff, f*_k̄(x_f) at x_f.
                        let (behind, back) = if ODD { (b_val, a_val) } else { (a_val, b_val) };
                        if two_q < F::ONE {
                            two_q * sent + (F::ONE - two_q) * behind - wall
                        } else {
                            let inv = F::ONE / two_q;
                            inv * sent + (two_q - F::ONE) * inv * back - inv * wall
                        }
                    };
                }
            },
        );
        L::unroll(
            #[cfg_attr(target_arch = "nvptx64", inline(always))]
            #[cfg_attr(not(target_arch = "nvptx64"), inline)]
            |k| {
                if q[k] >= F::ZERO {
                    put::<F, S>(fld.f, pool_index::<L>(b, L::opposite(k), t), out[k]);
                }
            },
        );
    }
}
