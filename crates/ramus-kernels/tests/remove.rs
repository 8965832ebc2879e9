//! Step 5 on a short ID set in one CTA (`amr::remove`): the cooperative kernel (the code
//! of the CUDA entry, run here on an emulated CTA: 512 host threads, a barrier for
//! `__syncthreads`, a shared array filled with garbage) keeps the same entries in the same
//! order as the serial CPU kernel and as a plain `retain`, for sets shorter than one
//! chunk, of exactly one, and spanning several, with none, some and all entries removed.

use ramus_kernels::amr::args::{Pool, RemoveArgs};
use ramus_kernels::amr::remove::{remove_cooperative, RemoveSerial, REMOVE_CTA, REMOVE_SHARED_WORDS};
use ramus_kernels::amr::status;
use ramus_kernels::emulate::run_ctas;
use ramus_kernels::launch::Kernel;

fn args(status: &mut [i32], set: &mut [u32]) -> RemoveArgs {
    let null = std::ptr::null_mut();
    RemoveArgs {
        pool: Pool {
            level: null,
            origin: null,
            status: status.as_mut_ptr(),
            mark: null,
            parent: null,
            child: null,
            nbr: null,
            nbr_child: null,
            onb: std::ptr::null_mut(),
            block_mask: std::ptr::null_mut(),
            cell_mask: std::ptr::null_mut(),
        },
        id_set: set.as_mut_ptr(),
        n: set.len() as u32,
    }
}

#[test]
fn one_cta_removes_what_the_serial_kernel_removes() {
    let chunk = REMOVE_CTA as usize * 8;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for n in [0, 1, 37, chunk - 1, chunk, chunk + 1, 2 * chunk + 123] {
        for removed_in_8 in [0u64, 3, 8] {
            let blocks = n + 50;
            // A permutation-like set of distinct block IDs, not in ascending order.
            let set: Vec<u32> = (0..n as u32).map(|i| (i * 7919 + 13) % blocks as u32).collect();
            let mut st: Vec<i32> = (0..blocks)
                .map(|_| if next() % 8 < removed_in_8 { status::REMOVE } else { status::UNREFINED })
                .collect();
            let want: Vec<u32> = set.iter().copied().filter(|&b| st[b as usize] != status::REMOVE).collect();
            let mut serial = set.clone();
            let a = args(&mut st, &mut serial);
            // SAFETY: the set holds `n` entries, each below `blocks`.
            unsafe { RemoveSerial::run(0, &a) };
            let mut coop = set.clone();
            let a = args(&mut st, &mut coop);
            run_ctas(REMOVE_CTA as usize, REMOVE_SHARED_WORDS, 1, |cta| {
                // SAFETY: the CTA size, the shared size, the set as above.
                unsafe { remove_cooperative(cta, &a) };
            });
            let k = want.len();
            assert_eq!(serial[..k], want[..], "serial, n = {n}, {removed_in_8}/8 removed");
            assert_eq!(coop[..k], want[..], "one CTA, n = {n}, {removed_in_8}/8 removed");
            // What lies past the kept entries is not specified, but both leave the same.
            assert_eq!(serial, coop, "n = {n}, {removed_in_8}/8 removed");
        }
    }
}
