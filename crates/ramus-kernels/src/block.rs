//! Cell-block geometry and neighbour links (paper, section "Data Structures").
//!
//! A block holds `4^D` cells; cell `t` of block `b` has local coordinates
//! `(t & 3, (t >> 2) & 3, t >> 4)`; block `b` owns a contiguous range of the distribution
//! pool, direction by direction (see [`crate::stream::pool_index`]).
//!
//! Each block stores `3^D` neighbour links (the centre one is the block itself) at `nbr[b * 3^D + k]` with
//! `k = (o_x + 1) + 3 (o_y + 1) + 9 (o_z + 1)` for the block offset `o ∈ {-1, 0, 1}^D`.
//! The paper stores links structure-of-arrays (`κ + p N_blocks`); we keep a block's links
//! together because all threads of a block read the same ones (one cache line).
//!
//! Negative links are sentinels: [`N_SKIP`] (no neighbour on this level) or a domain
//! boundary, encoded with the set of domain faces the link crosses ([`boundary_link`]).

/// Cells along a block edge (`N_{b,x}` in the paper; fixed to 4).
pub const EDGE: usize = 4;

/// The paper's `N_skip`: no neighbour in that direction on this level.
pub const N_SKIP: i32 = -1;

/// Domain faces, in the order used by face masks and per-face parameters.
pub const FACE_X_MIN: usize = 0;
pub const FACE_X_MAX: usize = 1;
pub const FACE_Y_MIN: usize = 2;
pub const FACE_Y_MAX: usize = 3;
pub const FACE_Z_MIN: usize = 4;
pub const FACE_Z_MAX: usize = 5;

/// Face index for axis `a` (0, 1, 2) and side (`false` = min, `true` = max).
#[inline(always)]
pub const fn face(axis: usize, max_side: bool) -> usize {
    2 * axis + max_side as usize
}

/// Link value of a neighbour slot that lies outside the domain across the wall faces in
/// `face_mask` (bit `face(a, side)` set for each wall face crossed; never 0).
#[inline(always)]
pub const fn boundary_link(face_mask: u32) -> i32 {
    -2 - face_mask as i32
}

/// The wall faces crossed by a boundary link, or 0 for [`N_SKIP`] and valid links.
#[inline(always)]
pub const fn boundary_faces(link: i32) -> u32 {
    if link <= -2 {
        (-2 - link) as u32
    } else {
        0
    }
}

/// The face whose wall velocity a boundary link uses: the highest face in the mask.
///
/// A link through an edge or corner of the domain crosses several walls; the face of the
/// later axis (z over y over x, max over min) wins. This makes the 2D lid (`y+`) and the
/// 3D lid (`z+`) own the corner links of a lid-driven cavity, as is customary.
#[inline(always)]
pub const fn link_face(face_mask: u32) -> usize {
    (31 - face_mask.leading_zeros()) as usize
}

/// Local cell coordinates of cell `t` in a block.
#[inline(always)]
pub const fn cell_coords(t: usize) -> [i32; 3] {
    [(t & 3) as i32, ((t >> 2) & 3) as i32, (t >> 4) as i32]
}

/// Local index of the cell at local coordinates `x` (each in `0..4`).
#[inline(always)]
pub const fn cell_index(x: [i32; 3]) -> usize {
    (x[0] as usize) | ((x[1] as usize) << 2) | ((x[2] as usize) << 4)
}

/// Link slot of block offset `o ∈ {-1,0,1}^D` (`o[2]` ignored in 2D).
#[inline(always)]
pub const fn link_index(o: [i32; 3], dim: usize) -> usize {
    let k = (o[0] + 1) + 3 * (o[1] + 1);
    if dim == 3 {
        (k + 9 * (o[2] + 1)) as usize
    } else {
        k as usize
    }
}

/// Inverse of [`link_index`].
#[inline(always)]
pub const fn link_offset(k: usize, dim: usize) -> [i32; 3] {
    let k = k as i32;
    let oz = if dim == 3 { k / 9 - 1 } else { 0 };
    [k % 3 - 1, (k / 3) % 3 - 1, oz]
}

/// Resolves the neighbour at offset `d` of local cell `x` in block `b`: returns the link
/// that the offset crosses (the block itself when it stays inside, a sentinel when it
/// leaves the level) and the neighbour's local cell index in the linked block.
///
/// Branch-free: the block offset is computed arithmetically and the link always loaded,
/// since the centre link of a block is the block itself. Threads of a block thus take one
/// path whether or not their neighbour lies in another block, and all of them read the
/// same few link words (one cache line per block).
///
/// # Safety
/// `nbr` must hold the links of block `b` (`nbr[b * 3^D .. (b + 1) * 3^D]`), with the
/// centre link equal to `b`.
#[inline(always)]
pub unsafe fn resolve(
    nbr: *const i32,
    b: usize,
    x: [i32; 3],
    d: [i32; 3],
    dim: usize,
    neighbors: usize,
) -> (i32, usize) {
    let n = [x[0] + d[0], x[1] + d[1], x[2] + d[2]];
    let o = [
        (n[0] >= 4) as i32 - (n[0] < 0) as i32,
        (n[1] >= 4) as i32 - (n[1] < 0) as i32,
        (n[2] >= 4) as i32 - (n[2] < 0) as i32,
    ];
    let local = cell_index([n[0] & 3, n[1] & 3, n[2] & 3]);
    (*nbr.add(b * neighbors + link_index(o, dim)), local)
}
