//! Build helper: `cargo xtask ptx [--check]`.
//!
//! Regenerates the PTX of the device crate `ramus-kernels` and writes it, zstd-compressed,
//! to `crates/ramus/ptx/ramus_kernels.ptx.zst`, which the host crate embeds with
//! `include_bytes!` (so the host crate builds on stable Rust with no GPU toolchain).
//! `--check` builds afresh and fails if the text differs from the committed file's.
//!
//! Compressed because the text is large (43 MB, one variant per lattice, precision,
//! storage and operator) and nearly all repetition: the `zstd` command at level 19 makes
//! it 4 MB, so the repository, every binary that embeds it, the bundle carried to a GPU
//! machine and a published crate stay small. Writing needs the `zstd` command (Debian's
//! package `zstd`); reading, here and in the host crate, is the pure-Rust decoder `ruzstd`
//! (there is no pure-Rust encoder at a comparable ratio: `ruzstd`'s only level, "fastest",
//! gives 13 MB).
//!
//! Pipeline: `cargo rustc -p ramus-kernels --target nvptx64-nvidia-cuda -Zbuild-std=core
//! --crate-type cdylib --profile ptx` with this binary as the linker. With fat LTO rustc
//! hands the linker a single LLVM bitcode object that already contains the used parts of
//! `core`; in linker mode this binary runs `llc` from the `llvm-tools` component on it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

/// Baseline target: PTX for sm_70 is JIT-compiled by the driver on Volta through Hopper.
const TARGET_CPU: &str = "sm_70";
const LINKER_ENV: &str = "RAMUS_XTASK_PTX_LINKER";
/// The nightly that builds the PTX: the committed PTX is what this toolchain generates,
/// so `--check` compares like with like. Change it only together with a PTX rebuild.
const NIGHTLY: &str = "nightly-2026-05-20";
/// Components the PTX build needs on [`NIGHTLY`].
const COMPONENTS: [&str; 2] = ["rust-src", "llvm-tools"];
/// Environment variable through which the build passes the nightly's sysroot to the
/// linker mode (where `llc` lives).
const SYSROOT_ENV: &str = "RAMUS_XTASK_NIGHTLY_SYSROOT";
const PTX_REL: &str = "crates/ramus/ptx/ramus_kernels.ptx.zst";
/// zstd level of the committed file (19: the highest before `--ultra`; 4 MB, ~25 s).
const ZSTD_LEVEL: &str = "-19";

fn main() -> Result<()> {
    if std::env::var_os(LINKER_ENV).is_some() {
        return link(std::env::args().skip(1).collect());
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["ptx"] => {
            let ptx = build_ptx()?;
            let packed = compress(&ptx)?;
            let out = workspace_root()?.join(PTX_REL);
            std::fs::create_dir_all(out.parent().context("PTX path has a parent")?)?;
            // Atomically: an interrupted run leaves the committed file whole.
            let tmp = out.with_extension("zst.tmp");
            std::fs::write(&tmp, &packed)?;
            std::fs::rename(&tmp, &out)?;
            println!("wrote {} ({} bytes of PTX, {} compressed)", out.display(), ptx.len(), packed.len());
            Ok(())
        }
        ["ptx", "--check"] => {
            let fresh = build_ptx()?;
            let path = workspace_root()?.join(PTX_REL);
            let packed = std::fs::read(&path).with_context(|| format!("reading committed PTX {}", path.display()))?;
            let committed = decompress(&packed).with_context(|| format!("decompressing {}", path.display()))?;
            if committed != fresh {
                let first = committed
                    .lines()
                    .zip(fresh.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(committed.lines().count().min(fresh.lines().count()));
                bail!(
                    "{} is stale: it differs from a fresh build of ramus-kernels from line {} on \
                     (committed {} lines, fresh {} lines). Run `cargo xtask ptx` and commit the result.",
                    PTX_REL,
                    first + 1,
                    committed.lines().count(),
                    fresh.lines().count()
                );
            }
            println!("{PTX_REL} matches a fresh build of ramus-kernels");
            Ok(())
        }
        _ => bail!("usage: cargo xtask ptx [--check]"),
    }
}

/// `ptx` compressed by the `zstd` command, checked to decompress to `ptx` again.
fn compress(ptx: &str) -> Result<Vec<u8>> {
    let mut child = Command::new("zstd")
        .args([ZSTD_LEVEL, "-q", "-c", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("running `zstd` (install it: the committed PTX is zstd-compressed; Debian: apt install zstd)")?;
    let mut stdin = child.stdin.take().context("zstd's standard input")?;
    // Feed the input from a thread: zstd writes while it reads, and its output fills the pipe.
    let text = ptx.as_bytes().to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&text));
    let out = child.wait_with_output().context("waiting for zstd")?;
    feeder.join().map_err(|_| anyhow::anyhow!("writing to zstd panicked"))?.context("writing the PTX to zstd")?;
    if !out.status.success() {
        bail!("zstd failed ({})", out.status);
    }
    if decompress(&out.stdout)? != ptx {
        bail!("zstd's output does not decompress to the PTX");
    }
    Ok(out.stdout)
}

/// The text of a zstd frame (`ruzstd`, as the host crate reads it).
fn decompress(packed: &[u8]) -> Result<String> {
    let mut text = String::new();
    ruzstd::decoding::StreamingDecoder::new(packed)
        .map_err(|e| anyhow::anyhow!("not a zstd frame: {e}"))?
        .read_to_string(&mut text)
        .context("decompressing")?;
    Ok(text)
}

fn workspace_root() -> Result<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    Ok(dir.parent().and_then(Path::parent).context("xtask lives in crates/xtask")?.to_path_buf())
}

/// Makes sure [`NIGHTLY`] and its [`COMPONENTS`] are installed (explicitly: rustup may be
/// set not to install toolchains on first use) and returns its sysroot.
fn ensure_nightly() -> Result<String> {
    let sysroot = |quiet: bool| -> Result<Option<String>> {
        let mut cmd = Command::new("rustup");
        cmd.args(["run", NIGHTLY, "rustc", "--print", "sysroot"]);
        if quiet {
            cmd.stderr(std::process::Stdio::null());
        }
        let out = cmd.output().context("running rustup (needed to build the PTX with the pinned nightly)")?;
        Ok(out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string()))
    };
    let installed = match sysroot(true)? {
        Some(root) => COMPONENTS.iter().all(|c| component_present(&root, c)),
        None => false,
    };
    if !installed {
        eprintln!("installing {NIGHTLY} with {} (for the PTX build)", COMPONENTS.join(", "));
        let status = Command::new("rustup")
            .args(["toolchain", "install", NIGHTLY, "--profile", "minimal", "--component"])
            .arg(COMPONENTS.join(","))
            .status()
            .context("running rustup toolchain install")?;
        if !status.success() {
            bail!("rustup could not install {NIGHTLY} ({status})");
        }
        let status = Command::new("rustup")
            .args(["component", "add", "--toolchain", NIGHTLY])
            .args(COMPONENTS)
            .status()
            .context("running rustup component add")?;
        if !status.success() {
            bail!("rustup could not add {} to {NIGHTLY} ({status})", COMPONENTS.join(", "));
        }
    }
    sysroot(false)?.with_context(|| format!("{NIGHTLY} is not usable after installing it"))
}

/// Whether `component` of the toolchain at `sysroot` is installed (by the files the
/// build uses).
fn component_present(sysroot: &str, component: &str) -> bool {
    let root = Path::new(sysroot);
    match component {
        "rust-src" => root.join("lib/rustlib/src/rust/library/core").is_dir(),
        "llvm-tools" => std::fs::read_dir(root.join("lib/rustlib"))
            .map(|dirs| dirs.flatten().any(|d| d.path().join("bin/llc").exists()))
            .unwrap_or(false),
        _ => false,
    }
}

/// Builds the device crate for nvptx64 and returns the PTX text.
fn build_ptx() -> Result<String> {
    let root = workspace_root()?;
    let target_dir = root.join("target").join("ptx");
    let me = std::env::current_exe().context("locating the xtask binary")?;
    let sysroot = ensure_nightly()?;
    let status = Command::new("rustup")
        .current_dir(&root)
        .env(LINKER_ENV, "1")
        .env(SYSROOT_ENV, &sysroot)
        // The outer (stable) cargo's settings must not leak into the nightly build.
        .env_remove("CARGO")
        .env_remove("RUSTC")
        .env_remove("RUSTUP_TOOLCHAIN")
        .args(["run", NIGHTLY, "cargo"])
        .args([
            "rustc",
            "-p",
            "ramus-kernels",
            "--profile",
            "ptx",
            "--target",
            "nvptx64-nvidia-cuda",
            "-Zbuild-std=core",
            "--crate-type",
            "cdylib",
            "--target-dir",
        ])
        .arg(&target_dir)
        .arg("--")
        .arg(format!("-Clinker={}", me.display()))
        .arg(format!("-Ctarget-cpu={TARGET_CPU}"))
        .status()
        .context("running cargo rustc for nvptx64-nvidia-cuda")?;
    if !status.success() {
        bail!("building ramus-kernels for nvptx64-nvidia-cuda failed ({status})");
    }
    let ptx_path = target_dir.join("nvptx64-nvidia-cuda/ptx/deps/ramus_kernels.ptx");
    let ptx = std::fs::read_to_string(&ptx_path).with_context(|| format!("reading {}", ptx_path.display()))?;
    if ptx.contains(".extern .func") {
        bail!("the PTX holds unresolved `.extern .func` declarations");
    }
    Ok(ptx)
}

/// Linker mode: `llc` the single bitcode object rustc hands over into the PTX output.
fn link(args: Vec<String>) -> Result<()> {
    let mut objects = Vec::new();
    let mut out = None;
    let mut cpu = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" => out = it.next(),
            "--target-cpu" => cpu = it.next(),
            _ if a.ends_with(".o") => objects.push(a),
            _ => {}
        }
    }
    let [object] = objects.as_slice() else {
        bail!("expected exactly one bitcode object from rustc (fat LTO), got {objects:?}");
    };
    let out = out.context("linker called without -o")?;
    let cpu = cpu.unwrap_or_else(|| TARGET_CPU.into());
    let sysroot = std::env::var(SYSROOT_ENV).context("linker mode needs the nightly's sysroot")?;
    let host = Command::new(Path::new(&sysroot).join("bin/rustc")).args(["--print", "host-tuple"]).output()?;
    let host = String::from_utf8(host.stdout)?.trim().to_string();
    let llc = Path::new(&sysroot).join("lib/rustlib").join(host).join("bin/llc");
    if !llc.exists() {
        bail!("{} not found: install the `llvm-tools` component of {NIGHTLY}", llc.display());
    }
    let status =
        Command::new(&llc).args([format!("-mcpu={cpu}"), "-O3".into(), object.clone(), "-o".into(), out]).status()?;
    if !status.success() {
        bail!("llc failed ({status})");
    }
    Ok(())
}
