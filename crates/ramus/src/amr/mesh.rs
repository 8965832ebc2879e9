//! The forest's block pool on a device (paper, section "Data Structures").

use ramus_kernels::amr::level_sets::LevelSets;
use ramus_kernels::amr::{status, units, NO_CHILD};
use ramus_kernels::block::{link_index, EDGE, N_SKIP};
use ramus_kernels::Dim;

use super::RootGrid;
use crate::backend::memory::check_host_memory;
use crate::backend::{Buffer, Device, DeviceSlice, DeviceSliceMut, Elem, Views};
use crate::config::Boundary;
use crate::error::{Error, Result};

// The pool is allocated zeroed: a zero mark must mean "no mark".
const _: () = assert!(ramus_kernels::amr::MARK_NONE == 0);

/// Largest share of the memory a device can use that a pool may be given
/// ([`Capacity::FreeMemoryFraction`]): the pool is not all a run needs. The solver's and
/// the adaptation's work buffers, host read-backs, the CUDA context, the rest of the
/// process and (on the CPU) the operating system need the remaining tenth; a pool of
/// all free memory leaves the next allocation to fail, or the kernel's OOM killer to end
/// the process.
pub const MAX_MEMORY_FRACTION: f64 = 0.9;

/// Share of the memory a device can use that an automatic pool ([`Capacity::Auto`]) takes
/// at most: the library never takes most of a machine or a GPU unasked.
pub const AUTO_MEMORY_FRACTION: f64 = 0.25;

/// Pool memory of [`Capacity::default`] (256 MiB): about 780 000 blocks of a bare 3D
/// mesh, 1.4 million in 2D — far more than refining a few surfaces needs, and small
/// enough that a whole-mesh [`Mesh::snapshot`] and [`super::check()`] stay fast.
pub const DEFAULT_POOL_BYTES: usize = 256 << 20;

/// Largest root-grid extent, in cells per axis: block origins are `i32` in units of
/// `1/2048` root cell ([`units::ROOT_CELL`]), and the far corner of the domain must fit.
pub const MAX_CELLS: usize = (i32::MAX as usize / units::ROOT_CELL as usize) & !(EDGE - 1);

/// How many blocks the pool preallocates.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum Capacity {
    /// Exactly this many blocks (root blocks included).
    Blocks {
        /// Pool size in blocks.
        blocks: usize,
    },
    /// As many blocks as fit in this fraction `(0, 0.9]` of the memory the device can use
    /// ([`Device::free_memory`]), given the bytes each block needs (metadata plus any
    /// per-block solver data). At most [`MAX_MEMORY_FRACTION`]: see there why not all.
    FreeMemoryFraction {
        /// Share of the usable memory, `(0, 0.9]`.
        fraction: f64,
    },
    /// Room for every block the mesh can reach — the root grid refined everywhere to the
    /// last level, `n_root · Σ_{l<L} 2^{D·l}` blocks — but no more than `max_bytes` of
    /// pool (`None`: no byte limit) and no more than [`AUTO_MEMORY_FRACTION`] of the
    /// memory the device can use. Where the cap is below the full hierarchy, refinement
    /// past it ends with [`Error::OutOfMemory`] for "the block pool" (the forest stays
    /// valid). On the CPU the pool's memory is only touched as blocks are handed out.
    Auto {
        /// Most bytes of pool (`None`: only the memory cap applies).
        #[serde(default)]
        max_bytes: Option<usize>,
    },
}

impl Default for Capacity {
    /// [`Capacity::Auto`] limited to [`DEFAULT_POOL_BYTES`] (256 MiB): the whole hierarchy
    /// where it fits in that, otherwise as many blocks as do (e.g. the README's 64³ mesh
    /// of 5 levels gets about 780 000 blocks, not the 19 million of its full hierarchy).
    /// A [`crate::Forest`] without a capacity uses [`Capacity::automatic`] instead.
    fn default() -> Self {
        Capacity::Auto { max_bytes: Some(DEFAULT_POOL_BYTES) }
    }
}

impl Capacity {
    /// The pool of a [`crate::Forest`] whose configuration names none: [`Capacity::Auto`]
    /// without a byte limit, i.e. the full hierarchy the levels can reach, capped at
    /// [`AUTO_MEMORY_FRACTION`] of the memory the device can use.
    pub const fn automatic() -> Self {
        Capacity::Auto { max_bytes: None }
    }

    /// Blocks of `n_root` root blocks refined everywhere to `levels` levels in `dim`
    /// dimensions: `n_root · Σ_{l<levels} 2^{dim·l}` (None if that overflows).
    pub fn full_hierarchy(dim: usize, n_root: usize, levels: usize) -> Option<usize> {
        (0..levels).try_fold(0usize, |sum, l| {
            let per_root = 1usize.checked_shl(u32::try_from(dim * l).ok()?)?;
            sum.checked_add(n_root.checked_mul(per_root)?)
        })
    }

    /// Checks the values (a named [`Error::InvalidParameter`] otherwise).
    pub fn validate(&self) -> Result<()> {
        match *self {
            Capacity::Blocks { blocks: 0 } => {
                Err(Error::invalid("capacity.blocks", 0, "at least the number of root blocks"))
            }
            Capacity::FreeMemoryFraction { fraction } if !(fraction > 0.0 && fraction <= MAX_MEMORY_FRACTION) => {
                Err(Error::invalid(
                    "capacity.fraction",
                    fraction,
                    format!(
                        "a fraction in (0, {MAX_MEMORY_FRACTION}] of the free memory (the rest is for work \
                         buffers, the process and the system)"
                    ),
                ))
            }
            _ => Ok(()),
        }
    }

    /// The pool size in blocks for a mesh of `n_root` root blocks and `levels` levels in
    /// `dim` dimensions, with `bytes_per_block` bytes per block (metadata and solver data)
    /// on a device where `available` bytes can be used ([`Device::free_memory`]). The
    /// automatic sizes are at least `n_root` (whether that fits is checked when the pool
    /// is allocated) and below 2³¹ − 1 (32-bit IDs).
    pub fn resolve(
        &self,
        dim: usize,
        n_root: usize,
        levels: usize,
        bytes_per_block: usize,
        available: usize,
    ) -> Result<usize> {
        self.validate()?;
        let per = bytes_per_block.max(1);
        let limit = i32::MAX as usize - 1;
        Ok(match *self {
            Capacity::Blocks { blocks } => blocks,
            Capacity::FreeMemoryFraction { fraction } => ((available as f64 * fraction) as usize / per).min(limit),
            Capacity::Auto { max_bytes } => {
                let full = Self::full_hierarchy(dim, n_root, levels).unwrap_or(usize::MAX);
                let mut cap = (available as f64 * AUTO_MEMORY_FRACTION) as usize / per;
                if let Some(b) = max_bytes {
                    cap = cap.min(b / per);
                }
                full.min(cap).min(limit).max(n_root)
            }
        })
    }
}

/// Geometry and limits of a forest, validated by [`Mesh::new`] ([`MeshSpec::validate`]).
#[derive(Clone, Debug, PartialEq)]
pub struct MeshSpec {
    /// Root-level cells per axis: multiples of 4 from 4 to [`MAX_CELLS`] on the axes of
    /// the dimension (the others are ignored).
    pub cells: [usize; 3],
    /// Boundary of each face ([`crate::Face::index`] order); periodic faces wrap links and
    /// come in opposite pairs.
    pub boundaries: [Boundary; 6],
    /// Grid levels allowed, `1 ..= MAX_LEVELS` (1: the root grid only).
    pub max_levels: usize,
    /// Pool size.
    pub capacity: Capacity,
}

impl MeshSpec {
    /// Checks every field for a mesh of dimension `dim` (2 or 3); a named
    /// [`Error::InvalidParameter`] giving the value and the allowed range otherwise.
    pub fn validate(&self, dim: usize) -> Result<()> {
        if dim != 2 && dim != 3 {
            return Err(Error::invalid("dim", dim, "2 or 3"));
        }
        for a in 0..dim {
            let n = self.cells[a];
            if n < EDGE || n % EDGE != 0 {
                return Err(Error::invalid(
                    "cells",
                    format!("{n} (axis {a})"),
                    format!("a multiple of {EDGE} (the block edge), at least {EDGE}"),
                ));
            }
        }
        for a in 0..dim {
            let (lo, hi) = (self.boundaries[2 * a], self.boundaries[2 * a + 1]);
            if (lo == Boundary::Periodic) != (hi == Boundary::Periodic) {
                let face = if lo == Boundary::Periodic { 2 * a } else { 2 * a + 1 };
                return Err(Error::invalid(
                    "boundaries",
                    format!("{} periodic, opposite face not", crate::config::Face::ALL[face].name()),
                    "periodic faces come in opposite pairs",
                ));
            }
        }
        let max = ramus_kernels::amr::MAX_LEVELS;
        if self.max_levels < 1 || self.max_levels > max {
            return Err(Error::invalid("max_levels", self.max_levels, format!("1 to {max} grid levels")));
        }
        self.capacity.validate()
    }
}

/// The block pool and its ID sets, on a [`Device`].
///
/// All arrays are documented in [`ramus_kernels::amr`]. The host keeps only scalar counts
/// (`id_counts`, `gap_count`); block data never leaves the device during `adapt`.
///
/// The pool arrays are allocated zeroed and the free state of an ID (level −1,
/// `INACTIVE`, links `N_SKIP`, ...) is written only when the IDs around it are about to
/// be handed out (`Mesh::prepare_ids`): on the CPU a large pool costs memory only for
/// the part in use.
pub struct Mesh<D: Dim> {
    pub(super) device: Device,
    pub(super) spec: MeshSpec,
    /// Root blocks per axis (1 on unused axes).
    pub(super) root_blocks: [usize; 3],
    /// Pool size in blocks.
    pub(super) capacity: usize,
    pub(super) level: Buffer<i32>,
    pub(super) origin: Buffer<i32>,
    pub(super) status: Buffer<i32>,
    pub(super) mark: Buffer<i32>,
    pub(super) parent: Buffer<i32>,
    pub(super) child: Buffer<i32>,
    pub(super) nbr: Buffer<i32>,
    pub(super) nbr_child: Buffer<i32>,
    pub(super) onb: Buffer<u32>,
    pub(super) block_mask: Buffer<u32>,
    pub(super) cell_mask: Buffer<u8>,
    /// One ID set per level, each with room for the whole pool.
    pub(super) id_sets: Vec<Buffer<u32>>,
    /// Active IDs per level.
    pub(super) id_counts: Vec<usize>,
    /// Free IDs, enumerated in reverse: the next IDs handed out are at the end.
    pub(super) gaps: Buffer<u32>,
    pub(super) gap_count: usize,
    /// IDs below this have been handed out at least once (root blocks included). Never
    /// used IDs are `high_water … capacity − 1`, the first `capacity − high_water` entries
    /// of the gap set (in descending order): new IDs come from its end, freed ones are
    /// appended there, so the never used stay a prefix and every active ID is below.
    pub(super) high_water: usize,
    /// Never used IDs `high_water … fresh − 1` hold the free state on the device, and so
    /// do their gap-set entries; those from `max(fresh, high_water)` on still hold the
    /// zeros of the allocation (see [`Mesh::prepare_ids`]).
    pub(super) fresh: usize,
    _dim: std::marker::PhantomData<D>,
}

/// Read-only access to the pool's per-block arrays ([`Mesh::arrays`]); layouts and
/// values are documented in [`ramus_kernels::amr`] (paper, section "Data Structures").
/// Block data that launches its own kernels ([`super::BlockData`]) reads the mesh here.
#[derive(Clone, Copy)]
pub struct PoolArrays<'a> {
    /// Level of each block (−1: free).
    pub level: &'a Buffer<i32>,
    /// Origin of each block (3 per block, in `1/2048` root cells).
    pub origin: &'a Buffer<i32>,
    /// Status of each block ([`crate::Status`] values).
    pub status: &'a Buffer<i32>,
    /// Refinement mark of each block ([`crate::Mark`] values).
    pub mark: &'a Buffer<i32>,
    /// Parent ID (−1 for root blocks).
    pub parent: &'a Buffer<i32>,
    /// First child ID (−1: none).
    pub child: &'a Buffer<i32>,
    /// Same-level neighbour IDs (`3^D` per block).
    pub nbr: &'a Buffer<i32>,
    /// Children of the neighbours (`3^D` per block).
    pub nbr_child: &'a Buffer<i32>,
    /// Domain faces each block touches (bit mask).
    pub onb: &'a Buffer<u32>,
    /// Per-block summary of the cell masks.
    pub block_mask: &'a Buffer<u32>,
    /// Per-cell masks (`4^D` per block: ghost, coarse-under-fine).
    pub cell_mask: &'a Buffer<u8>,
}

/// The mesh as a criterion kernel sees it ([`Mesh::marking_views`]).
pub(crate) struct MarkingViews<'a> {
    pub mark: DeviceSliceMut<'a, i32>,
    pub status: DeviceSlice<'a, i32>,
    pub nbr: DeviceSlice<'a, i32>,
    pub onb: DeviceSlice<'a, u32>,
    pub id_sets: &'a [Buffer<u32>],
    pub id_counts: &'a [usize],
}

impl<'a> MarkingViews<'a> {
    /// The ID sets of the levels `chosen` picks, for one launch ([`Mesh::level_sets`]).
    pub fn level_sets(&self, chosen: impl Fn(usize) -> bool) -> Result<LevelSets<Views<'a>>> {
        super::id_sets::level_sets(self.id_sets, self.id_counts, chosen)
    }
}

/// Metadata bytes per block of the pool (ID sets included).
pub fn metadata_bytes_per_block<D: Dim>(max_levels: usize) -> usize {
    4 * (7 + 3 + 2 * D::NEIGHBORS + max_levels + 1) + D::BLOCK_CELLS
}

/// A zeroed device buffer of `blocks · per` elements (an error if the count overflows).
fn pool_array<T: Elem>(device: &Device, blocks: usize, per: usize) -> Result<Buffer<T>> {
    let n = blocks.checked_mul(per).ok_or_else(|| Error::OutOfMemory {
        what: format!("a pool array of {blocks} blocks"),
        needed: u64::MAX,
        available: 0,
    })?;
    device.zeros(n)
}

impl<D: Dim> Mesh<D> {
    /// Builds the root grid on `device`; `extra_bytes_per_block` is what the caller will
    /// store per block besides the metadata (e.g. distributions), for sizing the pool
    /// ([`Capacity::resolve`]). The spec is validated first ([`MeshSpec::validate`]); a
    /// root grid or pool that does not fit in the memory the device can use is an
    /// [`Error::OutOfMemory`].
    pub fn new(device: Device, spec: MeshSpec, extra_bytes_per_block: usize) -> Result<Self> {
        spec.validate(D::D)?;
        let per_block = metadata_bytes_per_block::<D>(spec.max_levels).saturating_add(extra_bytes_per_block);
        let root_grid = "the root grid (built in host memory first)";
        let n_root = (0..D::D).try_fold(1usize, |n, a| n.checked_mul(spec.cells[a] / EDGE)).ok_or_else(|| {
            Error::OutOfMemory {
                what: format!("{root_grid}: more than 2^64 root blocks"),
                needed: u64::MAX,
                available: 0,
            }
        })?;
        check_host_memory(root_grid, n_root.checked_mul(8 * D::NEIGHBORS))?;
        if let Some(a) = (0..D::D).find(|&a| spec.cells[a] > MAX_CELLS) {
            return Err(Error::invalid(
                "cells",
                format!("{} (axis {a})", spec.cells[a]),
                format!("at most {MAX_CELLS} per axis (block origins are 32-bit, 1/2048 root cell units)"),
            ));
        }
        let root = RootGrid::<D>::new(spec.cells, &spec.boundaries)?;
        let available = device.free_memory()?;
        let capacity = spec.capacity.resolve(D::D, n_root, spec.max_levels, per_block, available)?;
        if capacity < n_root {
            return Err(Error::OutOfMemory {
                what: format!("a pool for the {n_root} root blocks (capacity {capacity} blocks)"),
                needed: n_root.saturating_mul(per_block) as u64,
                available: capacity.saturating_mul(per_block) as u64,
            });
        }
        if capacity.checked_mul(per_block).is_none_or(|b| b > available) {
            return Err(Error::OutOfMemory {
                what: format!("a pool of {capacity} blocks"),
                needed: capacity.saturating_mul(per_block) as u64,
                available: available as u64,
            });
        }
        if capacity >= i32::MAX as usize {
            return Err(Error::invalid("capacity", capacity, "fewer than 2^31 - 1 blocks (32-bit IDs)"));
        }

        let (nb, m) = (D::NEIGHBORS, D::BLOCK_CELLS);
        let mut mesh = Mesh {
            level: pool_array(&device, capacity, 1)?,
            origin: pool_array(&device, capacity, 3)?,
            status: pool_array(&device, capacity, 1)?,
            mark: pool_array(&device, capacity, 1)?,
            parent: pool_array(&device, capacity, 1)?,
            child: pool_array(&device, capacity, 1)?,
            nbr: pool_array(&device, capacity, nb)?,
            nbr_child: pool_array(&device, capacity, nb)?,
            onb: pool_array(&device, capacity, 1)?,
            block_mask: pool_array(&device, capacity, 1)?,
            cell_mask: pool_array(&device, capacity, m)?,
            gaps: pool_array(&device, capacity, 1)?,
            id_sets: (0..spec.max_levels).map(|_| pool_array(&device, capacity, 1)).collect::<Result<_>>()?,
            id_counts: vec![0; spec.max_levels],
            gap_count: capacity - n_root,
            high_water: n_root,
            fresh: n_root,
            root_blocks: [1; 3],
            capacity,
            spec,
            device,
            _dim: std::marker::PhantomData,
        };
        for a in 0..D::D {
            mesh.root_blocks[a] = mesh.spec.cells[a] / EDGE;
        }
        mesh.write_root(&root)?;
        Ok(mesh)
    }

    /// Writes the root blocks `0 … n_root − 1` (level 0, unrefined, links of the root
    /// grid) and the level-0 ID set.
    fn write_root(&mut self, root: &RootGrid<D>) -> Result<()> {
        use crate::backend::memory::try_vec;
        let n = root.len();
        let nb = D::NEIGHBORS;
        let what = "the root blocks (host copy)";
        let mut origin = try_vec(what, 0i32, 3 * n)?;
        for b in 0..n {
            let p = root.position(b);
            for a in 0..3 {
                origin[3 * b + a] = p[a] as i32 * units::block(0);
            }
        }
        let links = root.links();
        let nbr_child = crate::backend::memory::try_collect(
            what,
            links.len(),
            links.iter().map(|&l| if l >= 0 { NO_CHILD } else { l }),
        )?;
        debug_assert!((0..n).all(|b| links[b * nb + link_index([0; 3], D::D)] == b as i32));
        let dev = self.device.clone();
        dev.write(&mut self.level, 0, &try_vec(what, 0i32, n)?)?;
        dev.write(&mut self.origin, 0, &origin)?;
        dev.write(&mut self.status, 0, &try_vec(what, status::UNREFINED, n)?)?;
        dev.write(&mut self.parent, 0, &try_vec(what, -1i32, n)?)?;
        dev.write(&mut self.child, 0, &try_vec(what, -1i32, n)?)?;
        dev.write(&mut self.nbr, 0, links)?;
        dev.write(&mut self.nbr_child, 0, &nbr_child)?;
        dev.write(&mut self.onb, 0, root.on_boundary())?;
        let ids = crate::backend::memory::try_collect(what, n, 0..n as u32)?;
        dev.write(&mut self.id_sets[0], 0, &ids)?;
        self.id_counts[0] = n;
        Ok(())
    }

    /// Makes the never used IDs below `upto` ready to be handed out: writes the free state
    /// (level −1, `INACTIVE`, parent and child −1, links `N_SKIP`; origin, mark and masks
    /// are already the zeros of the allocation) and their gap-set entries (ID
    /// `capacity − 1 − i` at `i`), for IDs from `max(fresh, high_water)` up to `upto`
    /// rounded up by half the range prepared so far (so that a growing forest prepares
    /// O(log) times), at most `capacity`. IDs at or above `high_water` have never been
    /// used, so this never overwrites a block.
    pub(crate) fn prepare_ids(&mut self, upto: usize) -> Result<()> {
        let start = self.fresh.max(self.high_water);
        if upto <= start {
            return Ok(());
        }
        let end = upto.max(start + start / 2).min(self.capacity);
        let n = end - start;
        let nb = D::NEIGHBORS;
        let dev = self.device.clone();
        // The free state is −1 in every array that has one (a memset of 0xFF bytes, on the
        // device: no host copy in the adaptation's critical path).
        const _: () = assert!(status::INACTIVE == -1 && N_SKIP == -1);
        for buf in [&mut self.level, &mut self.status, &mut self.parent, &mut self.child] {
            dev.fill_bytes(buf, start, n, 0xFF)?;
        }
        dev.fill_bytes(&mut self.nbr, start * nb, n * nb, 0xFF)?;
        dev.fill_bytes(&mut self.nbr_child, start * nb, n * nb, 0xFF)?;
        let what = "the gap-set entries of new block IDs (host copy)";
        let gaps = crate::backend::memory::try_collect(what, n, (start as u32..end as u32).rev())?;
        dev.write(&mut self.gaps, self.capacity - end, &gaps)?;
        self.fresh = end;
        Ok(())
    }

    /// First ID whose free state is still the allocation's zeros (see [`Self::prepare_ids`]).
    pub(crate) fn untouched_from(&self) -> usize {
        self.fresh.max(self.high_water)
    }

    /// The pool's per-block arrays, read-only.
    pub fn arrays(&self) -> PoolArrays<'_> {
        PoolArrays {
            level: &self.level,
            origin: &self.origin,
            status: &self.status,
            mark: &self.mark,
            parent: &self.parent,
            child: &self.child,
            nbr: &self.nbr,
            nbr_child: &self.nbr_child,
            onb: &self.onb,
            block_mask: &self.block_mask,
            cell_mask: &self.cell_mask,
        }
    }

    /// What a criterion kernel needs of the mesh: the marks to write, and the statuses,
    /// links, boundary flags and ID sets it reads.
    pub(crate) fn marking_views(&mut self) -> MarkingViews<'_> {
        MarkingViews {
            mark: self.mark.view_mut(),
            status: self.status.view(),
            nbr: self.nbr.view(),
            onb: self.onb.view(),
            id_sets: &self.id_sets,
            id_counts: &self.id_counts,
        }
    }

    /// The ID set of every level (level `l`'s active IDs are the first
    /// `blocks_per_level()[l]` entries of `id_sets()[l]`, in no particular order).
    pub fn id_sets(&self) -> &[Buffer<u32>] {
        &self.id_sets
    }

    /// IDs below this have been handed out at least once: every active ID is below it
    /// (checkpoints store the block data of IDs `0 … high_water − 1`).
    pub fn high_water(&self) -> usize {
        self.high_water
    }

    /// Pool size in blocks.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Active blocks per level (leaves and interior nodes).
    pub fn blocks_per_level(&self) -> &[usize] {
        &self.id_counts
    }

    /// Active blocks on all levels.
    pub fn active_blocks(&self) -> usize {
        self.id_counts.iter().sum()
    }

    /// Free pool slots.
    pub fn free_blocks(&self) -> usize {
        self.gap_count
    }

    /// Grid levels allowed.
    pub fn max_levels(&self) -> usize {
        self.spec.max_levels
    }

    /// The device holding the pool.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The validated geometry.
    pub fn spec(&self) -> &MeshSpec {
        &self.spec
    }

    /// Root blocks per axis.
    pub fn root_blocks(&self) -> [usize; 3] {
        self.root_blocks
    }
}
