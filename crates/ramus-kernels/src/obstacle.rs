//! Solid obstacles: which cells are solid, which blocks need the boundary logic, the
//! wall-distance refinement toward an obstacle, and the force on it by momentum exchange
//! (paper, sections "Lattice Boltzmann Method" (bounce-back) and "Flow Past a Square
//! Cylinder" (refinement near the cylinder, momentum-exchange algorithm)).
//!
//! A cell is solid when its centre lies inside a shape, on every level: each level sees
//! the obstacle at its own resolution, and a face aligned with the cells of the root level
//! is one on every level. Links from fluid into solid cells bounce back half-way
//! ([`crate::stream`]), so the wall lies half-way between the last fluid and the first
//! solid cell centre. Coordinates are in root cells (a root cell is 1.0).

use crate::memory::Lens;
use core::marker::PhantomData;

use crate::amr::args::Pool;
use crate::amr::{status, units, CELL_GHOST, MARK_REFINE, MARK_REFINE_FREEZE};
use crate::block::cell_coords;
use crate::curved::{wall_index, NO_SHAPE};
use crate::kernel_args;
use crate::lattice::{Dim, VelocitySet};
use crate::launch::Kernel;
use crate::real::Real;
use crate::storage::Storage;
use crate::stream::{load_cell, odd_links, Field, ONB_SOLID, SOLID_LINK};

pub use crate::shape::{Shapes, MAX_SHAPES, SHAPE_BOX, SHAPE_CYLINDER, SHAPE_OUTSIDE, SHAPE_SPHERE};

/// Centre of cell `t` of a block with lower corner `origin` (units) on `level`, in root cells.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub fn cell_centre(origin: [i32; 3], level: i32, t: usize) -> [f64; 3] {
    let s = 1.0 / units::ROOT_CELL as f64;
    let w = units::cell(level) as f64 * s;
    let x = cell_coords(t);
    [
        origin[0] as f64 * s + (x[0] as f64 + 0.5) * w,
        origin[1] as f64 * s + (x[1] as f64 + 0.5) * w,
        origin[2] as f64 * s + (x[2] as f64 + 0.5) * w,
    ]
}

kernel_args! {
    /// Arguments of [`SolidMask`] and [`SolidFlags`].
    pub struct SolidArgs {
        /// Blocks to work on (the active blocks).
        pub list: ref u32,
        pub level: ref i32,
        pub origin: ref i32,
        pub nbr: ref i32,
        /// The mesh's `onb` (0/1: a negative link).
        pub mesh_onb: ref u32,
        /// Per-block solid masks (written by [`SolidMask`], read by [`SolidFlags`]).
        pub solid: mut u64,
        /// Per-block flags for the solver (written by [`SolidFlags`]).
        pub onb: mut u32,
        pub shapes: val Shapes,
    }
}

/// Item `i`: the solid mask of block `list[i]`, bit `t` set if the centre of cell `t` lies
/// in a shape.
pub struct SolidMask<D>(PhantomData<D>);

impl<D: Dim> Kernel for SolidMask<D> {
    type Args = SolidArgs;

    fn max_items(l: &SolidArgs<Lens>) -> Option<usize> {
        Some(l.list)
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &SolidArgs) {
        let b = *a.list.add(i) as usize;
        let o = [*a.origin.add(3 * b), *a.origin.add(3 * b + 1), *a.origin.add(3 * b + 2)];
        let level = *a.level.add(b);
        let mut mask = 0u64;
        for t in 0..D::BLOCK_CELLS {
            if a.shapes.contains(cell_centre(o, level, t), D::D) {
                mask |= 1 << t;
            }
        }
        *a.solid.add(b) = mask;
    }
}

/// Item `i`: the solver's flags of block `list[i]`: the mesh's `onb` as
/// [`crate::stream::ONB_LINKS`], and [`ONB_SOLID`] if the block or a linked neighbour has
/// solid cells (masks of all listed blocks written first).
pub struct SolidFlags<D>(PhantomData<D>);

impl<D: Dim> Kernel for SolidFlags<D> {
    type Args = SolidArgs;

    fn max_items(l: &SolidArgs<Lens>) -> Option<usize> {
        Some(l.list)
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &SolidArgs) {
        let b = *a.list.add(i) as usize;
        // The centre link is the block itself.
        let mut any = false;
        for k in 0..D::NEIGHBORS {
            let n = *a.nbr.add(b * D::NEIGHBORS + k);
            if n >= 0 {
                any |= *a.solid.add(n as usize) != 0;
            }
        }
        *a.onb.add(b) = (*a.mesh_onb.add(b) != 0) as u32 | if any { ONB_SOLID } else { 0 };
    }
}

kernel_args! {
    /// Arguments of [`MarkObstacleDistance`].
    pub struct ObstacleMarkArgs {
        pub pool: args Pool<M>,
        /// Active block IDs.
        pub list: ref u32,
        pub shapes: val Shapes,
        /// `d_spec` in root cells: a block on level `L` is near if within `d_spec / 2^L`.
        pub distance: val f64,
        /// Nonzero: freeze the refinement.
        pub freeze: val u32,
    }
}

/// The paper's wall-distance rule applied to obstacles (section "Flow Past a Square
/// Cylinder": blocks on level `L` within `0.15/2^L` of the cylinder are refined). Item
/// `i` over the active blocks: near leaves are marked for refinement (frozen with
/// `freeze`); with freezing, near refined blocks become `REFINED_PERMANENT`.
pub struct MarkObstacleDistance<D>(PhantomData<D>);

impl<D: Dim> Kernel for MarkObstacleDistance<D> {
    type Args = ObstacleMarkArgs;

    fn max_items(l: &ObstacleMarkArgs<Lens>) -> Option<usize> {
        Some(l.list)
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &ObstacleMarkArgs) {
        let b = *a.list.add(i) as usize;
        mark_near(&a.pool, b, a.distance, a.freeze != 0, |lo, w, d| a.shapes.distance(lo, w, D::D) < d);
    }
}

/// The wall-distance rule for block `b` of the pool: `near(lo, w, d)` says whether the
/// block (lower corner `lo`, side `w`, in root cells) lies within `d = distance / 2^L` of
/// the geometry. A near leaf is marked for refinement (frozen with `freeze`); with
/// `freeze`, a near refined block becomes `REFINED_PERMANENT`.
///
/// # Safety
/// `b` must be an active block of the pool `p` describes.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub unsafe fn mark_near(
    p: &Pool,
    b: usize,
    distance: f64,
    freeze: bool,
    near: impl FnOnce([f64; 3], f64, f64) -> bool,
) {
    let s = *p.status.add(b);
    let level = *p.level.add(b);
    let u = 1.0 / units::ROOT_CELL as f64;
    let lo =
        [*p.origin.add(3 * b) as f64 * u, *p.origin.add(3 * b + 1) as f64 * u, *p.origin.add(3 * b + 2) as f64 * u];
    let w = units::block(level) as f64 * u;
    let near = near(lo, w, distance / (1u32 << level) as f64);
    if near && s == status::UNREFINED {
        *p.mark.add(b) = if freeze { MARK_REFINE_FREEZE } else { MARK_REFINE };
    } else if near && freeze && (s == status::REFINED || s == status::REFINED_WITH_CHILD) {
        *p.status.add(b) = status::REFINED_PERMANENT;
    }
}

kernel_args! {
    /// Arguments of [`ObstacleForce`].
    pub struct ForceArgs<F, P> {
        pub f: mut P,
        pub nbr: ref i32,
        /// The solver's per-block flags.
        pub onb: ref u32,
        pub solid: ref u64,
        pub level: ref i32,
        pub origin: ref i32,
        pub cell_mask: ref u8,
        /// The built-in shapes, and the one whose force is summed ([`ALL_SOLIDS`]: every
        /// solid cell).
        pub shapes: val Shapes,
        pub which: val u32,
        /// Leaf blocks next to solid cells.
        pub list: ref u32,
        /// Nonzero: the root level is in the odd AA layout (finer levels are even between
        /// root steps).
        pub root_odd: val u32,
        /// Nonzero: the wall pass of [`crate::curved`] runs, and the wall table below
        /// holds each wall link's `q` and the `h*` it sent ([`crate::curved::WallArgs`]).
        pub curved: val u32,
        pub wall_slot: ref u32,
        pub wall_q: ref F,
        pub wall_shape: ref u8,
        pub wall_post: ref F,
        /// The point the torque is taken about (root cells).
        pub about: val [f64; 3],
        /// Six values per item: the block's force, then its torque, in root units.
        pub out: mut F,
    }
}

/// [`ForceArgs::which`]: sum over every solid cell.
pub const ALL_SOLIDS: u32 = u32::MAX;

/// Momentum exchange (paper, eq. "F = 2 Δx^D Σ_{x_b} Σ_p f*_p c_p"; Ladd 1994): item `i`
/// sums, over the non-ghost fluid cells of block `list[i]` and their links `c_j` into
/// solid cells, the momentum the wall takes per step, and its torque about
/// [`ForceArgs::about`] (at the wall point `x + q c_j`).
///
/// With the resting half-way wall the population `f_k` that came back (`c_k = −c_j`)
/// equals the one sent, `f*_j`, so the link carries `2 f_k c_j`; between steps `f_k` is
/// in the pool. With the wall pass of
/// [`crate::curved`] (interpolated or moving walls) the sent `f*_j` is the one the pass
/// kept, and the link carries Wen et al.'s Galilean-invariant exchange (J. Comput. Phys.
/// 266 (2014) 161, eq. 11), `(c_j − u_w) f*_j − (c_k − u_w) f_k`, with `u_w` the wall
/// velocity at the wall point.
///
/// Units: on level `L` a cell has volume `2^{−LD}` and a step lasts `2^{−L}` root steps,
/// so the block's sums are scaled by `2^{−L(D−1)}` to root lattice units (per unit depth
/// in 2D).
pub struct ObstacleForce<L, F, S>(PhantomData<(L, F, S)>);

impl<L: VelocitySet, F: Real, S: Storage<F>> Kernel for ObstacleForce<L, F, S> {
    type Args = ForceArgs<F, S::Elem>;

    fn max_items(l: &ForceArgs<F, S::Elem, Lens>) -> Option<usize> {
        Some(l.list.min(l.out / 6))
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &ForceArgs<F, S::Elem>) {
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        let dim = <L::Dim as Dim>::D;
        let b = *a.list.add(i) as usize;
        let level = *a.level.add(b);
        let fld = Field { f: a.f, nbr: a.nbr, onb: a.onb, solid: a.solid };
        let odd = level == 0 && a.root_odd != 0;
        let o = [*a.origin.add(3 * b), *a.origin.add(3 * b + 1), *a.origin.add(3 * b + 2)];
        let w = units::cell(level) as f64 / units::ROOT_CELL as f64;
        let curved = a.curved != 0;
        let row = if curved { *a.wall_slot.add(b) as usize } else { 0 };
        let mut force = [F::ZERO; 3];
        let mut torque = [F::ZERO; 3];
        if *a.onb.add(b) & ONB_SOLID != 0 {
            for t in 0..m {
                if *a.cell_mask.add(b * m + t) == CELL_GHOST || (*a.solid.add(b) >> t) & 1 != 0 {
                    continue;
                }
                let h =
                    if odd { load_cell::<L, F, S, true>(&fld, b, t) } else { load_cell::<L, F, S, false>(&fld, b, t) };
                let links = odd_links::<L, _>(&fld, b, cell_coords(t), true);
                let x = cell_centre(o, level, t);
                L::unroll(
                    #[cfg_attr(target_arch = "nvptx64", inline(always))]
                    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
                    |k| {
                        let c = L::C[k];
                        // A link into a solid cell, of the chosen shape (tested only then).
                        let hit = links[k] == SOLID_LINK
                            && (a.which == ALL_SOLIDS || {
                                let y = [x[0] - c[0] as f64 * w, x[1] - c[1] as f64 * w, x[2] - c[2] as f64 * w];
                                a.shapes.contains_one(a.which as usize, y, dim)
                            });
                        if hit {
                            let j = L::opposite(k);
                            let fk = h[k] + F::from_f64(L::W[k]);
                            let (sent, q, shape) = if curved {
                                let at = wall_index::<L>(row, j, t);
                                let sent = *a.wall_post.add(at) + F::from_f64(L::W[j]);
                                (sent, (*a.wall_q.add(at)).to_f64(), *a.wall_shape.add(at))
                            } else {
                                (fk, 0.5, NO_SHAPE)
                            };
                            // The link's momentum along `c_j = −c_k`.
                            let s = sent + fk;
                            let mut df = [F::ZERO; 3];
                            for ax in 0..3 {
                                if c[ax] == -1 {
                                    df[ax] = s;
                                } else if c[ax] == 1 {
                                    df[ax] = -s;
                                }
                            }
                            let xw =
                                [x[0] - q * c[0] as f64 * w, x[1] - q * c[1] as f64 * w, x[2] - q * c[2] as f64 * w];
                            if a.shapes.moving != 0 && shape != NO_SHAPE {
                                let uw = a.shapes.velocity(shape as usize, xw);
                                let gain = sent - fk;
                                for ax in 0..3 {
                                    df[ax] -= F::from_f64(uw[ax]) * gain;
                                }
                            }
                            let r = [xw[0] - a.about[0], xw[1] - a.about[1], xw[2] - a.about[2]].map(F::from_f64);
                            for ax in 0..3 {
                                force[ax] += df[ax];
                            }
                            torque[0] += r[1] * df[2] - r[2] * df[1];
                            torque[1] += r[2] * df[0] - r[0] * df[2];
                            torque[2] += r[0] * df[1] - r[1] * df[0];
                        }
                    },
                );
            }
        }
        let scale = F::from_f64(1.0 / (1u64 << (level as u32 * (dim as u32 - 1))) as f64);
        for ax in 0..3 {
            *a.out.add(6 * i + ax) = force[ax] * scale;
            *a.out.add(6 * i + 3 + ax) = torque[ax] * scale;
        }
    }
}

/// `c w` as a vector of root cells.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub fn scaled(c: [i32; 3], w: f64) -> [f64; 3] {
    [c[0] as f64 * w, c[1] as f64 * w, c[2] as f64 * w]
}
