//! The vorticity refinement criterion on the device (paper, solver section "Adaptive Mesh
//! Refinement" and Algorithm "Refinement/Coarsening Criterion").

use ramus_kernels::amr::MAX_LEVELS;
use ramus_kernels::criterion::{CriterionArgs, VorticityMarkSerial, CRITERION_CTA, CRITERION_SHARED_BYTES};
use ramus_kernels::registry::Entry;
use ramus_kernels::{Dim, VelocitySet};

use super::state::Solver;
use crate::amr::Mesh;
use crate::backend::{Device, DeviceSlice, Views};
use crate::error::{Error, Result};
use crate::{Float, PoolStorage};

impl<Q: VelocitySet, F: Float, S: PoolStorage<F>> Solver<Q, F, S> {
    /// Marks every leaf from its block-maximum vorticity with the level rule, in one launch
    /// over every level (two after an odd number of root steps: the root level is then in
    /// the odd layout). Ghost cells must hold valid data (see [`Solver::synchronize`]).
    /// `length`: reference length in root cells (the paper's units, see
    /// [`ramus_kernels::criterion`]).
    pub fn mark_vorticity(
        &mut self,
        mesh: &mut Mesh<Q::Dim>,
        root_odd: bool,
        n_start: f64,
        n_inc: f64,
        length: f64,
    ) -> Result<()> {
        let dev = mesh.device().clone();
        for odd in [true, false] {
            if odd && !root_odd {
                continue;
            }
            // Whole ID sets: the kernels skip blocks that are not leaves (a list of leaves
            // would cost a compaction at every adaptation).
            let max_levels = mesh.max_levels() as i32;
            let views = mesh.marking_views();
            let sets = views.level_sets(|l| (l == 0 && root_odd) == odd)?;
            let n = sets.start[MAX_LEVELS] as usize;
            if n == 0 {
                continue;
            }
            let (onb, solid) = match &self.solids {
                Some(s) => (s.onb.view(), s.solid.view()),
                None => (views.onb, DeviceSlice::none()),
            };
            let args = CriterionArgs::<F, S::Elem, Views> {
                f: self.f.view_mut(),
                nbr: views.nbr,
                onb,
                solid,
                sets,
                status: views.status,
                mark: views.mark,
                length: F::from_f64(length),
                max_levels,
                n_start: n_start as f32,
                n_inc: n_inc as f32,
            };
            // SAFETY: the ID sets hold `n` active blocks; the CUDA entry runs with the CTA
            // size, grid and shared memory `vorticity_mark_cooperative` needs.
            unsafe {
                if odd {
                    launch::<Q, F, S, true>(&dev, n, args)?
                } else {
                    launch::<Q, F, S, false>(&dev, n, args)?
                }
            };
        }
        Ok(())
    }
}

/// Runs the criterion over `n` blocks: the serial kernel (one item per block) on the CPU,
/// the cooperative entry registered for it on CUDA.
///
/// # Safety
/// As for [`Device::launch`], with `args` valid for `n` listed blocks.
unsafe fn launch<Q: VelocitySet, F: Float, S: PoolStorage<F>, const ODD: bool>(
    dev: &Device,
    n: usize,
    args: CriterionArgs<F, S::Elem, Views<'_>>,
) -> Result<()>
where
    VorticityMarkSerial<Q, F, S, ODD>: Entry,
{
    match dev {
        Device::Cpu => dev.launch::<VorticityMarkSerial<Q, F, S, ODD>>(n, args),
        Device::Cuda(_) => {
            let items = n * <Q::Dim as Dim>::BLOCK_CELLS;
            let grid = u32::try_from(items.div_ceil(CRITERION_CTA as usize))
                .map_err(|_| Error::invalid("blocks of the levels", n, "at most 2^32 - 1"))?;
            dev.launch_cta::<VorticityMarkSerial<Q, F, S, ODD>>(grid, CRITERION_CTA, CRITERION_SHARED_BYTES, n, args)
        }
    }
}
