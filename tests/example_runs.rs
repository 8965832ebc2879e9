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

/// Every file in `dir`, as text where it is text.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap()))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// No number in any file of `dir` stands for a non-finite value.
fn assert_no_nan(dir: &Path) {
    for (name, bytes) in files(dir) {
        if name.ends_with(".ramus") {
            continue;
        }
        let t = text(&bytes).to_lowercase();
        for bad in ["nan", "inf"] {
            let found = t
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w == bad || w == format!("{bad}inity") || w == "infinity");
            assert!(!found, "{name} holds '{bad}':\n{}", &t[..t.len().min(2000)]);
        }
    }
}

fn summary(dir: &Path) -> serde_json::Value {
    let s = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    serde_json::from_str(&s).expect("valid JSON")
}

/// The diverging cavity (n = 16, Re = 5000, lid 0.25): the guard stops it with
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
/// output folder that cannot be created, zero root steps, the refused cylinder
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
        (vec!["--n", "16", "--levels", "3", "--refine-every", "0"], "cavity", "every"),
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
    let case = ["--n", "32", "--re", "400", "--lid", "0.1", "--levels", "3", "--refine-every", "16", "--steps", "4000"];
    let o = run(example("cavity").args(case).arg("--out").arg(&full));
    assert!(o.status.success(), "{}", text(&o.stderr));

    let mut c = example("cavity");
    c.args(case).args(["--checkpoint-every", "48"]).arg("--out").arg(&cut);
    let o = interrupt_after_checkpoint(c, &cut);
    assert_eq!(o.status.code(), Some(130), "{}", text(&o.stderr));
    let s = summary(&cut);
    assert_eq!(s["status"], "interrupted");
    let stopped = s["steps"].as_u64().unwrap();
    assert!(stopped > 0 && stopped < 4000, "{s}");
    assert_no_nan(&cut);

    let o = run(example("cavity").args(case).arg("--restart").arg(cut.join("checkpoint.ramus")).arg("--out").arg(&cut));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s = summary(&cut);
    assert_eq!((s["status"].as_str(), s["restarted_at_step"].as_u64()), (Some("completed"), Some(stopped)));
    let names = ["centerline_u.csv", "centerline_v.csv", "cavity.vtu"];
    assert!(results(&full, &names) == results(&cut, &names), "restarted run differs from the uninterrupted one");
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
    let case = ["--root", "128", "--levels", "2", "--re", "20", "--time", "30", "--window", "2"];
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
    let names = ["forces.csv", "cylinder.vtu"];
    assert!(results(&full, &names) == results(&cut, &names), "restarted run differs from the uninterrupted one");
    let (a, b) = (summary(&full), summary(&cut));
    assert_eq!(a["cd_mean"], b["cd_mean"]);
    std::fs::remove_dir_all(&root).ok();
}
