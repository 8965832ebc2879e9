//! Every level's ID set in one launch ([`LevelSets`]): the per-level launch families of an
//! adaptation whose levels do not depend on each other (flagging the work lists, the
//! stability guard, the vorticity criterion) become one launch each, where a launch per level cost the host a
//! driver call per level (BENCHMARKS.md, thirty-seventh session). The items are the
//! levels' blocks one level after the other, in ID-set order, as the per-level launches
//! laid them out.

use crate::amr::MAX_LEVELS;
use crate::kernel_args;
use crate::memory::Lens;

kernel_args! {
    /// The ID sets of the levels (a null one for a level not taken) and where each level's
    /// items begin: level `l`'s items are `start[l] .. start[l + 1]`, its blocks
    /// `set_l[.. start[l + 1] - start[l]]`. Separate fields, not an array: a run-time index
    /// into an argument array would copy it to local memory on the GPU.
    pub struct LevelSets {
        pub set0: ref u32,
        pub set1: ref u32,
        pub set2: ref u32,
        pub set3: ref u32,
        pub set4: ref u32,
        pub set5: ref u32,
        pub set6: ref u32,
        pub set7: ref u32,
        pub set8: ref u32,
        pub set9: ref u32,
        pub set10: ref u32,
        pub set11: ref u32,
        /// Items before each level: `start[0] = 0`, non-decreasing, `start[MAX_LEVELS]`
        /// items in all.
        pub start: val [u32; MAX_LEVELS + 1],
    }
}

/// Calls `$f!(k, field)` for every level `k` and its set's field, in level order.
macro_rules! each_level {
    ($f:ident) => {
        $f!(0, set0);
        $f!(1, set1);
        $f!(2, set2);
        $f!(3, set3);
        $f!(4, set4);
        $f!(5, set5);
        $f!(6, set6);
        $f!(7, set7);
        $f!(8, set8);
        $f!(9, set9);
        $f!(10, set10);
        $f!(11, set11);
    };
}

impl LevelSets<Lens> {
    /// Items of a launch over the sets, `start[MAX_LEVELS]`; 0 (nothing runs) unless
    /// `start` begins at 0, never decreases and every level's set holds its share.
    pub fn items(&self) -> usize {
        let s = &self.start;
        let mut ok = s[0] == 0;
        macro_rules! check {
            ($k:expr, $f:ident) => {
                ok &= s[$k + 1] >= s[$k] && self.$f >= (s[$k + 1].wrapping_sub(s[$k])) as usize;
            };
        }
        each_level!(check);
        if ok {
            s[MAX_LEVELS] as usize
        } else {
            0
        }
    }

    /// One more than the finest level with items (0 if there are none): the per-level
    /// slots a launch may write.
    pub fn levels(&self) -> usize {
        (0..MAX_LEVELS).rev().find(|&l| self.start[l + 1] > self.start[l]).map_or(0, |l| l + 1)
    }
}

impl LevelSets {
    /// Item `i`'s level `l`, its index `j` in that level's set and its block `set_l[j]`.
    ///
    /// # Safety
    /// `i` below the items [`LevelSets::items`] gives for these sets.
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    pub unsafe fn block(&self, i: usize) -> (usize, usize, u32) {
        let i = i as u32;
        // The last level whose items begin at or before `i`: an empty level is followed
        // by one that begins where it does, so this is the level that holds item `i`.
        let (mut l, mut first, mut set) = (0usize, 0u32, self.set0);
        macro_rules! find {
            ($k:expr, $f:ident) => {
                if $k > 0 && i >= self.start[$k] {
                    (l, first, set) = ($k, self.start[$k], self.$f);
                }
            };
        }
        each_level!(find);
        let j = (i - first) as usize;
        (l, j, *set.add(j))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Raw;
    use core::ptr::null;

    /// Sets of the given lengths (level `l`'s blocks are `100 l + j`) as the launch sees
    /// them, their lengths, and the host buffers behind the pointers.
    fn sets(lens: [usize; MAX_LEVELS]) -> (LevelSets<Raw>, LevelSets<Lens>, [[u32; 8]; MAX_LEVELS]) {
        let mut data = [[0u32; 8]; MAX_LEVELS];
        let mut start = [0u32; MAX_LEVELS + 1];
        for l in 0..MAX_LEVELS {
            for j in 0..8 {
                data[l][j] = (100 * l + j) as u32;
            }
            start[l + 1] = start[l] + lens[l] as u32;
        }
        let p = |l: usize| if lens[l] == 0 { null() } else { data[l].as_ptr() };
        let raw = LevelSets::<Raw> {
            set0: p(0),
            set1: p(1),
            set2: p(2),
            set3: p(3),
            set4: p(4),
            set5: p(5),
            set6: p(6),
            set7: p(7),
            set8: p(8),
            set9: p(9),
            set10: p(10),
            set11: p(11),
            start,
        };
        let [set0, set1, set2, set3, set4, set5, set6, set7, set8, set9, set10, set11] = lens;
        let lens =
            LevelSets::<Lens> { set0, set1, set2, set3, set4, set5, set6, set7, set8, set9, set10, set11, start };
        (raw, lens, data)
    }

    #[test]
    fn items_map_to_their_level_and_block_across_empty_levels() {
        let mut lens = [0; MAX_LEVELS];
        (lens[0], lens[2], lens[3], lens[11]) = (3, 1, 4, 2);
        let (raw, l, data) = sets(lens);
        assert_eq!(l.items(), 10);
        assert_eq!(l.levels(), 12);
        let want = [(0, 0), (0, 1), (0, 2), (2, 0), (3, 0), (3, 1), (3, 2), (3, 3), (11, 0), (11, 1)];
        for (i, &(level, j)) in want.iter().enumerate() {
            // SAFETY: `i` is below the items; the pointers point into `data`, alive here.
            let got = unsafe { raw.block(i) };
            assert_eq!(got, (level, j, data[level][j]), "item {i}");
        }
    }

    #[test]
    fn a_set_shorter_than_its_share_or_a_decreasing_start_runs_nothing() {
        let mut lens = [0; MAX_LEVELS];
        (lens[0], lens[1]) = (2, 3);
        let (_, mut l, _) = sets(lens);
        assert_eq!((l.items(), l.levels()), (5, 2));
        l.set1 = 2;
        assert_eq!(l.items(), 0);
        l.set1 = 3;
        l.start[1] = 6;
        assert_eq!(l.items(), 0);
        l.start = [1; MAX_LEVELS + 1];
        assert_eq!(l.items(), 0);
        let (_, none, _) = sets([0; MAX_LEVELS]);
        assert_eq!((none.items(), none.levels()), (0, 0));
    }
}
