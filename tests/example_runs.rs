//! The examples as a user runs them (subprocesses of the built binaries, CPU backend):
//! exit codes, the output folder, case files, divergence and restarts across SIGINT
//! (README, "Runs you can trust").

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The example binaries `cargo test` builds beside the test binaries
/// (`target/<profile>/examples/`).
fn example(name: &str) -> Command {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.parent().and_then(Path::parent).expect("target/<profile>");
    let bin = dir.join("examples").join(name);
    assert!(bin.exists(), "{} not built (cargo test builds the examples)", bin.display());
    let mut c = Command::new(bin);
    c.arg("--backend").arg("cpu");
    c
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ramus-example-runs-{}-{name}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    d
}

fn run(c: &mut Command) -> Output {
    c.output().expect("the example starts")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Every file in `dir` and its folders (name relative to `dir`), as bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let name = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                v.push((name, std::fs::read(&p).unwrap()));
            }
        }
    }
    v.sort();
    v
}

/// No number in any file of `dir` stands for a non-finite value: text files hold no
/// `nan`/`inf` word; the binary arrays of VTK files decode to finite values.
fn assert_no_nan(dir: &Path) {
    for (name, bytes) in files(dir) {
        // Checkpoints, binary STL input the run wrote (checked finite when read), and plot
        // images: compressed pixels, whose bytes spell "inf" or "nan" by chance (a PNG of
        // timing-dependent MLUPS failed this check once); the plotted series are checked
        // in their CSV files.
        if name.ends_with(".ramus") || name.ends_with(".stl") || name.ends_with(".png") {
            continue;
        }
        if name.ends_with(".vti") || name.ends_with(".vtu") {
            for a in ramus::output::vtk::read_arrays(&bytes).unwrap() {
                let v = &a.values;
                assert!((0..v.len()).all(|i| v.get(i).unwrap().is_finite()), "{name}: {} not finite", a.name);
            }
            continue;
        }
        let t = text(&bytes).to_lowercase();
        for bad in ["nan", "inf"] {
            let found = t
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w == bad || w == format!("{bad}inity") || w == "infinity");
            assert!(!found, "{name} holds '{bad}':\n{}", t.chars().take(2000).collect::<String>());
        }
    }
}

fn summary(dir: &Path) -> serde_json::Value {
    let s = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    serde_json::from_str(&s).expect("valid JSON")
}

/// The issue's diverging cavity (n = 16, Re = 5000, lid 0.25): the guard stops it with
/// exit code 3, naming step, level and position; only `summary.json` is written, with
/// `"status": "diverged"`, and no file holds NaN (`last_pass_change` is not 0).
#[test]
fn diverging_cavity_stops_with_code_3() {
    let out = out_dir("diverge");
    // An earlier run's results in the folder must not survive beside the new summary.
    let o = run(example("cavity").args(["--n", "16", "--steps", "10", "--out"]).arg(&out));
    assert!(o.status.success() && out.join("cavity.vtu").exists(), "{}", text(&o.stderr));
    let o = run(example("cavity")
        .args(["--n", "16", "--re", "5000", "--lid", "0.25", "--passes", "20", "--out"])
        .arg(&out));
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "stderr: {err}\nstdout: {}", text(&o.stdout));
    for word in ["root step", "on level", " at ("] {
        assert!(err.contains(word), "'{word}' missing from: {err}");
    }
    let s = summary(&out);
    assert_eq!(s["status"], "diverged");
    assert!(s["error"].as_str().unwrap().contains("step"), "{s}");
    assert!(s["last_pass_change"].is_null(), "{s}");
    assert!(!out.join("cavity.vtu").exists() && !out.join("centerline_u.csv").exists());
    assert_no_nan(&out);
    std::fs::remove_dir_all(&out).ok();
}

/// Bad input is refused before any simulation (exit code 2), naming what is wrong: an
/// output folder that cannot be created, zero root steps, the issue's refused cylinder
/// grid, a misspelled case-file key.
#[test]
fn invalid_input_exits_with_code_2_before_running() {
    let t = Instant::now();
    let cases: Vec<(Vec<&str>, &str, &str)> = vec![
        (vec!["--n", "16", "--out", "/proc/ramus-forbidden"], "cavity", "output folder"),
        (vec!["--root", "256", "--time", "1e-9"], "cylinder", "time"),
        (vec!["--root", "128", "--levels", "2", "--time", "47.8"], "cylinder", "root"),
        (vec!["--n", "16", "--steps", "0"], "cavity", "steps"),
        (vec!["--n", "16", "--re", "1e-300"], "cavity", "tau"),
        (vec!["--n", "16", "--checkpoint-every", "0"], "cavity", "checkpoint_every"),
        (vec!["--n", "16", "--steps", "10", "--kernel-timeline", "6"], "cavity", "kernel_timeline"),
        (vec!["--n", "16", "--levels", "3", "--refine-every", "0"], "cavity", "every"),
        (vec!["--n", "16", "--probe", "p=1.5,0.5"], "cavity", "probes[0].position"),
        (vec!["--n", "16", "--probe", "a b=0.5,0.5"], "cavity", "probes[0].name"),
        (vec!["--n", "16", "--output-every", "0"], "cavity", "output_every"),
        (vec!["--n", "16", "--series-every", "0"], "cavity", "series_every"),
        (vec!["--n", "16", "--collision", "kbc"], "cavity", "collision"),
        (vec!["--n", "16", "--collision", "trt", "--magic", "0"], "cavity", "collision.magic"),
        (vec!["--n", "16", "--magic", "0.25"], "cavity", "magic"),
        (vec!["--collision", "trt", "--magic-levels", "sometimes"], "cylinder", "magic_levels"),
        (vec!["--n", "16", "--les", "sigma"], "cavity", "les"),
        (vec!["--n", "16", "--les", "smagorinsky", "--les-constant", "2"], "cavity", "les.constant"),
        (vec!["--n", "16", "--les-constant", "0.1"], "cavity", "les_constant"),
        (vec!["--les", "vreman", "--les-constant", "1.5"], "cylinder", "les.constant"),
    ];
    for (args, ex, word) in cases {
        let out = out_dir("invalid");
        let mut c = example(ex);
        c.args(&args);
        if !args.contains(&"--out") {
            c.arg("--out").arg(&out);
        }
        let o = run(&mut c);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{ex} {args:?}: {err}");
        assert!(err.contains(word), "{ex} {args:?}: '{word}' missing from: {err}");
        std::fs::remove_dir_all(&out).ok();
    }
    let out = out_dir("misspelled");
    std::fs::create_dir_all(&out).unwrap();
    let case = out.join("case.toml");
    std::fs::write(&case, "n = 16\nlevles = 3\n").unwrap();
    let o = run(example("cavity").arg("--config").arg(&case).arg("--out").arg(out.join("run")));
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("levles") && err.contains("levels"), "{err}");
    std::fs::remove_dir_all(&out).ok();
    // Refused at once, not after a simulation.
    assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
}

/// `--config` reproduces the flag-driven run, and the `config.toml` a run writes gives
/// the same run back (flags override the file).
#[test]
fn case_files_reproduce_flag_runs() {
    let root = out_dir("case");
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cases/cavity-re1000-amr.toml");
    let small = ["--n", "16", "--passes", "0.4", "--checkpoint-every", "1000000"];
    let (a, b, c) = (root.join("a"), root.join("b"), root.join("c"));
    let flags =
        ["--re", "1000", "--lid", "0.1", "--levels", "3", "--refine-every", "32", "--n-start", "-2", "--n-inc", "1"];
    let o = run(example("cavity").args(flags).args(small).arg("--out").arg(&a));
    assert!(o.status.success(), "{}", text(&o.stderr));
    // Not a terminal: progress comes as plain lines, the last at the end.
    assert!(text(&o.stdout).contains("step 64/64"), "{}", text(&o.stdout));
    let o = run(example("cavity").arg("--config").arg(&case).args(small).arg("--out").arg(&b));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run(example("cavity").arg("--config").arg(b.join("config.toml")).arg("--out").arg(&c));
    assert!(o.status.success(), "{}", text(&o.stderr));
    for name in ["centerline_u.csv", "centerline_v.csv", "cavity.vtu", "forest.toml"] {
        let fa = std::fs::read(a.join(name)).unwrap();
        assert_eq!(fa, std::fs::read(b.join(name)).unwrap(), "{name}: flags vs case file");
        assert_eq!(fa, std::fs::read(c.join(name)).unwrap(), "{name}: case file vs the run's config.toml");
    }
    assert_eq!(summary(&c)["status"], "completed");
    std::fs::remove_dir_all(&root).ok();
}

/// Outputs that are compared between an uninterrupted and a restarted run (the summary
/// also holds timings).
fn results(dir: &Path, names: &[&str]) -> Vec<Vec<u8>> {
    names
        .iter()
        .map(|n| std::fs::read(dir.join(n)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(n).display())))
        .collect()
}

/// Sends SIGINT to the child once its first checkpoint exists, waits for it to end.
fn interrupt_after_checkpoint(mut c: Command, out: &Path) -> Output {
    let child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start");
    let t = Instant::now();
    while !out.join("checkpoint.ramus").exists() {
        assert!(t.elapsed() < Duration::from_secs(120), "no checkpoint written");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    child.wait_with_output().unwrap()
}

/// 2D cavity with AMR (3 levels, adapting every 16 root steps): run to T, versus the same
/// run interrupted by SIGINT and restarted from its checkpoint to T. Exit code 130 with
/// `"status": "interrupted"`, then bitwise identical centrelines, field and mesh.
#[test]
fn cavity_restart_across_sigint_is_bitwise() {
    let root = out_dir("sigint");
    let (full, cut) = (root.join("full"), root.join("cut"));
    // 1200 root steps (3.75 lid passes; 1.6 s alone on two cores): the signal follows the
    // first checkpoint (step 48) by ~20 ms, long before the run would complete.
    let case = ["--n", "32", "--re", "400", "--lid", "0.1", "--levels", "3", "--refine-every", "16", "--steps", "1200"];
    let o = run(example("cavity").args(case).arg("--out").arg(&full));
    assert!(o.status.success(), "{}", text(&o.stderr));

    let mut c = example("cavity");
    c.args(case).args(["--checkpoint-every", "48"]).arg("--out").arg(&cut);
    let o = interrupt_after_checkpoint(c, &cut);
    assert_eq!(o.status.code(), Some(130), "{}", text(&o.stderr));
    let s = summary(&cut);
    assert_eq!(s["status"], "interrupted");
    let stopped = s["steps"].as_u64().unwrap();
    assert!(stopped > 0 && stopped < 1200, "{s}");
    assert_no_nan(&cut);

    let o = run(example("cavity").args(case).arg("--restart").arg(cut.join("checkpoint.ramus")).arg("--out").arg(&cut));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s = summary(&cut);
    assert_eq!((s["status"].as_str(), s["restarted_at_step"].as_u64()), (Some("completed"), Some(stopped)));
    let names = ["centerline_u.csv", "centerline_v.csv", "cavity.vtu", "cavity.vthb"];
    assert!(results(&full, &names) == results(&cut, &names), "restarted run differs from the uninterrupted one");
    assert!(files(&full.join("cavity")) == files(&cut.join("cavity")), "AMR output differs after the restart");
    for key in ["mass_drift", "last_pass_change", "blocks_per_level", "leaf_cells_per_level", "adaptations"] {
        if key != "adaptations" {
            assert_eq!(summary(&full)[key], s[key], "{key}");
        }
    }
    std::fs::remove_dir_all(&root).ok();
}

/// The cylinder (2 levels, frozen refinement and an adapting wake): run to t, versus run
/// with checkpoints, interrupted, and restarted with the same `--time` (the total): the
/// force history and the field are bitwise the same.
#[test]
fn cylinder_restart_is_bitwise() {
    let root = out_dir("cyl");
    let (full, cut) = (root.join("full"), root.join("cut"));
    let case = ["--root", "128", "--levels", "2", "--re", "20", "--time", "12", "--window", "2"];
    let o = run(example("cylinder").args(case).arg("--out").arg(&full));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut c = example("cylinder");
    c.args(case).args(["--checkpoint-every", "32"]).arg("--out").arg(&cut);
    let o = interrupt_after_checkpoint(c, &cut);
    assert_eq!(o.status.code(), Some(130), "{}", text(&o.stderr));
    assert_eq!(summary(&cut)["status"], "interrupted");
    let o =
        run(example("cylinder").args(case).arg("--restart").arg(cut.join("checkpoint.ramus")).arg("--out").arg(&cut));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let names = ["forces.csv", "cylinder.vtu", "cylinder.vthb"];
    assert!(results(&full, &names) == results(&cut, &names), "restarted run differs from the uninterrupted one");
    assert!(files(&full.join("cylinder")) == files(&cut.join("cylinder")), "AMR output differs after the restart");
    let (a, b) = (summary(&full), summary(&cut));
    assert_eq!(a["cd_mean"], b["cd_mean"]);
    std::fs::remove_dir_all(&root).ok();
}

/// `--output-every` writes a `.pvd` naming one output per interval (start and end
/// included) and `series.csv`/`probes.csv` one line per sample; a case file with
/// `[[probes]]` reproduces the flags.
#[test]
fn series_probes_and_time_series_files() {
    let out = out_dir("series");
    // n = 16, lid 0.1: one lid pass is 160 root steps; 80 steps = 0.5 passes.
    let o = run(example("cavity")
        .args(["--n", "16", "--lid", "0.1", "--levels", "2", "--steps", "80", "--output-every", "0.125"])
        .args(["--series-every", "0.25"])
        .args(["--probe", "centre=0.5,0.5", "--probe", "corner=0.1,0.9", "--out"])
        .arg(&out));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let pvd = std::fs::read_to_string(out.join("fields.pvd")).unwrap();
    // Outputs at 0, 20, 40, 60, 80 root steps.
    assert_eq!(pvd.matches("<DataSet ").count(), 5, "{pvd}");
    for k in 0..5 {
        assert!(out.join(format!("fields_{k:04}.vthb")).exists() && out.join(format!("fields_{k:04}")).is_dir());
    }
    let series = std::fs::read_to_string(out.join("series.csv")).unwrap();
    let lines: Vec<&str> = series.lines().collect();
    assert!(lines[0].starts_with("step,lid_passes,mass,kinetic_energy,max_speed,mlups,cells_level0"), "{series}");
    // Samples at 0, 40, 80 root steps.
    assert_eq!(lines.len(), 4, "{series}");
    assert!(lines[3].starts_with("80,5.0000000000e-1,"), "{series}");
    let probes = std::fs::read_to_string(out.join("probes.csv")).unwrap();
    assert!(probes.starts_with("step,lid_passes,centre_rho,centre_ux,centre_uy,corner_rho,corner_ux,corner_uy\n"));
    assert_eq!(probes.lines().count(), 4, "{probes}");
    assert_no_nan(&out);
    // The plots, written next to the data: PNG files.
    for png in ["centerline_u.png", "centerline_v.png", "cells_per_level.png", "mlups.png"] {
        let b = std::fs::read(out.join(png)).unwrap_or_else(|e| panic!("{png}: {e}"));
        assert!(b.starts_with(b"\x89PNG\r\n\x1a\n"), "{png} is not a PNG");
    }
    // The written case file (with its [[probes]]) reproduces the run's probes.
    let again = out_dir("series-again");
    let o = run(example("cavity").arg("--config").arg(out.join("config.toml")).arg("--out").arg(&again));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let p2 = std::fs::read_to_string(again.join("probes.csv")).unwrap();
    assert_eq!(p2, probes, "the case file's probes differ from the flags'");
    std::fs::remove_dir_all(&out).ok();
    std::fs::remove_dir_all(&again).ok();
}

/// A case in SI units (water in a 0.1 m cavity at Re 1000,
/// `examples/cases/cavity-water-re1000.toml`) runs the same lattice run as the
/// lattice-unit flags, and its outputs carry SI values; inconsistent units are refused,
/// naming the physical input.
#[test]
fn si_units_give_the_lattice_run_and_si_outputs() {
    let (si, lattice) = (out_dir("si"), out_dir("si-lattice"));
    let common = ["--n", "16", "--levels", "2", "--steps", "60", "--series-every", "0.05"];
    let o = run(example("cavity")
        .args(["--config", "examples/cases/cavity-water-re1000.toml"])
        .args(common)
        .arg("--out")
        .arg(&si));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run(example("cavity")
        .args(["--re", "1000", "--lid", "0.1"])
        .args(common)
        .args(["--probe", "centre=0.5,0.5", "--out"])
        .arg(&lattice));
    assert!(o.status.success(), "{}", text(&o.stderr));
    for f in ["centerline_u.csv", "centerline_v.csv"] {
        assert!(std::fs::read(si.join(f)).unwrap() == std::fs::read(lattice.join(f)).unwrap(), "{f} differs");
    }
    // The leaf cells: the same cells, points in metres, velocities in m/s.
    let arrays = |d: &Path| ramus::output::vtk::read_arrays(&std::fs::read(d.join("cavity.vtu")).unwrap()).unwrap();
    let (vs, vl) = (arrays(&si), arrays(&lattice));
    let get = |a: &[ramus::output::vtk::ReadArray], n: &str, i: usize| {
        a.iter().find(|x| x.name == n).unwrap().values.get(i).unwrap()
    };
    for i in 0..40 {
        assert!((get(&vs, "Points", i) - get(&vl, "Points", i) * 0.1 / 16.0).abs() < 1e-15, "point {i}");
        let (us, ul) = (get(&vs, "u", i), get(&vl, "u", i));
        assert!((us - ul * 0.1).abs() <= 1e-6 * ul.abs().max(1e-12), "u {i}: {us} vs {ul}");
    }
    let (a, b) = (summary(&si), summary(&lattice));
    assert_eq!(a["tau"], b["tau"]);
    // dx = 0.1/16 m, dt = 0.1 dx / 0.01 m/s: 1 lattice velocity unit = dx/dt = 0.1 m/s.
    let units = &a["units"];
    assert!((units["dx_m"].as_f64().unwrap() - 0.1 / 16.0).abs() < 1e-15, "{units}");
    assert!((units["velocity_m_s_per_lattice"].as_f64().unwrap() - 0.1).abs() < 1e-12, "{units}");
    assert!(b["units"].is_null());
    // series.csv: the same samples, speeds in m/s (x 0.1), mass in kg per metre of depth.
    let rows = |d: &Path| -> Vec<Vec<String>> {
        std::fs::read_to_string(d.join("series.csv"))
            .unwrap()
            .lines()
            .map(|l| l.split(',').map(String::from).collect())
            .collect()
    };
    let (rs, rl) = (rows(&si), rows(&lattice));
    // The SI file has the simulated time in seconds after the case's time column.
    assert_eq!(&rs[0][1..6], ["lid_passes", "time_s", "mass_kg_per_m", "kinetic_energy_J_per_m", "max_speed_m_s"]);
    assert_eq!(&rl[0][1..5], ["lid_passes", "mass", "kinetic_energy", "max_speed"]);
    let last = rs.len() - 1;
    let (vs, vl): (f64, f64) = (rs[last][5].parse().unwrap(), rl[last][4].parse().unwrap());
    assert!(vl > 0.0 && (vs - 0.1 * vl).abs() <= 1e-9 * vs, "max speed {vs} m/s vs {vl} lattice");
    let (ms, ml): (f64, f64) = (rs[last][3].parse().unwrap(), rl[last][2].parse().unwrap());
    let dx = 0.1 / 16.0;
    // dt = 0.1 dx / (0.01 m/s) = 0.0625 s per root step.
    let (step, ts): (f64, f64) = (rs[last][0].parse().unwrap(), rs[last][2].parse().unwrap());
    assert!(step > 0.0 && (ts - step * 0.0625).abs() <= 1e-12 * ts, "time {ts} s at step {step}");
    assert!((ms - ml * dx * dx * 998.2).abs() <= 1e-9 * ms, "mass {ms} kg/m vs {ml}");
    // The .vthb spacing is in metres.
    let vthb = std::fs::read_to_string(si.join("cavity.vthb")).unwrap();
    assert!(vthb.contains(&format!(r#"spacing="{:e} "#, dx)) && vthb.contains("units SI"), "{vthb}");
    // Inconsistent units: a dt that makes the lid supersonic; a viscosity that puts tau near 1/2.
    let bad = out_dir("si-bad");
    std::fs::create_dir_all(&bad).unwrap();
    for (extra, word) in [("dt = 0.5", "units.dt"), ("viscosity = 1.0e-12", "units.viscosity")] {
        let text_in = std::fs::read_to_string("examples/cases/cavity-water-re1000.toml").unwrap();
        let key = extra.split(' ').next().unwrap();
        let mut case: Vec<String> =
            text_in.lines().filter(|l| !l.starts_with(&format!("{key} ="))).map(String::from).collect();
        case.push(extra.to_string());
        let path = bad.join("case.toml");
        std::fs::write(&path, case.join("\n")).unwrap();
        let o = run(example("cavity").arg("--config").arg(&path).args(["--n", "16", "--out"]).arg(bad.join("out")));
        assert_eq!(o.status.code(), Some(2), "{extra}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains(word), "{extra}: {}", text(&o.stderr));
    }
    for d in [si, lattice, bad] {
        std::fs::remove_dir_all(&d).ok();
    }
}

/// The cylinder in SI units (`examples/cases/cylinder-air-re100.toml`: air, D = 1 cm,
/// U0 = 0.15 m/s, Re 100) runs the lattice run of `--re 100 --u0 0.05`: the same forces.
#[test]
fn cylinder_si_units_give_the_lattice_run() {
    let (si, lattice) = (out_dir("cyl-si"), out_dir("cyl-si-lattice"));
    let common = ["--root", "256", "--levels", "1", "--time", "2", "--window", "1", "--height", "8", "--no-plots"];
    let o = run(example("cylinder")
        .args(["--config", "examples/cases/cylinder-air-re100.toml"])
        .args(common)
        .arg("--out")
        .arg(&si));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run(example("cylinder").args(["--re", "100", "--u0", "0.05"]).args(common).arg("--out").arg(&lattice));
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(std::fs::read(si.join("forces.csv")).unwrap() == std::fs::read(lattice.join("forces.csv")).unwrap());
    let units = &summary(&si)["units"];
    // D = 256/32 = 8 root cells = 0.01 m: dx = 1.25 mm; U0 = 0.05 lattice = 0.15 m/s.
    assert!((units["dx_m"].as_f64().unwrap() - 0.00125).abs() < 1e-15, "{units}");
    assert!((units["velocity_m_s_per_lattice"].as_f64().unwrap() - 3.0).abs() < 1e-12, "{units}");
    for d in [si, lattice] {
        std::fs::remove_dir_all(&d).ok();
    }
}

/// The Taylor–Green example: a tiny CPU run writes `t,E,eps` from E(0) = 1/8, the plots
/// and a summary (with the DNS comparison at Re = 1600); bad input is refused before any
/// simulation with exit code 2, naming the flag.
#[test]
fn taylor_green_runs_and_refuses_bad_input() {
    let out = out_dir("taylor-green");
    let o = run(example("taylor_green").args(["--n", "16", "--re", "100", "--t-end", "0.5", "--out"]).arg(&out));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let csv = std::fs::read_to_string(out.join("taylor_green.csv")).unwrap();
    let mut rows = csv.lines();
    assert_eq!(rows.next(), Some("t,E,eps"));
    let first: Vec<f64> = rows.next().unwrap().split(',').map(|v| v.parse().unwrap()).collect();
    assert!(first[0] == 0.0 && (first[1] - 0.125).abs() < 1e-6, "{first:?}");
    assert_eq!(rows.count(), 5, "{csv}");
    let s = summary(&out);
    assert_eq!(s["status"], "completed");
    assert!(s["dns"]["comparison"].is_null() && s["final_energy"].as_f64().unwrap() < 0.125, "{s}");
    for png in ["energy.png", "dissipation.png"] {
        assert!(out.join(png).exists(), "{png}");
    }
    assert_no_nan(&out);
    let o = run(example("taylor_green")
        .args(["--n", "32", "--u0", "0.12", "--t-end", "0.3", "--samples-per-unit", "20", "--no-plots", "--out"])
        .arg(&out));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s = summary(&out);
    let d = &s["dns"]["comparison"];
    assert!(d["energy_max_rel"].as_f64().unwrap() < 0.01 && d["samples"].as_u64().unwrap() == 7, "{s}");
    assert!(d["peak_value_rel"].is_null(), "a run to t = 0.3 has no peak: {s}");
    assert!(!out.join("energy.png").exists(), "the earlier run's plot survived");
    std::fs::remove_dir_all(&out).ok();

    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--n", "18"], "n"),
        (vec!["--n", "16"], "raise u0 or n"),
        (vec!["--n", "16", "--re", "100", "--u0", "0.5"], "u0"),
        (vec!["--n", "16", "--re", "100", "--t-end", "0"], "t_end"),
        (vec!["--n", "16", "--re", "100", "--samples-per-unit", "-1"], "samples_per_unit"),
        (vec!["--n", "16", "--re", "100", "--lattice", "d2q9"], "lattice"),
        (vec!["--n", "16", "--re", "100", "--les", "sigma"], "les"),
        (vec!["--n", "16", "--re", "100", "--restart", "x.ramus"], "restart"),
        (vec!["--n", "16", "--re", "100", "--out", "/proc/ramus-forbidden"], "output folder"),
    ];
    for (args, word) in cases {
        let out = out_dir("taylor-green-invalid");
        let mut c = example("taylor_green");
        c.args(&args);
        if !args.contains(&"--out") {
            c.arg("--out").arg(&out);
        }
        let o = run(&mut c);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(word), "{args:?}: '{word}' missing from: {err}");
        std::fs::remove_dir_all(&out).ok();
    }
}

/// The 3D obstacle example on a small grid: the built-in sphere and the same sphere as an
/// STL (`--icosphere 4`: 5120 triangles) give the same solid cells (`solid_volume`, in
/// D³, within 5 % of π/6 at D = 4 root cells on 2 levels: the issue's 2 % is for the
/// default resolution, recorded in BENCHMARKS.md) and drag within 1 % of each other;
/// forces.csv has the three coefficients; an open STL and a 2D-style grid are refused
/// with exit code 2, naming the problem.
#[test]
fn obstacle_runs_sphere_and_stl_and_refuses_bad_bodies() {
    let out = out_dir("obstacle");
    let small = ["--root", "32", "--length", "2", "--levels", "2", "--time", "2", "--window", "1", "--no-adapt"];
    let mut cd = Vec::new();
    for body in [vec!["--sphere"], vec!["--icosphere", "4"]] {
        let o = run(example("obstacle").args(&body).args(small).arg("--out").arg(&out));
        assert!(o.status.success(), "{body:?}: {}", text(&o.stderr));
        let s = summary(&out);
        assert_eq!(s["status"], "completed");
        let v = s["solid_volume"].as_f64().unwrap();
        assert!((v / (std::f64::consts::PI / 6.0) - 1.0).abs() < 0.05, "{body:?}: solid volume {v} D³");
        cd.push(s["cd_mean"].as_f64().unwrap());
        let csv = std::fs::read_to_string(out.join("forces.csv")).unwrap();
        assert!(csv.starts_with("t,cd,cl,cs\n") && csv.lines().count() == 11, "{csv}");
        assert!(out.join("obstacle.vtu").exists() && out.join("forces.png").exists());
        assert_no_nan(&out);
    }
    assert!(cd[0] > 0.5 && (cd[1] / cd[0] - 1.0).abs() < 0.01, "C_D built-in {} vs STL {}", cd[0], cd[1]);
    // An open surface: one triangle.
    let bad = out.join("open.stl");
    let mut b = vec![0u8; 80];
    b.extend_from_slice(&1u32.to_le_bytes());
    for v in [[0f32; 3], [0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]] {
        for c in v {
            b.extend_from_slice(&c.to_le_bytes());
        }
    }
    b.extend_from_slice(&[0, 0]);
    std::fs::write(&bad, &b).unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--stl", bad.to_str().unwrap()], "open"),
        (vec!["--stl", "/nonexistent/body.stl"], "body.stl"),
        (vec!["--root", "48"], "root"),
        (vec!["--icosphere", "9"], "icosphere"),
    ];
    for (args, word) in cases {
        let o =
            run(example("obstacle").args(&args).args(["--time", "2", "--window", "1", "--out"]).arg(out.join("bad")));
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.to_lowercase().contains(word), "{args:?}: '{word}' missing from: {err}");
    }
    std::fs::remove_dir_all(&out).ok();
}
