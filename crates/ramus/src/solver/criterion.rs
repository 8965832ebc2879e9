//! The vorticity refinement criterion on the device (paper, solver section "Adaptive Mesh
//! Refinement" and Algorithm "Refinement/Coarsening Criterion").

use ramus_kernels::criterion::{CellVorticity, LevelRuleArgs, MarkByLevelRule, VorticityArgs};
use ramus_kernels::{Dim, VelocitySet};

use super::state::Solver;
use crate::amr::Mesh;
use crate::backend::Buffer;
use crate::error::Result;
use crate::Float;

impl<Q: VelocitySet, F: Float> Solver<Q, F> {
    /// Marks every leaf from its block-maximum vorticity with the level rule. Call after
    /// [`Solver::synchronize`] (ghost cells must hold valid data). `length`: reference
    /// length in root cells (the paper's units, see [`ramus_kernels::criterion`]).
    #[allow(clippy::too_many_arguments)]
    pub fn mark_vorticity(
        &mut self,
        mesh: &mut Mesh<Q::Dim>,
        root_odd: bool,
        n_start: f64,
        n_inc: f64,
        length: f64,
        values: &mut Buffer<f32>,
    ) -> Result<()> {
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let dev = mesh.device.clone();
        for l in 0..mesh.max_levels() {
            // The whole ID set: the kernels skip blocks that are not leaves (a list of
            // leaves would cost a compaction per level at every adaptation).
            let n = mesh.id_counts[l];
            if n == 0 {
                continue;
            }
            let list = dev.cptr(&mesh.id_sets[l]);
            if values.len() < n * m || matches!((&dev, &*values), (crate::backend::Device::Cuda(_), Buffer::Host(_))) {
                *values = dev.zeros((n * m).next_power_of_two())?;
            }
            let (onb, solid) = self.walls(mesh);
            let args = VorticityArgs {
                f: dev.ptr(&mut self.f),
                nbr: dev.cptr(&mesh.nbr),
                onb,
                solid,
                list,
                status: dev.cptr(&mesh.status),
                out: dev.ptr(values),
                scale: F::from_f64(length * (1u64 << l) as f64),
            };
            // SAFETY: the ID set holds `n` active blocks of level `l`; `values` `n 4^D` items.
            unsafe {
                if l == 0 && root_odd {
                    dev.launch::<CellVorticity<Q, F, true>>(n * m, args)?
                } else {
                    dev.launch::<CellVorticity<Q, F, false>>(n * m, args)?
                }
            };
            let args = LevelRuleArgs {
                list,
                status: dev.cptr(&mesh.status),
                value: dev.cptr(values),
                mark: dev.ptr(&mut mesh.mark),
                level: l as i32,
                max_levels: mesh.max_levels() as i32,
                n_start: n_start as f32,
                n_inc: n_inc as f32,
            };
            // SAFETY: as above; one item per listed block.
            unsafe { dev.launch::<MarkByLevelRule<Q::Dim>>(n, args)? };
        }
        Ok(())
    }
}
