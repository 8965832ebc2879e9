//! Steps 5 and 6 of the refinement-and-coarsening routine (paper, section "Refinement
//! and Coarsening"): the children of coarsened blocks leave their levels' ID sets and
//! their IDs return to the gap set; the children of refined blocks join theirs. Both
//! take the blocks grouped by the level of their children ([`Mesh::level_keys`]).

use ramus_kernels::amr::args::{LevelOffsetsArgs, PushGapsArgs};
use ramus_kernels::amr::build::{AppendChildren, FlagRemoved, PushGaps, ResetRemoved};
use ramus_kernels::amr::level_sets::LevelSets;
use ramus_kernels::amr::remove::{RemoveSerial, REMOVE_CTA, REMOVE_SHARED_BYTES, REMOVE_SHORT_MAX};
use ramus_kernels::amr::select::{LevelGroups, LevelKeys, LevelOffsets};
use ramus_kernels::amr::MAX_LEVELS;
use ramus_kernels::Dim;

use super::lists::Counts;
use super::workspace::{amr_args, ensure, key_bits, run, AdaptWorkspace, ListLen};
use super::Mesh;
use crate::backend::primitives as prim;
use crate::backend::{Buffer, Device, DeviceSlice, Views};
use crate::error::{Error, Result};

impl<D: Dim> Mesh<D> {
    /// Groups blocks by the level of their children, keeping their order within a level
    /// (stable sort): the `n_c2` coarsened blocks of `ws.coarsened` into `ws.vals` as their first
    /// children, and the `n_r` refined blocks of `ws.to_refine` into `ws.refined`. Returns the
    /// offsets of each level in the two (`max_levels + 1` each), read back together, with
    /// the minimal map's length if it is still on the device (`n.map`).
    pub(super) fn level_keys(&mut self, ws: &mut AdaptWorkspace, n: &mut Counts) -> Result<(Vec<usize>, Vec<usize>)> {
        let (n_c2, n_r) = (n.coarsened, n.refine);
        let dev = self.device.clone();
        let m = self.spec.max_levels + 1;
        ensure(&dev, &mut ws.off, 2 * m)?;
        let level_bits = key_bits(ramus_kernels::amr::MAX_LEVELS);
        for (coarsen, len) in [(true, n_c2), (false, n_r)] {
            if len == 0 {
                // All offsets 0, set below on the host: no launch.
                continue;
            }
            let (list, vals) = if coarsen { (&ws.coarsened, &mut ws.vals) } else { (&ws.to_refine, &mut ws.refined) };
            ensure(&dev, vals, len)?;
            let offs = ws.off.slice_mut(if coarsen { 0 } else { m }..)?.slice_mut(..m)?;
            if len <= ws.level_groups_max {
                let a = amr_args!(
                    self,
                    LevelGroupsArgs {
                        blocks: list.view(),
                        count: len as u32,
                        values: vals.view_mut(),
                        first_child: coarsen as u32,
                        offsets: offs,
                        levels: m as u32,
                    }
                );
                // SAFETY: the list holds `len` blocks of the pool (the launch checks the
                // lengths).
                unsafe { prim::launch_sliced::<LevelGroups<D>>(&dev, len + m, a)? };
                continue;
            }
            ensure(&dev, &mut ws.keys, len)?;
            let (list, vals) = if coarsen { (&ws.coarsened, &mut ws.vals) } else { (&ws.to_refine, &mut ws.refined) };
            let a = amr_args!(
                self,
                LevelKeysArgs {
                    blocks: list.view(),
                    keys: ws.keys.view_mut(),
                    values: vals.view_mut(),
                    first_child: coarsen as u32,
                }
            );
            run::<LevelKeys<D>>(&dev, len, a)?;
            prim::sort_by_key(&dev, &mut ws.scratch, &mut ws.keys, vals, len, level_bits)?;
            let a = LevelOffsetsArgs::<Views<'_>> {
                keys: ws.keys.view(),
                count: len as i32,
                offsets: ws.off.slice_mut(if coarsen { 0 } else { m }..)?,
            };
            run::<LevelOffsets<D>>(&dev, m, a)?;
        }
        let off: Vec<u32> = match n.map_len {
            ListLen::Known(_) => dev.read(&ws.off, 0..2 * m)?,
            ListLen::OnDevice { slot, .. } => {
                let (off, map) = dev.read_pair(&ws.off, 0..2 * m, &ws.counts, slot..slot + 1)?;
                n.map = map[0] as usize;
                n.map_len = ListLen::Known(n.map);
                off
            }
        };
        let off: Vec<usize> = off.into_iter().map(|x| x as usize).collect();
        let offsets = |part: &[usize], len: usize| if len == 0 { vec![0; m] } else { part.to_vec() };
        Ok((offsets(&off[..m], n_c2), offsets(&off[m..], n_r)))
    }

    /// S5 Coarsen Blocks in ID Sets: the children of coarsened blocks leave their level's
    /// ID set (`off_c`: the coarsened blocks per level of their children) and their IDs
    /// return to the gap set. The gaps S2 took are already copied into `child`, so the
    /// freed groups overwrite them: the gap set ends at `base` + freed.
    pub(super) fn coarsen_id_sets(&mut self, ws: &mut AdaptWorkspace, n: &Counts, off_c: &[usize]) -> Result<()> {
        let dev = self.device.clone();
        let nc = D::CHILDREN;
        let base = self.gap_count - n.refine * nc;
        if n.coarsened > 0 {
            for l in 0..self.spec.max_levels {
                let cnt = off_c[l + 1] - off_c[l];
                if cnt > 0 {
                    let m = self.id_counts[l];
                    self.id_counts[l] = m - cnt * nc;
                    if m <= REMOVE_SHORT_MAX {
                        self.remove_short(l, m)?;
                        continue;
                    }
                    ensure(&dev, &mut ws.flags, m)?;
                    let a = amr_args!(self, PerBlock { blocks: self.id_sets[l].view(), out: ws.flags.view_mut() });
                    run::<FlagRemoved<D>>(&dev, m, a)?;
                    // The children of the `cnt` coarsened blocks leave: the new count is
                    // known, so the one left on the device (slot 0) is not read.
                    prim::remove_if_deferred(
                        &dev,
                        &mut ws.scratch,
                        &mut self.id_sets[l],
                        &ws.flags,
                        m,
                        &mut ws.counts,
                        0,
                    )?;
                }
            }
            let a = PushGapsArgs::<Views<'_>> {
                first_children: ws.vals.view(),
                groups: n.coarsened as i32,
                gaps: self.gaps.view_mut(),
                base: base as i32,
            };
            run::<PushGaps<D>>(&dev, n.coarsened * nc, a)?;
            let a = amr_args!(self, ResetRemovedArgs { first_children: ws.vals.view() });
            run::<ResetRemoved<D>>(&dev, n.coarsened * nc * D::BLOCK_CELLS, a)?;
        }
        self.gap_count = base + n.coarsened * nc;
        Ok(())
    }

    /// S5 on the `m` entries of level `l`'s ID set when they are few
    /// ([`REMOVE_SHORT_MAX`]): one launch of one CTA instead of a flag pass, a scan and a
    /// compaction (the same entries, in the same order).
    pub(super) fn remove_short(&mut self, l: usize, m: usize) -> Result<()> {
        let dev = self.device.clone();
        let a = amr_args!(self, RemoveArgs { id_set: self.id_sets[l].view_mut(), n: m as u32 });
        // SAFETY: the ID set holds `m` entries (checked by the launch), each a block of the
        // pool (the forest's invariants, `crate::amr::check`).
        unsafe {
            match dev {
                Device::Cpu => dev.launch::<RemoveSerial>(1, a),
                Device::Cuda(_) => dev.launch_cta::<RemoveSerial>(1, REMOVE_CTA, REMOVE_SHARED_BYTES, 1, a),
            }
        }
    }

    /// S6 Refine Blocks in ID Sets: children of each level's parents (`off_r`), in
    /// parent-ID order (the sort is stable), appended to the ID set of their level.
    pub(super) fn refine_id_sets(&mut self, ws: &mut AdaptWorkspace, off_r: &[usize]) -> Result<()> {
        let dev = self.device.clone();
        let nc = D::CHILDREN;
        for l in 1..self.spec.max_levels {
            let cnt = off_r[l + 1] - off_r[l];
            if cnt > 0 {
                let a = amr_args!(
                    self,
                    AppendChildrenArgs {
                        parents: ws.refined.view(),
                        first: off_r[l] as i32,
                        id_set: self.id_sets[l].view_mut(),
                        len: self.id_counts[l] as i32,
                    }
                );
                run::<AppendChildren<D>>(&dev, cnt * nc, a)?;
                self.id_counts[l] += cnt * nc;
            }
        }
        Ok(())
    }
}

impl<D: Dim> Mesh<D> {
    /// The ID sets of the levels that `chosen` picks, for one launch over all their blocks
    /// (level after level, each in ID-set order: [`LevelSets`]); the other levels have no
    /// items. An error if the blocks number 2^32 or more (u32 item indices).
    pub(crate) fn level_sets(&self, chosen: impl Fn(usize) -> bool) -> Result<LevelSets<Views<'_>>> {
        level_sets(&self.id_sets, &self.id_counts, chosen)
    }
}

/// [`Mesh::level_sets`] of the ID sets `id_sets` holding `counts` blocks each.
pub(crate) fn level_sets<'a>(
    id_sets: &'a [Buffer<u32>],
    counts: &[usize],
    chosen: impl Fn(usize) -> bool,
) -> Result<LevelSets<Views<'a>>> {
    let mut sets = [DeviceSlice::none(); MAX_LEVELS];
    let mut start = [0u32; MAX_LEVELS + 1];
    let mut total = 0usize;
    for l in 0..MAX_LEVELS {
        if l < id_sets.len().min(counts.len()) && chosen(l) {
            sets[l] = id_sets[l].slice(..counts[l])?;
            total += counts[l];
        }
        start[l + 1] = u32::try_from(total)
            .map_err(|_| Error::invalid("blocks of the levels", total, "fewer than 2^32 (u32 indices)"))?;
    }
    let [set0, set1, set2, set3, set4, set5, set6, set7, set8, set9, set10, set11] = sets;
    Ok(LevelSets { set0, set1, set2, set3, set4, set5, set6, set7, set8, set9, set10, set11, start })
}
