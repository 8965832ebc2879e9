//! Geometric marking kernels (the refinement criteria that feed `adapt`): regions, and the
//! paper's wall-distance rule (section "Lattice Boltzmann Solver / Adaptive Mesh
//! Refinement"). Coordinates are in root cells (a root cell is 1.0).

use super::args::{amr_kernel, MarkArgs};
use super::{status, units, MARK_REFINE, MARK_REFINE_FREEZE};
use crate::lattice::Dim;

/// Region kind: axis-aligned box `[p0, p1, p2] .. [p3, p4, p5]`.
pub const REGION_BOX: u32 = 0;
/// Region kind: solid sphere (disc in 2D), centre `p[0..3]`, radius `p[3]`.
pub const REGION_SPHERE: u32 = 1;
/// Region kind: sphere surface (circle in 2D), centre `p[0..3]`, radius `p[3]`.
pub const REGION_SPHERE_SURFACE: u32 = 2;

/// Lower corner and width of block `b`, in root cells.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn block_box(a: &MarkArgs, b: usize) -> ([f64; 3], f64) {
    let p = &a.pool;
    let s = 1.0 / units::ROOT_CELL as f64;
    let lo =
        [*p.origin.add(3 * b) as f64 * s, *p.origin.add(3 * b + 1) as f64 * s, *p.origin.add(3 * b + 2) as f64 * s];
    (lo, units::block(*p.level.add(b)) as f64 * s)
}

/// Squared distance from `c` to the nearest (`far = false`) or farthest point of the box
/// `[lo, lo + w]` on one axis.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn axis_d2(c: f64, lo: f64, w: f64, far: bool) -> f64 {
    let hi = lo + w;
    let d = if far {
        (c - lo).abs().max((hi - c).abs())
    } else if c < lo {
        lo - c
    } else if c > hi {
        c - hi
    } else {
        0.0
    };
    d * d
}

/// Squared distance from the region centre to the nearest / farthest point of the block.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn box_d2<D: Dim>(c: &[f64; 6], lo: &[f64; 3], w: f64, far: bool) -> f64 {
    let mut d = axis_d2(c[0], lo[0], w, far) + axis_d2(c[1], lo[1], w, far);
    if D::D == 3 {
        d += axis_d2(c[2], lo[2], w, far);
    }
    d
}

amr_kernel!(
    /// Item `i` over the active blocks `list`: a leaf whose box intersects the region
    /// (positive-volume overlap for boxes) gets `mark`.
    MarkRegion, MarkArgs, items(l) = l.list, |i, a| {
        let p = &a.pool;
        let b = *a.list.add(i) as usize;
        if *p.status.add(b) != status::UNREFINED {
            return;
        }
        let (lo, w) = block_box(a, b);
        let q = &a.p;
        let hit = if a.kind == REGION_BOX {
            let mut h = lo[0] < q[3] && lo[0] + w > q[0] && lo[1] < q[4] && lo[1] + w > q[1];
            if D::D == 3 {
                h &= lo[2] < q[5] && lo[2] + w > q[2];
            }
            h
        } else {
            let r2 = q[3] * q[3];
            let near = box_d2::<D>(q, &lo, w, false);
            if a.kind == REGION_SPHERE {
                near < r2
            } else {
                near <= r2 && box_d2::<D>(q, &lo, w, true) >= r2
            }
        };
        if hit {
            *p.mark.add(b) = a.mark;
        }
    }
);

/// Distance from the block `[lo, lo + w]` on axis `ax` to the faces of that axis in the
/// face mask (infinite if neither is selected); `size` is the domain length.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn face_distance(faces: u32, ax: u32, lo: f64, w: f64, size: f64) -> f64 {
    let mut d = f64::INFINITY;
    if faces & (1 << (2 * ax)) != 0 {
        d = lo;
    }
    if faces & (1 << (2 * ax + 1)) != 0 {
        d = d.min(size - (lo + w));
    }
    d
}

amr_kernel!(
    /// Wall-distance rule. Item `i` over the active blocks `list`: with `d` the smallest
    /// distance from the block to the wall faces in the mask `kind`, a block on level `L`
    /// is near if `d < p[0] / 2^L`. Near leaves are marked for refinement (frozen if
    /// `mark == 1`); with freezing, near refined blocks become `REFINED_PERMANENT`.
    MarkWallDistance, MarkArgs, items(l) = l.list, |i, a| {
        let p = &a.pool;
        let b = *a.list.add(i) as usize;
        let s = *p.status.add(b);
        let (lo, w) = block_box(a, b);
        // Axes written out: a run-time-indexed local array would land in local memory.
        let mut d = face_distance(a.kind, 0, lo[0], w, a.p[3]).min(face_distance(a.kind, 1, lo[1], w, a.p[4]));
        if D::D == 3 {
            d = d.min(face_distance(a.kind, 2, lo[2], w, a.p[5]));
        }
        let level = *p.level.add(b);
        let near = d < a.p[0] / (1u32 << level) as f64;
        let freeze = a.mark == 1;
        if near && s == status::UNREFINED {
            *p.mark.add(b) = if freeze { MARK_REFINE_FREEZE } else { MARK_REFINE };
        } else if near && freeze && (s == status::REFINED || s == status::REFINED_WITH_CHILD) {
            *p.status.add(b) = status::REFINED_PERMANENT;
        }
    }
);
