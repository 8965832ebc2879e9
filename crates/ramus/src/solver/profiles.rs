//! Velocity profiles of inlet faces on the forest (issue "Geometry for real flows", item
//! 3): the per-cell wall velocities the step reads for a profiled face
//! ([`ramus_kernels::profile`]).
//!
//! The profile of each face is a function of position (root cells): the parabolic one of
//! the configuration ([`crate::Profile`]) or a user closure
//! ([`crate::Forest::set_inlet_profile`]). It runs on the host for the boundary links of
//! every active block that touches a profiled face — at the point where each link crosses
//! the face —, on every level, at the start and
//! after every adaptation and restart (one download of the block geometry and one upload
//! of the table and of a row index per pool block each time; the table holds only the
//! blocks on those faces).

use std::sync::Arc;

use ramus_kernels::amr::units;
use ramus_kernels::block::cell_index;
use ramus_kernels::obstacle::cell_centre;
use ramus_kernels::profile::{profile_index, tangential, NO_SLOT, ROW};
use ramus_kernels::{Dim, VelocitySet};

use super::state::Solver;
use crate::amr::Mesh;
use crate::backend::{Buffer, Device, DeviceSlice};
use crate::config::{Face, MAX_WALL_SPEED};
use crate::error::{Error, Result};
use crate::{Float, PoolStorage};

/// An inlet velocity profile: the wall velocity (lattice units) at a point of the face
/// (root cells).
pub type ProfileFn = Arc<dyn Fn([f64; 3]) -> [f64; 3] + Send + Sync>;

/// The profiles of the faces and the table the step reads.
pub(crate) struct Profiles<F> {
    /// Per face ([`Face::index`]): its profile, or `None` (the face's uniform velocity).
    pub faces: [Option<ProfileFn>; 6],
    /// Per pool block: its row of `u`, or [`NO_SLOT`].
    pub slot: Buffer<u32>,
    /// Wall velocities ([`profile_index`]), [`ROW`] per row.
    pub u: Buffer<F>,
}

impl<F: Float> Profiles<F> {
    /// No profiled face yet; `capacity` pool blocks.
    pub fn new(dev: &Device, capacity: usize) -> Result<Self> {
        Ok(Profiles {
            faces: Default::default(),
            slot: dev.upload(&vec![NO_SLOT; capacity])?,
            u: Buffer::Host(Vec::new()),
        })
    }

    /// Bit `k` set for every profiled face `k` ([`ramus_kernels::stream::StepParams::profiled`]).
    pub fn mask(&self) -> u32 {
        self.faces.iter().enumerate().filter(|(_, f)| f.is_some()).map(|(k, _)| 1u32 << k).sum()
    }
}

/// The profile table's arrays for a launch (`none` when no face is profiled).
pub(crate) fn profile_views<F: Float>(profiles: &Option<Profiles<F>>) -> (DeviceSlice<'_, u32>, DeviceSlice<'_, F>) {
    match profiles {
        Some(p) => (p.slot.view(), p.u.view()),
        None => (DeviceSlice::none(), DeviceSlice::none()),
    }
}

impl<Q: VelocitySet, F: Float, S: PoolStorage<F>> Solver<Q, F, S> {
    /// Sets the profile of `face` (`None`: back to the face's uniform velocity) and
    /// re-evaluates the table.
    pub fn set_profile(&mut self, mesh: &Mesh<Q::Dim>, face: Face, profile: Option<ProfileFn>) -> Result<()> {
        let profiles = match &mut self.profiles {
            Some(p) => p,
            none => none.insert(Profiles::new(mesh.device(), mesh.capacity())?),
        };
        profiles.faces[face.index()] = profile;
        let mask = profiles.mask();
        for p in &mut self.params {
            p.profiled = mask;
        }
        self.update_profiles(mesh)
    }

    /// Re-evaluates every profile for the boundary cells of the active blocks (after an
    /// adaptation or a restart). A value that is not finite or reaches
    /// [`MAX_WALL_SPEED`] is an [`Error::InvalidParameter`] naming the face and the point.
    pub fn update_profiles(&mut self, mesh: &Mesh<Q::Dim>) -> Result<()> {
        let Some(p) = &mut self.profiles else { return Ok(()) };
        if p.mask() == 0 {
            return Ok(());
        }
        let dim = <Q::Dim as Dim>::D;
        let snap = mesh.snapshot_active()?;
        let s = 1.0 / units::ROOT_CELL as f64;
        let mut slot = vec![NO_SLOT; snap.capacity];
        let mut rows: Vec<F> = Vec::new();
        let mut next_row = 0u32;
        for &b in snap.id_sets.iter().flatten() {
            let b = b as usize;
            let o = [snap.origin[3 * b], snap.origin[3 * b + 1], snap.origin[3 * b + 2]];
            let level = snap.level[b];
            let width = 4.0 * units::cell(level) as f64 * s;
            // The profiled faces the block touches: the face, its profile and its position
            // on its axis.
            let mut touched = [None; 3];
            for face in Face::ALL.iter().take(2 * dim) {
                let Some(f) = &p.faces[face.index()] else { continue };
                let a = face.axis();
                let extent = (snap.root_blocks[a] * 4) as f64;
                let lo = o[a] as f64 * s;
                let at = if face.index() % 2 == 0 { 0.0 } else { extent };
                if (face.index() % 2 == 0 && lo == 0.0) || (face.index() % 2 == 1 && lo + width == extent) {
                    touched[a] = Some((*face, f, at));
                }
            }
            if touched.iter().all(Option::is_none) {
                continue;
            }
            let row = next_row as usize;
            next_row += 1;
            slot[b] = row as u32;
            rows.resize(rows.len() + ROW, F::ZERO);
            let w = units::cell(level) as f64 * s;
            for (a, touch) in touched.iter().enumerate() {
                let Some((face, f, at)) = touch else { continue };
                let (b0, b1) = tangential(a);
                // The block's layer of cells on the face, and every link offset along the
                // face (in 2D only those in the plane).
                let layer = if face.index() % 2 == 0 { 0 } else { 3 };
                for j1 in 0..if dim == 3 { 4 } else { 1 } {
                    for j0 in 0..4 {
                        let mut x = [0i32; 3];
                        x[a] = layer;
                        x[b0] = j0;
                        x[b1] = j1;
                        let centre = cell_centre(o, level, cell_index(x));
                        for d1 in if dim == 3 { -1..=1 } else { 0..=0 } {
                            for d0 in -1..=1 {
                                let mut c = [0i32; 3];
                                c[b0] = d0;
                                c[b1] = d1;
                                let mut point = centre;
                                point[a] = *at;
                                point[b0] += 0.5 * d0 as f64 * w;
                                point[b1] += 0.5 * d1 as f64 * w;
                                let u = f(point);
                                let speed = u.iter().map(|v| v * v).sum::<f64>().sqrt();
                                if !(speed.is_finite() && speed < MAX_WALL_SPEED) {
                                    return Err(Error::invalid(
                                        "inlet profile",
                                        format!("{u:?} at {point:?} on face {}", face.name()),
                                        format!(
                                            "finite velocities with a speed below {MAX_WALL_SPEED} (lattice units)"
                                        ),
                                    ));
                                }
                                for (comp, v) in u.iter().enumerate() {
                                    rows[profile_index(row, a, x, c, comp)] = F::from_f64(*v);
                                }
                            }
                        }
                    }
                }
            }
        }
        let dev = mesh.device();
        dev.write(&mut p.slot, 0, &slot)?;
        if p.u.len() < rows.len() || matches!((dev, &p.u), (Device::Cuda(_), Buffer::Host(_))) {
            // Room to grow, so that the table is not reallocated at every adaptation.
            p.u = dev.zeros(rows.len() + rows.len() / 4 + ROW)?;
        }
        dev.write(&mut p.u, 0, &rows)
    }
}
