//! CPU-versus-CUDA agreement of the device-parallel primitives
//! (`ramus::backend::primitives`), on a GPU machine.
//!
//! Every test needs a CUDA device and is `#[ignore]`d; `scripts/gpu-check.sh run` runs
//! them with `--ignored --nocapture --test-threads=1`. Each primitive runs on
//! `Device::new(Backend::Cuda)` and on `Device::Cpu` with identical random inputs at
//! sizes from 0 to ≥ 10^7; the outputs (whole buffers, including the untouched padding
//! past `n`) must be identical, bit for bit. `timings_at_ten_million` prints the CUDA
//! times (the CPU results are checked against naive references by
//! `crates/ramus/tests/primitives.rs`).

use std::time::Instant;

use ramus::backend::primitives::{self as prim, Scratch};
use ramus::backend::{Buffer, Device};
use ramus::Backend;

const SIZES: [usize; 11] = [0, 1, 2, 255, 256, 257, 1000, 2049, 65537, 1_000_000, 10_000_019];
const PAD: usize = 5;
const SENTINEL: u32 = 0xDEAD_BEEF;

#[path = "../crates/ramus/tests/common/splitmix.rs"]
mod splitmix;
use splitmix::Rng;

fn padded(n: usize, mut f: impl FnMut() -> u32) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n).map(|_| f()).collect();
    v.extend(std::iter::repeat_n(SENTINEL, PAD));
    v
}

fn flags(rng: &mut Rng, n: usize, density: u32) -> Vec<u32> {
    padded(n, || if rng.below(100) < density { rng.u32() | 1 << rng.below(32) } else { 0 })
}

/// The two devices and a scratch for each (reused across calls, as the AMR routine does).
struct Pair {
    devs: [Device; 2],
    scratch: [Scratch; 2],
}

impl Pair {
    fn new() -> Pair {
        let gpu = Device::new(Backend::Cuda).expect("a CUDA device");
        println!("device: {}", gpu.name());
        let cpu = Device::Cpu;
        let scratch = [Scratch::new(&cpu), Scratch::new(&gpu)];
        Pair { devs: [cpu, gpu], scratch }
    }

    /// Runs `f` on both devices and asserts equal results.
    fn check<R: PartialEq + std::fmt::Debug>(&mut self, what: &str, f: impl Fn(&Device, &mut Scratch) -> R) {
        let [cpu, gpu] = &self.devs;
        let [sc, sg] = &mut self.scratch;
        let a = f(cpu, sc);
        let b = f(gpu, sg);
        if a != b {
            // Avoid printing 10^7 elements.
            let s = format!("{a:?}");
            let t = format!("{b:?}");
            let first = s.bytes().zip(t.bytes()).position(|(x, y)| x != y).unwrap_or(0);
            let lo = first.saturating_sub(200);
            panic!(
                "{what}: CPU and CUDA differ near byte {first} of the debug output:\n cpu: ...{}\ncuda: ...{}",
                &s[lo..(first + 200).min(s.len())],
                &t[lo..(first + 200).min(t.len())]
            );
        }
    }
}

fn up(d: &Device, v: &[u32]) -> Buffer<u32> {
    d.upload(v).unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn gpu_exclusive_scan_and_reductions_match_cpu() {
    let mut p = Pair::new();
    let mut rng = Rng(11);
    for n in SIZES {
        for big in [false, true] {
            let v = padded(n, || if big { rng.u32() } else { rng.below(1000) });
            p.check(&format!("exclusive_scan n = {n} big = {big}"), |d, s| {
                let mut out = up(d, &vec![SENTINEL; n + PAD]);
                let total = prim::exclusive_scan(d, s, &up(d, &v), n, &mut out).unwrap();
                (total, d.download(&out).unwrap())
            });
            p.check(&format!("reduce_sum/max n = {n} big = {big}"), |d, s| {
                let b = up(d, &v);
                (prim::reduce_sum(d, s, &b, n).unwrap(), prim::reduce_max(d, s, &b, n).unwrap())
            });
        }
    }
    // Every tile total above u32: the u64 totals must be exact.
    let n = 3 * 2048 * 2048 + 5;
    let v = vec![u32::MAX; n];
    p.check("reduce_sum of u32::MAX", |d, s| {
        let b = up(d, &v);
        let mut out = d.zeros::<u32>(n).unwrap();
        let t = prim::exclusive_scan(d, s, &b, n, &mut out).unwrap();
        assert_eq!(t, n as u64 * u32::MAX as u64);
        (t, prim::reduce_sum(d, s, &b, n).unwrap(), prim::reduce_max(d, s, &b, n).unwrap(), d.download(&out).unwrap())
    });
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn gpu_compaction_matches_cpu() {
    let mut p = Pair::new();
    let mut rng = Rng(12);
    for n in SIZES {
        for density in [0, 3, 50, 100] {
            let f = flags(&mut rng, n, density);
            let vals = padded(n, || rng.u32());
            let v64: Vec<f64> = vals.iter().map(|&x| x as f64 * 0.37).collect();
            let v8: Vec<u8> = vals.iter().map(|&x| x as u8).collect();
            p.check(&format!("compaction n = {n} density = {density}"), |d, s| {
                let fb = up(d, &f);
                let mut oi = up(d, &vec![SENTINEL; n + PAD]);
                let ci = prim::compact_indices(d, s, &fb, n, &mut oi).unwrap();
                let cnt = prim::count_nonzero(d, s, &fb, n).unwrap();
                let mut ov = up(d, &vec![SENTINEL; n + PAD]);
                let cv = prim::compact(d, s, &fb, &up(d, &vals), n, &mut ov).unwrap();
                let mut o64 = d.zeros::<f64>(n + PAD).unwrap();
                let c64 = prim::compact(d, s, &fb, &d.upload(&v64).unwrap(), n, &mut o64).unwrap();
                let mut o8 = d.zeros::<u8>(n + PAD).unwrap();
                let c8 = prim::compact(d, s, &fb, &d.upload(&v8).unwrap(), n, &mut o8).unwrap();
                let mut rv = up(d, &vals);
                let cr = prim::remove_if(d, s, &mut rv, &fb, n).unwrap();
                let o64: Vec<u64> = d.download(&o64).unwrap().iter().map(|x| x.to_bits()).collect();
                // Segments at every seventh of the items, and one start past them.
                let starts: Vec<u32> = (0..8).map(|j| (j * n / 7) as u32 + (j == 7) as u32).collect();
                let mut os = up(d, &vec![SENTINEL; n + PAD]);
                let mut at = d.zeros::<u64>(starts.len() + 1).unwrap();
                let sb = up(d, &starts);
                prim::compact_segmented(d, s, &fb, &up(d, &vals), n, &mut os, &sb, starts.len(), &mut at).unwrap();
                (
                    (ci, cnt, cv, c64, c8, cr),
                    (d.download(&os).unwrap(), d.download(&at).unwrap()),
                    d.download(&oi).unwrap(),
                    d.download(&ov).unwrap(),
                    o64,
                    d.download(&o8).unwrap(),
                    d.download(&rv).unwrap(),
                )
            });
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn gpu_sort_by_key_matches_cpu() {
    let mut p = Pair::new();
    let mut rng = Rng(13);
    for n in SIZES {
        let widths: &[u32] = if n >= 1_000_000 { &[20, 32] } else { &[0, 1, 5, 17, 32] };
        for &bits in widths {
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
            p.check(&format!("sort_by_key n = {n} bits = {bits}"), |d, s| {
                let mut kb = up(d, &keys);
                let mut vb = up(d, &vals);
                prim::sort_by_key(d, s, &mut kb, &mut vb, n, bits).unwrap();
                (d.download(&kb).unwrap(), d.download(&vb).unwrap())
            });
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn gpu_unique_and_scatter_match_cpu() {
    let mut p = Pair::new();
    let mut rng = Rng(14);
    for n in SIZES {
        for spread in [1u32, 7, 1 << 20, u32::MAX] {
            let mut v: Vec<u32> = (0..n).map(|_| rng.below(spread)).collect();
            v.sort_unstable();
            v.extend(std::iter::repeat_n(SENTINEL, PAD));
            p.check(&format!("unique n = {n} spread = {spread}"), |d, s| {
                let mut out = up(d, &vec![SENTINEL; n + PAD]);
                let m = prim::unique(d, s, &up(d, &v), n, &mut out).unwrap();
                (m, d.download(&out).unwrap())
            });
        }
        let m = n + PAD;
        let mut perm: Vec<u32> = (0..m as u32).collect();
        for i in (1..m).rev() {
            perm.swap(i, rng.below(i as u32 + 1) as usize);
        }
        let vals = padded(n, || rng.u32());
        let v64: Vec<f64> = vals.iter().map(|&x| x as f64 * 0.37).collect();
        let v8: Vec<u8> = vals.iter().map(|&x| x as u8).collect();
        p.check(&format!("scatter n = {n}"), |d, _| {
            let pb = up(d, &perm);
            let mut o = up(d, &vec![SENTINEL; m]);
            let mut o64 = d.zeros::<f64>(m).unwrap();
            let mut o8 = d.zeros::<u8>(m).unwrap();
            // SAFETY: the first n entries of a permutation of 0..m: distinct, below m.
            unsafe {
                prim::scatter(d, &up(d, &vals), &pb, n, &mut o).unwrap();
                prim::scatter(d, &d.upload(&v64).unwrap(), &pb, n, &mut o64).unwrap();
                prim::scatter(d, &d.upload(&v8).unwrap(), &pb, n, &mut o8).unwrap();
            }
            let o64: Vec<u64> = d.download(&o64).unwrap().iter().map(|x| x.to_bits()).collect();
            (d.download(&o).unwrap(), o64, d.download(&o8).unwrap())
        });
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn gpu_mark_and_take_seen_match_cpu() {
    let mut p = Pair::new();
    let mut rng = Rng(15);
    for range in [1usize, 2049, 65537, 1_000_000] {
        for n in [0usize, 1, 3000, 1_000_000] {
            let ids = padded(n, || rng.below(range as u32));
            let valid = flags(&mut rng, n, 60);
            p.check(&format!("mark/take seen range = {range} n = {n}"), |d, s| {
                let mut seen = d.zeros::<u32>(range).unwrap();
                // SAFETY: every ID is below `range` = seen.len().
                unsafe {
                    prim::mark_seen(d, &mut seen, &up(d, &ids), Some(&up(d, &valid)), n).unwrap();
                    prim::mark_seen(d, &mut seen, &up(d, &ids), None, n / 2).unwrap();
                }
                let mut out = up(d, &vec![SENTINEL; range]);
                let m = prim::take_seen(d, s, &mut seen, range, &mut out).unwrap();
                let left = d.download(&seen).unwrap().iter().filter(|&&x| x != 0).count();
                assert_eq!(left, 0, "flags left set on {}", d.backend());
                (m, d.download(&out).unwrap())
            });
        }
    }
}

/// The deferred deduplication (count left on the device, as the adapt routine's small
/// lists) and `Device::read_pair` (two ranges, one synchronisation: staged, and past the
/// staging memory) give the CPU's results, and the pair equals two separate reads.
#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn gpu_deferred_take_seen_and_paired_reads_match_cpu() {
    let mut p = Pair::new();
    let mut rng = Rng(16);
    for range in [2049usize, 65537] {
        let n = 3000;
        let ids = padded(n, || rng.below(range as u32));
        let valid = flags(&mut rng, n, 60);
        p.check(&format!("deferred take seen, paired reads, range = {range}"), |d, s| {
            let mut seen = d.zeros::<u32>(range).unwrap();
            // SAFETY: every ID is below `range` = seen.len().
            unsafe { prim::mark_seen(d, &mut seen, &up(d, &ids), Some(&up(d, &valid)), n).unwrap() };
            let mut out = up(d, &vec![SENTINEL; range]);
            let mut counts = d.zeros::<u64>(3).unwrap();
            prim::take_seen_deferred(d, s, &mut seen, range, &mut out, Some((&mut counts, 1))).unwrap();
            let mut pairs = Vec::new();
            // 4 + 8 bytes, 2800 + 8 (staged), 8000 + 8 (past the 4096 bytes of staging).
            for k in [1usize, 700, 2000] {
                let (a, b) = d.read_pair(&out, 0..k, &counts, 1..2).unwrap();
                assert_eq!(a, d.read(&out, 0..k).unwrap(), "{} k = {k}", d.backend());
                assert_eq!(b, d.read(&counts, 1..2).unwrap(), "{} k = {k}", d.backend());
                pairs.push((a, b));
            }
            (d.download(&out).unwrap(), pairs)
        });
    }
}

/// The short deduplication by ranks (`distinct_short`) gives the same values and count on
/// both backends, with and without validity flags and an extra list.
#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn gpu_distinct_short_matches_cpu() {
    let mut p = Pair::new();
    let mut rng = Rng(17);
    for (n, range) in [(1usize, 5u32), (27, 40), (243, 1000), (512, 64), (1843, u32::MAX)] {
        let ids = padded(n, || rng.below(range));
        let valid = flags(&mut rng, n, 70);
        let more = padded(n / 9, || rng.below(range));
        p.check(&format!("distinct_short, n = {n}, range = {range}"), |d, s| {
            let (ib, vb, mb) = (up(d, &ids), up(d, &valid), up(d, &more));
            let mut results = Vec::new();
            for (flagged, extra) in [(true, None), (true, Some((&mb, n / 9))), (false, Some((&mb, n / 9)))] {
                let mut out = up(d, &vec![SENTINEL; n + n / 9 + PAD]);
                let mut counts = d.zeros::<u64>(2).unwrap();
                prim::distinct_short(d, s, (&ib, flagged.then_some(&vb), n), extra, &mut out, (&mut counts, 1))
                    .unwrap();
                results.push((d.download(&out).unwrap(), d.download(&counts).unwrap()));
            }
            results
        });
    }
}

/// The gathered short deduplication (`distinct_short_gathered`) gives the same values and
/// count on both backends, for links, parents and children.
#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn gpu_distinct_short_gathered_matches_cpu() {
    let mut p = Pair::new();
    let mut rng = Rng(18);
    for (per, children, n) in [(27usize, false, 18usize), (9, false, 56), (1, false, 500), (8, true, 60), (4, true, 1)]
    {
        let width = if children { 1 } else { per };
        let table: Vec<i32> =
            (0..400 * width).map(|_| if rng.below(3) == 0 { -1 } else { rng.below(3000) as i32 }).collect();
        let blocks = padded(n, || rng.below(400));
        let more = padded(n, || rng.below(3000));
        let gather = if children { prim::Gather::Children { per } } else { prim::Gather::Entries { per } };
        p.check(&format!("distinct_short_gathered, per = {per}, children = {children}, n = {n}"), |d, s| {
            let (bb, tb, mb) = (up(d, &blocks), d.upload(&table).unwrap(), up(d, &more));
            let mut results = Vec::new();
            for extra in [None, Some((&mb, n))] {
                let mut out = up(d, &vec![SENTINEL; n * per + n + PAD]);
                let mut counts = d.zeros::<u64>(2).unwrap();
                // SAFETY: the blocks are below 400, whose entries the table holds.
                unsafe {
                    prim::distinct_short_gathered(d, s, (&bb, n), (&tb, gather), extra, &mut out, (&mut counts, 1))
                        .unwrap()
                };
                results.push((d.download(&out).unwrap(), d.download(&counts).unwrap()));
            }
            results
        });
    }
}

/// Median wall time of `reps` calls of `f` (each followed by a synchronisation), in ms.
fn time_ms(d: &Device, reps: usize, mut f: impl FnMut()) -> f64 {
    f(); // warm-up: loads the kernels, grows the scratch
    d.synchronize().unwrap();
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            d.synchronize().unwrap();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(|a, b| a.total_cmp(b));
    t[reps / 2]
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn gpu_timings() {
    let d = Device::new(Backend::Cuda).expect("a CUDA device");
    let mut s = Scratch::new(&d);
    let mut rng = Rng(15);
    println!("device: {}", d.name());
    println!("{:>10} {:>16} {:>10} {:>10}", "n", "primitive", "ms", "GB/s*");
    for n in [100_000usize, 10_000_000] {
        let f = flags(&mut rng, n, 30);
        let vals = padded(n, || rng.u32());
        let keys = padded(n, || rng.u32());
        let fb = up(&d, &f);
        let vb = up(&d, &vals);
        let mut out = d.zeros::<u32>(n + PAD).unwrap();
        let reps = 21;
        // *: bytes of the input read once and the output written once, per ms.
        let report = |name: &str, ms: f64, bytes: usize| {
            println!("{n:>10} {name:>16} {ms:>10.4} {:>10.1}", bytes as f64 / (ms * 1e-3) / 1e9);
        };
        let ms = time_ms(&d, reps, || {
            prim::exclusive_scan(&d, &mut s, &vb, n, &mut out).unwrap();
        });
        report("exclusive_scan", ms, 8 * n);
        let ms = time_ms(&d, reps, || {
            prim::compact_indices(&d, &mut s, &fb, n, &mut out).unwrap();
        });
        report("compact_indices", ms, 4 * n + 4 * n * 3 / 10);
        let ms = time_ms(&d, reps, || {
            prim::count_nonzero(&d, &mut s, &fb, n).unwrap();
        });
        report("count_nonzero", ms, 4 * n);
        let ms = time_ms(&d, reps, || {
            prim::reduce_max(&d, &mut s, &vb, n).unwrap();
        });
        report("reduce_max", ms, 4 * n);
        let mut perm: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            perm.swap(i, rng.below(i as u32 + 1) as usize);
        }
        let pb = up(&d, &perm);
        let ms = time_ms(&d, reps, || {
            // SAFETY: a permutation of 0..n, `out` holds n.
            unsafe { prim::scatter(&d, &vb, &pb, n, &mut out).unwrap() };
        });
        report("scatter (random)", ms, 12 * n);
        for bits in [20u32, 32] {
            // Each repetition sorts the same random keys (restored by a device copy,
            // included in the time: about 2 % of it).
            let k0 = up(&d, &keys);
            let mut kb = up(&d, &keys);
            let mut vb2 = up(&d, &vals);
            let ms = time_ms(&d, 5, || {
                d.copy(&k0, n, &mut kb, 0).unwrap();
                prim::sort_by_key(&d, &mut s, &mut kb, &mut vb2, n, bits).unwrap();
            });
            report(&format!("sort {bits} bits"), ms, 16 * n);
        }
        let mut sorted = vals.clone();
        sorted[..n].sort_unstable();
        for x in sorted[..n].iter_mut() {
            *x >>= 8; // runs
        }
        let sb = up(&d, &sorted);
        let ms = time_ms(&d, reps, || {
            prim::unique(&d, &mut s, &sb, n, &mut out).unwrap();
        });
        report("unique", ms, 8 * n);
    }
    println!("scratch: {} MiB", s.bytes() >> 20);
}
