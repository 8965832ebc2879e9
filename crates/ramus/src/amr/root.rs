//! The root grid: level 0 of the forest (paper, section "Overview").

use ramus_kernels::block::{boundary_link, face, link_index, link_offset, EDGE};
use ramus_kernels::Dim;

use crate::backend::memory::{try_collect, try_vec};
use crate::config::Boundary;
use crate::error::{Error, Result};

/// A structured grid of root blocks with their `3^D` neighbour links.
///
/// Blocks are numbered x-fastest: `b = bx + nx (by + ny bz)`. Links across periodic faces
/// wrap around; links across walls hold [`boundary_link`] sentinels naming the crossed
/// wall faces.
#[derive(Clone, Debug)]
pub struct RootGrid<D: Dim> {
    blocks: [usize; 3],
    links: Vec<i32>,
    on_boundary: Vec<u32>,
    _dim: std::marker::PhantomData<D>,
}

impl<D: Dim> RootGrid<D> {
    /// Builds the root grid for `cells` per axis (multiples of [`EDGE`]; see
    /// [`crate::amr::MeshSpec::validate`]). A grid whose links do not fit in the memory
    /// this process may use is an [`Error::OutOfMemory`], not an abort; more than 2^31
    /// root blocks (32-bit links) or cells that are no multiple of [`EDGE`] are an
    /// [`Error::InvalidParameter`].
    pub fn new(cells: [usize; 3], boundaries: &[Boundary; 6]) -> Result<Self> {
        let mut blocks = [1; 3];
        for a in 0..D::D {
            if cells[a] < EDGE || cells[a] % EDGE != 0 {
                return Err(Error::invalid("cells", format!("{} (axis {a})", cells[a]), "a multiple of 4, at least 4"));
            }
            blocks[a] = cells[a] / EDGE;
        }
        let n = blocks[0]
            .checked_mul(blocks[1])
            .and_then(|n| n.checked_mul(blocks[2]))
            .filter(|&n| n <= i32::MAX as usize)
            .ok_or_else(|| Error::invalid("cells", format!("{cells:?}"), "fewer than 2^31 root blocks"))?;
        let what = "the root grid's links";
        let mut links = try_vec(what, 0i32, n.saturating_mul(D::NEIGHBORS))?;
        for b in 0..n {
            let p = Self::position_of(blocks, b);
            for k in 0..D::NEIGHBORS {
                let o = link_offset(k, D::D);
                let mut q = [0i64; 3];
                let mut walls = 0u32;
                for a in 0..3 {
                    let mut c = p[a] as i64 + o[a] as i64;
                    let len = blocks[a] as i64;
                    if a < D::D && (c < 0 || c >= len) {
                        let side = c >= len;
                        match boundaries[face(a, side)] {
                            Boundary::Periodic => c = c.rem_euclid(len),
                            _ => walls |= 1 << face(a, side),
                        }
                    }
                    q[a] = c;
                }
                links[b * D::NEIGHBORS + k] = if walls != 0 {
                    boundary_link(walls)
                } else {
                    Self::index_of(blocks, [q[0] as usize, q[1] as usize, q[2] as usize]) as i32
                };
            }
            debug_assert_eq!(links[b * D::NEIGHBORS + link_index([0; 3], D::D)], b as i32);
        }
        let on_boundary = try_collect(
            "the root grid's boundary flags",
            n,
            links.chunks(D::NEIGHBORS).map(|l| l.iter().any(|&v| v < 0) as u32),
        )?;
        Ok(RootGrid { blocks, links, on_boundary, _dim: std::marker::PhantomData })
    }

    fn position_of(blocks: [usize; 3], b: usize) -> [usize; 3] {
        [b % blocks[0], (b / blocks[0]) % blocks[1], b / (blocks[0] * blocks[1])]
    }

    fn index_of(blocks: [usize; 3], p: [usize; 3]) -> usize {
        p[0] + blocks[0] * (p[1] + blocks[1] * p[2])
    }

    /// Blocks per axis (1 on the unused axis in 2D).
    pub fn blocks_per_axis(&self) -> [usize; 3] {
        self.blocks
    }

    /// Number of root blocks.
    pub fn len(&self) -> usize {
        self.blocks.iter().product()
    }

    /// Always false: a root grid has at least one block.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Block position in the root grid (in blocks).
    pub fn position(&self, b: usize) -> [usize; 3] {
        Self::position_of(self.blocks, b)
    }

    /// Block at a root-grid position.
    pub fn block_at(&self, p: [usize; 3]) -> usize {
        Self::index_of(self.blocks, p)
    }

    /// Per block: 1 if any of its links is a boundary sentinel (the paper's
    /// `cblock_ID_onb`), else 0.
    pub fn on_boundary(&self) -> &[u32] {
        &self.on_boundary
    }

    /// Neighbour links, `3^D` per block (see [`ramus_kernels::block`]).
    pub fn links(&self) -> &[i32] {
        &self.links
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ramus_kernels::block::{boundary_faces, N_SKIP};
    use ramus_kernels::{D2, D3};

    #[test]
    fn links_match_geometry_2d_walls() {
        let g = RootGrid::<D2>::new([16, 8, 0], &[Boundary::NO_SLIP; 6]).unwrap();
        assert_eq!(g.blocks_per_axis(), [4, 2, 1]);
        // Corner block 0: x- and y- walls.
        let l = &g.links()[0..9];
        assert_eq!(l[link_index([1, 0, 0], 2)], 1);
        assert_eq!(l[link_index([0, 1, 0], 2)], 4);
        assert_eq!(l[link_index([1, 1, 0], 2)], 5);
        assert_eq!(boundary_faces(l[link_index([-1, -1, 0], 2)]), 0b0101);
        assert_eq!(boundary_faces(l[link_index([-1, 1, 0], 2)]), 0b0001);
        assert_eq!(boundary_faces(l[link_index([1, -1, 0], 2)]), 0b0100);
        assert!(g.links().iter().all(|&v| v != N_SKIP));
    }

    #[test]
    fn periodic_links_wrap_3d() {
        let mut bc = [Boundary::NO_SLIP; 6];
        bc[0] = Boundary::Periodic;
        bc[1] = Boundary::Periodic;
        let g = RootGrid::<D3>::new([8, 8, 12], &bc).unwrap();
        assert_eq!(g.blocks_per_axis(), [2, 2, 3]);
        let b = g.block_at([0, 1, 2]);
        let l = &g.links()[b * 27..(b + 1) * 27];
        assert_eq!(l[link_index([-1, 0, 0], 3)], g.block_at([1, 1, 2]) as i32);
        assert_eq!(l[link_index([-1, -1, -1], 3)], g.block_at([1, 0, 1]) as i32);
        // Crossing y+ and z+ walls (x wraps): mask of y_max | z_max.
        assert_eq!(boundary_faces(l[link_index([-1, 1, 1], 3)]), (1 << 3) | (1 << 5));
    }
}
