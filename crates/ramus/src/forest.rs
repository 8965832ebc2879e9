//! The public type: a forest of cell-blocks with its lattice Boltzmann solution.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ramus_kernels::{Dim, Native, VelocitySet};

use crate::amr::{metadata_bytes_per_block, AdaptStage, AdaptWorkspace, BlockGeometry, Capacity, Mark, Mesh, MeshSpec};
use crate::backend::stopwatch::{ClosedSpan, DeviceSpan, Stopwatch};
use crate::backend::{Device, DeviceCounters};

/// A device's counters and the host's time blocked in its waits at some point (`None`
/// on the CPU backend): what a part of the run submitted and waited is the difference.
type Since = (Option<DeviceCounters>, Option<Duration>);
use crate::config::{profile_velocity, Boundary, Criterion, Face, ForestConfig, Profile};
use crate::error::{Error, Result};
use crate::solver::blocks::SolverBlocks;
use crate::solver::obstacles::{SolidFn, Solids};
use crate::solver::state::Solver;
use crate::solver::surface::SurfaceBuffers;
use crate::solver::sync::SyncScratch;
use crate::solver::{amr_updates, equilibrium_pool, stored, Gradient};
use crate::{Float, PoolStorage};

mod checkpoint;
mod execution;
mod readout;

/// A user refinement criterion: the [`Mark`] of a leaf, given its geometry and the root
/// step count.
pub type UserCriterion = Box<dyn FnMut(&BlockGeometry, u64) -> Mark + Send>;

/// What one [`Forest::adapt`] changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Adaptation {
    /// Blocks refined (each gained `2^D` children).
    pub refined: usize,
    /// Blocks coarsened (each lost its children).
    pub coarsened: usize,
}

/// A forest of quadtrees (2D) or octrees (3D) of `4^D`-cell blocks carrying a lattice
/// Boltzmann solution, generic over dimension `D`, velocity set `Q` and precision `F`.
///
/// It owns the mesh ([`crate::amr::Mesh`]) and the solution (one distribution pool for
/// all levels, indexed by block ID); [`Forest::advance`] runs the paper's recursive
/// sub-cycled advance and adapts the mesh every `refinement.every` root steps.
///
/// `Q` must live in `D`: a velocity set of the other dimension does not compile.
///
/// ```compile_fail
/// use ramus::{Forest, D2, D3Q19};
/// let _ = Forest::<D2, D3Q19, f32>::new(ramus::ForestConfig::new([16, 16, 0]));
/// ```
///
/// ```
/// use ramus::{Backend, Forest, ForestConfig, D2, D2Q9};
/// let config = ForestConfig::new([16, 16, 0]).backend(Backend::Cpu);
/// let mut forest = Forest::<D2, D2Q9, f64>::new(config)?;
/// forest.advance(10)?;
/// assert!((forest.fields()?.mass() - 256.0).abs() < 1e-9);
/// # Ok::<(), ramus::Error>(())
/// ```
pub struct Forest<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F> = Native> {
    config: ForestConfig,
    tau: f64,
    steps: u64,
    device: Device,
    mesh: Mesh<D>,
    solver: Solver<Q, F, S>,
    adapt_ws: AdaptWorkspace,
    sync: SyncScratch,
    user_criterion: Option<UserCriterion>,
    /// Root step count of the last stability check (see [`Self::check_health`]).
    checked_at: Option<u64>,
    _lattice: PhantomData<Q>,
}

impl<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>> Forest<D, Q, F, S> {
    /// Validates `config`, builds the root grid (and the frozen wall refinement, if
    /// configured), and fills it with fluid at rest (ρ = 1).
    pub fn new(config: ForestConfig) -> Result<Self> {
        Self::build(config, None)
    }

    /// As [`Self::new`], with the cells whose centre satisfies `solid(x)` (root cells)
    /// solid, on every level, in addition to `config.obstacles`. The closure runs on the
    /// host for every cell of every active block at each adaptation (the built-in shapes
    /// run on the device); refinement toward such geometry is up to a criterion.
    pub fn with_solid(config: ForestConfig, solid: impl Fn([f64; 3]) -> bool + Send + Sync + 'static) -> Result<Self> {
        Self::build(config, Some(Arc::new(solid)))
    }

    fn build(config: ForestConfig, geometry: Option<SolidFn>) -> Result<Self> {
        let mut forest = Self::assemble(config, geometry)?;
        // Frozen wall refinement, level by level, through the adaptation path.
        if let Some(w) = forest.config.refinement.walls.clone() {
            let shapes = crate::config::shapes(&forest.config.obstacles);
            for _ in 1..forest.config.refinement.levels {
                forest.mesh.mark_wall_distance(&w.faces, w.distance, true)?;
                if w.obstacles {
                    forest.mesh.mark_obstacle_distance(&shapes, w.distance, true)?;
                    if let Some(surface) = forest.solver.solids.as_ref().and_then(|s| s.surface.as_ref()) {
                        forest.mesh.mark_surface_distance(surface, w.distance, true)?;
                    }
                }
                let submitted = forest.since();
                let (_, span) = forest.laps()?;
                let (_, span) = forest.apply_marks(span, submitted)?;
                forest.settle_adaptation(span)?;
            }
        }
        Ok(forest)
    }

    /// The forest of `config` on its root grid, at rest: the device, the pool, the
    /// solver's buffers (what [`Self::build`] and [`Self::restart`] share).
    fn assemble(config: ForestConfig, geometry: Option<SolidFn>) -> Result<Self> {
        let tau = config.validate(D::D)?;
        let levels = config.refinement.levels;
        let device = Device::new(config.backend)?;
        let n_root = (0..D::D).try_fold(1usize, |n, a| n.checked_mul(config.cells[a] / 4));
        let n_root = n_root.ok_or_else(|| {
            Error::invalid("cells", format!("{:?}", config.cells), "a grid whose block count fits in memory")
        })?;
        let solution_bytes = Solver::<Q, F, S>::bytes_per_block(config.les.needs_gradients());
        let capacity = match config.refinement.capacity {
            Some(c) => c,
            None => {
                // Room for the whole hierarchy the levels can reach, capped at a quarter of the
                // memory the device can use (host limits on the CPU: cgroup, ulimit -v); on the
                // CPU the pool is only touched as blocks are handed out.
                let per = metadata_bytes_per_block::<D>(levels) + solution_bytes;
                let blocks = Capacity::automatic().resolve(D::D, n_root, levels, per, device.free_memory()?)?;
                Capacity::Blocks { blocks }
            }
        };
        let spec = MeshSpec { cells: config.cells, boundaries: config.boundaries, max_levels: levels, capacity };
        let mesh = Mesh::<D>::new(device.clone(), spec, solution_bytes)?;
        let shapes = crate::config::shapes(&config.obstacles);
        let surface = match &config.surface {
            Some(body) => {
                let size = config.cells.map(|c| c as f64);
                Some(SurfaceBuffers::new(&device, &body.load(size)?)?)
            }
            None => None,
        };
        let solids = if shapes.count > 0 || geometry.is_some() || surface.is_some() {
            Some(Solids::new(&device, mesh.capacity(), shapes, geometry, surface)?)
        } else {
            None
        };
        let mut solver = Solver::<Q, F, S>::new(&device, mesh.capacity(), tau, levels, &config, solids)?;
        solver.update_solids(&mesh)?;
        for face in Face::ALL.into_iter().take(2 * D::D) {
            if let Boundary::Velocity { velocity, profile: profile @ Profile::Parabolic } =
                config.boundaries[face.index()]
            {
                let (cells, boundaries) = (config.cells, config.boundaries);
                let f = move |x| profile_velocity(profile, velocity, face, x, cells, &boundaries, D::D);
                solver.set_profile(&mesh, face, Some(Arc::new(f)))?;
            }
        }
        solver.rebuild_schedule(&mesh)?;
        let adapt_ws = AdaptWorkspace::new(&device)?;
        let sync = SyncScratch::new(&device);
        Ok(Forest {
            tau,
            steps: 0,
            device,
            adapt_ws,
            sync,
            user_criterion: None,
            checked_at: None,
            _lattice: PhantomData,
            solver,
            mesh,
            config,
        })
    }
}

impl<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>> Forest<D, Q, F, S> {
    /// Gives the velocity inlet on `face` ([`Boundary::Velocity`]) the wall velocity
    /// `profile(x)` (lattice units) at each point `x` of the face (root cells) instead of
    /// its configured velocity: every boundary cell of every level takes the value at the
    /// face point in front of it, re-evaluated on the host after every adaptation (see
    /// [`crate::Profile`] for the built-in parabolic one). A closure is not part of a
    /// checkpoint: after [`Self::restart`], set it again. Errors (forest unchanged): `face`
    /// is not a velocity inlet of this dimension, or a value is not finite or reaches
    /// [`crate::config::MAX_WALL_SPEED`] ([`Error::InvalidParameter`] naming the point).
    pub fn set_inlet_profile(
        &mut self,
        face: Face,
        profile: impl Fn([f64; 3]) -> [f64; 3] + Send + Sync + 'static,
    ) -> Result<()> {
        if face.index() >= 2 * D::D || !matches!(self.config.boundaries[face.index()], Boundary::Velocity { .. }) {
            return Err(Error::invalid(
                "inlet profile",
                format!("face {} ({:?})", face.name(), self.config.boundaries[face.index()]),
                format!("a face of the {}D domain with a velocity inlet (Boundary::Velocity)", D::D),
            ));
        }
        let old = self.solver.profiles.as_ref().and_then(|p| p.faces[face.index()].clone());
        if let Err(e) = self.solver.set_profile(&self.mesh, face, Some(Arc::new(profile))) {
            self.solver.set_profile(&self.mesh, face, old)?;
            return Err(e);
        }
        Ok(())
    }

    /// Sets every cell of every block to the equilibrium of `state(x) = (ρ, u)`, `x` being
    /// the cell centre in root lattice units; resets the step count (the mesh is kept).
    /// A state that is not finite, has `ρ ≤ 0` or a speed above the guard's Mach limit
    /// ([`crate::config::Guard::max_speed`]) is an [`Error::InvalidParameter`] naming the
    /// cell, and leaves the forest unchanged.
    pub fn initialize(&mut self, state: impl Fn([f64; 3]) -> (f64, [f64; 3])) -> Result<()> {
        let snap = self.mesh.snapshot_active()?;
        let f = equilibrium_pool::<Q, F>(&snap, &state, None, self.config.guard.max_speed())?;
        self.device.write(&mut self.solver.f, 0, &stored::<F, S>(&f))?;
        self.steps = 0;
        self.checked_at = None;
        Ok(())
    }

    /// As [`Self::initialize`], with the first-order non-equilibrium populations of the
    /// velocity gradient `gradient(x)[a][b] = ∂u_b/∂x_a` (root lattice units) added to the
    /// equilibrium: `f_i = f_i^eq − (w_i τ / c_s²) ρ Q_i : ∇u` with each level's τ (Krüger
    /// et al. 2017, *The Lattice Boltzmann Method*, §5.5). The viscous stress is then
    /// right from the first step; from the equilibrium alone it builds up through an
    /// initial layer in which, as τ → ½, the populations alternate from step to step and
    /// the kinetic energy with them. The molecular τ is used (an eddy viscosity is not
    /// known before the first step). A gradient that is not finite is an
    /// [`Error::InvalidParameter`].
    pub fn initialize_with_gradient(
        &mut self,
        state: impl Fn([f64; 3]) -> (f64, [f64; 3]),
        gradient: impl Fn([f64; 3]) -> [[f64; 3]; 3],
    ) -> Result<()> {
        let snap = self.mesh.snapshot_active()?;
        let g = Gradient { grad: &gradient, taus: &self.solver.taus };
        let f = equilibrium_pool::<Q, F>(&snap, &state, Some(&g), self.config.guard.max_speed())?;
        self.device.write(&mut self.solver.f, 0, &stored::<F, S>(&f))?;
        self.steps = 0;
        self.checked_at = None;
        Ok(())
    }

    /// Advances the solution by `steps` root time steps (each level `L` takes `2^L` steps
    /// of `Δt/2^L` per root step), adapting the mesh before every root step whose count
    /// is a multiple of `refinement.every` when a criterion is set.
    ///
    /// The stability guard ([`crate::config::Guard`]) checks the solution whenever the
    /// step count reaches a multiple of `guard.every` and before every adaptation: a
    /// non-finite population, a density `ρ ≤ 0` or a speed above the Mach limit returns
    /// [`Error::Diverged`] (step, level, position, quantity, value), and the forest stays
    /// as it was at that check (it can still be read, but not advanced meaningfully).
    ///
    /// On CUDA with launch graphs ([`Self::set_launch_graphs`]), two root steps from an
    /// even count with no adaptation or check between them run as one graph; an odd
    /// `steps`, or a call at an odd count, runs a single root step as a graph of its own.
    /// Callers that advance in chunks keep them even for the fewest graphs.
    pub fn advance(&mut self, steps: u64) -> Result<()> {
        let every = self.config.refinement.every;
        let adaptive = self.mesh.max_levels() > 1
            && every > 0
            && (self.config.refinement.criterion != Criterion::None || self.user_criterion.is_some());
        let guard = self.config.guard.every;
        // Whether root step count `s` is reached by an adaptation or a guard check.
        let stop_at = |s: u64| (adaptive && s % every == 0) || (guard > 0 && s % guard == 0);
        let mut segment = Instant::now();
        let mut submitted = self.since();
        // An adaptation whose last kernels may still run while the next root steps are
        // recorded: booked at the next synchronisation.
        let mut adapted: Option<ClosedSpan> = None;
        let mut left = steps;
        while left > 0 {
            let adapt_now = adaptive && self.steps % every == 0;
            if adapt_now || self.guard_due() {
                self.device.synchronize()?;
                self.end_segment(segment, adapted.take())?;
                self.count_stepping(submitted);
                self.check_health()?;
                if adapt_now {
                    adapted = Some(self.adapt_queued()?.1);
                }
                segment = Instant::now();
                submitted = self.since();
            }
            // From an even count, two root steps with nothing between them run as one
            // graph on CUDA (one graph per mesh state, the pair's two parities in it).
            let count = if left >= 2 && self.steps % 2 == 0 && !stop_at(self.steps + 1) { 2 } else { 1 };
            self.solver.advance_roots(&self.mesh, self.steps % 2 == 1, count)?;
            self.steps += count;
            left -= count;
            let cells: Vec<usize> = self.mesh.blocks_per_level().iter().map(|&n| n * D::BLOCK_CELLS).collect();
            let updates = amr_updates(&cells, D::CHILDREN);
            // Added once per root step, as before pairs: the same sums, the same MLUPS.
            for _ in 0..count {
                self.solver.timings.updates += updates;
            }
            self.solver.timings.root_steps += count;
        }
        self.device.synchronize()?;
        self.end_segment(segment, adapted)?;
        self.count_stepping(submitted);
        if self.guard_due() {
            self.check_health()?;
        }
        Ok(())
    }

    /// Books a stretch of stepping that began at `segment` and ends now, the device
    /// synchronised; `adapted`: the adaptation before it, whose last device work ran into
    /// the stretch (the host recorded the next root steps meanwhile). The adaptation's wall
    /// time ends where its device work ended, the stepping's begins there.
    fn end_segment(&mut self, segment: Instant, adapted: Option<ClosedSpan>) -> Result<()> {
        let now = Instant::now();
        let from = match adapted {
            Some(span) => self.book_adaptation(span)?.max(segment),
            None => segment,
        };
        self.solver.timings.stepping += now.saturating_duration_since(from);
        Ok(())
    }

    /// Adds an adaptation's wall time, from its start to the end of its device work
    /// (which must have run: after a synchronisation); returns that end.
    fn book_adaptation(&mut self, span: ClosedSpan) -> Result<Instant> {
        let (length, end) = span.measure()?;
        self.solver.timings.adapt.wall += length;
        Ok(end)
    }

    /// Waits for an adaptation's device work and books it: the end of the adaptations
    /// that are not followed by root steps in the same call.
    fn settle_adaptation(&mut self, span: ClosedSpan) -> Result<()> {
        self.device.synchronize()?;
        self.book_adaptation(span).map(|_| ())
    }

    /// The device's counters and the host's time blocked in waits now (CUDA).
    fn since(&self) -> Since {
        (self.device.counters(), self.device.waited())
    }

    /// Adds the device's submissions and waits since `since` to the stepping's.
    fn count_stepping(&mut self, since: Since) {
        let t = &mut self.solver.timings;
        if let (Some(now), Some(then)) = (self.device.counters(), since.0) {
            t.stepping_submissions += now - then;
        }
        if let (Some(now), Some(then)) = (self.device.waited(), since.1) {
            t.stepping_waited += now.saturating_sub(then);
        }
    }

    /// Whether the guard is due at the current step count (a multiple of `guard.every`
    /// not yet checked; step 0 is the initial state, which [`Self::initialize`] checks).
    fn guard_due(&self) -> bool {
        let g = self.config.guard.every;
        g > 0 && self.steps > 0 && self.steps % g == 0 && self.checked_at != Some(self.steps)
    }

    /// Runs the stability guard now (see [`Self::advance`]); [`Error::Diverged`] if the
    /// solution is not physical. The device is idle before and after (timed in
    /// [`crate::Timings::guard`]).
    pub fn check_health(&mut self) -> Result<()> {
        if self.checked_at == Some(self.steps) {
            return Ok(());
        }
        self.device.synchronize()?;
        let start = Instant::now();
        let max_speed = self.config.guard.max_speed();
        let r = self.solver.check_health(&self.mesh, self.steps, self.steps % 2 == 1, max_speed);
        self.solver.timings.guard += start.elapsed();
        self.solver.timings.guard_checks += 1;
        r?;
        self.checked_at = Some(self.steps);
        Ok(())
    }

    /// Adapts the mesh now with the configured criterion (or the user criterion, if set):
    /// refreshes the ghost cells, marks the leaves, averages the parents about to be
    /// coarsened, refines and coarsens (paper, section "Refinement and Coarsening"), fills
    /// new children by interpolation, rebuilds the work lists, and averages the parents
    /// whose children may have gained ghost cells (the coarse cells under new ghost cells
    /// feed the interpolation from then on).
    pub fn adapt(&mut self) -> Result<Adaptation> {
        if self.mesh.max_levels() == 1 {
            return Ok(Adaptation::default());
        }
        let (adaptation, span) = self.adapt_queued()?;
        self.settle_adaptation(span)?;
        Ok(adaptation)
    }

    /// [`Self::adapt`] without the wait at its end: its last kernels (filling the new
    /// children, averaging the relinked parents) may still run when it returns, and its
    /// span is booked by the caller after a synchronisation ([`Self::book_adaptation`]).
    fn adapt_queued(&mut self) -> Result<(Adaptation, ClosedSpan)> {
        let submitted = self.since();
        let (mut laps, span) = self.laps()?;
        self.solver.refresh_ghosts(&self.mesh, self.steps % 2 == 1)?;
        self.solver.timings.adapt.synchronize += laps.lap()?;
        if let Some(mut f) = self.user_criterion.take() {
            let step = self.steps;
            let r = self.mark_leaves(|g| f(g, step));
            self.user_criterion = Some(f);
            r?;
        } else if let Criterion::Vorticity { n_start, n_inc, length } = self.config.refinement.criterion {
            let length = length.unwrap_or(self.config.cells[0] as f64);
            let root_odd = self.steps % 2 == 1;
            self.solver.mark_vorticity(&mut self.mesh, root_odd, n_start, n_inc, length)?;
        }
        self.solver.timings.adapt.criterion += laps.lap()?;
        self.apply_marks(span, submitted)
    }

    /// Adapts the mesh once with marks from `mark(geometry)` for every leaf (see
    /// [`UserCriterion`]); otherwise as [`Self::adapt`].
    ///
    /// Marks are [`Mark`]s, not integers:
    ///
    /// ```compile_fail
    /// # use ramus::{Backend, Forest, ForestConfig, D2, D2Q9};
    /// let config = ForestConfig::new([16, 16, 0]).backend(Backend::Cpu).levels(2);
    /// let mut forest = Forest::<D2, D2Q9, f64>::new(config).unwrap();
    /// forest.adapt_with(|_| 7).unwrap();
    /// ```
    pub fn adapt_with(&mut self, mark: impl FnMut(&BlockGeometry) -> Mark) -> Result<Adaptation> {
        if self.mesh.max_levels() == 1 {
            return Ok(Adaptation::default());
        }
        let submitted = self.since();
        let (mut laps, span) = self.laps()?;
        self.solver.refresh_ghosts(&self.mesh, self.steps % 2 == 1)?;
        self.solver.timings.adapt.synchronize += laps.lap()?;
        self.mark_leaves(mark)?;
        self.solver.timings.adapt.criterion += laps.lap()?;
        let (adaptation, span) = self.apply_marks(span, submitted)?;
        self.settle_adaptation(span)?;
        Ok(adaptation)
    }

    /// Uses `f` instead of the configured criterion at every adaptation. An error if the
    /// forest never adapts (one level, or `refinement.every = 0`): the criterion would
    /// never be called.
    pub fn set_user_criterion(&mut self, f: impl FnMut(&BlockGeometry, u64) -> Mark + Send + 'static) -> Result<()> {
        let r = &self.config.refinement;
        if r.levels < 2 {
            return Err(Error::invalid(
                "refinement.levels",
                r.levels,
                "at least 2 levels for a user criterion (a one-level forest never adapts)",
            ));
        }
        if r.every == 0 {
            return Err(Error::invalid(
                "refinement.every",
                0,
                "at least 1 root step between adaptations for a user criterion (0 never adapts)",
            ));
        }
        self.user_criterion = Some(Box::new(f));
        Ok(())
    }

    /// Marks the leaves with `mark(geometry)`.
    fn mark_leaves(&mut self, mut mark: impl FnMut(&BlockGeometry) -> Mark) -> Result<()> {
        let leaves = self.mesh.leaf_geometry()?;
        let mut groups: [Vec<u32>; 3] = Default::default();
        for g in &leaves {
            match mark(g) {
                Mark::None => {}
                Mark::Refine => groups[0].push(g.id),
                Mark::Coarsen => groups[1].push(g.id),
                Mark::RefineFreeze => groups[2].push(g.id),
            }
        }
        for (ids, m) in groups.iter().zip([Mark::Refine, Mark::Coarsen, Mark::RefineFreeze]) {
            if !ids.is_empty() {
                self.mesh.mark_blocks(ids, m)?;
            }
        }
        Ok(())
    }

    /// Runs the mesh routine on the current marks (ghosts must be fresh); the solution
    /// follows through its [`crate::amr::BlockData`] hooks (average the parents about to
    /// be coarsened, fill the new children, rebuild the work lists and refresh the
    /// parents of ghost cells). `submitted`: the device's counters and waits when the
    /// adaptation began. Does not wait for the device at its end: the returned span,
    /// booked after a synchronisation, ends where the adaptation's device work ends.
    fn apply_marks(&mut self, span: DeviceSpan, submitted: Since) -> Result<(Adaptation, ClosedSpan)> {
        self.adapt_ws.profile = self.solver.profile;
        let mut solution = SolverBlocks { solver: &mut self.solver, sync: &mut self.sync };
        let stage = AdaptStage { steps: self.steps };
        let (report, hooks) = self.mesh.adapt_blocks(&mut self.adapt_ws, &mut [&mut solution], stage)?;
        let span = span.close(&self.device)?;
        let times = &mut self.solver.timings.adapt;
        times.synchronize += hooks.before_coarsen;
        for (acc, s) in times.mesh_steps.iter_mut().zip(report.per_step) {
            acc.1 += s.1;
            times.mesh += s.1;
        }
        times.fill += hooks.after_connectivity;
        times.fill += hooks.fill_new_children;
        times.fill += hooks.after_relink;
        times.count += 1;
        if let (Some(now), Some(then)) = (self.device.counters(), submitted.0) {
            times.submissions += now - then;
        }
        if let (Some(now), Some(then)) = (self.device.waited(), submitted.1) {
            times.waited += now.saturating_sub(then);
        }
        Ok((Adaptation { refined: report.refined, coarsened: report.coarsened }, span))
    }

    /// A stopwatch for the parts of one adaptation and the span of the whole, started
    /// with the device idle.
    fn laps(&self) -> Result<(Stopwatch, DeviceSpan)> {
        self.device.synchronize()?;
        let span = DeviceSpan::start(&self.device)?;
        Ok((Stopwatch::new(self.device.clone(), self.solver.profile), span))
    }

    /// The mesh (read access: snapshots, checks, block output).
    pub fn mesh(&self) -> &Mesh<D> {
        &self.mesh
    }

    /// Root time steps taken since construction or [`Self::initialize`].
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Relaxation time τ of the root level.
    pub fn tau(&self) -> f64 {
        self.tau
    }

    /// Relaxation time of each level (`τ_L − ½ = 2^L (τ_0 − ½)`).
    pub fn level_taus(&self) -> &[f64] {
        &self.solver.taus
    }

    /// Active blocks per level (leaves and parents).
    pub fn blocks_per_level(&self) -> Vec<usize> {
        self.mesh.blocks_per_level().to_vec()
    }

    /// Leaf blocks per level (each parent has exactly `2^D` children).
    pub fn leaves_per_level(&self) -> Vec<usize> {
        let n = &self.mesh.blocks_per_level();
        (0..n.len()).map(|l| n[l] - n.get(l + 1).map_or(0, |c| c / D::CHILDREN)).collect()
    }

    /// Leaf cells per level.
    pub fn cells_per_level(&self) -> Vec<usize> {
        self.leaves_per_level().iter().map(|n| n * D::BLOCK_CELLS).collect()
    }

    /// Number of leaf cells (the fluid cells of the composite grid).
    pub fn cell_count(&self) -> usize {
        self.cells_per_level().iter().sum()
    }

    /// Root-level cells per axis (1 on the unused axis in 2D).
    pub fn cells(&self) -> [usize; 3] {
        let mut c = [1; 3];
        c[..D::D].copy_from_slice(&self.config.cells[..D::D]);
        c
    }

    /// The configuration the forest was built from.
    pub fn config(&self) -> &ForestConfig {
        &self.config
    }
}
