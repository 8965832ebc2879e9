//! The per-level work lists of the recursive advance (paper, section "Grid Advancement"),
//! rebuilt on the device after every adapt: blocks with ghost cells (interpolation
//! targets) and parents of such blocks (averaging targets), per level.

use ramus_kernels::schedule::{FlagArgs, FlagBlocks, SELECT_CHILD_GHOSTS, SELECT_GHOSTS};
use ramus_kernels::Dim;

use crate::amr::workspace::ensure;
use crate::amr::Mesh;
use crate::backend::primitives::{self as prim, Scratch};
use crate::backend::{Buffer, Device};
use crate::error::Result;

/// A device list of block IDs and its length.
pub(crate) struct List {
    pub ids: Buffer<u32>,
    pub len: usize,
}

impl List {
    fn new() -> Self {
        List { ids: Buffer::Host(Vec::new()), len: 0 }
    }
}

/// Work lists of every level.
pub(crate) struct Schedule {
    /// `ghosts[L]`: blocks of level `L` with ghost cells (filled from level `L − 1`).
    pub ghosts: Vec<List>,
    /// `parents[L]`: blocks of level `L` with a child that has ghost cells (averaged from
    /// level `L + 1` after every step of level `L`).
    pub parents: Vec<List>,
    flags: Buffer<u32>,
    scratch: Scratch,
}

impl Schedule {
    pub fn new(dev: &Device, levels: usize) -> Self {
        Schedule {
            ghosts: (0..levels).map(|_| List::new()).collect(),
            parents: (0..levels).map(|_| List::new()).collect(),
            flags: Buffer::Host(Vec::new()),
            scratch: Scratch::new(dev),
        }
    }

    /// Rebuilds every list from the mesh's ID sets and block masks.
    pub fn rebuild<D: Dim>(&mut self, mesh: &Mesh<D>) -> Result<()> {
        for l in 0..mesh.max_levels() {
            let (g, p) = (&mut self.ghosts[l], &mut self.parents[l]);
            g.len = select(mesh, l, SELECT_GHOSTS, &mut self.flags, &mut self.scratch, &mut g.ids)?;
            p.len = select(mesh, l, SELECT_CHILD_GHOSTS, &mut self.flags, &mut self.scratch, &mut p.ids)?;
        }
        Ok(())
    }
}

/// Compacts the blocks of level `l` picked by `which` (a `SELECT_*` of
/// [`ramus_kernels::schedule`]) into `out`; returns their count.
pub(crate) fn select<D: Dim>(
    mesh: &Mesh<D>,
    l: usize,
    which: u32,
    flags: &mut Buffer<u32>,
    scratch: &mut Scratch,
    out: &mut Buffer<u32>,
) -> Result<usize> {
    filter(mesh, &mesh.id_sets[l], mesh.id_counts[l], which, 0, flags, scratch, out)
}

/// Compacts the blocks of `ids[..n]` picked by `which` (with `level_of` for
/// `SELECT_LEVEL`) into `out`; returns their count.
#[allow(clippy::too_many_arguments)]
pub(crate) fn filter<D: Dim>(
    mesh: &Mesh<D>,
    ids: &Buffer<u32>,
    n: usize,
    which: u32,
    level_of: i32,
    flags: &mut Buffer<u32>,
    scratch: &mut Scratch,
    out: &mut Buffer<u32>,
) -> Result<usize> {
    let dev = &mesh.device;
    if n == 0 {
        return Ok(0);
    }
    ensure(dev, flags, n)?;
    ensure(dev, out, n)?;
    let args = FlagArgs {
        ids: dev.cptr(ids),
        block_mask: dev.cptr(&mesh.block_mask),
        status: dev.cptr(&mesh.status),
        level: dev.cptr(&mesh.level),
        level_of,
        flags: dev.ptr(flags),
        select: which,
    };
    // SAFETY: `ids` holds `n` active IDs of the pool; `flags` holds `n` items.
    unsafe { dev.launch::<FlagBlocks>(n, args)? };
    prim::compact(dev, scratch, flags, ids, n, out)
}
