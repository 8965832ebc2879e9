//! The guide's commands run as written (docs/guide.md, rendered as `ramus::guide`): every
//! `cargo run --release --example NAME -- ARGS` line of its `sh` blocks runs the example
//! binary `cargo test` built with those arguments (on the CPU, like the rest of the
//! suite), must succeed and write the files the guide says it writes. Its Rust examples
//! are doctests of `ramus::guide`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `cargo run --release --example` lines of the guide's `sh` blocks: (example, args).
fn commands(guide: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in guide.lines() {
        let l = line.trim();
        if l.starts_with("```") {
            in_sh = !in_sh && l == "```sh";
            continue;
        }
        if let Some(rest) = l.strip_prefix("cargo run --release --example ").filter(|_| in_sh) {
            let mut words = rest.split_whitespace();
            let name = words.next().unwrap().to_string();
            let args: Vec<String> = words.skip_while(|w| *w == "--").map(String::from).collect();
            out.push((name, args));
        }
    }
    out
}

fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap();
    dir.join("examples").join(name)
}

#[test]
fn the_guides_commands_run_as_written() {
    let guide = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide.md")).unwrap();
    let cmds = commands(&guide);
    assert!(!cmds.is_empty(), "no command found in the guide");
    let tmp = std::env::temp_dir().join(format!("ramus-guide-{}", std::process::id()));
    for (name, mut args) in cmds {
        // The guide's output folder, moved under a temporary one.
        let out = match args.iter().position(|a| a == "--out") {
            Some(i) => {
                let o = tmp.join(&args[i + 1]);
                args[i + 1] = o.to_string_lossy().into_owned();
                o
            }
            None => panic!("the guide's command for {name} names no --out"),
        };
        let o = Command::new(example(&name)).args(&args).args(["--backend", "cpu"]).output().unwrap();
        assert!(o.status.success(), "{name} {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        // The files the guide's table lists.
        for f in ["cavity.vthb", "fields.pvd", "fields_0000.vthb", "cavity.vtu", "series.csv", "summary.json"] {
            if name == "cavity" {
                assert!(out.join(f).exists(), "{name}: {f} missing");
            }
        }
    }
    std::fs::remove_dir_all(&tmp).ok();
}
