//! The performance part of a run's summary: MLUPS (AMR-aware and finest-equivalent),
//! blocks and cells per level, the adaptation's share, the CUDA graphs, what the host
//! asked of the device and, with `--profile`, the time per level and routine.

use ramus::{Dim, Float, Forest, PoolStorage, VelocitySet};

/// Prints the performance lines of a run's summary (on CUDA also the host's submissions;
/// with `profile` the time per level and routine).
pub fn print_performance<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    forest: &Forest<D, Q, F, S>,
    profile: bool,
) {
    let t = forest.timings();
    let (secs, adapt) = (t.stepping.as_secs_f64(), t.adapt.total().as_secs_f64());
    println!("MLUPS (AMR-aware): {:.1}; finest-equivalent (virtual): {:.1}", t.mlups(), forest.virtual_mlups());
    println!("blocks per level: {:?}, leaf cells per level: {:?}", forest.blocks_per_level(), forest.cells_per_level());
    println!(
        "adaptation: {} calls, {adapt:.3} s, {:.2}% of the run time; stability guard: {:.3} s, {:.2}%",
        t.adapt.count,
        100.0 * t.adaptation_share(),
        t.guard.as_secs_f64(),
        100.0 * t.guard.as_secs_f64() / (secs + adapt).max(1e-12)
    );
    if t.graph_captures + t.graph_replays > 0 {
        println!(
            "root steps as CUDA graphs: {} captured ({:.3} s on the host), {} replayed",
            t.graph_captures,
            t.graph_capture_time.as_secs_f64(),
            t.graph_replays
        );
    }
    if forest.backend() == ramus::Backend::Cuda {
        print_submissions(t);
    }
    if profile {
        print_profile(t);
    }
}

/// [`print_performance`]'s figures as keys of the run's summary: backend and device,
/// time, both MLUPS, the adaptation, the graphs, blocks and cells per level, the time
/// per level and routine (`profile`, else null) and on CUDA the host's submissions.
pub fn performance_json<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    forest: &Forest<D, Q, F, S>,
    profile: bool,
    summary: &mut serde_json::Value,
) {
    let t = forest.timings();
    let levels: Vec<serde_json::Value> = t
        .levels
        .iter()
        .map(|lt| {
            serde_json::json!({
                "interpolate_s": lt.interpolate.as_secs_f64(),
                "stream_collide_s": lt.stream_collide.as_secs_f64(),
                "average_s": lt.average.as_secs_f64(),
            })
        })
        .collect();
    let keys = serde_json::json!({
        "backend": forest.backend().to_string(),
        "device": forest.device_name(),
        "wall_seconds": t.stepping.as_secs_f64(),
        "mlups": t.mlups(),
        "virtual_mlups": forest.virtual_mlups(),
        "adaptations": t.adapt.count,
        "adaptation_seconds": t.adapt.total().as_secs_f64(),
        "adaptation_share": t.adaptation_share(),
        "guard_seconds": t.guard.as_secs_f64(),
        "graph_captures": t.graph_captures,
        "graph_replays": t.graph_replays,
        "graph_capture_seconds": t.graph_capture_time.as_secs_f64(),
        "blocks_per_level": forest.blocks_per_level(),
        "leaf_cells_per_level": forest.cells_per_level(),
        "profile": if profile { serde_json::Value::Array(levels) } else { serde_json::Value::Null },
    });
    if let (Some(summary), serde_json::Value::Object(keys)) = (summary.as_object_mut(), keys) {
        summary.extend(keys);
        if forest.backend() == ramus::Backend::Cuda {
            summary.insert("submissions".into(), submissions_json(t));
        }
    }
}

/// What the host asked of the CUDA device: per root step of the stepping and per
/// adaptation (kernel launches, graph launches, waits: the cost of a launch-bound run).
pub fn print_submissions(t: &ramus::Timings) {
    let per = |n: u64, d: u64| if d > 0 { n as f64 / d as f64 } else { 0.0 };
    let (s, a) = (&t.stepping_submissions, &t.adapt.submissions);
    println!(
        "host submissions per root step: {:.1} kernel launches, {:.2} graph launches, {:.2} waits; \
         per adaptation: {:.1} kernel launches, {:.1} copies, {:.1} waits",
        per(s.kernel_launches, t.root_steps),
        per(s.graph_launches, t.root_steps),
        per(s.host_waits, t.root_steps),
        per(a.kernel_launches, t.adapt.count),
        per(a.copies, t.adapt.count),
        per(a.host_waits, t.adapt.count)
    );
    if t.adapt.count > 0 && a.kernel_launches > 0 {
        let n = t.adapt.count;
        let part = |name: &str, l: &ramus::backend::Lap| {
            let d = &l.submissions;
            format!("{name} {:.1}/{:.1}/{:.1}", per(d.kernel_launches, n), per(d.copies, n), per(d.host_waits, n))
        };
        let a = &t.adapt;
        let mut parts = vec![part("synchronise", &a.synchronize), part("criterion", &a.criterion)];
        parts.extend(a.mesh_steps.iter().map(|(name, l)| part(name, l)));
        parts.push(part("fill", &a.fill));
        println!("  per adaptation by part (kernel launches/copies/waits): {}", parts.join(", "));
        let us = |d: std::time::Duration| 1e6 * d.as_secs_f64() / n as f64;
        let waited =
            [("synchronise", &a.synchronize), ("criterion", &a.criterion), ("mesh", &a.mesh), ("fill", &a.fill)]
                .map(|(name, l)| format!("{name} {:.0}", us(l.waited)));
        println!(
            "  host blocked in waits: {:.0} of {:.0} µs per adaptation (by part, µs: {}); stepping {:.3} of {:.3} s",
            us(a.waited),
            us(a.wall),
            waited.join(", "),
            t.stepping_waited.as_secs_f64(),
            t.stepping.as_secs_f64()
        );
    }
}

/// [`print_submissions`]'s totals for the run's summary.
pub fn submissions_json(t: &ramus::Timings) -> serde_json::Value {
    let c = |d: &ramus::backend::DeviceCounters| {
        serde_json::json!({ "kernel_launches": d.kernel_launches, "graph_launches": d.graph_launches,
            "graph_updates": d.graph_updates, "copies": d.copies, "host_waits": d.host_waits })
    };
    let a = &t.adapt;
    let mesh: serde_json::Map<String, serde_json::Value> =
        a.mesh_steps.iter().map(|(n, l)| (n.to_string(), c(&l.submissions))).collect();
    let parts = serde_json::json!({ "synchronize": c(&a.synchronize.submissions),
        "criterion": c(&a.criterion.submissions), "mesh_steps": mesh, "fill": c(&a.fill.submissions) });
    let waited = serde_json::json!({ "stepping": t.stepping_waited.as_secs_f64(),
        "adaptation": a.waited.as_secs_f64(), "synchronize": a.synchronize.waited.as_secs_f64(),
        "criterion": a.criterion.waited.as_secs_f64(), "mesh": a.mesh.waited.as_secs_f64(),
        "fill": a.fill.waited.as_secs_f64() });
    serde_json::json!({ "stepping": c(&t.stepping_submissions), "adaptation": c(&t.adapt.submissions),
        "adaptation_parts": parts, "root_steps": t.root_steps, "adaptations": t.adapt.count,
        "host_wait_seconds": waited })
}

/// Prints the time per level and routine (`--profile`).
pub fn print_profile(t: &ramus::Timings) {
    for (l, lt) in t.levels.iter().enumerate() {
        println!(
            "  level {l}: interpolate {:.3} s, collide+stream {:.3} s, average {:.3} s",
            lt.interpolate.as_secs_f64(),
            lt.stream_collide.as_secs_f64(),
            lt.average.as_secs_f64()
        );
    }
    let a = &t.adapt;
    println!(
        "  adaptation: synchronise {:.3} s, criterion {:.3} s, mesh {:.3} s, fill {:.3} s",
        a.synchronize.time.as_secs_f64(),
        a.criterion.time.as_secs_f64(),
        a.mesh.time.as_secs_f64(),
        a.fill.time.as_secs_f64()
    );
    let steps: Vec<String> = a.mesh_steps.iter().map(|(n, l)| format!("{n} {:.4}", l.time.as_secs_f64())).collect();
    println!("  mesh routine steps (s): {}", steps.join(", "));
}
