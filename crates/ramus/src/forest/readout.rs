//! Reading the solution: host copies of the moments (fields, leaf cells, active blocks,
//! samples), forces and torques on obstacles, and the raw pool. Every read leaves the run
//! bitwise as it was.

use ramus_kernels::{Dim, VelocitySet};

use super::Forest;
use crate::amr::MeshSnapshot;
use crate::error::{Error, Result};
use crate::solver::{ActiveBlocks, Fields, HostSolution, LeafCells};
use crate::{Float, PoolStorage};

impl<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>> Forest<D, Q, F, S> {
    /// A host copy of the solution: evaluate it here or hand it to another thread while
    /// the forest goes on (time series, [`crate::output::series`]). Every level is
    /// averaged into its parents and every ghost layer refilled for the read, and the
    /// parents are restored afterwards: reading leaves the run bitwise as it was.
    pub fn host_solution(&mut self) -> Result<HostSolution<Q, F>> {
        let root_odd = self.steps % 2 == 1;
        let saved = self.solver.save_parents(&self.mesh, &mut self.sync)?;
        let read = self.read_synchronized(root_odd);
        // Restored whatever the read gave, so that an error leaves the run as it was too.
        self.solver.restore_parents(&self.mesh, &self.sync, saved)?;
        self.device.synchronize()?;
        let (moments, mesh, solid) = read?;
        HostSolution::new(moments, mesh, solid, self.steps)
    }

    /// Synchronises the pool ([`crate::solver::state::Solver::synchronize`]) and copies the moments, the active
    /// mesh and the solid cells to the host.
    #[allow(clippy::type_complexity)]
    fn read_synchronized(&mut self, root_odd: bool) -> Result<(Vec<F>, MeshSnapshot, Vec<u64>)> {
        self.solver.synchronize(&self.mesh, root_odd)?;
        let moments = self.solver.read_moments(&self.mesh, root_odd)?;
        let mesh = self.mesh.snapshot_active()?;
        let solid = match &self.solver.solids {
            Some(s) => self.device.read(&s.solid, 0..mesh.capacity)?,
            None => Vec::new(),
        };
        Ok((moments, mesh, solid))
    }

    fn with_host_view<R>(&mut self, f: impl FnOnce(&HostSolution<Q, F>) -> R) -> Result<R> {
        Ok(f(&self.host_solution()?))
    }

    /// Density and velocity of every root-level cell (copied to the host); where the root
    /// level is refined, the average of the finer levels.
    pub fn fields(&mut self) -> Result<Fields> {
        self.with_host_view(|v| v.root_fields())
    }

    /// Density, velocity, level and geometry of every leaf cell (copied to the host).
    pub fn leaf_cells(&mut self) -> Result<LeafCells> {
        self.with_host_view(|v| v.leaf_cells())
    }

    /// Every active block (all levels, parents included) with ρ, u and |ω| of its cells
    /// (copied to the host): what [`crate::output::write_amr`] writes.
    pub fn active_blocks(&mut self) -> Result<ActiveBlocks> {
        self.with_host_view(|v| v.active_blocks())
    }

    /// Density and velocity at points (root cells), interpolated multilinearly on the
    /// finest level available around each point (see [`LeafCells`] for raw cells).
    pub fn sample(&mut self, points: &[[f64; 3]]) -> Result<Vec<(f64, [f64; 3])>> {
        self.with_host_view(|v| v.sample(points))
    }

    /// Force on built-in obstacle `obstacle` (index into `config.obstacles`; `None`: on
    /// every solid cell, user geometry included) by momentum exchange (paper, "Flow Past
    /// a Square Cylinder": `F = 2 Δx^D Σ f*_p c_p` over the links into the solid; with
    /// curved or moving walls ([`crate::Walls`]) Wen et al.'s Galilean-invariant form
    /// with the populations the interpolated bounce-back sent, see
    /// [`ramus_kernels::obstacle::ObstacleForce`]), summed over the non-ghost cells of the
    /// leaves next to it, each level scaled to root lattice units (force per unit depth in
    /// 2D). With the obstacle covered by the finest level, as the paper's wall-distance
    /// rule makes it, this is the paper's sum over that level. Zero without obstacles.
    /// With curved or moving walls, an error before the first step after an adaptation
    /// or a restart (the sent populations are kept by the step).
    pub fn force(&mut self, obstacle: Option<usize>) -> Result<[f64; 3]> {
        Ok(self.load(obstacle)?.0)
    }

    /// Torque on built-in obstacle `obstacle` about its centre (a sphere's or
    /// cylinder's centre, a box's midpoint), from the same momentum exchange as
    /// [`Self::force`], each link's share acting at its wall point (half-way along the
    /// link with the staircase, at `q` with interpolated walls): root lattice units
    /// (per unit depth in 2D, where only z is nonzero).
    pub fn torque(&mut self, obstacle: usize) -> Result<[f64; 3]> {
        Ok(self.load(Some(obstacle))?.1)
    }

    /// Force and torque of [`Self::force`] and [`Self::torque`].
    fn load(&mut self, obstacle: Option<usize>) -> Result<([f64; 3], [f64; 3])> {
        let mut about = [0.0; 3];
        if let Some(k) = obstacle {
            if k >= self.config.obstacles.len() {
                return Err(Error::invalid(
                    "obstacle",
                    k,
                    format!("an index below the number of obstacles ({})", self.config.obstacles.len()),
                ));
            }
            about = crate::config::shapes(&self.config.obstacles).centre(k);
        }
        self.solver.solid_load(&self.mesh, self.steps % 2 == 1, obstacle, about)
    }

    /// The raw distribution pool (all block IDs, active or not), e.g. to compare
    /// backends: shifted populations `h = f − w` (see [`ramus_kernels::collide`]) as
    /// stored (`F` itself for [`Native`](crate::Native) storage, binary16 bit patterns for [`crate::Half`]:
    /// [`Storage::widen`](ramus_kernels::Storage::widen) gives their values), laid out by
    /// [`ramus_kernels::stream::pool_index`]. Not synchronised: levels as they are.
    pub fn distributions(&self) -> Result<Vec<S::Elem>> {
        self.device.download(&self.solver.f)
    }
}
