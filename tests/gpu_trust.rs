//! The stability guard and checkpoints on CUDA, on a GPU machine (`#[ignore]`d;
//! `scripts/gpu-check.sh run` runs it with `--ignored`). Issue "Trustworthy runs":
//! the guard reports the same cell on both backends; a checkpoint restarts bitwise on
//! CUDA, and across backends (CPU → CUDA, CUDA → CPU), since both run the same kernels
//! without FMA contraction.

use ramus::cases::cavity::Cavity;
use ramus::{
    Backend, Boundary, Criterion, Dim, Error, Face, Float, Fluid, Forest, ForestConfig, Refinement, VelocitySet,
};
use ramus::{D2, D2Q9, D3, D3Q19};

fn amr_cavity(backend: Backend, dim: u32, n: usize, levels: usize) -> ForestConfig {
    let cavity = Cavity { dim, n, re: 400.0, lid: 0.1 };
    let refinement = Refinement {
        levels,
        every: 8,
        criterion: Criterion::Vorticity { n_start: -2.0, n_inc: 1.0, length: None },
        ..Refinement::default()
    };
    cavity.forest_config(backend).expect("config").refinement(refinement)
}

fn bits<F: Float>(f: &[F]) -> Vec<u64> {
    f.iter().map(|v| v.to_f64().to_bits()).collect()
}

/// Pools agree on their common prefix; beyond it (pools of other capacities) all zero.
fn assert_same_pool<F: Float>(what: &str, a: &[F], b: &[F]) {
    let n = a.len().min(b.len());
    assert!(bits(&a[..n]) == bits(&b[..n]), "{what}: distributions differ");
    assert!(a[n..].iter().chain(&b[n..]).all(|x| x.to_f64() == 0.0), "{what}: pool tails differ");
}

fn restart_across<D: Dim, Q: VelocitySet<Dim = D>, F: Float>(dim: u32, n: usize, levels: usize, total: u64) {
    let dir = std::env::temp_dir().join(format!("ramus-gpu-trust-{}-{dim}d", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut reference = Forest::<D, Q, F>::new(amr_cavity(Backend::Cuda, dim, n, levels)).expect("forest");
    reference.advance(total).expect("uninterrupted CUDA run");
    let want = reference.distributions().unwrap();
    let cells = reference.leaf_cells().unwrap();
    for (from, to) in [(Backend::Cuda, Backend::Cuda), (Backend::Cpu, Backend::Cuda), (Backend::Cuda, Backend::Cpu)] {
        let what = format!("{dim}D {} {}: {from} -> {to}", Q::NAME, F::NAME);
        let path = dir.join(format!("{from}-{to}.ramus"));
        let mut first = Forest::<D, Q, F>::new(amr_cavity(from, dim, n, levels)).expect("forest");
        first.advance(total / 2).expect("first half");
        first.checkpoint(&path).expect("checkpoint");
        drop(first);
        let mut second = Forest::<D, Q, F>::restart(&path, to).expect("restart");
        assert_eq!(second.backend(), to);
        second.advance(total - total / 2).expect("second half");
        assert_eq!(second.blocks_per_level(), reference.blocks_per_level(), "{what}: meshes differ");
        assert_same_pool(&what, &want, &second.distributions().unwrap());
        assert_eq!(second.leaf_cells().unwrap(), cells, "{what}: leaf cells differ");
        println!("{what}: bitwise equal to the uninterrupted CUDA run");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
#[ignore = "needs a CUDA GPU; run by scripts/gpu-check.sh"]
fn checkpoints_restart_bitwise_on_and_across_backends_2d() {
    restart_across::<D2, D2Q9, f64>(2, 64, 3, 160);
    restart_across::<D2, D2Q9, f32>(2, 64, 3, 160);
}

#[test]
#[ignore = "needs a CUDA GPU; run by scripts/gpu-check.sh"]
fn checkpoints_restart_bitwise_on_and_across_backends_3d() {
    restart_across::<D3, D3Q19, f32>(3, 32, 3, 64);
}

/// The diverging cavity (`--n 16 --re 5000 --lid 0.25`), guard at every step.
fn diverge<D: Dim, Q: VelocitySet<Dim = D>>(backend: Backend, dim: u32) -> Error {
    let cavity = Cavity { dim, n: 16, re: 5000.0, lid: 0.25 };
    let mut config = cavity.forest_config(backend).expect("config");
    config.guard.every = 1;
    let mut forest = Forest::<D, Q, f32>::new(config).expect("forest");
    (0..20_000).find_map(|_| forest.advance(1).err()).expect("the cavity diverges")
}

#[test]
#[ignore = "needs a CUDA GPU; run by scripts/gpu-check.sh"]
fn the_guard_reports_the_same_cell_on_both_backends() {
    for dim in [2, 3] {
        let (cpu, gpu) = if dim == 2 {
            (diverge::<D2, D2Q9>(Backend::Cpu, 2), diverge::<D2, D2Q9>(Backend::Cuda, 2))
        } else {
            (diverge::<D3, D3Q19>(Backend::Cpu, 3), diverge::<D3, D3Q19>(Backend::Cuda, 3))
        };
        println!("{dim}D CPU:  {cpu}\n{dim}D CUDA: {gpu}");
        assert!(matches!(cpu, Error::Diverged { .. }), "{cpu}");
        assert_eq!(cpu.to_string(), gpu.to_string(), "{dim}D: the backends disagree");
    }
}

/// The paper's square cylinder (root 256, 2 levels, linear) to t = 60 D/U_0 with the
/// default guard: root-level parent cells under the refined outlet pass Ma 1 at t ≈ 39
/// while every leaf cell stays at |u| ≤ 0.07 (measured on the H100); the guard checks the
/// leaves only, so this healthy run must not stop.
#[test]
#[ignore = "needs a CUDA GPU; run by scripts/gpu-check.sh"]
fn the_guard_lets_the_papers_cylinder_run() {
    use ramus::cases::cylinder::Cylinder;
    let case = Cylinder { root: 256, levels: 2, ..Cylinder::default() };
    let mut forest = Forest::<D2, D2Q9, f64>::new(case.forest_config(Backend::Cuda).unwrap()).unwrap();
    forest.initialize(|x| case.initial_state(x)).unwrap();
    forest.advance(case.steps_for(60.0)).expect("the healthy cylinder run passes the guard");
    assert!(forest.timings().guard_checks >= case.steps_for(60.0) / 100);
    let (cd, _) = case.coefficients(forest.force(Some(0)).unwrap());
    assert!(cd.is_finite() && cd > 1.0 && cd < 2.0, "C_D = {cd}");
}

/// Reads of the solution mid-run (which synchronise parents and ghosts for the read)
/// leave a CUDA run bitwise as it was, and the CPU with the same reads agrees: the
/// parents are packed before the read and unpacked after it on both backends.
fn reads_leave_the_run_unchanged<D: Dim, Q: VelocitySet<Dim = D>, F: Float>(dim: u32, n: usize, total: u64) {
    let what = format!("{dim}D {} {}", Q::NAME, F::NAME);
    let mut plain = Forest::<D, Q, F>::new(amr_cavity(Backend::Cuda, dim, n, 3)).expect("forest");
    plain.advance(total).expect("CUDA run without reads");
    let want = plain.distributions().unwrap();
    for backend in [Backend::Cuda, Backend::Cpu] {
        let mut read = Forest::<D, Q, F>::new(amr_cavity(backend, dim, n, 3)).expect("forest");
        for at in [total / 4, total / 2 + 1] {
            read.advance(at - read.steps()).expect("run");
            read.leaf_cells().expect("leaf cells");
            read.active_blocks().expect("blocks");
        }
        read.advance(total - read.steps()).expect("run after the reads");
        assert!(read.blocks_per_level()[2] > 0, "{what}: refined to level 2");
        assert_eq!(read.blocks_per_level(), plain.blocks_per_level(), "{what} {backend}: meshes differ");
        assert_same_pool(&format!("{what}, {backend} with reads"), &want, &read.distributions().unwrap());
        println!("{what}: {backend} with reads at {} and {} is bitwise the CUDA run without", total / 4, total / 2 + 1);
    }
}

#[test]
#[ignore = "needs a CUDA GPU; run by scripts/gpu-check.sh"]
fn reads_mid_run_leave_the_run_unchanged_on_both_backends() {
    reads_leave_the_run_unchanged::<D2, D2Q9, f64>(2, 32, 64);
    reads_leave_the_run_unchanged::<D2, D2Q9, f32>(2, 32, 64);
    reads_leave_the_run_unchanged::<D3, D3Q19, f32>(3, 16, 32);
}

/// Root steps replayed as CUDA graphs (`Forest::set_launch_graphs`, on by default), with
/// programmatic dependent launches where the GPU has them, run bitwise the launches of the
/// direct, fully serialised path: an adaptive cavity with graphs equals the same
/// run launching kernel by kernel and the CPU run, through adaptations (new graphs) and
/// mid-run reads (which end a recording); graphs are captured and replayed.
fn graphs_equal_direct_launches<D: Dim, Q: VelocitySet<Dim = D>, F: Float>(dim: u32, n: usize, total: u64) {
    let what = format!("{dim}D {} {}", Q::NAME, F::NAME);
    let mut direct = Forest::<D, Q, F>::new(amr_cavity(Backend::Cuda, dim, n, 3)).expect("forest");
    direct.set_launch_graphs(false);
    // Every kernel after the one before it has ended (the graph run below overlaps them
    // where the GPU can: programmatic dependent launch, on by default from Hopper on).
    assert!(!direct.set_dependent_launches(false), "{what}: dependent launches off");
    direct.advance(total).expect("direct run");
    assert_eq!(direct.timings().graph_captures + direct.timings().graph_replays, 0, "{what}: graphs while off");
    let want = direct.distributions().unwrap();
    let mut graphs = Forest::<D, Q, F>::new(amr_cavity(Backend::Cuda, dim, n, 3)).expect("forest");
    let dependent = graphs.set_dependent_launches(true);
    // A new mesh state updates a cached graph of the same kernels in place where the
    // driver can (on by default).
    let updates = graphs.set_graph_updates(true);
    graphs.advance(total / 2 + 1).expect("graph run");
    graphs.leaf_cells().expect("a read mid-run");
    graphs.advance(total - graphs.steps()).expect("graph run after the read");
    let t = graphs.timings();
    // Adaptations every 8 root steps: two parities per mesh state, each captured at most
    // once per state, replayed otherwise.
    assert!(
        t.graph_captures >= 2 && t.graph_replays >= total / 2,
        "{what}: {} captures, {} replays",
        t.graph_captures,
        t.graph_replays
    );
    assert_eq!(t.graph_captures + t.graph_replays, total, "{what}: every root step as a graph");
    // The captures' host time is part of the stepping; the direct run captures nothing.
    assert!(
        t.graph_capture_time > std::time::Duration::ZERO && t.graph_capture_time <= t.stepping,
        "{what}: capture time {:?} of stepping {:?}",
        t.graph_capture_time,
        t.stepping
    );
    assert_eq!(direct.timings().graph_capture_time, std::time::Duration::ZERO, "{what}: captures while off");
    assert_eq!(graphs.blocks_per_level(), direct.blocks_per_level(), "{what}: meshes differ");
    assert_same_pool(&format!("{what}, graphs vs direct"), &want, &graphs.distributions().unwrap());
    // The graphs above run the routines that touch disjoint data concurrently (the
    // default); in a chain, as launched directly, the same.
    let mut chained = Forest::<D, Q, F>::new(amr_cavity(Backend::Cuda, dim, n, 3)).expect("forest");
    chained.set_concurrent_levels(false);
    chained.advance(total).expect("chained graph run");
    assert_same_pool(&format!("{what}, chained graphs vs direct"), &want, &chained.distributions().unwrap());
    // Every new mesh state captured instead of updating a cached graph: the same. The
    // same calls as the run with updates (its graphs, pairs and single root steps alike).
    let mut captured = Forest::<D, Q, F>::new(amr_cavity(Backend::Cuda, dim, n, 3)).expect("forest");
    assert!(!captured.set_graph_updates(false), "{what}: graph updates off");
    captured.advance(total / 2 + 1).expect("graph run without updates");
    captured.advance(total - captured.steps()).expect("graph run without updates");
    assert_same_pool(&format!("{what}, captured graphs vs direct"), &want, &captured.distributions().unwrap());
    let c = captured.timings();
    assert_eq!(c.stepping_submissions.graph_updates, 0, "{what}: updates while off");
    let mut cpu = Forest::<D, Q, F>::new(amr_cavity(Backend::Cpu, dim, n, 3)).expect("forest");
    cpu.advance(total).expect("CPU run");
    assert_same_pool(&format!("{what}, graphs vs CPU"), &want, &cpu.distributions().unwrap());
    // The device's counters: a graph per root step, kernels launched only while capturing;
    // the adaptations (never recorded) submit the same in both runs; nothing on the CPU.
    let (d, g) = (direct.timings(), graphs.timings());
    assert_eq!(d.stepping_submissions.graph_launches, 0, "{what}: graphs while off");
    assert!(d.stepping_submissions.kernel_launches >= total, "{what}: {:?}", d.stepping_submissions);
    // Two root steps per graph from an even count (`Forest::advance`); the read at the
    // odd count `total / 2 + 1` leaves a single root step on each side of it.
    assert_eq!(g.stepping_submissions.graph_launches, total / 2 + 1, "{what}: one graph per pair of root steps");
    // New mesh states of the same levels reuse graphs in place once the cache holds one
    // of each parity: most new graphs are updates, and an update launches no kernel.
    if updates {
        let u = g.stepping_submissions.graph_updates;
        assert!(u > 0 && u < t.graph_captures, "{what}: {u} of {} new graphs updated", t.graph_captures);
        assert!(
            g.stepping_submissions.kernel_launches < c.stepping_submissions.kernel_launches,
            "{what}: launches while capturing {:?}, with updates {:?}",
            c.stepping_submissions,
            g.stepping_submissions
        );
    }
    assert!(
        g.stepping_submissions.kernel_launches > 0
            && g.stepping_submissions.kernel_launches < d.stepping_submissions.kernel_launches,
        "{what}: captured launches {:?} against direct {:?}",
        g.stepping_submissions,
        d.stepping_submissions
    );
    assert!(d.adapt.count > 0 && d.adapt.submissions.kernel_launches > 0, "{what}: {:?}", d.adapt.submissions);
    assert_eq!(d.adapt.submissions, g.adapt.submissions, "{what}: adaptations submit the same");
    // By part: every launch in one part; every wait too but the one before each
    // adaptation (the hooks queue behind the mesh routine, and `advance` does not wait
    // after it: the next root steps are recorded while its last kernels run).
    let parts = d.adapt.parts().submissions;
    assert_eq!(parts.kernel_launches, d.adapt.submissions.kernel_launches, "{what}: {:?}", d.adapt);
    assert_eq!(parts.graph_launches, 0, "{what}: adaptations launch no graphs");
    // Copies and writes (the lists' counts, new blocks' data) are counted apart from the
    // launches, by part too.
    assert!(d.adapt.submissions.copies > 0, "{what}: {:?}", d.adapt.submissions);
    assert!(parts.copies <= d.adapt.submissions.copies, "{what}: {:?}", d.adapt);
    assert_eq!(parts.host_waits + d.adapt.count, d.adapt.submissions.host_waits, "{what}: waits by part");
    assert!(d.adapt.mesh_steps[0].1.submissions.kernel_launches > 0, "{what}: the mesh routine's preparation");
    let steps: ramus::backend::Lap = d.adapt.mesh_steps.iter().map(|s| s.1).sum();
    assert_eq!(steps, d.adapt.mesh, "{what}: the mesh routine is the sum of its steps");
    // The host's time blocked in those waits: within each part's and the whole's wall
    // time, nonzero where there were waits, zero on the CPU.
    assert!(
        d.adapt.waited > std::time::Duration::ZERO && d.adapt.waited <= d.adapt.wall,
        "{what}: adaptations waited {:?} of {:?}",
        d.adapt.waited,
        d.adapt.wall
    );
    assert!(d.adapt.parts().waited <= d.adapt.waited, "{what}: {:?}", d.adapt);
    assert!(d.stepping_waited > std::time::Duration::ZERO && d.stepping_waited <= d.stepping, "{what}: {d:?}");
    assert_eq!(cpu.timings().adapt.waited + cpu.timings().stepping_waited, std::time::Duration::ZERO, "{what}");
    assert_eq!(cpu.device_counters(), None, "{what}: the CPU backend submits nothing");
    assert_eq!(cpu.timings().adapt.submissions, Default::default(), "{what}: CPU adaptation counts");
    println!(
        "{what}: {} root steps, {} new graphs ({} updated in place), {} replayed (dependent launches: \
         {dependent}); bitwise the direct CUDA and the CPU run; \
         stepping submitted {:?} direct, {:?} with graphs; adaptations {:?}",
        total,
        t.graph_captures,
        g.stepping_submissions.graph_updates,
        t.graph_replays,
        d.stepping_submissions,
        g.stepping_submissions,
        d.adapt.submissions
    );
}

#[test]
#[ignore = "needs a CUDA GPU; run by scripts/gpu-check.sh"]
fn cuda_graphs_run_bitwise_the_direct_launches() {
    graphs_equal_direct_launches::<D2, D2Q9, f64>(2, 32, 64);
    graphs_equal_direct_launches::<D2, D2Q9, f32>(2, 32, 64);
    graphs_equal_direct_launches::<D3, D3Q19, f32>(3, 16, 32);
}

/// A graph replays the launches, not their data: an inlet profile changed between root
/// steps (same table, new values) reaches the replayed steps as it reaches direct ones.
#[test]
#[ignore = "needs a CUDA GPU; run by scripts/gpu-check.sh"]
fn cuda_graphs_see_an_inlet_profile_changed_mid_run() {
    let run = |graphs: bool| {
        let config = ForestConfig::new([64, 32, 0])
            .boundary(Face::XMin, Boundary::velocity([0.02, 0.0, 0.0]))
            .boundary(Face::XMax, Boundary::OUTLET)
            .boundary(Face::YMin, Boundary::NO_SLIP)
            .boundary(Face::YMax, Boundary::NO_SLIP)
            .fluid(Fluid::Viscosity { nu: 0.05 })
            .backend(Backend::Cuda);
        let mut forest = Forest::<D2, D2Q9, f32>::new(config).expect("forest");
        forest.set_launch_graphs(graphs);
        forest.set_inlet_profile(Face::XMin, |x| [0.02 + 0.001 * x[1] / 32.0, 0.0, 0.0]).unwrap();
        forest.advance(20).expect("run");
        forest.set_inlet_profile(Face::XMin, |x| [0.04 * (1.0 - x[1] / 32.0) * x[1] / 8.0, 0.0, 0.0]).unwrap();
        forest.advance(20).expect("run after the change");
        assert_eq!(forest.timings().graph_replays > 0, graphs);
        forest.distributions().unwrap()
    };
    assert_same_pool("inlet profile changed mid-run, graphs vs direct", &run(false), &run(true));
}

/// The kernel timeline (`Forest::record_kernel_timeline`): its probes change no result,
/// and it records every launch. Launched directly, each launch leaves its first CTA's
/// record (and its last's, with more than one CTA), with start ≤ wait ≤ end; as many
/// first-CTA records as kernel launches counted.
#[test]
#[ignore = "needs a CUDA GPU; run by scripts/gpu-check.sh"]
fn the_kernel_timeline_leaves_the_run_bitwise_and_records_every_launch() {
    let (total, probed) = (24, 8);
    let mut plain = Forest::<D2, D2Q9, f32>::new(amr_cavity(Backend::Cuda, 2, 32, 3)).expect("forest");
    plain.advance(total).expect("run");
    let want = plain.distributions().unwrap();
    for graphs in [false, true] {
        let mut f = Forest::<D2, D2Q9, f32>::new(amr_cavity(Backend::Cuda, 2, 32, 3)).expect("forest");
        f.set_launch_graphs(graphs);
        f.advance(total - probed).expect("run before the timeline");
        assert!(f.kernel_timeline().unwrap().is_none(), "off until switched on");
        assert!(f.record_kernel_timeline(Some(1 << 16)).unwrap(), "on");
        let before = f.device_counters().unwrap();
        f.advance(probed).expect("run with the timeline");
        let launched = f.device_counters().unwrap() - before;
        let t = f.kernel_timeline().unwrap().expect("a timeline");
        assert!(!t.overflowed && !t.spans.is_empty());
        for s in &t.spans {
            let (w, e) = (s.waited_ns.unwrap_or(s.start_ns), s.end_ns.expect("every CTA ended"));
            assert!(s.start_ns <= w && w <= e, "{s:?}");
            assert!(s.cta == 0 || s.cta + 1 == s.ctas, "{s:?}: the first or the last CTA");
            assert!(!s.kernel.is_empty());
        }
        let firsts = t.spans.iter().filter(|s| s.cta == 0).count();
        let lasts = t.spans.iter().filter(|s| s.cta > 0).count();
        assert_eq!(lasts, t.spans.iter().filter(|s| s.cta == 0 && s.ctas > 1).count(), "a last CTA per launch");
        if !graphs {
            assert_eq!(firsts as u64, launched.kernel_launches, "a record per launch");
        }
        // Reading empties it; switching it off drops the probes.
        assert!(f.kernel_timeline().unwrap().expect("still on").spans.is_empty());
        assert!(!f.record_kernel_timeline(None).unwrap());
        assert_same_pool(&format!("timeline, graphs {graphs}"), &want, &f.distributions().unwrap());
        println!("kernel timeline, graphs {graphs}: {firsts} launches, {} records", t.spans.len());
    }
}
