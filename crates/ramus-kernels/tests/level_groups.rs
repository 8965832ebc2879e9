//! Blocks grouped by the level of their children in one launch (`amr::select`): the CUDA
//! entry's cooperative code (`level_groups_cooperative`, several threads per item, run
//! here on emulated CTAs: host threads, a barrier for `__syncthreads`, a shared array
//! filled with garbage) writes the same values and offsets as the serial kernel, and both
//! are a stable sort by level, for lists shorter than one CTA's items, of exactly one
//! CTA's, and spanning several.

use ramus_kernels::amr::args::{LevelGroupsArgs, Pool};
use ramus_kernels::amr::select::{level_groups_cooperative, LevelGroups};
use ramus_kernels::emulate::run_ctas;
use ramus_kernels::lattice::D3;
use ramus_kernels::launch::Kernel;
use ramus_kernels::primitives::{RANK_CTA, RANK_ITEMS, RANK_SHARED_BYTES};

fn args(
    level: &mut [i32],
    child: &mut [i32],
    blocks: &[u32],
    values: &mut [u32],
    offsets: &mut [u32],
    first_child: u32,
) -> LevelGroupsArgs {
    let null = std::ptr::null_mut();
    LevelGroupsArgs {
        pool: Pool {
            level: level.as_mut_ptr(),
            origin: null,
            status: null,
            mark: null,
            parent: null,
            child: child.as_mut_ptr(),
            nbr: null,
            nbr_child: null,
            onb: std::ptr::null_mut(),
            block_mask: std::ptr::null_mut(),
            cell_mask: std::ptr::null_mut(),
        },
        blocks: blocks.as_ptr(),
        count: blocks.len() as u32,
        values: values.as_mut_ptr(),
        first_child,
        offsets: offsets.as_mut_ptr(),
        levels: offsets.len() as u32,
    }
}

#[test]
fn cooperative_groups_equal_the_serial_kernel_and_a_stable_sort() {
    let levels = 5; // keys 1..=4: the levels of the children of levels 0..=3, and 0 unused
    for n in [1usize, 7, RANK_ITEMS - 1, RANK_ITEMS, RANK_ITEMS + 1, 300, 1024] {
        for first_child in [0u32, 1] {
            let pool = 4 * n + 10;
            let mut level: Vec<i32> = (0..pool).map(|b| ((b * 2_654_435_761usize) >> 7) as i32 & 3).collect();
            let mut child: Vec<i32> = (0..pool).map(|b| (8 * b + 3) as i32).collect();
            // Distinct block IDs in no particular order.
            let blocks: Vec<u32> = (0..n as u32).map(|i| (i * 7919 + 13) % pool as u32).collect();
            let value = |b: u32| if first_child == 1 { child[b as usize] as u32 } else { b };
            let mut sorted = blocks.clone();
            sorted.sort_by_key(|&b| level[b as usize]); // stable
            let want: Vec<u32> = sorted.iter().map(|&b| value(b)).collect();
            let want_off: Vec<u32> = (0..levels as i32)
                .map(|l| blocks.iter().filter(|&&b| level[b as usize] + 1 < l).count() as u32)
                .collect();

            let (mut values, mut offsets) = (vec![0u32; n], vec![0u32; levels]);
            let a = args(&mut level, &mut child, &blocks, &mut values, &mut offsets, first_child);
            for i in 0..n + levels {
                // SAFETY: every listed block and its child are within the arrays.
                unsafe { LevelGroups::<D3>::run(i, &a) };
            }
            assert_eq!((values.clone(), offsets.clone()), (want.clone(), want_off.clone()), "serial, n = {n}");

            let (mut values, mut offsets) = (vec![u32::MAX; n], vec![u32::MAX; levels]);
            let a = args(&mut level, &mut child, &blocks, &mut values, &mut offsets, first_child);
            run_ctas(RANK_CTA as usize, RANK_SHARED_BYTES as usize / 8, (n + levels).div_ceil(RANK_ITEMS), |cta| {
                // SAFETY: the CTA size, grid and shared memory of the entry; arrays as above.
                unsafe { level_groups_cooperative(cta, &a) };
            });
            assert_eq!((values, offsets), (want, want_off), "cooperative, n = {n}, first_child = {first_child}");
        }
    }
}
