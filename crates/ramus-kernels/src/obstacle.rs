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
use crate::kernel_args;
use crate::lattice::{Dim, VelocitySet};
use crate::launch::Kernel;
use crate::real::Real;
use crate::stream::{load_cell, odd_links, Field, ONB_SOLID, SOLID_LINK};

/// Built-in shapes a forest may hold (user geometry beyond these is evaluated on the host).
pub const MAX_SHAPES: usize = 8;
/// Shape kind: axis-aligned box `p[0..3]` … `p[3..6]` (closed).
pub const SHAPE_BOX: u32 = 0;
/// Shape kind: sphere (disc in 2D), centre `p[0..3]`, radius `p[3]` (closed).
pub const SHAPE_SPHERE: u32 = 1;

/// Up to [`MAX_SHAPES`] built-in shapes (`count` used), passed by value to the kernels.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Shapes {
    pub count: u32,
    pub kind: [u32; MAX_SHAPES],
    pub _pad: u32,
    pub p: [[f64; 6]; MAX_SHAPES],
}

impl Shapes {
    /// Kind and parameters of shape `k`, picked with constant indices: a run-time index
    /// into the parameter array would copy it to local memory on the GPU.
    #[inline(always)]
    fn shape(&self, k: usize) -> (u32, [f64; 6]) {
        let (mut kind, mut p) = (SHAPE_BOX, [0.0; 6]);
        for j in 0..MAX_SHAPES {
            if j == k {
                kind = self.kind[j];
                p = self.p[j];
            }
        }
        (kind, p)
    }

    /// Whether point `x` lies in shape `k` (`dim` axes compared).
    #[inline(always)]
    pub fn contains_one(&self, k: usize, x: [f64; 3], dim: usize) -> bool {
        let (kind, p) = self.shape(k);
        if kind == SHAPE_BOX {
            let mut inside = true;
            for a in 0..3 {
                if a < dim {
                    inside &= x[a] >= p[a] && x[a] <= p[a + 3];
                }
            }
            inside
        } else {
            let mut d2 = 0.0;
            for a in 0..3 {
                if a < dim {
                    d2 += (x[a] - p[a]) * (x[a] - p[a]);
                }
            }
            d2 <= p[3] * p[3]
        }
    }

    /// Whether point `x` lies in any shape.
    #[inline(always)]
    pub fn contains(&self, x: [f64; 3], dim: usize) -> bool {
        let mut any = false;
        // Constant indices (unrolled): kernel parameters stay in parameter space.
        for k in 0..MAX_SHAPES {
            if (k as u32) < self.count {
                any |= self.contains_one(k, x, dim);
            }
        }
        any
    }

    /// Distance from the box `[lo, lo + w]` to the nearest shape (0 if they overlap).
    #[inline(always)]
    pub fn distance(&self, lo: [f64; 3], w: f64, dim: usize) -> f64 {
        let mut best = f64::INFINITY;
        for k in 0..MAX_SHAPES {
            if (k as u32) < self.count {
                let (kind, p) = self.shape(k);
                let mut d2 = 0.0;
                for a in 0..3 {
                    if a < dim {
                        // Gap between the block's interval and the shape's on this axis
                        // (for a sphere: from the centre to the block).
                        let (s_lo, s_hi) = if kind == SHAPE_BOX { (p[a], p[a + 3]) } else { (p[a], p[a]) };
                        let g = (s_lo - (lo[a] + w)).max(lo[a] - s_hi).max(0.0);
                        d2 += g * g;
                    }
                }
                let d = if kind == SHAPE_BOX { sqrt(d2) } else { (sqrt(d2) - p[3]).max(0.0) };
                best = best.min(d);
            }
        }
        best
    }
}

/// `√x` in `no_std` (Newton from the exponent-halved guess; exact to round-off for the
/// distances compared here).
#[inline(always)]
fn sqrt(x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let mut y = f64::from_bits((x.to_bits() >> 1) + (1023u64 << 51));
    for _ in 0..6 {
        y = 0.5 * (y + x / y);
    }
    y
}

/// Centre of cell `t` of a block with lower corner `origin` (units) on `level`, in root cells.
#[inline(always)]
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

    #[inline(always)]
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

    #[inline(always)]
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

    #[inline(always)]
    unsafe fn run(i: usize, a: &ObstacleMarkArgs) {
        let p = &a.pool;
        let b = *a.list.add(i) as usize;
        let s = *p.status.add(b);
        let level = *p.level.add(b);
        let u = 1.0 / units::ROOT_CELL as f64;
        let lo =
            [*p.origin.add(3 * b) as f64 * u, *p.origin.add(3 * b + 1) as f64 * u, *p.origin.add(3 * b + 2) as f64 * u];
        let w = units::block(level) as f64 * u;
        let near = a.shapes.distance(lo, w, D::D) < a.distance / (1u32 << level) as f64;
        let freeze = a.freeze != 0;
        if near && s == status::UNREFINED {
            *p.mark.add(b) = if freeze { MARK_REFINE_FREEZE } else { MARK_REFINE };
        } else if near && freeze && (s == status::REFINED || s == status::REFINED_WITH_CHILD) {
            *p.status.add(b) = status::REFINED_PERMANENT;
        }
    }
}

kernel_args! {
    /// Arguments of [`ObstacleForce`].
    pub struct ForceArgs<F> {
        pub f: mut F,
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
        /// Three components per item: the block's force, in root units.
        pub out: mut F,
    }
}

/// [`ForceArgs::which`]: sum over every solid cell.
pub const ALL_SOLIDS: u32 = u32::MAX;

/// Momentum exchange (paper, eq. "F = 2 Δx^D Σ_{x_b} Σ_p f*_p c_p"; Ladd 1994): item `i`
/// sums, over the non-ghost fluid cells of block `list[i]` and their links `c_j` into
/// solid cells, `2 f*_j c_j`, the momentum a resting half-way wall takes per step. Between
/// steps `f*_j` is the population that came back, `f_ī` with `−c_i = c_j`, so the sum is
/// `−2 Σ f_i c_i` over the links whose `x − c_i` is solid.
///
/// Units: on level `L` a cell has volume `2^{−LD}` and a step lasts `2^{−L}` root steps,
/// so the block's sum is scaled by `2^{−L(D−1)}` to a force in root lattice units (per
/// unit depth in 2D).
pub struct ObstacleForce<L, F>(PhantomData<(L, F)>);

impl<L: VelocitySet, F: Real> Kernel for ObstacleForce<L, F> {
    type Args = ForceArgs<F>;

    fn max_items(l: &ForceArgs<F, Lens>) -> Option<usize> {
        Some(l.list.min(l.out / 3))
    }

    #[inline(always)]
    unsafe fn run(i: usize, a: &ForceArgs<F>) {
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        let b = *a.list.add(i) as usize;
        let level = *a.level.add(b);
        let fld = Field { f: a.f, nbr: a.nbr, onb: a.onb, solid: a.solid };
        let odd = level == 0 && a.root_odd != 0;
        let o = [*a.origin.add(3 * b), *a.origin.add(3 * b + 1), *a.origin.add(3 * b + 2)];
        let w = units::cell(level) as f64 / units::ROOT_CELL as f64;
        let mut force = [F::ZERO; 3];
        if *a.onb.add(b) & ONB_SOLID != 0 {
            for t in 0..m {
                if *a.cell_mask.add(b * m + t) == CELL_GHOST || (*a.solid.add(b) >> t) & 1 != 0 {
                    continue;
                }
                let h = if odd { load_cell::<L, F, true>(&fld, b, t) } else { load_cell::<L, F, false>(&fld, b, t) };
                let links = odd_links::<L, F>(&fld, b, cell_coords(t), true);
                let x = cell_centre(o, level, t);
                L::unroll(
                    #[inline(always)]
                    |k| {
                        let c = L::C[k];
                        // A link into a solid cell, of the chosen shape (tested only then).
                        let hit = links[k] == SOLID_LINK
                            && (a.which == ALL_SOLIDS || {
                                let y = [x[0] - c[0] as f64 * w, x[1] - c[1] as f64 * w, x[2] - c[2] as f64 * w];
                                a.shapes.contains_one(a.which as usize, y, <L::Dim as Dim>::D)
                            });
                        if hit {
                            let fk = h[k] + F::from_f64(L::W[k]);
                            for ax in 0..3 {
                                if c[ax] == 1 {
                                    force[ax] -= fk + fk;
                                } else if c[ax] == -1 {
                                    force[ax] += fk + fk;
                                }
                            }
                        }
                    },
                );
            }
        }
        let scale = F::from_f64(1.0 / (1u64 << (level as u32 * (<L::Dim as Dim>::D as u32 - 1))) as f64);
        for ax in 0..3 {
            *a.out.add(3 * i + ax) = force[ax] * scale;
        }
    }
}
