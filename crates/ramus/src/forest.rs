//! The public type: a forest of cell-blocks with its lattice Boltzmann solution.

use std::marker::PhantomData;
use std::time::{Duration, Instant};

use ramus_kernels::launch::Kernel;
use ramus_kernels::stream::{StepParams, StreamArgs, StreamCollide};
use ramus_kernels::{Dim, VelocitySet};

use crate::amr::RootGrid;
use crate::backend::device::check_host_memory;
use crate::backend::{Backend, Buffer, Device};
use crate::config::ForestConfig;
use crate::error::Result;
use crate::solver::{self, Fields};
use crate::Float;

/// A forest of quadtrees (2D) or octrees (3D) of `4^D`-cell blocks carrying a lattice
/// Boltzmann solution, generic over dimension `D`, velocity set `Q` and precision `F`.
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
pub struct Forest<D: Dim, Q: VelocitySet<Dim = D>, F: Float> {
    config: ForestConfig,
    root: RootGrid<D>,
    tau: f64,
    params: StepParams<F>,
    /// Blocks the distribution pool holds.
    capacity_blocks: usize,
    steps: u64,
    stepping_time: Duration,
    device: Device,
    /// Distribution pool (shifted populations, [`ramus_kernels::stream::pool_index`]).
    f: Buffer<F>,
    links: Buffer<i32>,
    onb: Buffer<u32>,
    /// The level-0 ID set.
    ids: Buffer<u32>,
    _lattice: PhantomData<Q>,
}

impl<D: Dim, Q: VelocitySet<Dim = D>, F: Float> Forest<D, Q, F> {
    /// Validates `config`, builds the root grid, and fills it with fluid at rest (ρ = 1).
    pub fn new(config: ForestConfig) -> Result<Self> {
        let tau = config.validate(D::D)?;
        // The pool and the links are built on the host first: refuse what cannot fit
        // rather than abort in the allocator.
        let cells = config.cells[..D::D].iter().try_fold(1usize, |n, &c| n.checked_mul(c));
        let per_cell = Q::Q * std::mem::size_of::<F>() + 4 * D::NEIGHBORS / D::BLOCK_CELLS + 4;
        check_host_memory("the distribution pool and links", cells.and_then(|c| c.checked_mul(per_cell)))?;
        let root = RootGrid::<D>::new(config.cells, &config.boundaries);
        let capacity_blocks = root.len();
        let ids: Vec<u32> = (0..root.len() as u32).collect();
        let f = solver::equilibrium_pool::<Q, F>(&root, capacity_blocks, &|_| (1.0, [0.0; 3]));
        let device = Device::new(config.backend)?;
        let f = device.upload(&f)?;
        let links = device.upload(root.links())?;
        let onb = device.upload(root.on_boundary())?;
        let ids = device.upload(&ids)?;
        let params = solver::step_params(tau, &config.boundaries);
        Ok(Forest {
            config,
            root,
            tau,
            params,
            capacity_blocks,
            steps: 0,
            stepping_time: Duration::ZERO,
            device,
            f,
            links,
            onb,
            ids,
            _lattice: PhantomData,
        })
    }

    /// Sets every cell to the equilibrium of `state(x) = (ρ, u)`, `x` being the cell centre
    /// in root lattice units; resets the step count.
    pub fn initialize(&mut self, state: impl Fn([f64; 3]) -> (f64, [f64; 3])) -> Result<()> {
        let f = solver::equilibrium_pool::<Q, F>(&self.root, self.capacity_blocks, &state);
        self.device.write(&mut self.f, 0, &f)?;
        self.steps = 0;
        Ok(())
    }

    /// Advances the solution by `steps` root time steps.
    pub fn advance(&mut self, steps: u64) -> Result<()> {
        let start = Instant::now();
        for _ in 0..steps {
            if self.steps % 2 == 1 {
                self.stream_collide::<StreamCollide<Q, F, true>>()?;
            } else {
                self.stream_collide::<StreamCollide<Q, F, false>>()?;
            }
            self.steps += 1;
        }
        self.device.synchronize()?;
        self.stepping_time += start.elapsed();
        Ok(())
    }

    /// One AA step over the root level.
    fn stream_collide<K: Kernel<Args = StreamArgs<F>>>(&mut self) -> Result<()> {
        let args = StreamArgs {
            f: self.device.ptr(&mut self.f),
            nbr: self.device.cptr(&self.links),
            onb: self.device.cptr(&self.onb),
            ids: self.device.cptr(&self.ids),
            params: self.params,
        };
        // SAFETY: the pool holds every block of the ID set and every block they link to;
        // the buffers live in `self` beyond the launch (the next call synchronises).
        unsafe { self.device.launch::<K>(self.ids.len() * D::BLOCK_CELLS, args) }
    }

    /// Density and velocity of every cell (copied to the host).
    pub fn fields(&self) -> Result<Fields> {
        let mut f = self.device.download(&self.f)?;
        Ok(solver::extract::<Q, F>(&self.root, &mut f, &self.params, self.steps))
    }

    /// The raw distribution pool, e.g. to compare backends: shifted populations
    /// `h = f − w` (see [`ramus_kernels::collide`]), laid out by
    /// [`ramus_kernels::stream::pool_index`].
    pub fn distributions(&self) -> Result<Vec<F>> {
        self.device.download(&self.f)
    }

    /// Root time steps taken since construction or [`Self::initialize`].
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Relaxation time τ of the root level.
    pub fn tau(&self) -> f64 {
        self.tau
    }

    /// Number of fluid cells.
    pub fn cell_count(&self) -> usize {
        self.root.len() * D::BLOCK_CELLS
    }

    /// Root-level cells per axis (1 on the unused axis in 2D).
    pub fn cells(&self) -> [usize; 3] {
        self.root.blocks_per_axis().map(|b| b * ramus_kernels::block::EDGE).map(|c| c.max(1))
    }

    /// Wall-clock time spent in [`Self::advance`].
    pub fn stepping_time(&self) -> Duration {
        self.stepping_time
    }

    /// Million lattice-node updates per second over all [`Self::advance`] calls so far.
    pub fn mlups(&self, steps: u64) -> f64 {
        let secs = self.stepping_time.as_secs_f64();
        if secs == 0.0 {
            return 0.0;
        }
        (self.cell_count() as f64 * steps as f64) / secs / 1e6
    }

    /// The backend actually in use (never `Auto`).
    pub fn backend(&self) -> Backend {
        self.device.backend()
    }

    /// Name of the device running the forest.
    pub fn device_name(&self) -> String {
        self.device.name()
    }

    /// The configuration the forest was built from.
    pub fn config(&self) -> &ForestConfig {
        &self.config
    }
}
