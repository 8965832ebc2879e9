//! Curved and moving walls on the forest (issue "Geometry for real flows", item 1): the
//! wall table of [`ramus_kernels::curved`] and the pass after each step of a level.
//!
//! The table has one row per block next to solid cells, level after level in the order
//! of the levels' wall lists: per link its wall distance `q` (computed on the device by
//! [`LinkDistance`] whenever the work lists are rebuilt: after every adaptation, at the
//! start and after a restart) and the population the last step sent into the wall
//! (written by the pass, read by the force). Nothing of it is in a checkpoint: `q`
//! follows from the shapes, and the sent populations from the next step.

use ramus_kernels::curved::{CurvedWall, LinkDistance, WallArgs};
use ramus_kernels::surface::{SurfaceLinkArgs, SurfaceLinkDistance};
use ramus_kernels::{Dim, VelocitySet};

use super::schedule::Schedule;
use super::state::Solver;
use crate::amr::Mesh;
use crate::backend::{Buffer, Device, DeviceSlice, Views};
use crate::config::Walls;
use crate::error::{Error, Result};
use crate::{Float, PoolStorage};

/// The wall table and where each level's rows start.
pub(crate) struct CurvedWalls<F> {
    /// The staircase rule with moving shapes (`q = ½` everywhere).
    pub staircase: bool,
    /// Per pool block: its row (valid for the blocks of the wall lists).
    pub slot: Buffer<u32>,
    /// Per link of a row: `q`, or [`ramus_kernels::curved::NO_WALL`].
    pub q: Buffer<F>,
    /// Per link of a row: the shape it meets ([`ramus_kernels::curved::NO_SHAPE`]: none).
    pub shape: Buffer<u8>,
    /// Per link of a row: the `h*` the last step of its level sent into the wall.
    pub post: Buffer<F>,
    /// Per level: its first row.
    pub row0: Vec<usize>,
    /// Per level: whether the pass ran since the rows were last computed (the force
    /// reads the sent populations).
    pub fresh: Vec<bool>,
}

impl<F: Float> CurvedWalls<F> {
    /// The wall table for `walls` when the pass is needed (interpolated walls, or moving
    /// shapes), else `None`.
    pub fn new(dev: &Device, capacity: usize, levels: usize, walls: Walls, moving: bool) -> Result<Option<Self>> {
        if walls == Walls::Staircase && !moving {
            return Ok(None);
        }
        Ok(Some(CurvedWalls {
            staircase: walls == Walls::Staircase,
            slot: dev.zeros(capacity)?,
            q: Buffer::Host(Vec::new()),
            shape: Buffer::Host(Vec::new()),
            post: Buffer::Host(Vec::new()),
            row0: vec![0; levels],
            fresh: vec![false; levels],
        }))
    }
}

/// The arguments both wall kernels take, for level `l`'s wall list.
macro_rules! wall_args {
    ($solver:expr, $curved:expr, $solids:expr, $mesh:expr, $l:expr) => {{
        let pool = $mesh.arrays();
        let list = &$solver.schedule.levels[$l].walls;
        WallArgs::<F, S::Elem, Views> {
            f: $solver.f.view_mut(),
            nbr: pool.nbr.view(),
            onb: $solids.onb.view(),
            solid: $solids.solid.view(),
            level: pool.level.view(),
            origin: pool.origin.view(),
            list: $solver.schedule.ids(list)?,
            row0: $curved.row0[$l] as u32,
            slot: $curved.slot.view_mut(),
            q: $curved.q.view_mut(),
            shape: $curved.shape.view_mut(),
            post: $curved.post.view_mut(),
            shapes: $solids.shapes,
            staircase: $curved.staircase as u32,
        }
    }};
}

impl<Q: VelocitySet, F: Float, S: PoolStorage<F>> Solver<Q, F, S> {
    /// Recomputes the wall table for the rebuilt wall lists.
    pub fn update_curved(&mut self, mesh: &Mesh<Q::Dim>) -> Result<()> {
        let (Some(curved), Some(solids)) = (&mut self.curved, &self.solids) else { return Ok(()) };
        let per_row = Q::Q * <Q::Dim as Dim>::BLOCK_CELLS;
        let mut rows = 0;
        for (l, lists) in self.schedule.levels.iter().enumerate() {
            curved.row0[l] = rows;
            curved.fresh[l] = false;
            rows += lists.walls.len;
        }
        let dev = mesh.device();
        let need = rows * per_row;
        // Room to grow, so that the table is not reallocated at every adaptation.
        let room = need + need / 4 + per_row;
        let small = |len: usize, host: bool| len < need || (matches!(dev, Device::Cuda(_)) && host);
        for buf in [&mut curved.q, &mut curved.post] {
            if small(buf.len(), matches!(buf, Buffer::Host(_))) {
                *buf = dev.zeros(room)?;
            }
        }
        if small(curved.shape.len(), matches!(curved.shape, Buffer::Host(_))) {
            curved.shape = dev.zeros(room)?;
        }
        for l in 0..self.schedule.levels.len() {
            let n = self.schedule.levels[l].walls.len;
            if n == 0 {
                continue;
            }
            let args = wall_args!(self, curved, solids, mesh, l);
            // SAFETY: the wall list holds `n` active blocks flagged `ONB_SOLID`, whose
            // linked neighbours' masks are current (`update_solids` ran first); the table
            // holds rows `row0 .. row0 + n` (sized above), `slot` every pool block.
            unsafe { dev.launch::<LinkDistance<Q, F, S>>(n * <Q::Dim as Dim>::BLOCK_CELLS, args)? };
            // Links into an STL body: `q` from its triangles (the staircase keeps ½).
            if let (Some(surface), false) = (&solids.surface, curved.staircase) {
                let pool = mesh.arrays();
                let list = &self.schedule.levels[l].walls;
                let args = SurfaceLinkArgs::<F, Views> {
                    level: pool.level.view(),
                    origin: pool.origin.view(),
                    list: self.schedule.ids(list)?,
                    row0: curved.row0[l] as u32,
                    q: curved.q.view_mut(),
                    shape: curved.shape.view(),
                    surface: surface.views(),
                };
                // SAFETY: as above, after `LinkDistance` filled the same rows (launch
                // order); the surface's arrays are those its grid describes.
                unsafe { dev.launch::<SurfaceLinkDistance<Q, F>>(n * <Q::Dim as Dim>::BLOCK_CELLS, args)? };
            }
        }
        Ok(())
    }

    /// The wall pass after a step of level `l`, which left it in layout `odd`.
    pub(crate) fn wall_pass(&mut self, mesh: &Mesh<Q::Dim>, l: usize, odd: bool) -> Result<()> {
        let (Some(curved), Some(solids)) = (&mut self.curved, &self.solids) else { return Ok(()) };
        let n = self.schedule.levels[l].walls.len;
        curved.fresh[l] = true;
        if n == 0 {
            return Ok(());
        }
        let args = wall_args!(self, curved, solids, mesh, l);
        let dev = mesh.device();
        // SAFETY: as in `update_curved`, whose rows for this list are current (computed
        // at the last rebuild of the lists); the step of level `l` has completed (launch
        // order) and nothing else touches the level until the pass is done.
        unsafe {
            if odd {
                dev.launch::<CurvedWall<Q, F, S, true>>(n * <Q::Dim as Dim>::BLOCK_CELLS, args)
            } else {
                dev.launch::<CurvedWall<Q, F, S, false>>(n * <Q::Dim as Dim>::BLOCK_CELLS, args)
            }
        }
    }
}

/// The wall table's arrays for the force kernel (`none` without the pass), or an error if
/// a level with obstacle leaves has not stepped since its rows were computed.
pub(crate) fn wall_views<'a, F: Float>(
    curved: &'a Option<CurvedWalls<F>>,
    schedule: &Schedule,
) -> Result<WallViews<'a, F>> {
    let Some(c) = curved else {
        return Ok(WallViews {
            curved: false,
            slot: DeviceSlice::none(),
            q: DeviceSlice::none(),
            shape: DeviceSlice::none(),
            post: DeviceSlice::none(),
        });
    };
    if let Some(l) = (0..c.fresh.len()).find(|&l| !c.fresh[l] && schedule.levels[l].obstacle.len > 0) {
        return Err(Error::invalid(
            "force",
            format!("requested before level {l} stepped since the last adaptation or restart"),
            "a force after at least one step (curved or moving walls keep the populations a step sends)",
        ));
    }
    Ok(WallViews { curved: true, slot: c.slot.view(), q: c.q.view(), shape: c.shape.view(), post: c.post.view() })
}

/// The wall table as the force kernel reads it.
pub(crate) struct WallViews<'a, F> {
    pub curved: bool,
    pub slot: DeviceSlice<'a, u32>,
    pub q: DeviceSlice<'a, F>,
    pub shape: DeviceSlice<'a, u8>,
    pub post: DeviceSlice<'a, F>,
}
