//! Marking functions: the refinement criteria that set `mark` before [`Mesh::adapt`].
//!
//! Marks are requests: `adapt` honours [`Mark::Refine`] on leaves where 2:1 balance and the
//! level limit allow, and [`Mark::Coarsen`] on leaves whose siblings all ask too (see
//! [`ramus_kernels::amr`]). All functions but [`Mesh::mark_with`] run as kernels on the
//! device. Coordinates are in root cells (a root cell is 1.0; the domain spans
//! `[0, cells[a]]` on axis `a`).
//!

use ramus_kernels::amr::args::MarkArgs;
use ramus_kernels::amr::mark::{MarkRegion, MarkWallDistance, REGION_BOX, REGION_SPHERE, REGION_SPHERE_SURFACE};
use ramus_kernels::amr::select::{FlagLeaves, Geometry, SetMark, WriteMark};
use ramus_kernels::amr::units;
use ramus_kernels::obstacle::{MarkObstacleDistance, ObstacleMarkArgs, Shapes};
use ramus_kernels::surface::{MarkSurfaceDistance, SurfaceMarkArgs};
use ramus_kernels::Dim;

use super::workspace::{amr_args, ensure, pool_views, run, AdaptWorkspace};
use super::{Mark, Mesh};
use crate::backend::primitives as prim;
use crate::config::Face;
use crate::error::{Error, Result};

/// A region of the domain, in root cells (the z components are ignored in 2D).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Region {
    /// Axis-aligned box; a block is inside if its box overlaps with positive volume.
    Box {
        /// Lower corner (root cells).
        min: [f64; 3],
        /// Upper corner (root cells).
        max: [f64; 3],
    },
    /// Solid sphere (disc in 2D); a block is inside if some point of it is closer than
    /// `radius` to the centre.
    Sphere {
        /// Centre (root cells).
        center: [f64; 3],
        /// Radius (root cells).
        radius: f64,
    },
    /// Sphere surface (circle in 2D); a block is on it if its nearest point is within and
    /// its farthest point outside (or on) the sphere.
    SphereSurface {
        /// Centre (root cells).
        center: [f64; 3],
        /// Radius (root cells).
        radius: f64,
    },
}

/// Geometry of a leaf, for [`Mesh::mark_with`] (root cells).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockGeometry {
    /// Block ID.
    pub id: u32,
    /// Lower corner.
    pub origin: [f64; 3],
    /// Edge length (`4 / 2^level`).
    pub size: f64,
    /// Grid level.
    pub level: usize,
}

impl<D: Dim> Mesh<D> {
    /// Sets `mark` on the listed blocks (inactive IDs are ignored; duplicates allowed).
    pub fn mark_blocks(&mut self, ids: &[u32], mark: Mark) -> Result<()> {
        let mut ids = ids.to_vec();
        // Distinct IDs: one writer per block.
        ids.sort_unstable();
        ids.dedup();
        if let Some(&b) = ids.iter().find(|&&b| b as usize >= self.capacity) {
            return Err(Error::invalid("block id", b, format!("below the pool capacity {}", self.capacity)));
        }
        // IDs never handed out are inactive (and may not hold their free state yet).
        ids.retain(|&b| (b as usize) < self.high_water);
        let dev = self.device.clone();
        let buf = dev.upload(&ids)?;
        let a = amr_args!(self, SetValue { blocks: buf.view(), value: mark.code() });
        run::<SetMark<D>>(&dev, ids.len(), a)?;
        self.device.synchronize()
    }

    /// Sets `mark` on every leaf that intersects `region`.
    pub fn mark_region(&mut self, region: Region, mark: Mark) -> Result<()> {
        let (kind, p) = match region {
            Region::Box { min, max } => (REGION_BOX, [min[0], min[1], min[2], max[0], max[1], max[2]]),
            Region::Sphere { center: c, radius } => (REGION_SPHERE, [c[0], c[1], c[2], radius, 0.0, 0.0]),
            Region::SphereSurface { center: c, radius } => {
                (REGION_SPHERE_SURFACE, [c[0], c[1], c[2], radius, 0.0, 0.0])
            }
        };
        self.run_mark::<MarkRegion<D>>(kind, mark.code(), p)
    }

    /// The paper's wall-distance rule: marks for refinement every leaf on level `L` whose
    /// distance to the nearest of `faces` is below `distance / 2^L` (root cells). With
    /// `freeze`, the refinement is permanent: such blocks become `REFINED_PERMANENT` when
    /// refined, and already refined blocks within the distance are frozen now, so they
    /// are never coarsened.
    pub fn mark_wall_distance(&mut self, faces: &[Face], distance: f64, freeze: bool) -> Result<()> {
        if distance.is_nan() || distance < 0.0 {
            return Err(Error::invalid("distance", distance, "a non-negative distance in root cells"));
        }
        let mask = faces.iter().filter(|f| f.axis() < D::D).fold(0u32, |m, f| m | 1 << f.index());
        let c = self.spec.cells;
        let p = [distance, 0.0, 0.0, c[0] as f64, c[1] as f64, c[2] as f64];
        self.run_mark::<MarkWallDistance<D>>(mask, freeze as i32, p)
    }

    /// The wall-distance rule toward built-in obstacles (paper, "Flow Past a Square
    /// Cylinder"): as [`Self::mark_wall_distance`], with the distance from a block to the
    /// nearest shape.
    pub fn mark_obstacle_distance(&mut self, shapes: &Shapes, distance: f64, freeze: bool) -> Result<()> {
        if distance.is_nan() || distance < 0.0 {
            return Err(Error::invalid("distance", distance, "a non-negative distance in root cells"));
        }
        if shapes.count == 0 {
            return Ok(());
        }
        let dev = self.device.clone();
        let mut ws = AdaptWorkspace::new(&dev)?;
        let n = self.gather_active(&mut ws)?;
        let args = ObstacleMarkArgs {
            pool: pool_views!(self),
            list: ws.active.view(),
            shapes: *shapes,
            distance,
            freeze: freeze as u32,
        };
        // SAFETY: the pool arrays hold `capacity` blocks and `ws.active` the `n` active IDs.
        unsafe { dev.launch::<MarkObstacleDistance<D>>(n, args)? };
        dev.synchronize()
    }

    /// The wall-distance rule toward a triangle surface ([`MarkSurfaceDistance`]), as
    /// [`Self::mark_obstacle_distance`] toward the built-in shapes.
    pub(crate) fn mark_surface_distance(
        &mut self,
        surface: &crate::solver::surface::SurfaceBuffers,
        distance: f64,
        freeze: bool,
    ) -> Result<()> {
        if distance.is_nan() || distance < 0.0 {
            return Err(Error::invalid("distance", distance, "a non-negative distance in root cells"));
        }
        let dev = self.device.clone();
        let mut ws = AdaptWorkspace::new(&dev)?;
        let n = self.gather_active(&mut ws)?;
        let args = SurfaceMarkArgs {
            pool: pool_views!(self),
            list: ws.active.view(),
            surface: surface.views(),
            distance,
            freeze: freeze as u32,
        };
        // SAFETY: the pool arrays hold `capacity` blocks and `ws.active` the `n` active IDs;
        // the surface's arrays are those its grid describes.
        unsafe { dev.launch::<MarkSurfaceDistance<D>>(n, args)? };
        dev.synchronize()
    }

    /// Marks each leaf with `f(geometry)`. The closure runs on the host:
    /// this downloads the leaves' geometry and uploads one mark per leaf (use the kernel
    /// marking functions where the cost matters).
    pub fn mark_with(&mut self, f: impl Fn(BlockGeometry) -> Mark) -> Result<()> {
        let leaves = self.leaf_geometry()?;
        let mut marks = Vec::with_capacity(leaves.len());
        for g in &leaves {
            marks.push(f(*g).code() as u32);
        }
        let ids: Vec<u32> = leaves.iter().map(|g| g.id).collect();
        let dev = self.device.clone();
        let ids = dev.upload(&ids)?;
        let marks = dev.upload(&marks)?;
        let a = amr_args!(self, WriteValues { blocks: ids.view(), values: marks.view() });
        run::<WriteMark<D>>(&dev, leaves.len(), a)?;
        self.device.synchronize()
    }

    /// IDs of the leaves, ascending (downloads the leaf list).
    pub fn leaf_ids(&mut self) -> Result<Vec<u32>> {
        let mut ws = AdaptWorkspace::new(&self.device)?;
        let n = self.leaves_into(&mut ws)?;
        let mut v = self.device.read(&ws.to_refine, 0..n)?;
        v.sort_unstable();
        Ok(v)
    }

    /// Number of leaves on each level (downloads the leaf geometry).
    pub fn leaves_per_level(&mut self) -> Result<Vec<usize>> {
        let mut counts = vec![0; self.spec.max_levels];
        for g in self.leaf_geometry()? {
            counts[g.level] += 1;
        }
        Ok(counts)
    }

    /// Geometry of every leaf, in ascending ID order (downloads it).
    pub fn leaf_geometry(&mut self) -> Result<Vec<BlockGeometry>> {
        let dev = self.device.clone();
        let mut ws = AdaptWorkspace::new(&dev)?;
        let n = self.leaves_into(&mut ws)?;
        ensure(&dev, &mut ws.gathered, 4 * n)?;
        let a = amr_args!(self, PerBlock { blocks: ws.to_refine.view(), out: ws.gathered.view_mut() });
        run::<Geometry<D>>(&dev, n, a)?;
        let ids = dev.read(&ws.to_refine, 0..n)?;
        let raw = dev.read(&ws.gathered, 0..4 * n)?;
        let s = 1.0 / units::ROOT_CELL as f64;
        let mut v: Vec<BlockGeometry> = ids
            .iter()
            .zip(raw.chunks_exact(4))
            .map(|(&id, g)| {
                let level = g[0] as i32;
                BlockGeometry {
                    id,
                    origin: [g[1] as i32 as f64 * s, g[2] as i32 as f64 * s, g[3] as i32 as f64 * s],
                    size: units::block(level) as f64 * s,
                    level: level as usize,
                }
            })
            .collect();
        v.sort_unstable_by_key(|g| g.id);
        Ok(v)
    }

    /// Compacts the leaves of the ID sets into `ws.to_refine`; returns their count.
    fn leaves_into(&mut self, ws: &mut AdaptWorkspace) -> Result<usize> {
        let dev = self.device.clone();
        let n = self.gather_active(ws)?;
        ensure(&dev, &mut ws.flags, n)?;
        ensure(&dev, &mut ws.to_refine, n)?;
        let a = amr_args!(self, PerBlock { blocks: ws.active.view(), out: ws.flags.view_mut() });
        run::<FlagLeaves<D>>(&dev, n, a)?;
        prim::compact(&dev, &mut ws.scratch, &ws.flags, &ws.active, n, &mut ws.to_refine)
    }

    /// Runs a geometric marking kernel over the active blocks.
    fn run_mark<K: ramus_kernels::launch::Kernel<Args = MarkArgs> + ramus_kernels::registry::Entry>(
        &mut self,
        kind: u32,
        mark: i32,
        p: [f64; 6],
    ) -> Result<()> {
        let dev = self.device.clone();
        let mut ws = AdaptWorkspace::new(&dev)?;
        let n = self.gather_active(&mut ws)?;
        let args = MarkArgs { pool: pool_views!(self), list: ws.active.view(), kind, mark, p };
        // SAFETY: the pool arrays hold `capacity` blocks and `ws.active` the `n` active
        // IDs; both outlive the synchronisation below.
        unsafe { dev.launch::<K>(n, args)? };
        dev.synchronize()
    }
}
