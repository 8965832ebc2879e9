//! CPU backend: the kernel functions of `ramus-kernels`, one rayon task per block.

use rayon::prelude::*;

use ramus_kernels::stream::{stream_collide, Field, StepParams};
use ramus_kernels::{Dim, VelocitySet};

use super::MeshArrays;
use crate::Float;

/// Pools in host memory.
pub(crate) struct CpuEngine<F> {
    f: Vec<F>,
    links: Vec<i32>,
    on_boundary: Vec<u32>,
    ids: Vec<u32>,
}

/// A `Field` shared by the tasks of one step.
///
/// SAFETY of sharing: in a fused AA step every memory location is read and written by
/// exactly one cell (see `ramus_kernels::stream`), so concurrent cells never touch the
/// same element.
#[derive(Clone, Copy)]
struct SharedField<F>(Field<F>);
unsafe impl<F> Send for SharedField<F> {}
unsafe impl<F> Sync for SharedField<F> {}

impl<F: Float> CpuEngine<F> {
    pub fn new(f: Vec<F>, mesh: &MeshArrays<'_>) -> Self {
        CpuEngine {
            f,
            links: mesh.links.to_vec(),
            on_boundary: mesh.on_boundary.to_vec(),
            ids: mesh.ids.to_vec(),
        }
    }

    pub fn stream_collide<Q: VelocitySet>(&mut self, odd: bool, params: &StepParams<F>, n_ids: usize) {
        let field = SharedField(Field {
            f: self.f.as_mut_ptr(),
            nbr: self.links.as_ptr(),
            onb: self.on_boundary.as_ptr(),
        });
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let ids = &self.ids[..n_ids];
        // Enough blocks per task to amortise scheduling, few enough to balance two cores.
        ids.par_chunks(16).for_each(move |chunk| {
            let fld = field;
            for &b in chunk {
                for t in 0..m {
                    // SAFETY: `b` is a block of this pool and its links point into it;
                    // see `SharedField` for why concurrent cells do not race.
                    unsafe {
                        if odd {
                            stream_collide::<Q, F, true>(&fld.0, params, b as usize, t)
                        } else {
                            stream_collide::<Q, F, false>(&fld.0, params, b as usize, t)
                        }
                    }
                }
            }
        });
    }

    pub fn distributions(&self) -> &[F] {
        &self.f
    }

    pub fn distributions_mut(&mut self) -> &mut [F] {
        &mut self.f
    }
}

/// "CPU (N threads)".
pub(crate) fn device_name() -> String {
    format!("CPU ({} threads)", rayon::current_num_threads())
}
