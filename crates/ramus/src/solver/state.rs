//! The solution on the forest: one distribution pool for all levels, indexed by block ID
//! like the mesh arrays, and the per-level relaxation (paper, section "Collision").

use std::marker::PhantomData;

use ramus_kernels::interpolate::{fine_tau, split_values};
use ramus_kernels::stream::StepParams;
use ramus_kernels::{Dim, VelocitySet};

use super::curved::CurvedWalls;
use super::metrics::Timings;
use super::obstacles::Solids;
use super::profiles::Profiles;
use super::schedule::Schedule;
use crate::backend::{Buffer, Device};
use crate::config::{Collision, ForestConfig, Interpolation};
use crate::error::Result;
use crate::{Float, PoolStorage};

/// Distributions of every block of the pool and what the recursive advance needs.
pub(crate) struct Solver<Q: VelocitySet, F: Float, S: PoolStorage<F>> {
    /// Shifted populations as stored ([`ramus_kernels::Storage`]),
    /// [`ramus_kernels::stream::pool_index`] by block ID.
    pub f: Buffer<S::Elem>,
    /// Relaxation time of each level, in that level's time step (TRT: `τ⁺`).
    pub taus: Vec<f64>,
    /// Relaxation time of the odd non-equilibrium part of each level (TRT: `τ⁻`; BGK:
    /// `taus`).
    pub taus_odd: Vec<f64>,
    /// MRT's relaxation times of the bulk and even-ghost moments of each level
    /// ([`Collision::mrt_taus`]; empty for the other operators).
    pub taus_bulk: Vec<f64>,
    pub taus_even: Vec<f64>,
    /// The collision operator of every level.
    pub collision: Collision,
    /// `C²` of the Smagorinsky model (0: none).
    pub les_c2: f64,
    /// Whether the LES model needs velocity gradients (WALE, Vreman): then [`Self::vel`]
    /// and [`Self::eddy`] hold a value per cell of the pool.
    pub gradient_les: bool,
    /// Cell velocities of the level about to step (gradient models; empty otherwise), see
    /// [`ramus_kernels::eddy::EddyField::vel`].
    pub vel: Buffer<F>,
    /// Per-cell eddy viscosities (gradient models; empty otherwise), carried through the
    /// grid transfers and checkpoints like the populations.
    pub eddy: Buffer<F>,
    /// Step parameters of each level.
    pub params: Vec<StepParams<F>>,
    pub interpolation: Interpolation,
    pub schedule: Schedule,
    pub timings: Timings,
    /// Synchronise after every routine to time it (see [`Timings::levels`]).
    pub profile: bool,
    /// Run each root step's launches as a CUDA graph (see [`crate::Forest::set_launch_graphs`]).
    pub launch_graphs: bool,
    /// Let a level's step run alongside its finer levels' steps in a root step's graph
    /// (see [`crate::Forest::set_concurrent_levels`]).
    pub concurrent_levels: bool,
    /// Average and interpolate between a level's two steps in one launch (see
    /// [`crate::Forest::set_fused_exchanges`]).
    pub fused_exchanges: bool,
    /// Step two cells per thread where measured faster (see
    /// [`crate::Forest::set_paired_cells`]).
    pub paired_cells: crate::PairedCells,
    /// Step the blocks without boundary flags in a launch of their own where measured
    /// faster (see [`crate::Forest::set_bulk_steps`]); the work lists then list the
    /// others.
    pub bulk_steps: crate::BulkSteps,
    /// The hazards of the root step being recorded (see [`super::hazards`]).
    pub hazards: Option<super::hazards::Hazards>,
    /// Per pool block: position in its level's parent list (ghost interpolation).
    pub slot: Buffer<u32>,
    /// Rescaled cells of one level's parents (ghost interpolation), sized by
    /// [`Self::rebuild_schedule`].
    pub scratch: Buffer<F>,
    /// Solid cells and the solver's boundary flags (`None`: no obstacles).
    pub solids: Option<Solids>,
    /// The wall table of curved or moving walls (`None`: staircase walls at rest, no pass).
    pub curved: Option<CurvedWalls<F>>,
    /// Inlet profiles and their per-cell wall velocities (`None`: every face uniform).
    pub profiles: Option<Profiles<F>>,
    /// Per-block force sums (see [`Self::solid_load`]).
    pub force_out: Buffer<F>,
    /// Per level: the stability guard's result (see [`ramus_kernels::guard`]).
    pub guard_out: Buffer<u64>,
    /// Whether every slot of `guard_out` holds [`ramus_kernels::guard::NONE_BAD`] (the
    /// last check found nothing): the next check then writes none (one driver call less).
    pub guard_clear: bool,
    /// Moments of one chunk of cells for reading the solution, sized on first use by
    /// [`Self::read_moments`].
    pub readout: Buffer<F>,
    _lattice: PhantomData<(Q, S)>,
}

/// Relaxation times of `levels` levels: `τ_L − ½ = 2^L (τ_0 − ½)`, so that the viscosity
/// is the same on every level with `Δx_L = Δt_L = 2^{-L}` (paper, "Collision").
pub(crate) fn level_taus(tau0: f64, levels: usize) -> Vec<f64> {
    let mut t = vec![tau0];
    for l in 1..levels {
        t.push(fine_tau(t[l - 1]));
    }
    t
}

/// TRT's magic parameter of a level with relaxation times `tau`, `tau_odd`,
/// `(τ⁺ − ½)(τ⁻ − ½)`, which LES keeps per cell; 0 for the one-rate operators.
pub(crate) fn level_magic(collision: Collision, tau: f64, tau_odd: f64) -> f64 {
    match collision {
        Collision::Trt { .. } => (tau - 0.5) * (tau_odd - 0.5),
        _ => 0.0,
    }
}

impl<Q: VelocitySet, F: Float, S: PoolStorage<F>> Solver<Q, F, S> {
    /// A pool of `capacity` blocks (zeroed: the rest state), with per-level parameters
    /// for root relaxation time `tau0`, `levels` levels and `config`'s boundaries,
    /// interpolation and collision operator.
    pub fn new(
        dev: &Device,
        capacity: usize,
        tau0: f64,
        levels: usize,
        config: &ForestConfig,
        solids: Option<Solids>,
    ) -> Result<Self> {
        let (boundaries, interpolation, collision) =
            (&config.boundaries, config.refinement.interpolation, config.collision);
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let taus = level_taus(tau0, levels);
        let taus_odd = collision.odd_taus(&taus);
        let (taus_bulk, taus_even) = collision.mrt_taus(levels).unwrap_or_default();
        // The wall velocity in lattice units is the same on every level (Δx_L/Δt_L = 1).
        let les_c2 = config.les.c2();
        let (les_model, eddy_constant) = config.les.gradient_model();
        let gradient_les = config.les.needs_gradients();
        let params = (0..levels)
            .map(|l| {
                let force = super::params::level_force(config.body_force, l);
                let mut p = super::step_params::<F>(taus[l], taus_odd[l], force, boundaries);
                p.smagorinsky = F::from_f64(les_c2);
                p.les_model = les_model;
                p.eddy_constant = F::from_f64(eddy_constant);
                p.magic = F::from_f64(level_magic(collision, taus[l], taus_odd[l]));
                if let (Some(b), Some(e)) = (taus_bulk.get(l), taus_even.get(l)) {
                    p.omega_bulk = F::from_f64(1.0 / b);
                    p.omega_even = F::from_f64(1.0 / e);
                }
                p
            })
            .collect();
        let moving = solids.as_ref().is_some_and(|s| s.shapes.moving != 0);
        let curved = match &solids {
            Some(_) => CurvedWalls::new(dev, capacity, levels, config.walls, moving)?,
            None => None,
        };
        Ok(Solver {
            f: dev.zeros(capacity * Q::Q * m)?,
            taus,
            taus_odd,
            taus_bulk,
            taus_even,
            collision,
            les_c2,
            gradient_les,
            vel: if gradient_les { dev.zeros(capacity * 3 * m)? } else { Buffer::Host(Vec::new()) },
            eddy: if gradient_les { dev.zeros(capacity * m)? } else { Buffer::Host(Vec::new()) },
            params,
            interpolation,
            schedule: Schedule::new(dev, levels),
            timings: Timings::new(levels),
            profile: false,
            launch_graphs: true,
            concurrent_levels: true,
            fused_exchanges: true,
            paired_cells: crate::PairedCells::Measured,
            bulk_steps: crate::BulkSteps::Measured,
            hazards: None,
            slot: dev.zeros(capacity)?,
            scratch: Buffer::Host(Vec::new()),
            solids,
            curved,
            profiles: None,
            force_out: Buffer::Host(Vec::new()),
            guard_out: dev.zeros(levels)?,
            guard_clear: false,
            readout: Buffer::Host(Vec::new()),
            _lattice: PhantomData,
        })
    }

    /// Bytes of solution data per block (for sizing the pool): distributions and the
    /// parent slot, and under a gradient LES model (`gradient_les`) a velocity and an eddy
    /// viscosity per cell.
    pub fn bytes_per_block(gradient_les: bool) -> usize {
        let per_cell = Q::Q * S::BYTES + if gradient_les { 4 * std::mem::size_of::<F>() } else { 0 };
        per_cell * <Q::Dim as Dim>::BLOCK_CELLS + 4
    }

    /// Runs `f` (solid cells or wall distances), adding its device-synchronised time to
    /// the adaptation's `geometry` while profiling.
    pub(crate) fn geometry_timed(
        &mut self,
        mesh: &crate::amr::Mesh<Q::Dim>,
        f: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        if !self.profile {
            return f(self);
        }
        mesh.device().synchronize()?;
        let start = std::time::Instant::now();
        f(self)?;
        mesh.device().synchronize()?;
        self.timings.adapt.geometry += start.elapsed();
        Ok(())
    }

    /// Rebuilds the work lists after the mesh changed, and sizes the scratch buffer.
    pub fn rebuild_schedule(&mut self, mesh: &crate::amr::Mesh<Q::Dim>) -> Result<()> {
        self.rebuild_schedule_with(mesh, None)
    }

    /// [`Self::rebuild_schedule`] after an adaptation: also lists its `relinked` blocks
    /// per level, in the same compaction ([`super::schedule::Schedule::relinked`]).
    pub fn rebuild_schedule_with(
        &mut self,
        mesh: &crate::amr::Mesh<Q::Dim>,
        relinked: Option<crate::amr::RelinkedBlocks<'_>>,
    ) -> Result<()> {
        let onb = self.solids.as_ref().map(|s| &s.onb);
        let boundary = self.bulk_steps.needs_lists::<Q, F, S>();
        self.schedule.rebuild(mesh, onb, self.curved.is_some(), boundary, relinked)?;
        self.geometry_timed(mesh, |s| s.update_curved(mesh))?;
        let most = self.schedule.levels.iter().map(|l| l.parents.len).max().unwrap_or(0);
        // Per parent cell: the non-equilibrium part, ρ, ρu and ν_t (see `GhostArgs::scratch`).
        let need = most * split_values::<Q>() * <Q::Dim as Dim>::BLOCK_CELLS;
        let dev = mesh.device();
        if self.scratch.len() < need || matches!((dev, &self.scratch), (Device::Cuda(_), Buffer::Host(_))) {
            // Room to grow, so that the buffer is not reallocated at every adaptation.
            self.scratch = dev.zeros(need + need / 4)?;
        }
        Ok(())
    }
}
