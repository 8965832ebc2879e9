//! Velocity profiles of domain faces (inlets): a wall velocity per boundary cell instead
//! of one per face.
//!
//! A [`crate::stream::FACE_VELOCITY`] face flagged in [`crate::stream::StepParams::profiled`]
//! takes the wall velocity of its half-way bounce-back ([`crate::stream::bounce`]) from a
//! table filled by the host — a parabolic inlet or any user function of position,
//! evaluated where each boundary link crosses the face (the half-way point `x + c_i/2` of
//! the cell centre `x`: a diagonal link meets the face half a cell beside the straight
//! one, and the difference carries the profile's shear), on every level, and again after
//! every adaptation. Only blocks that touch a profiled face have a row in the table
//! (`slot`), so it stays as small as the faces' share of the mesh.
//!
//! Layout ([`profile_index`]): per row `s`, per axis `a` of a face the block touches (a
//! block touches at most one face per axis: the root grid has at least two blocks per
//! axis), per cell of the block's layer on that face (`4^{D−1}`, at most 16, indexed by
//! its two tangential coordinates), per tangential offset of the link (`c_i` along the
//! two tangential axes, 3 × 3), three velocity components.

use crate::real::Real;

/// `slot` of a block without a row in the table.
pub const NO_SLOT: u32 = u32::MAX;

/// The wall-velocity table of the profiled faces (null pointers when no face is
/// profiled: [`crate::stream::StepParams::profiled`] is then zero and nothing is read).
#[derive(Clone, Copy, Debug)]
pub struct ProfileTable<F> {
    /// Per pool block: its row in `u`, or [`NO_SLOT`].
    pub slot: *const u32,
    /// Wall velocities, [`profile_index`]-ordered.
    pub u: *const F,
}

/// Values per row of the table: 3 axes × 16 face cells × 9 link offsets × 3 components.
pub const ROW: usize = 3 * 16 * 9 * 3;

/// The two tangential axes of the faces on axis `a`, in increasing order.
#[inline(always)]
pub const fn tangential(a: usize) -> (usize, usize) {
    if a == 0 {
        (1, 2)
    } else if a == 1 {
        (0, 2)
    } else {
        (0, 1)
    }
}

/// Component `k` of `v`, with a run-time `k` picked by selects (an index into a local
/// array would put it in local memory on the GPU).
#[inline(always)]
const fn pick(v: [i32; 3], k: usize) -> i32 {
    if k == 0 {
        v[0]
    } else if k == 1 {
        v[1]
    } else {
        v[2]
    }
}

/// Index in [`ProfileTable::u`] of component `comp` of the wall velocity of row `s` on the
/// face of axis `a`, for the cell at local coordinates `x` and the link `c` (its
/// tangential components select the crossing point).
#[inline(always)]
pub const fn profile_index(s: usize, a: usize, x: [i32; 3], c: [i32; 3], comp: usize) -> usize {
    let (b0, b1) = tangential(a);
    let cell = (pick(x, b0) + 4 * pick(x, b1)) as usize;
    let offset = ((pick(c, b0) + 1) + 3 * (pick(c, b1) + 1)) as usize;
    (((s * 3 + a) * 16 + cell) * 9 + offset) * 3 + comp
}

/// The wall velocity where link `c` of the cell at local coordinates `x` of block `b`
/// crosses the face of axis `axis`, or `fallback` (the face's uniform velocity) when the
/// block has no row.
///
/// # Safety
/// `tab.slot` must cover block `b`, and `tab.u` every row it names.
#[inline(always)]
pub unsafe fn wall_velocity<F: Real>(
    tab: &ProfileTable<F>,
    b: usize,
    axis: usize,
    x: [i32; 3],
    c: [i32; 3],
    fallback: [F; 3],
) -> [F; 3] {
    let s = *tab.slot.add(b);
    if s == NO_SLOT {
        return fallback;
    }
    let at = profile_index(s as usize, axis, x, c, 0);
    [*tab.u.add(at), *tab.u.add(at + 1), *tab.u.add(at + 2)]
}
