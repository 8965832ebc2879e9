//! The stability guard on the host side: one [`GuardCheck`] launch over every level (two
//! after an odd number of root steps) and one read-back of the per-level results (see
//! [`crate::config::Guard`]).

use ramus_kernels::amr::MAX_LEVELS;
use ramus_kernels::guard::{cell_health, GuardArgs, GuardCheck, BAD_DENSITY, BAD_POPULATION, NONE_BAD};
use ramus_kernels::obstacle::cell_centre;
use ramus_kernels::stream::{load_cell, Field};
use ramus_kernels::{Dim, VelocitySet};

use super::obstacles::walls;
use super::state::Solver;
use crate::amr::Mesh;
use crate::backend::Views;
use crate::error::{Error, Quantity, Result};
use crate::{Float, PoolStorage};

impl<Q: VelocitySet, F: Float, S: PoolStorage<F>> Solver<Q, F, S> {
    /// Checks every cell of the leaf blocks of every level; `root_odd`: the root level has taken an
    /// odd number of steps (finer levels are always in the natural layout between root
    /// steps). Returns [`Error::Diverged`] for the first bad cell of the coarsest level
    /// that has one.
    pub fn check_health(&mut self, mesh: &Mesh<Q::Dim>, step: u64, root_odd: bool, max_speed: f64) -> Result<()> {
        let dev = mesh.device();
        let levels = mesh.max_levels();
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        // A check that found nothing leaves every slot at NONE_BAD: only the first check
        // and one after a finding (or a failure) write them.
        if !std::mem::take(&mut self.guard_clear) {
            dev.write(&mut self.guard_out, 0, &vec![NONE_BAD; levels])?;
        }
        let max_speed2 = F::from_f64(max_speed * max_speed);
        // One launch over every level, two after an odd number of root steps: the root
        // level's populations are then in the odd layout, the finer levels' never are.
        for odd in [true, false] {
            if odd && !root_odd {
                continue;
            }
            let sets = mesh.level_sets(|l| (l == 0 && root_odd) == odd)?;
            let n = sets.start[MAX_LEVELS] as usize * m;
            if n == 0 {
                continue;
            }
            let (onb, solid) = walls(&self.solids, mesh);
            let args = GuardArgs::<F, S::Elem, Views> {
                f: self.f.view_mut(),
                nbr: mesh.arrays().nbr.view(),
                child: mesh.arrays().child.view(),
                onb,
                solid,
                sets,
                out: self.guard_out.slice_mut(..levels)?,
                max_speed2,
            };
            // SAFETY: the ID sets hold active blocks of the pool; `out` holds a slot per
            // level; the kernel only reads the pool.
            unsafe {
                if odd {
                    dev.launch::<GuardCheck<Q, F, S, true>>(n, args)?
                } else {
                    dev.launch::<GuardCheck<Q, F, S, false>>(n, args)?
                }
            }
        }
        let found = dev.read(&self.guard_out, 0..levels)?;
        match found.iter().position(|&k| k != NONE_BAD) {
            None => {
                self.guard_clear = true;
                Ok(())
            }
            Some(l) => Err(self.diagnose(mesh, step, l, found[l], l == 0 && root_odd, max_speed)),
        }
    }

    /// The [`Error::Diverged`] for the cell the guard found on level `l` (`key` = item
    /// `<< 2 | code`), with the value recomputed on the host by the same function.
    fn diagnose(&self, mesh: &Mesh<Q::Dim>, step: u64, l: usize, key: u64, odd: bool, max_speed: f64) -> Error {
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let item = (key >> 2) as usize;
        let quantity = match key & 3 {
            BAD_POPULATION => Quantity::Population,
            BAD_DENSITY => Quantity::Density,
            _ => Quantity::Speed,
        };
        let (slot, t) = (item / m, item % m);
        let details = || -> Result<([f64; 3], f64)> {
            let dev = mesh.device();
            let b = dev.get(&mesh.id_sets()[l], slot)? as usize;
            let origin = dev.read(mesh.arrays().origin, 3 * b..3 * b + 3)?;
            let level = dev.get(mesh.arrays().level, b)?;
            let position = cell_centre([origin[0], origin[1], origin[2]], level, t);
            // The cell's populations on the host: the whole pool (a diverged run is over,
            // the copy costs nothing that matters), read with the kernels' own loader.
            let mut f = dev.download(&self.f)?;
            let nbr = dev.download(mesh.arrays().nbr)?;
            let (onb, solid) = match &self.solids {
                Some(s) => (dev.download(&s.onb)?, dev.download(&s.solid)?),
                None => (dev.download(mesh.arrays().onb)?, Vec::new()),
            };
            let fld = Field { f: f.as_mut_ptr(), nbr: nbr.as_ptr(), onb: onb.as_ptr(), solid: solid.as_ptr() };
            // SAFETY: host copies of the pool and the mesh arrays; `b` is an active block.
            let h = unsafe {
                if odd {
                    load_cell::<Q, F, S, true>(&fld, b, t)
                } else {
                    load_cell::<Q, F, S, false>(&fld, b, t)
                }
            };
            let (_, v) = cell_health::<Q, F>(&h, F::from_f64(max_speed * max_speed));
            let v = v.to_f64();
            Ok((position, if quantity == Quantity::Speed { v.sqrt() } else { v }))
        };
        match details() {
            Ok((position, value)) => Error::Diverged { step, level: l, position, quantity, value },
            Err(e) => e,
        }
    }
}
