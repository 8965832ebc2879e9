//! Solid cells on the forest and the force on them (paper, sections "Lattice Boltzmann
//! Method" (bounce-back) and "Flow Past a Square Cylinder" (momentum exchange)).
//!
//! Per block the solver keeps a solid-cell mask and its own boundary flags (the mesh's
//! `onb` plus [`ramus_kernels::stream::ONB_SOLID`]); both are recomputed for every active block after each
//! adaptation, before new children are filled. Built-in shapes are evaluated by a
//! kernel; a user closure runs on the host (one download of the block geometry and one
//! upload of the masks per adaptation). An STL body ([`super::surface`]) is voxelised by a
//! kernel after them.

use std::sync::Arc;

use ramus_kernels::obstacle::{ForceArgs, ObstacleForce, Shapes, SolidArgs, SolidFlags, SolidMask, ALL_SOLIDS};
use ramus_kernels::surface::{SurfaceSolid, SurfaceSolidArgs};
use ramus_kernels::{Dim, VelocitySet};

use super::curved::wall_views;
use super::state::Solver;
use super::surface::SurfaceBuffers;
use crate::amr::Mesh;
use crate::backend::{Buffer, Device, DeviceSlice, Views};
use crate::error::Result;
use crate::{Float, PoolStorage};

/// A user solid geometry: whether the point (root cells) is solid.
pub type SolidFn = Arc<dyn Fn([f64; 3]) -> bool + Send + Sync>;

/// Solid masks and flags of the pool, and what defines them.
pub(crate) struct Solids {
    pub shapes: Shapes,
    pub geometry: Option<SolidFn>,
    /// An STL body.
    pub surface: Option<SurfaceBuffers>,
    /// Per block: bit `t` set if cell `t` is solid.
    pub solid: Buffer<u64>,
    /// Per block: the solver's boundary flags.
    pub onb: Buffer<u32>,
}

impl Solids {
    pub fn new(
        dev: &Device,
        capacity: usize,
        shapes: Shapes,
        geometry: Option<SolidFn>,
        surface: Option<SurfaceBuffers>,
    ) -> Result<Self> {
        Ok(Solids { shapes, geometry, surface, solid: dev.zeros(capacity)?, onb: dev.zeros(capacity)? })
    }
}

/// The per-block boundary flags and solid masks the kernels read: the solver's own when
/// there are obstacles, else the mesh's `onb` and no masks.
pub(crate) fn walls<'a, D: Dim>(
    solids: &'a Option<Solids>,
    mesh: &'a Mesh<D>,
) -> (DeviceSlice<'a, u32>, DeviceSlice<'a, u64>) {
    match solids {
        Some(s) => (s.onb.view(), s.solid.view()),
        None => (mesh.arrays().onb.view(), DeviceSlice::none()),
    }
}

impl<Q: VelocitySet, F: Float, S: PoolStorage<F>> Solver<Q, F, S> {
    /// Recomputes the solid masks and boundary flags of every active block.
    pub fn update_solids(&mut self, mesh: &Mesh<Q::Dim>) -> Result<()> {
        let Some(s) = &mut self.solids else { return Ok(()) };
        let dev = mesh.device();
        let levels = mesh.max_levels();
        if let Some(g) = &s.geometry {
            let snap = mesh.snapshot_active()?;
            let m = <Q::Dim as Dim>::BLOCK_CELLS;
            let mut masks = vec![0u64; snap.capacity];
            for ids in &snap.id_sets {
                for &b in ids {
                    let b = b as usize;
                    let o = [snap.origin[3 * b], snap.origin[3 * b + 1], snap.origin[3 * b + 2]];
                    for t in 0..m {
                        let x = ramus_kernels::obstacle::cell_centre(o, snap.level[b], t);
                        if s.shapes.contains(x, <Q::Dim as Dim>::D) || g(x) {
                            masks[b] |= 1 << t;
                        }
                    }
                }
            }
            dev.write(&mut s.solid, 0, &masks)?;
        }
        // Masks of every level first (shapes, then the surface), then the flags, which
        // read the neighbours' masks (launch order).
        for pass in 0..2 {
            for l in 0..levels {
                let n = mesh.blocks_per_level()[l];
                if n == 0 {
                    continue;
                }
                let pool = mesh.arrays();
                let list = mesh.id_sets()[l].slice(..n)?;
                let args = SolidArgs::<Views> {
                    list,
                    level: pool.level.view(),
                    origin: pool.origin.view(),
                    nbr: pool.nbr.view(),
                    mesh_onb: pool.onb.view(),
                    solid: s.solid.view_mut(),
                    onb: s.onb.view_mut(),
                    shapes: s.shapes,
                };
                // SAFETY: the ID set holds `n` active blocks; the masks and flags cover the
                // pool. Pass 0 writes only masks, pass 1 reads them (after pass 0 of every
                // level, in launch order).
                unsafe {
                    if pass == 1 {
                        dev.launch::<SolidFlags<Q::Dim>>(n, args)?;
                        continue;
                    }
                    if s.geometry.is_none() {
                        dev.launch::<SolidMask<Q::Dim>>(n, args)?;
                    }
                }
                if let Some(surface) = &s.surface {
                    let args = SurfaceSolidArgs::<Views> {
                        list: mesh.id_sets()[l].slice(..n)?,
                        level: pool.level.view(),
                        origin: pool.origin.view(),
                        solid: s.solid.view_mut(),
                        surface: surface.views(),
                    };
                    // SAFETY: as above; the surface's arrays are those its grid describes
                    // (`SurfaceBuffers::new`). It ors into the masks just written.
                    unsafe { dev.launch::<SurfaceSolid<Q::Dim>>(n, args)? };
                }
            }
        }
        Ok(())
    }

    /// Force by momentum exchange on built-in obstacle `which` (`None`: on every solid
    /// cell), summed over the non-ghost cells of the leaves next to it, in root lattice
    /// units (per unit depth in 2D), and its torque about `about` (root cells);
    /// `root_odd`: the root level's AA layout.
    pub fn solid_load(
        &mut self,
        mesh: &Mesh<Q::Dim>,
        root_odd: bool,
        which: Option<usize>,
        about: [f64; 3],
    ) -> Result<([f64; 3], [f64; 3])> {
        let Some(s) = &self.solids else { return Ok(([0.0; 3], [0.0; 3])) };
        let dev = mesh.device();
        let mut total = [0.0f64; 6];
        for l in 0..mesh.max_levels() {
            let n = self.schedule.levels[l].obstacle.len;
            if n == 0 {
                continue;
            }
            if self.force_out.len() < 6 * n || matches!((dev, &self.force_out), (Device::Cuda(_), Buffer::Host(_))) {
                self.force_out = dev.zeros(6 * n.next_power_of_two())?;
            }
            let walls = wall_views(&self.curved, &self.schedule)?;
            let list = &self.schedule.levels[l].obstacle;
            let pool = mesh.arrays();
            let args = ForceArgs::<F, S::Elem, Views> {
                f: self.f.view_mut(),
                nbr: pool.nbr.view(),
                onb: s.onb.view(),
                solid: s.solid.view(),
                level: pool.level.view(),
                origin: pool.origin.view(),
                cell_mask: pool.cell_mask.view(),
                shapes: s.shapes,
                which: which.map_or(ALL_SOLIDS, |k| k as u32),
                list: self.schedule.ids(list)?,
                root_odd: root_odd as u32,
                curved: walls.curved as u32,
                wall_slot: walls.slot,
                wall_q: walls.q,
                wall_shape: walls.shape,
                wall_post: walls.post,
                about,
                out: self.force_out.view_mut(),
            };
            // SAFETY: the list holds `n` active leaves; `force_out` 6 values per item; with
            // the wall pass, every leaf of the list is in its level's wall list, so its
            // `slot` names a current row of the table (`wall_views` checked that the
            // pass ran since the rows were computed).
            unsafe { dev.launch::<ObstacleForce<Q, F, S>>(n, args)? };
            let parts = dev.read(&self.force_out, 0..6 * n)?;
            for p in parts.chunks_exact(6) {
                for a in 0..6 {
                    total[a] += p[a].to_f64();
                }
            }
        }
        Ok(([total[0], total[1], total[2]], [total[3], total[4], total[5]]))
    }
}
