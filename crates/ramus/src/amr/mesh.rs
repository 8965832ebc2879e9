//! The forest's block pool on a device (paper, section "Data Structures").

use ramus_kernels::amr::{status, units, MARK_NONE, NO_CHILD};
use ramus_kernels::block::{link_index, EDGE};
use ramus_kernels::Dim;

use super::RootGrid;
use crate::backend::device::check_host_memory;
use crate::backend::{Buffer, Device};
use crate::config::Boundary;
use crate::error::{Error, Result};

/// How many blocks the pool preallocates.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum Capacity {
    /// Exactly this many blocks (root blocks included).
    Blocks { blocks: usize },
    /// As many blocks as fit in this fraction (0, 1] of the device's free memory, given
    /// the bytes each block needs (metadata plus any per-block solver data).
    FreeMemoryFraction { fraction: f64 },
}

impl Default for Capacity {
    /// A quarter of the free memory: the library never takes most of a GPU unasked.
    fn default() -> Self {
        Capacity::FreeMemoryFraction { fraction: 0.25 }
    }
}

/// Geometry and limits of a forest, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshSpec {
    /// Root-level cells per axis (multiples of 4; 1 on unused axes).
    pub cells: [usize; 3],
    /// Boundary of each face ([`crate::Face::index`] order); periodic faces wrap links.
    pub boundaries: [Boundary; 6],
    /// Grid levels allowed, `1 ..= MAX_LEVELS` (1: the root grid only).
    pub max_levels: usize,
    /// Pool size.
    pub capacity: Capacity,
}

/// The block pool and its ID sets, on a [`Device`].
///
/// All arrays are documented in [`ramus_kernels::amr`]. The host keeps only scalar counts
/// (`id_counts`, `gap_count`); block data never leaves the device during `adapt`.
pub struct Mesh<D: Dim> {
    pub(crate) device: Device,
    pub(crate) spec: MeshSpec,
    /// Root blocks per axis (1 on unused axes).
    pub(crate) root_blocks: [usize; 3],
    /// Pool size in blocks.
    pub(crate) capacity: usize,
    pub(crate) level: Buffer<i32>,
    pub(crate) origin: Buffer<i32>,
    pub(crate) status: Buffer<i32>,
    pub(crate) mark: Buffer<i32>,
    pub(crate) parent: Buffer<i32>,
    pub(crate) child: Buffer<i32>,
    pub(crate) nbr: Buffer<i32>,
    pub(crate) nbr_child: Buffer<i32>,
    pub(crate) onb: Buffer<u32>,
    pub(crate) block_mask: Buffer<u32>,
    pub(crate) cell_mask: Buffer<u8>,
    /// One ID set per level, each with room for the whole pool.
    pub(crate) id_sets: Vec<Buffer<u32>>,
    /// Active IDs per level.
    pub(crate) id_counts: Vec<usize>,
    /// Free IDs, enumerated in reverse: the next IDs handed out are at the end.
    pub(crate) gaps: Buffer<u32>,
    pub(crate) gap_count: usize,
    /// IDs below this have been handed out at least once (root blocks included). Never
    /// used IDs are `high_water … capacity − 1`, the first `capacity − high_water` entries
    /// of the gap set (in descending order): new IDs come from its end, freed ones are
    /// appended there, so the never used stay a prefix and every active ID is below.
    pub(crate) high_water: usize,
    _dim: std::marker::PhantomData<D>,
}

/// Metadata bytes per block of the pool (ID sets included).
pub fn metadata_bytes_per_block<D: Dim>(max_levels: usize) -> usize {
    4 * (7 + 3 + 2 * D::NEIGHBORS + max_levels + 1) + D::BLOCK_CELLS
}

impl<D: Dim> Mesh<D> {
    /// Builds the root grid on `device`; `extra_bytes_per_block` is what the caller will
    /// store per block besides the metadata (e.g. distributions), for
    /// [`Capacity::FreeMemoryFraction`].
    pub fn new(device: Device, spec: MeshSpec, extra_bytes_per_block: usize) -> Result<Self> {
        if spec.max_levels < 1 || spec.max_levels > ramus_kernels::amr::MAX_LEVELS {
            return Err(Error::invalid(
                "max_levels",
                spec.max_levels,
                format!("1 to {} grid levels", ramus_kernels::amr::MAX_LEVELS),
            ));
        }
        let per_block = metadata_bytes_per_block::<D>(spec.max_levels) + extra_bytes_per_block;
        let root_blocks = (0..D::D).try_fold(1usize, |n, a| n.checked_mul(spec.cells[a] / EDGE));
        check_host_memory("the root grid", root_blocks.and_then(|n| n.checked_mul(8 * D::NEIGHBORS)))?;
        let root = RootGrid::<D>::new(spec.cells, &spec.boundaries);
        let n_root = root.len();
        let capacity = match spec.capacity {
            Capacity::Blocks { blocks } => blocks,
            Capacity::FreeMemoryFraction { fraction } => {
                if !(fraction > 0.0 && fraction <= 1.0) {
                    return Err(Error::invalid("capacity.fraction", fraction, "a fraction in (0, 1]"));
                }
                (device.free_memory()? as f64 * fraction) as usize / per_block
            }
        };
        // The pool arrays are initialised on the host, then uploaded.
        check_host_memory("the block pool", capacity.checked_mul(per_block))?;
        if let Device::Cuda(_) = device {
            let free = device.free_memory()?;
            if capacity.checked_mul(per_block).is_none_or(|b| b > free) {
                return Err(Error::OutOfMemory {
                    what: format!("a pool of {capacity} blocks"),
                    needed: capacity.saturating_mul(per_block) as u64,
                    available: free as u64,
                });
            }
        }
        if capacity < n_root {
            return Err(Error::OutOfMemory {
                what: format!("a pool for the {n_root} root blocks (capacity {capacity} blocks)"),
                needed: (n_root * per_block) as u64,
                available: (capacity * per_block) as u64,
            });
        }
        let u32_ids = u32::try_from(capacity).is_ok() && capacity < i32::MAX as usize;
        if !u32_ids {
            return Err(Error::invalid("capacity", capacity, "fewer than 2^31 blocks"));
        }

        let nb = D::NEIGHBORS;
        let mut level = vec![-1i32; capacity];
        let mut origin = vec![0i32; 3 * capacity];
        let mut stat = vec![status::INACTIVE; capacity];
        let mut nbr = vec![ramus_kernels::block::N_SKIP; capacity * nb];
        let mut nbr_child = vec![ramus_kernels::block::N_SKIP; capacity * nb];
        let mut onb = vec![0u32; capacity];
        for b in 0..n_root {
            level[b] = 0;
            stat[b] = status::UNREFINED;
            let p = root.position(b);
            for a in 0..3 {
                origin[3 * b + a] = p[a] as i32 * units::block(0);
            }
            for k in 0..nb {
                let l = root.links()[b * nb + k];
                nbr[b * nb + k] = l;
                nbr_child[b * nb + k] = if l >= 0 { NO_CHILD } else { l };
            }
            onb[b] = root.on_boundary()[b];
            debug_assert_eq!(nbr[b * nb + link_index([0; 3], D::D)], b as i32);
        }
        let gaps: Vec<u32> = (n_root as u32..capacity as u32).rev().collect();
        let mut id_sets = Vec::with_capacity(spec.max_levels);
        for l in 0..spec.max_levels {
            let mut ids = device.zeros::<u32>(capacity)?;
            if l == 0 {
                let root_ids: Vec<u32> = (0..n_root as u32).collect();
                device.write(&mut ids, 0, &root_ids)?;
            }
            id_sets.push(ids);
        }
        let mut id_counts = vec![0; spec.max_levels];
        id_counts[0] = n_root;
        let mut root_blocks = [1; 3];
        for a in 0..D::D {
            root_blocks[a] = spec.cells[a] / EDGE;
        }
        Ok(Mesh {
            level: device.upload(&level)?,
            origin: device.upload(&origin)?,
            status: device.upload(&stat)?,
            mark: device.upload(&vec![MARK_NONE; capacity])?,
            parent: device.upload(&vec![-1i32; capacity])?,
            child: device.upload(&vec![-1i32; capacity])?,
            nbr: device.upload(&nbr)?,
            nbr_child: device.upload(&nbr_child)?,
            onb: device.upload(&onb)?,
            block_mask: device.zeros(capacity)?,
            cell_mask: device.zeros(capacity * D::BLOCK_CELLS)?,
            gap_count: gaps.len(),
            high_water: n_root,
            gaps: device.upload(&gaps)?,
            id_sets,
            id_counts,
            root_blocks,
            capacity,
            spec,
            device,
            _dim: std::marker::PhantomData,
        })
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
