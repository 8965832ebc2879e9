//! Property tests of `Mesh::adapt` (paper, section "Adaptive Mesh Refinement",
//! "Refinement and Coarsening"): random root grids (non-cubic, walls and periodic pairs),
//! random level limits, and short sequences of adapt calls with random refine/coarsen
//! marks — scattered, whole sibling families, partial families, and leaves at the domain's
//! faces, edges and corners. After every adapt the whole forest must pass
//! `ramus::amr::check`. Plus: a full pool makes `adapt` fail and leaves the mesh unchanged.
//!
//! 1,000 sequences per dimension (2,000 in all) on `Device::Cpu`.

use proptest::prelude::*;
use ramus::amr::{check, Capacity, Mesh, MeshSnapshot, MeshSpec};
use ramus::backend::Device;
use ramus::kernels::amr::{status, units};
use ramus::Mark;
use ramus::{Boundary, Dim, D2, D3};

use crate::splitmix::Rng;

#[derive(Clone, Debug)]
struct Case {
    blocks: [usize; 3],
    periodic: [bool; 3],
    max_levels: usize,
    /// Per adapt call: (seed, percent of leaves to refine, percent of families to coarsen,
    /// focus on the domain boundary).
    steps: Vec<(u64, u64, u64, bool)>,
}

fn case(dim: usize, max_blocks: usize, max_levels: usize, max_steps: usize) -> impl Strategy<Value = Case> {
    (
        proptest::array::uniform3(1..=max_blocks),
        proptest::array::uniform3(any::<bool>()),
        2..=max_levels,
        proptest::collection::vec((any::<u64>(), 0..=60u64, 0..=80u64, any::<bool>()), 1..=max_steps),
    )
        .prop_map(move |(mut blocks, mut periodic, max_levels, steps)| {
            for a in 0..3 {
                if a >= dim {
                    blocks[a] = 1;
                    periodic[a] = false;
                }
                // A periodic axis needs two root blocks (a block is not its own neighbour).
                periodic[a] &= blocks[a] >= 2;
            }
            Case { blocks, periodic, max_levels, steps }
        })
}

/// Pool size of the full refinement: the pool never runs out in the random sequences.
fn full_capacity(dim: usize, roots: usize, levels: usize) -> usize {
    (0..levels).map(|l| roots << (dim * l)).sum()
}

fn new_mesh<D: Dim>(c: &Case, capacity: Option<usize>) -> Mesh<D> {
    let mut boundaries = [Boundary::NO_SLIP; 6];
    for a in 0..3 {
        if c.periodic[a] {
            boundaries[2 * a] = Boundary::Periodic;
            boundaries[2 * a + 1] = Boundary::Periodic;
        }
    }
    let cells = [4 * c.blocks[0], 4 * c.blocks[1], 4 * c.blocks[2]];
    let roots = c.blocks.iter().product();
    let blocks = capacity.unwrap_or_else(|| full_capacity(D::D, roots, c.max_levels));
    let spec = MeshSpec { cells, boundaries, max_levels: c.max_levels, capacity: Capacity::Blocks { blocks } };
    Mesh::<D>::new(Device::Cpu, spec, 0).unwrap()
}

/// Whether block `b` touches a face of the domain, and on how many axes (corner: D).
fn boundary_axes(s: &MeshSnapshot, b: usize) -> usize {
    let w = units::block(s.level[b]);
    (0..s.dim)
        .filter(|&a| {
            let o = s.origin[3 * b + a];
            o == 0 || o + w == s.root_blocks[a] as i32 * units::block(0)
        })
        .count()
}

/// Draws the marks of one adapt call.
fn marks(s: &MeshSnapshot, step: (u64, u64, u64, bool)) -> (Vec<u32>, Vec<u32>) {
    let (seed, p_refine, p_coarsen, boundary) = step;
    let mut rng = Rng(seed);
    let mut refine = Vec::new();
    let mut coarsen = Vec::new();
    for b in s.leaves() {
        let near = boundary_axes(s, b as usize);
        let p = if boundary {
            if near == 0 {
                p_refine / 4
            } else {
                (p_refine + 20 * near as u64).min(95)
            }
        } else {
            p_refine
        };
        if rng.chance(p) {
            refine.push(b);
        } else if rng.chance(5) {
            coarsen.push(b); // a lone sibling asking: never enough by itself
        }
    }
    // Whole families (the only way to coarsen) and, sometimes, all but one sibling.
    let nc = 1u32 << s.dim;
    for ids in &s.id_sets {
        for &b in ids {
            let b = b as usize;
            if s.status[b] == status::REFINED && rng.chance(p_coarsen) {
                let c = s.child[b] as u32;
                let skip = if rng.chance(20) { (rng.next() % nc as u64) as u32 } else { nc };
                coarsen.extend((0..nc).filter(|&k| k != skip).map(|k| c + k));
            }
        }
    }
    // A block asked both ways: drop the refinement request.
    refine.retain(|b| !coarsen.contains(b));
    (refine, coarsen)
}

/// Totals over all cases, to show the sequences are not vacuous.
#[derive(Default, Debug)]
struct Stats {
    adapts: usize,
    refined: usize,
    coarsened: usize,
    deepest: usize,
    pool_full: usize,
}

fn fail(msg: String) -> Result<(), TestCaseError> {
    Err(TestCaseError::fail(msg))
}

/// Pool size of the random sequences: the full refinement, capped (a deep 3D forest would
/// need a large pool per case); a sequence that fills the pool checks the failed adapt.
const POOL_CAP: usize = 6000;

fn run_case<D: Dim>(c: &Case, stats: &mut Stats) -> Result<(), TestCaseError> {
    let roots = c.blocks.iter().product();
    let mut mesh = new_mesh::<D>(c, Some(full_capacity(D::D, roots, c.max_levels).min(POOL_CAP)));
    let nb = D::NEIGHBORS;
    for (i, &step) in c.steps.iter().enumerate() {
        let s = mesh.snapshot().unwrap();
        let (refine, coarsen) = marks(&s, step);
        // A few refinements are permanent (REFINED_PERMANENT parents are never coarsened).
        let (freeze, refine): (Vec<u32>, Vec<u32>) = refine.into_iter().partition(|&b| (b as u64 ^ step.0) % 16 == 0);
        mesh.mark_blocks(&refine, Mark::Refine).unwrap();
        mesh.mark_blocks(&freeze, Mark::RefineFreeze).unwrap();
        mesh.mark_blocks(&coarsen, Mark::Coarsen).unwrap();
        let report = match mesh.adapt() {
            Ok(r) => r,
            // The pool (capped below the full refinement) is full: nothing may change.
            Err(ramus::Error::OutOfMemory { .. })
                if mesh.capacity() < full_capacity(D::D, s.id_sets[0].len(), c.max_levels) =>
            {
                let after = mesh.snapshot().unwrap();
                if after != s {
                    return fail(format!("adapt {i} of {c:?}: failed for a full pool but changed the mesh"));
                }
                stats.pool_full += 1;
                continue;
            }
            Err(e) => return fail(format!("adapt {i} of {c:?} failed: {e}")),
        };
        let after = mesh.snapshot().unwrap();
        let ctx = || {
            format!(
                "adapt {i} of {c:?} ({} refine, {} freeze, {} coarsen marks)",
                refine.len(),
                freeze.len(),
                coarsen.len()
            )
        };
        if let Err(v) = check(&after) {
            return fail(format!("{}: {v}", ctx()));
        }
        // Requests honoured: a marked leaf below the level limit with all same-level
        // neighbours present is refined (frozen if asked).
        for (&b, frozen) in refine.iter().map(|b| (b, false)).chain(freeze.iter().map(|b| (b, true))) {
            let b = b as usize;
            let free = s.nbr[b * nb..(b + 1) * nb].iter().all(|&n| n != -1);
            if (s.level[b] as usize) + 1 < c.max_levels && free {
                if after.child[b] < 0 {
                    return fail(format!(
                        "{}: leaf {b} (level {}) asked for refinement and could have it, not refined",
                        ctx(),
                        s.level[b]
                    ));
                }
                if frozen && after.status[b] != status::REFINED_PERMANENT {
                    return fail(format!("{}: block {b} refined with freeze has status {}", ctx(), after.status[b]));
                }
            }
        }
        // Nothing unrequested: new children only under marked leaves; a family removed
        // only if every sibling asked.
        let asked: std::collections::HashSet<u32> = refine.iter().chain(&freeze).copied().collect();
        let coarse: std::collections::HashSet<u32> = coarsen.iter().copied().collect();
        for ids in &s.id_sets {
            for &p in ids {
                let p = p as usize;
                let (was, now) = (s.child[p], after.child[p]);
                if was < 0 && now >= 0 && !asked.contains(&(p as u32)) {
                    return fail(format!("{}: leaf {p} refined without a request", ctx()));
                }
                if was >= 0 && now < 0 {
                    if let Some(k) = (0..1u32 << D::D).find(|&k| !coarse.contains(&(was as u32 + k))) {
                        return fail(format!(
                            "{}: block {p} coarsened though child {} did not ask",
                            ctx(),
                            was as u32 + k
                        ));
                    }
                }
            }
        }
        stats.adapts += 1;
        stats.refined += report.refined;
        stats.coarsened += report.coarsened;
        stats.deepest = stats.deepest.max(after.id_sets.iter().rposition(|ids| !ids.is_empty()).unwrap_or(0));
    }
    Ok(())
}

/// Runs `cases` random sequences and shows that they refine and coarsen a lot.
fn run_all<D: Dim>(cases: u32, strategy: impl Strategy<Value = Case>) {
    let config = ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let stats = std::cell::RefCell::new(Stats::default());
    let t = std::time::Instant::now();
    if let Err(e) = runner.run(&strategy, |c| run_case::<D>(&c, &mut stats.borrow_mut())) {
        panic!("{e}");
    }
    let st = stats.into_inner();
    println!("{}D: {cases} sequences, {st:?}, {:.2} s", D::D, t.elapsed().as_secs_f64());
    assert!(st.refined > 5 * cases as usize && st.coarsened > cases as usize / 2, "{st:?}");
    assert!(st.deepest >= 3, "{st:?}");
}

/// Random sequences per dimension: 1000 in the long validation, 200 in the fast suite.
const SEQUENCES: u32 = if cfg!(feature = "long-validation") { 1000 } else { 200 };

#[test]
fn adapt_keeps_forest_valid_2d() {
    run_all::<D2>(SEQUENCES, case(2, 4, 6, 8));
}

#[test]
fn adapt_keeps_forest_valid_3d() {
    run_all::<D3>(SEQUENCES, case(3, 3, 5, 6));
}

/// Refines every leaf until the pool cannot hold the children: that adapt fails and the
/// mesh is left as it was (and valid).
fn pool_full<D: Dim>() {
    let c = Case { blocks: [2, 3, 2], periodic: [true, false, false], max_levels: 4, steps: vec![] };
    let roots = if D::D == 2 { 6 } else { 12 };
    let capacity = roots + (roots << D::D) + 3; // one refinement of every root, a little more
    let mut mesh = new_mesh::<D>(&c, Some(capacity));
    for round in 0..4 {
        let before = mesh.snapshot().unwrap();
        mesh.mark_blocks(&before.leaves(), Mark::Refine).unwrap();
        match mesh.adapt() {
            Ok(_) => {
                check(&mesh.snapshot().unwrap()).unwrap();
                assert!(round < 1, "round {round}: the pool of {capacity} blocks cannot hold this");
            }
            Err(e) => {
                assert!(round >= 1, "round {round}: adapt failed with room to spare: {e}");
                let msg = e.to_string();
                assert!(msg.contains("memory") || msg.contains("pool") || msg.contains("capacity"), "{msg}");
                let after = mesh.snapshot().unwrap();
                assert_eq!(after, before, "a failed adapt changed the mesh");
                check(&after).unwrap();
                return;
            }
        }
    }
    panic!("adapt never ran out of room");
}

#[test]
fn pool_full_2d() {
    pool_full::<D2>();
}

#[test]
fn pool_full_3d() {
    pool_full::<D3>();
}
