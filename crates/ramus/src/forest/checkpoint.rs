//! [`Forest::checkpoint`] and [`Forest::restart`]: the forest's side of the checkpoint
//! format of [`crate::checkpoint`].

use std::path::Path;
use std::sync::Arc;

use ramus_kernels::{Dim, VelocitySet};

use super::Forest;
use crate::amr::BlockData;
use crate::backend::Backend;
use crate::checkpoint::{decode, encode, Contents, Kind};
use crate::error::{Error, Result};
use crate::output::write_atomic;
use crate::solver::blocks::SolverBlocks;
use crate::solver::SolidFn;
use crate::{Float, PoolStorage};

impl<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>> Forest<D, Q, F, S> {
    /// Writes everything that determines the forest's future to `path` (atomically: the
    /// old file stays until the new one is complete): the configuration, the mesh, the
    /// distributions of every block, the step count. [`Self::restart`] continues from it
    /// bitwise as if the run had never stopped, on either backend. The layout is
    /// documented in [`crate::checkpoint`].
    ///
    /// Not stored: a user criterion (set it again after the restart) and a user solid
    /// closure (pass it to [`Self::restart_with_solid`]); timings start afresh.
    pub fn checkpoint(&mut self, path: impl AsRef<Path>) -> Result<()> {
        self.checkpoint_with(path, &[])
    }

    /// As [`Self::checkpoint`], storing `user_data` along (returned by
    /// [`Self::restart_with`]): e.g. an application's own history of the run.
    pub fn checkpoint_with(&mut self, path: impl AsRef<Path>, user_data: &[u8]) -> Result<()> {
        self.device.synchronize()?;
        let mesh = self.mesh.save_state()?;
        let solution = SolverBlocks { solver: &mut self.solver, sync: &mut self.sync };
        let populations = solution.serialize(&self.mesh, 0..mesh.high_water)?;
        let contents = Contents {
            config: self.config.clone(),
            steps: self.steps,
            user_geometry: self.solver.solids.as_ref().is_some_and(|s| s.geometry.is_some()),
            mesh,
            populations,
            user: user_data.to_vec(),
        };
        write_atomic(path, &encode(kind::<D, Q, F, S>(), &contents)?)
    }

    /// The forest saved by [`Self::checkpoint`] at `path`, on `backend` (the backend it was
    /// written on does not matter). Refuses, with [`Error::Checkpoint`], a file that is not
    /// a checkpoint, of another format version, truncated, corrupted, or written by a
    /// forest of another `<D, Q, F, S>`.
    pub fn restart(path: impl AsRef<Path>, backend: Backend) -> Result<Self> {
        Self::restart_from(path.as_ref(), backend, None).map(|(f, _)| f)
    }

    /// As [`Self::restart`], also returning the user data of [`Self::checkpoint_with`].
    pub fn restart_with(path: impl AsRef<Path>, backend: Backend) -> Result<(Self, Vec<u8>)> {
        Self::restart_from(path.as_ref(), backend, None)
    }

    /// As [`Self::restart_with`] for a forest built with [`Self::with_solid`]: the closure
    /// must be the one the forest was built with (it decides the solid cells of blocks
    /// that appear from now on).
    pub fn restart_with_solid(
        path: impl AsRef<Path>,
        backend: Backend,
        solid: impl Fn([f64; 3]) -> bool + Send + Sync + 'static,
    ) -> Result<(Self, Vec<u8>)> {
        Self::restart_from(path.as_ref(), backend, Some(Arc::new(solid)))
    }

    fn restart_from(path: &Path, backend: Backend, geometry: Option<SolidFn>) -> Result<(Self, Vec<u8>)> {
        let bytes = std::fs::read(path).map_err(|e| Error::io("reading", path, e))?;
        let c = decode(&bytes, kind::<D, Q, F, S>(), path)?;
        drop(bytes);
        if c.user_geometry != geometry.is_some() {
            let (found, fix) = if c.user_geometry {
                ("a forest with a user solid closure", "restart it with Forest::restart_with_solid")
            } else {
                ("a forest without a user solid closure", "restart it with Forest::restart or restart_with")
            };
            return Err(Error::invalid("checkpoint", format!("{} holds {found}", path.display()), fix));
        }
        let mut config = c.config;
        config.backend = backend;
        let mut forest = Self::assemble(config, geometry)?;
        forest.mesh.restore_state(&c.mesh)?;
        let mut solution = SolverBlocks { solver: &mut forest.solver, sync: &mut forest.sync };
        solution.deserialize(&forest.mesh, 0..c.mesh.high_water, &c.populations)?;
        forest.steps = c.steps;
        forest.device.synchronize()?;
        Ok((forest, c.user))
    }
}

/// The `<D, Q, F>` of a forest, as the checkpoint stores it.
fn kind<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>() -> Kind {
    Kind {
        dim: D::D as u32,
        q: Q::Q as u32,
        float_bytes: std::mem::size_of::<F>() as u32,
        // Native storage has no registry key ([`ramus_kernels::Storage::NAME`]).
        storage_bytes: if S::NAME.is_empty() { 0 } else { S::BYTES as u32 },
    }
}
