//! The device-parallel primitives on the CPU backend against naive references, on
//! random inputs of awkward sizes (0, 1, around the 256-thread and 2048-item tile
//! boundaries, several scan levels, and ≥ 10^7 items). The CPU backend runs the same
//! pipeline of kernels as CUDA except the cooperative tile scan (`tests/gpu_primitives.rs`
//! at the workspace root compares the two on a GPU).
//!
//! Buffers are longer than `n` and filled past `n` with a sentinel, to check that only
//! the `n` leading elements are read and only the documented outputs are written.

use ramus::backend::primitives::{self as prim, Scratch};
use ramus::backend::{Buffer, Device};

const SIZES: [usize; 11] = [0, 1, 2, 255, 256, 257, 1000, 2049, 65537, 1_000_000, 10_000_019];
const PAD: usize = 5;
const SENTINEL: u32 = 0xDEAD_BEEF;

use crate::splitmix::Rng;

/// `n` values from `f`, then `PAD` sentinels.
fn padded(n: usize, mut f: impl FnMut() -> u32) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n).map(|_| f()).collect();
    v.extend(std::iter::repeat_n(SENTINEL, PAD));
    v
}

/// Flags: about `density` percent nonzero, with arbitrary nonzero values.
fn flags(rng: &mut Rng, n: usize, density: u32) -> Vec<u32> {
    padded(n, || if rng.below(100) < density { rng.u32() | 1 << rng.below(32) } else { 0 })
}

fn host(b: &Buffer<u32>) -> &[u32] {
    match b {
        Buffer::Host(v) => v,
        _ => unreachable!("CPU test"),
    }
}

fn dev() -> Device {
    Device::Cpu
}

#[test]
fn exclusive_scan_matches_reference() {
    let d = dev();
    let mut s = Scratch::new(&d);
    let mut rng = Rng(1);
    for n in SIZES {
        for big in [false, true] {
            // Small values, and full-range values (the u32 output wraps, the total not).
            let input = padded(n, || if big { rng.u32() } else { rng.below(1000) });
            let inb = d.upload(&input).unwrap();
            let mut out = d.upload(&vec![SENTINEL; n + PAD]).unwrap();
            let total = prim::exclusive_scan(&d, &mut s, &inb, n, &mut out).unwrap();
            let mut acc = 0u64;
            let o = host(&out);
            for i in 0..n {
                assert_eq!(o[i], acc as u32, "n = {n}, i = {i}");
                acc += input[i] as u64;
            }
            assert_eq!(total, acc, "n = {n}");
            assert!(o[n..].iter().all(|&x| x == SENTINEL), "n = {n}: wrote past n");
        }
    }
}

#[test]
fn compaction_matches_reference() {
    let d = dev();
    let mut s = Scratch::new(&d);
    let mut rng = Rng(2);
    for n in SIZES {
        for density in [0, 3, 50, 100] {
            let f = flags(&mut rng, n, density);
            let fb = d.upload(&f).unwrap();
            let want: Vec<u32> = (0..n as u32).filter(|&i| f[i as usize] != 0).collect();

            let mut out = d.upload(&vec![SENTINEL; want.len() + PAD]).unwrap();
            let m = prim::compact_indices(&d, &mut s, &fb, n, &mut out).unwrap();
            assert_eq!(m, want.len(), "n = {n}");
            assert_eq!(&host(&out)[..m], &want[..], "compact_indices n = {n} density {density}");
            assert!(host(&out)[m..].iter().all(|&x| x == SENTINEL));

            assert_eq!(prim::count_nonzero(&d, &mut s, &fb, n).unwrap(), want.len(), "count n = {n}");

            let vals = padded(n, || rng.u32());
            let vb = d.upload(&vals).unwrap();
            let wantv: Vec<u32> = want.iter().map(|&i| vals[i as usize]).collect();
            let mut out = d.upload(&vec![SENTINEL; wantv.len() + PAD]).unwrap();
            let m = prim::compact(&d, &mut s, &fb, &vb, n, &mut out).unwrap();
            assert_eq!(&host(&out)[..m], &wantv[..], "compact n = {n}");
            assert!(host(&out)[m..].iter().all(|&x| x == SENTINEL));

            // remove_if with the same flags as "remove": keeps the complement.
            let keep: Vec<u32> = (0..n).filter(|&i| f[i] == 0).map(|i| vals[i]).collect();
            let mut vb = d.upload(&vals).unwrap();
            let m = prim::remove_if(&d, &mut s, &mut vb, &fb, n).unwrap();
            assert_eq!(m, keep.len());
            assert_eq!(&host(&vb)[..m], &keep[..], "remove_if n = {n}");
            assert!(host(&vb)[n..].iter().all(|&x| x == SENTINEL));
        }
    }
}

#[test]
fn compact_other_element_sizes() {
    let d = dev();
    let mut s = Scratch::new(&d);
    let mut rng = Rng(3);
    for n in [0, 1, 257, 2049, 65537] {
        let f = flags(&mut rng, n, 40);
        let fb = d.upload(&f).unwrap();
        let v8: Vec<u8> = (0..n).map(|_| rng.u32() as u8).collect();
        let v64: Vec<f64> = (0..n).map(|_| rng.u32() as f64 * 0.37).collect();
        let w8: Vec<u8> = (0..n).filter(|&i| f[i] != 0).map(|i| v8[i]).collect();
        let w64: Vec<f64> = (0..n).filter(|&i| f[i] != 0).map(|i| v64[i]).collect();
        let mut o8 = d.zeros::<u8>(n).unwrap();
        let mut o64 = d.zeros::<f64>(n).unwrap();
        let m = prim::compact(&d, &mut s, &fb, &d.upload(&v8).unwrap(), n, &mut o8).unwrap();
        assert_eq!(&d.download(&o8).unwrap()[..m], &w8[..]);
        let m = prim::compact(&d, &mut s, &fb, &d.upload(&v64).unwrap(), n, &mut o64).unwrap();
        assert_eq!(&d.download(&o64).unwrap()[..m], &w64[..]);

        // scatter through a random permutation, u8 / u32 / f64
        let mut perm: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            perm.swap(i, rng.below(i as u32 + 1) as usize);
        }
        let pb = d.upload(&perm).unwrap();
        let mut o8 = d.zeros::<u8>(n).unwrap();
        // SAFETY: `perm` is a permutation of 0..n: distinct indices below the output's n.
        unsafe { prim::scatter(&d, &d.upload(&v8).unwrap(), &pb, n, &mut o8).unwrap() };
        let o8 = d.download(&o8).unwrap();
        let mut o64 = d.zeros::<f64>(n).unwrap();
        // SAFETY: as above.
        unsafe { prim::scatter(&d, &d.upload(&v64).unwrap(), &pb, n, &mut o64).unwrap() };
        let o64 = d.download(&o64).unwrap();
        for i in 0..n {
            assert_eq!(o8[perm[i] as usize], v8[i]);
            assert_eq!(o64[perm[i] as usize].to_bits(), v64[i].to_bits());
        }
    }
}

#[test]
fn scatter_matches_reference() {
    let d = dev();
    let mut rng = Rng(4);
    for n in SIZES {
        // Distinct indices into a longer output: a random permutation of 0..n+PAD, first n.
        let m = n + PAD;
        let mut perm: Vec<u32> = (0..m as u32).collect();
        for i in (1..m).rev() {
            perm.swap(i, rng.below(i as u32 + 1) as usize);
        }
        let vals = padded(n, || rng.u32());
        let mut want = vec![SENTINEL; m];
        for i in 0..n {
            want[perm[i] as usize] = vals[i];
        }
        let mut out = d.upload(&vec![SENTINEL; m]).unwrap();
        // SAFETY: the first n entries of a permutation of 0..m: distinct, below m = out.len().
        unsafe { prim::scatter(&d, &d.upload(&vals).unwrap(), &d.upload(&perm).unwrap(), n, &mut out).unwrap() };
        assert_eq!(host(&out), &want[..], "n = {n}");
    }
}

#[test]
fn sort_by_key_matches_stable_reference() {
    let d = dev();
    let mut s = Scratch::new(&d);
    let mut rng = Rng(5);
    for n in SIZES {
        // The largest size only with a moderate key width, to keep the suite fast.
        let widths: &[u32] = if n >= 10_000_000 {
            &[20]
        } else if n >= 1_000_000 {
            &[32]
        } else {
            &[0, 1, 5, 17, 32]
        };
        for &bits in widths {
            // Few distinct keys (many ties: checks stability) with random high bits that
            // the sort must ignore for the order.
            let range = if bits == 32 { u32::MAX } else { (1u32 << bits).min(1 + n as u32 / 4).max(1) };
            let keys = padded(n, || {
                let low = rng.below(range);
                if bits < 32 {
                    low | (rng.u32() << bits.max(1) >> bits.max(1) << bits)
                } else {
                    low
                }
            });
            let vals: Vec<u32> = (0..(n + PAD) as u32).collect();
            let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
            let mut want: Vec<(u32, u32)> = keys[..n].iter().copied().zip(vals[..n].iter().copied()).collect();
            want.sort_by_key(|&(k, _)| k & mask); // stable
            let mut kb = d.upload(&keys).unwrap();
            let mut vb = d.upload(&vals).unwrap();
            prim::sort_by_key(&d, &mut s, &mut kb, &mut vb, n, bits).unwrap();
            let (k, v) = (host(&kb), host(&vb));
            for i in 0..n {
                assert_eq!((k[i], v[i]), want[i], "n = {n}, bits = {bits}, i = {i}");
            }
            assert!(k[n..].iter().all(|&x| x == SENTINEL) && v[n..] == vals[n..], "wrote past n");
        }
    }
    let mut kb = d.upload(&[1u32, 0]).unwrap();
    let mut vb = d.upload(&[0u32, 1]).unwrap();
    assert!(prim::sort_by_key(&d, &mut s, &mut kb, &mut vb, 2, 33).is_err());
}

#[test]
fn unique_matches_reference() {
    let d = dev();
    let mut s = Scratch::new(&d);
    let mut rng = Rng(6);
    for n in SIZES {
        for spread in [1u32, 7, 1 << 20, u32::MAX] {
            let mut v: Vec<u32> = (0..n).map(|_| rng.below(spread)).collect();
            v.sort_unstable();
            v.extend(std::iter::repeat_n(SENTINEL, PAD));
            let mut want: Vec<u32> = v[..n].to_vec();
            want.dedup();
            let mut out = d.upload(&vec![SENTINEL; want.len() + PAD]).unwrap();
            let m = prim::unique(&d, &mut s, &d.upload(&v).unwrap(), n, &mut out).unwrap();
            assert_eq!(&host(&out)[..m], &want[..], "n = {n}, spread = {spread}");
            assert!(host(&out)[m..].iter().all(|&x| x == SENTINEL));
        }
    }
}

#[test]
fn reductions_match_reference() {
    let d = dev();
    let mut s = Scratch::new(&d);
    let mut rng = Rng(7);
    for n in SIZES {
        for big in [false, true] {
            let v = padded(n, || if big { rng.u32() } else { rng.below(100) });
            let b = d.upload(&v).unwrap();
            let sum: u64 = v[..n].iter().map(|&x| x as u64).sum();
            let max = v[..n].iter().copied().max().unwrap_or(0);
            assert_eq!(prim::reduce_sum(&d, &mut s, &b, n).unwrap(), sum, "n = {n}");
            assert_eq!(prim::reduce_max(&d, &mut s, &b, n).unwrap(), max, "n = {n}");
        }
    }
    // All u32::MAX: the sum exceeds u32 and every tile total too.
    let n = 3 * 2048 * 2048 + 5;
    let b = d.upload(&vec![u32::MAX; n]).unwrap();
    assert_eq!(prim::reduce_sum(&d, &mut s, &b, n).unwrap(), n as u64 * u32::MAX as u64);
    assert_eq!(prim::reduce_max(&d, &mut s, &b, n).unwrap(), u32::MAX);
}

#[test]
fn rejects_short_buffers() {
    let d = dev();
    let mut s = Scratch::new(&d);
    let b = d.upload(&[1u32, 2, 3]).unwrap();
    let mut o = d.zeros::<u32>(3).unwrap();
    assert!(prim::exclusive_scan(&d, &mut s, &b, 4, &mut o).is_err());
    assert!(prim::reduce_sum(&d, &mut s, &b, 4).is_err());
    let mut short = d.zeros::<u32>(2).unwrap();
    assert!(prim::compact_indices(&d, &mut s, &b, 3, &mut short).is_err()); // 3 nonzero
    assert_eq!(prim::compact_indices(&d, &mut s, &b, 2, &mut short).unwrap(), 2);
}

#[test]
fn scratch_is_reused() {
    let d = dev();
    let mut s = Scratch::new(&d);
    let mut rng = Rng(8);
    let f = flags(&mut rng, 100_000, 30);
    let fb = d.upload(&f).unwrap();
    let mut out = d.zeros::<u32>(100_000).unwrap();
    prim::compact_indices(&d, &mut s, &fb, 100_000, &mut out).unwrap();
    let bytes = s.bytes();
    for n in [100_000, 5, 77_777, 100_000] {
        prim::compact_indices(&d, &mut s, &fb, n, &mut out).unwrap();
        assert_eq!(s.bytes(), bytes, "grew for n = {n}");
    }
}

/// The cooperative CUDA tile scan (`scan_tile_cooperative`, the exact code of the
/// `prim_scan_tiles_*` entries) run on an emulated CTA — 256 host threads, a barrier for
/// `__syncthreads`, a shared array — gives the same result as the serial CPU tile pass.
mod cooperative {
    use ramus::kernels::emulate::run_ctas;
    use ramus::kernels::launch::Kernel;
    use ramus::kernels::primitives::{self as k, ScanArgs, ScanIn, ScanOut, SCAN_CTA, SCAN_SHARED_WORDS, TILE};

    use super::Rng;

    /// Runs the tile pass over all tiles, CTA by CTA, with garbage in shared memory.
    fn run_cooperative<I: ScanIn, O: ScanOut>(a: ScanArgs<I, O>, tiles: usize)
    where
        ScanArgs<I, O>: Sync,
    {
        run_ctas(SCAN_CTA as usize, SCAN_SHARED_WORDS, tiles, |cta| {
            // SAFETY: 256 threads, the shared size, pointers valid for the tile.
            unsafe { k::scan_tile_cooperative(cta, &a) };
        });
    }

    fn run_serial<I: ScanIn, O: ScanOut>(a: ScanArgs<I, O>, tiles: usize) {
        for b in 0..tiles {
            // SAFETY: as above.
            unsafe { k::ScanTileSerial::<I, O>::run(b, &a) };
        }
    }

    #[test]
    fn emulated_cta_matches_serial_tile_pass() {
        let mut rng = Rng(99);
        // (An emulated CTA is slow: 256 OS threads, 19 barriers per tile.)
        for n in [1usize, 257, 2048, 2049, 3 * TILE + 1000] {
            let tiles = n.div_ceil(TILE);
            let mut input: Vec<u32> =
                (0..n).map(|_| if rng.below(3) == 0 { 0 } else { rng.u32() >> rng.below(32) }).collect();
            if n > 10 {
                input[3] = input[2]; // a run for MODE_HEAD
            }
            let modes = [
                (0, u32::MAX, k::MODE_VALUE),
                (0, u32::MAX, k::MODE_NONZERO),
                (0, u32::MAX, k::MODE_ZERO),
                (0, u32::MAX, k::MODE_HEAD),
                (7, 1, k::MODE_ZERO),
                (31, 1, k::MODE_VALUE),
            ];
            for (shift, mask, mode) in modes {
                for (op, with_output) in [(k::OP_SUM, true), (k::OP_MAX, false), (k::OP_MAX, true), (k::OP_SUM, false)]
                {
                    if mode != k::MODE_VALUE && op == k::OP_MAX || mode != k::MODE_NONZERO && !with_output {
                        continue;
                    }
                    {
                        let mut outs = [vec![7u32; n], vec![7u32; n]];
                        let mut sums = [vec![9u64; tiles], vec![9u64; tiles]];
                        for (j, (o, s)) in outs.iter_mut().zip(sums.iter_mut()).enumerate() {
                            let a = ScanArgs::<u32, u32> {
                                input: input.as_ptr(),
                                output: if with_output { o.as_mut_ptr() } else { std::ptr::null_mut() },
                                sums: s.as_mut_ptr(),
                                n: n as u64,
                                shift,
                                mask,
                                mode,
                                op,
                            };
                            if j == 0 {
                                run_serial(a, tiles)
                            } else {
                                run_cooperative(a, tiles)
                            }
                        }
                        assert_eq!(outs[0], outs[1], "n = {n}, mode = {mode}, op = {op}");
                        assert_eq!(sums[0], sums[1], "n = {n}, mode = {mode}, op = {op}");
                    }
                }
            }
            // u64 input in place (the upper levels).
            let wide: Vec<u64> = (0..n).map(|_| rng.next() >> rng.below(64)).collect();
            for op in [k::OP_SUM, k::OP_MAX] {
                let mut data = [wide.clone(), wide.clone()];
                let mut sums = [vec![9u64; tiles], vec![9u64; tiles]];
                for (j, (d, s)) in data.iter_mut().zip(sums.iter_mut()).enumerate() {
                    let a = ScanArgs::<u64, u64> {
                        input: d.as_ptr(),
                        output: d.as_mut_ptr(),
                        sums: s.as_mut_ptr(),
                        n: n as u64,
                        shift: 0,
                        mask: u32::MAX,
                        mode: k::MODE_VALUE,
                        op,
                    };
                    if j == 0 {
                        run_serial(a, tiles)
                    } else {
                        run_cooperative(a, tiles)
                    }
                }
                assert_eq!(data[0], data[1], "u64 n = {n}, op = {op}");
                assert_eq!(sums[0], sums[1], "u64 n = {n}, op = {op}");
            }
        }
    }
}

/// The one-launch rank sort that CUDA uses for small inputs gives the stable order (the
/// radix sort's): the serial kernel through the CPU backend, and the CUDA entry's
/// cooperative code (`rank_sort_cooperative`, several threads per item) on emulated CTAs,
/// for sizes below, at and across the items of one CTA.
#[test]
fn rank_sort_kernel_is_stable() {
    use ramus::backend::Views;
    use ramus::kernels::emulate::run_ctas;
    use ramus::kernels::primitives::{
        rank_sort_cooperative, RankSort, RankSortArgs, RANK_CTA, RANK_ITEMS, RANK_SHARED_BYTES,
    };
    let dev = Device::Cpu;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for n in [2usize, 3, 17, RANK_ITEMS, RANK_ITEMS + 1, 256, 2048] {
        let keys: Vec<u32> = (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                ((state as u32) % 37) | 0xff00_0000 // ties, and high bits outside the mask
            })
            .collect();
        let values: Vec<u32> = (0..n as u32).collect();
        let mut expected: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
        expected.sort_by_key(|&(k, _)| k & 0xffff); // stable
        let kb = dev.upload(&keys).unwrap();
        let vb = dev.upload(&values).unwrap();
        let mut ko = dev.zeros::<u32>(n).unwrap();
        let mut vo = dev.zeros::<u32>(n).unwrap();
        let args = RankSortArgs::<Views> {
            keys_in: kb.view(),
            values_in: vb.view(),
            keys_out: ko.view_mut(),
            values_out: vo.view_mut(),
            n: n as u32,
            mask: 0xffff,
        };
        // SAFETY: all four buffers hold `n` items.
        unsafe { dev.launch::<RankSort>(n, args).unwrap() };
        let got: Vec<(u32, u32)> = dev.download(&ko).unwrap().into_iter().zip(dev.download(&vo).unwrap()).collect();
        assert_eq!(got, expected, "n = {n}");

        let (mut ko, mut vo) = (vec![0u32; n], vec![0u32; n]);
        let raw = RankSortArgs {
            keys_in: keys.as_ptr(),
            values_in: values.as_ptr(),
            keys_out: ko.as_mut_ptr(),
            values_out: vo.as_mut_ptr(),
            n: n as u32,
            mask: 0xffff,
        };
        let shared_words = RANK_SHARED_BYTES as usize / 8;
        run_ctas(RANK_CTA as usize, shared_words, n.div_ceil(RANK_ITEMS), |cta| {
            // SAFETY: the CTA size, grid and shared memory of the entry; `n` items in
            // every array.
            unsafe { rank_sort_cooperative(cta, &raw) }
        });
        let got: Vec<(u32, u32)> = ko.into_iter().zip(vo).collect();
        assert_eq!(got, expected, "cooperative, n = {n}");
    }
}

/// `compact_deferred` leaves the same output and count as `compact`, the count on the
/// device.
#[test]
fn compact_deferred_matches_compact() {
    let dev = Device::Cpu;
    let mut scratch = Scratch::new(&dev);
    for n in [0usize, 1, 257, 5000] {
        let flags: Vec<u32> = (0..n as u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 29) & 1).collect();
        let values: Vec<u32> = (0..n as u32).map(|i| i * 3 + 1).collect();
        let fb = dev.upload(&flags).unwrap();
        let vb = dev.upload(&values).unwrap();
        let mut a = dev.zeros::<u32>(n.max(1)).unwrap();
        let mut b = dev.zeros::<u32>(n.max(1)).unwrap();
        let mut counts = dev.zeros::<u64>(3).unwrap();
        let m = prim::compact(&dev, &mut scratch, &fb, &vb, n, &mut a).unwrap();
        prim::compact_deferred(&dev, &mut scratch, &fb, &vb, n, &mut b, &mut counts, 2).unwrap();
        assert_eq!(dev.get(&counts, 2).unwrap() as usize, m, "n = {n}");
        assert_eq!(dev.read(&a, 0..m).unwrap(), dev.read(&b, 0..m).unwrap(), "n = {n}");
    }
}

/// `compact_segmented` leaves the compaction in `out` and, for every start, the number of
/// kept items before it (and the total after the last), against a naive count;
/// `compact_segments` returns the same as each segment's offset and length.
#[test]
fn compact_segmented_matches_counts() {
    let d = dev();
    let mut s = Scratch::new(&d);
    let mut rng = Rng(31);
    for n in [0usize, 1, 257, 2048, 2049, 65537] {
        let f = flags(&mut rng, n, 40);
        let vals = padded(n, || rng.u32());
        // Ascending starts, with repeats, 0 and n among them.
        let mut starts: Vec<u32> = (0..9).map(|_| rng.below(n as u32 + 1)).chain([0, n as u32]).collect();
        starts.sort_unstable();
        let m = starts.len();
        let kept: Vec<u32> = (0..n).filter(|&i| f[i] != 0).map(|i| vals[i]).collect();
        let before = |p: usize| f[..p].iter().filter(|&&x| x != 0).count() as u64;
        let mut want: Vec<u64> = starts.iter().map(|&p| before(p as usize)).collect();
        want.push(kept.len() as u64);
        let mut out = d.upload(&vec![SENTINEL; n + PAD]).unwrap();
        let mut at = d.upload(&vec![u64::MAX; m + 2]).unwrap();
        let (fb, vb, sb) = (d.upload(&f).unwrap(), d.upload(&vals).unwrap(), d.upload(&starts).unwrap());
        prim::compact_segmented(&d, &mut s, &fb, &vb, n, &mut out, &sb, m, &mut at).unwrap();
        let at = d.download(&at).unwrap();
        assert_eq!(&at[..=m], &want[..], "n = {n}");
        assert_eq!(at[m + 1], u64::MAX, "n = {n}: written past at[m]");
        let out = d.download(&out).unwrap();
        assert_eq!(&out[..kept.len()], &kept[..], "n = {n}");
        assert!(out[kept.len()..].iter().all(|&x| x == SENTINEL), "n = {n}: written past the count");
        // `compact_segments`: the same compaction, and each segment's (offset, length).
        let starts: Vec<usize> = starts.iter().map(|&p| p as usize).collect();
        let mut out = d.upload(&vec![SENTINEL; n + PAD]).unwrap();
        let ranges = prim::compact_segments(&d, &mut s, &fb, &vb, n, &mut out, &starts).unwrap();
        let want: Vec<(usize, usize)> = want.windows(2).map(|w| (w[0] as usize, (w[1] - w[0]) as usize)).collect();
        assert_eq!(ranges, want, "n = {n}");
        assert_eq!(&d.download(&out).unwrap()[..kept.len()], &kept[..], "n = {n}");
    }
    // Starts out of order or past the items are errors, not launches.
    let (fb, mut out) = (d.upload(&[1u32; 4]).unwrap(), d.zeros::<u32>(4).unwrap());
    assert!(prim::compact_segments(&d, &mut s, &fb, &fb, 4, &mut out, &[2, 1]).is_err());
    assert!(prim::compact_segments(&d, &mut s, &fb, &fb, 4, &mut out, &[0, 5]).is_err());
    assert_eq!(prim::compact_segments(&d, &mut s, &fb, &fb, 4, &mut out, &[]).unwrap(), vec![]);
    // Too short a counts buffer is an error, not a launch.
    let (fb, sb) = (d.upload(&[1u32; 4]).unwrap(), d.upload(&[0u32, 2]).unwrap());
    let (mut out, mut at) = (d.zeros::<u32>(4).unwrap(), d.zeros::<u64>(2).unwrap());
    assert!(prim::compact_segmented(&d, &mut s, &fb, &fb, 4, &mut out, &sb, 2, &mut at).is_err());
}

/// The sort-free deduplication (`mark_seen` over several lists, then `take_seen`) equals
/// "sort, then unique" of the flagged IDs, leaves the flag array all zero, and the
/// deferred variants (count left on the device, or not written) agree with the read-back one.
#[test]
fn mark_and_take_seen_match_sort_unique() {
    let d = dev();
    let mut s = Scratch::new(&d);
    let mut rng = Rng(21);
    for range in [1usize, 2, 255, 2048, 2049, 65537, 1_000_000] {
        for n in [0usize, 1, 7, 3000, 200_000] {
            let ids = padded(n, || rng.below(range as u32));
            let valid = flags(&mut rng, n, 60);
            let more = padded(n / 3, || rng.below(range as u32));
            let flagged = (0..n).filter(|&i| valid[i] != 0).map(|i| ids[i]);
            let mut want: Vec<u32> = flagged.chain(more[..n / 3].iter().copied()).collect();
            want.sort_unstable();
            want.dedup();
            let mut seen = d.zeros::<u32>(range + PAD).unwrap();
            let (ib, vb, mb) = (d.upload(&ids).unwrap(), d.upload(&valid).unwrap(), d.upload(&more).unwrap());
            // Read back, left on the device, not counted at all; each into a fresh output.
            for mode in ["read", "deferred", "uncounted"] {
                let mut out = d.upload(&vec![SENTINEL; range + PAD]).unwrap();
                // SAFETY: every ID is below `range` < seen.len().
                unsafe {
                    prim::mark_seen(&d, &mut seen, &ib, Some(&vb), n).unwrap();
                    prim::mark_seen(&d, &mut seen, &mb, None, n / 3).unwrap();
                }
                let m = match mode {
                    "read" => prim::take_seen(&d, &mut s, &mut seen, range, &mut out).unwrap(),
                    "deferred" => {
                        let mut counts = d.zeros::<u64>(2).unwrap();
                        prim::take_seen_deferred(&d, &mut s, &mut seen, range, &mut out, Some((&mut counts, 1)))
                            .unwrap();
                        d.get(&counts, 1).unwrap() as usize
                    }
                    _ => {
                        prim::take_seen_deferred(&d, &mut s, &mut seen, range, &mut out, None).unwrap();
                        want.len()
                    }
                };
                assert_eq!(&host(&out)[..m], &want[..], "range = {range}, n = {n}, mode = {mode}");
                assert!(host(&seen).iter().all(|&x| x == 0), "flags left set: range = {range}, n = {n}");
            }
        }
    }
}

/// The short deduplication by ranks (`distinct_short`) equals "sort, then unique" of the
/// valid items and the extra list (the flag-array path's result), on lists with many and
/// with no repeats, all invalid, empty, and without validity flags; it writes nothing past
/// the distinct values, and refuses an output shorter than the list and a list longer than
/// the one launch takes.
#[test]
fn distinct_short_matches_sort_unique() {
    let d = dev();
    let mut s = Scratch::new(&d);
    let mut rng = Rng(34);
    // n = 1639 with n / 4 extra items: the longest list, `DISTINCT_MAX` = 2048.
    for n in [0usize, 1, 2, 7, 27, 255, 256, 700, 1639] {
        for (range, density) in [(4u32, 60u32), (1000, 60), (u32::MAX, 90), (50, 0), (1 << 20, 100)] {
            let m = n / 4;
            let ids = padded(n, || rng.below(range));
            let valid = flags(&mut rng, n, density);
            let more = padded(m, || rng.below(range));
            let with_flags = (0..n).filter(|&i| valid[i] != 0).map(|i| ids[i]);
            let (ib, vb, mb) = (d.upload(&ids).unwrap(), d.upload(&valid).unwrap(), d.upload(&more).unwrap());
            for (flagged, extra) in [(true, None), (true, Some((&mb, m))), (false, Some((&mb, m)))] {
                let listed: Vec<u32> = if flagged { with_flags.clone().collect() } else { ids[..n].to_vec() };
                let mut want: Vec<u32> =
                    listed.into_iter().chain(extra.map_or(&[][..], |_| &more[..m]).iter().copied()).collect();
                want.sort_unstable();
                want.dedup();
                let len = n + extra.map_or(0, |(_, m)| m);
                let mut out = d.upload(&vec![SENTINEL; len + PAD]).unwrap();
                let mut counts = d.upload(&[7u64; 3]).unwrap();
                let list = (&ib, flagged.then_some(&vb), n);
                prim::distinct_short(&d, &mut s, list, extra, &mut out, (&mut counts, 1)).unwrap();
                let what = format!(
                    "n = {n}, range = {range}, density = {density}, flags {flagged}, extra {}",
                    extra.is_some()
                );
                assert_eq!(d.read(&counts, 0..3).unwrap(), [7, want.len() as u64, 7], "{what}");
                assert_eq!(&host(&out)[..want.len()], &want[..], "{what}");
                assert!(host(&out)[want.len()..].iter().all(|&x| x == SENTINEL), "written past the count: {what}");
            }
        }
    }
    let (ib, mut out, mut counts) =
        (d.upload(&[3u32, 1, 3]).unwrap(), d.zeros::<u32>(2).unwrap(), d.zeros::<u64>(1).unwrap());
    let short = prim::distinct_short(&d, &mut s, (&ib, None, 3), None, &mut out, (&mut counts, 0));
    assert!(matches!(short, Err(ramus::Error::InvalidParameter { .. })), "{short:?}");
    let long = d.zeros::<u32>(2049).unwrap();
    let mut out = d.zeros::<u32>(2049).unwrap();
    let too_long = prim::distinct_short(&d, &mut s, (&long, None, 2049), None, &mut out, (&mut counts, 0));
    assert!(matches!(too_long, Err(ramus::Error::InvalidParameter { .. })), "{too_long:?}");
}

/// The gathered short deduplication (`distinct_short_gathered`) equals "gather, then sort
/// and unique" on the host: `per` table entries per block (links; a parent with `per = 1`)
/// or `table[b] + k` (children), negative entries skipped, with and without an extra
/// list; it refuses `per = 0` and more items than one launch takes.
#[test]
fn distinct_short_gathered_matches_gather_then_sort_unique() {
    let d = dev();
    let mut s = Scratch::new(&d);
    let mut rng = Rng(35);
    let blocks_in_pool = 300usize;
    for (per, children) in [(1usize, false), (9, false), (27, false), (4, true), (8, true)] {
        let width = if children { 1 } else { per };
        // About a third of the entries negative (no item).
        let table: Vec<i32> =
            (0..blocks_in_pool * width).map(|_| if rng.below(3) == 0 { -1 } else { rng.below(5000) as i32 }).collect();
        let tb = d.upload(&table).unwrap();
        for n in [0usize, 1, 5, 60] {
            if n * per > 1800 {
                continue;
            }
            let blocks = padded(n, || rng.below(blocks_in_pool as u32));
            let m = n / 3;
            let more = padded(m, || rng.below(5000));
            let (bb, mb) = (d.upload(&blocks).unwrap(), d.upload(&more).unwrap());
            for extra in [None, Some((&mb, m))] {
                let mut want: Vec<u32> = Vec::new();
                for &b in &blocks[..n] {
                    for k in 0..per {
                        let t = if children { table[b as usize] } else { table[b as usize * per + k] };
                        if t >= 0 {
                            want.push(t as u32 + if children { k as u32 } else { 0 });
                        }
                    }
                }
                want.extend(extra.map_or(&[][..], |_| &more[..m]));
                want.sort_unstable();
                want.dedup();
                let len = n * per + extra.map_or(0, |(_, m)| m);
                let mut out = d.upload(&vec![SENTINEL; len + PAD]).unwrap();
                let mut counts = d.upload(&[7u64; 3]).unwrap();
                let gather = if children { prim::Gather::Children { per } } else { prim::Gather::Entries { per } };
                // SAFETY: the blocks are below `blocks_in_pool`, whose entries the table holds.
                unsafe {
                    prim::distinct_short_gathered(
                        &d,
                        &mut s,
                        (&bb, n),
                        (&tb, gather),
                        extra,
                        &mut out,
                        (&mut counts, 1),
                    )
                    .unwrap()
                };
                let what = format!("per = {per}, children = {children}, n = {n}, extra {}", extra.is_some());
                assert_eq!(d.read(&counts, 0..3).unwrap(), [7, want.len() as u64, 7], "{what}");
                assert_eq!(&host(&out)[..want.len()], &want[..], "{what}");
                assert!(host(&out)[want.len()..].iter().all(|&x| x == SENTINEL), "written past the count: {what}");
            }
        }
    }
    let (bb, tb) = (d.upload(&[0u32; 100]).unwrap(), d.upload(&[0i32; 2700]).unwrap());
    let (mut out, mut counts) = (d.zeros::<u32>(2700).unwrap(), d.zeros::<u64>(1).unwrap());
    for (n, per) in [(10, 0), (100, 27)] {
        // SAFETY: every block is 0, whose entries the table holds.
        let r = unsafe {
            prim::distinct_short_gathered(
                &d,
                &mut s,
                (&bb, n),
                (&tb, prim::Gather::Entries { per }),
                None,
                &mut out,
                (&mut counts, 0),
            )
        };
        assert!(matches!(r, Err(ramus::Error::InvalidParameter { .. })), "n = {n}, per = {per}: {r:?}");
    }
}

/// `Device::launch` refuses, with a named error and before any item runs, a launch whose
/// item count exceeds what its argument slices hold (`Kernel::max_items`): here a rank sort
/// of 9 items over slices of 8, and one whose output slice is too short.
#[test]
fn launch_refuses_more_items_than_the_slices_hold() {
    use ramus::backend::{Buffer, Views};
    use ramus::kernels::primitives::{RankSort, RankSortArgs};
    let dev = Device::Cpu;
    let keys = dev.upload(&[3u32, 1, 2, 0, 7, 5, 6, 4]).unwrap();
    let values = dev.upload(&[0u32; 8]).unwrap();
    let (mut ko, mut vo) = (dev.zeros::<u32>(8).unwrap(), dev.zeros::<u32>(8).unwrap());
    fn args<'a>(
        (keys, values): (&'a Buffer<u32>, &'a Buffer<u32>),
        ko: &'a mut Buffer<u32>,
        vo: &'a mut Buffer<u32>,
        n: u32,
        out: usize,
    ) -> RankSortArgs<Views<'a>> {
        RankSortArgs {
            keys_in: keys.view(),
            values_in: values.view(),
            keys_out: ko.slice_mut(..out).unwrap(),
            values_out: vo.view_mut(),
            n,
            mask: u32::MAX,
        }
    }
    let input = (&keys, &values);
    // SAFETY: refused before launching (9 > 8 keys; 8 > 7 output slots).
    let too_many = unsafe { dev.launch::<RankSort>(9, args(input, &mut ko, &mut vo, 9, 8)) };
    let short_out = unsafe { dev.launch::<RankSort>(8, args(input, &mut ko, &mut vo, 8, 7)) };
    for e in [too_many, short_out] {
        match e {
            Err(ramus::Error::InvalidParameter { field: "launch size", .. }) => {}
            other => panic!("expected a launch-size error, got {other:?}"),
        }
    }
    assert_eq!(dev.download(&ko).unwrap(), vec![0; 8], "nothing ran");
    // SAFETY: every slice holds the 8 items.
    unsafe { dev.launch::<RankSort>(8, args(input, &mut ko, &mut vo, 8, 8)).unwrap() };
    assert_eq!(dev.download(&ko).unwrap(), (0..8).collect::<Vec<u32>>());
}
