//! What the simulation examples share, so that every run behaves the same way for its
//! user (README, "Runs you can trust"):
//!
//! - **Case files.** `--config case.toml` holds any of the example's flags (same names,
//!   `snake_case`); flags given on the command line override the file; an unknown key is
//!   an error naming it. The run writes what it used to `OUT/config.toml`, which
//!   `--config` accepts back unchanged ([`load_args`], [`write_case_file`]).
//! - **The output folder** is created and checked (writable) before the simulation
//!   starts, and stale results of an earlier run in it are removed ([`prepare_out`]).
//!   Every file is written atomically ([`write_file`]).
//! - **Exit codes** ([`Outcome::exit_code`], [`exit_code_of`]): 0 completed, 1 failed
//!   (device or file-system error), 2 invalid input, 3 diverged, 130 interrupted.
//! - **Interruption**: SIGINT or SIGTERM ends the run after the current chunk of root
//!   steps; the example then writes its checkpoint and outputs and exits with 130. A
//!   second signal ends the process at once ([`Interrupt`]).
//! - **Progress**: a bar on a terminal, otherwise one line at most every
//!   [`LINE_INTERVAL`] ([`Progress`]).

#![allow(dead_code)] // each example uses its own part of this module

mod monitor;
mod outputs;
mod physics;
mod plots;
mod report;
mod series;
mod timeline;
#[allow(unused_imports)] // not every example uses every part
pub use monitor::{check_probes, parse_probe, Monitor, Probe};
#[allow(unused_imports)]
pub use outputs::{OutputFlags, Outputs};
#[allow(unused_imports)]
pub use physics::CollisionFlags;
#[allow(unused_imports)]
pub use plots::{cavity_plots, series_plots, write_centerlines};
#[allow(unused_imports)]
pub use report::{performance_json, print_performance, print_profile, print_submissions, submissions_json};
#[allow(unused_imports)]
pub use series::{amr_output, remove_series, vtu_options, Series};
#[allow(unused_imports)]
pub use timeline::{KernelTimeline, TIMELINE_FILE};

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};
use indicatif::{ProgressBar, ProgressStyle};
use ramus::{Dim, Float, PoolStorage, VelocitySet};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Exit code of invalid input (flags, case file, output folder, checkpoint to restart).
pub const EXIT_INVALID: u8 = 2;
/// Exit code of a run that failed for another reason (device, file system).
pub const EXIT_FAILED: u8 = 1;
/// Exit code of a run stopped by the stability guard ([`ramus::Error::Diverged`]).
pub const EXIT_DIVERGED: u8 = 3;
/// Exit code of a run ended by SIGINT or SIGTERM (128 + SIGINT, the shell convention).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Name of the checkpoint file in the output folder.
pub const CHECKPOINT: &str = "checkpoint.ramus";
/// Name of the case file the run writes into the output folder.
pub const CASE_FILE: &str = "config.toml";

/// How a run ended (`"status"` in `summary.json`).
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Ran to the end.
    Completed,
    /// Stopped by the stability guard; the message names step, level and position.
    Diverged(String),
    /// Stopped by SIGINT/SIGTERM after a root step (the checkpoint holds it).
    Interrupted,
}

impl Outcome {
    /// The stability guard's check of the steps since its last one, for a run that
    /// completed or was interrupted (checked before anything is saved): `Diverged` if they
    /// went unstable, the outcome as it was otherwise.
    pub fn after_last_check<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
        self,
        forest: &mut ramus::Forest<D, Q, F, S>,
    ) -> Result<Outcome> {
        if let Outcome::Completed | Outcome::Interrupted = self {
            match forest.check_health() {
                Ok(()) => {}
                Err(e @ ramus::Error::Diverged { .. }) => return Ok(Outcome::Diverged(e.to_string())),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(self)
    }

    /// Whether the run ends with a checkpoint: always when interrupted, and when it
    /// completed with checkpoints asked for (`checkpoint_every`).
    pub fn ends_with_checkpoint(&self, checkpoint_every: Option<u64>) -> bool {
        matches!(self, Outcome::Interrupted) || (*self == Outcome::Completed && checkpoint_every.is_some())
    }

    /// The value of `"status"`.
    pub fn status(&self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Diverged(_) => "diverged",
            Outcome::Interrupted => "interrupted",
        }
    }

    /// The process exit code.
    pub fn exit_code(&self) -> u8 {
        match self {
            Outcome::Completed => 0,
            Outcome::Diverged(_) => EXIT_DIVERGED,
            Outcome::Interrupted => EXIT_INTERRUPTED,
        }
    }
}

/// The exit code of an error: invalid input (a named [`ramus::Error`] about a parameter,
/// a case file or a checkpoint, or an error of the set-up phase) gives 2, divergence 3,
/// anything else 1.
pub fn exit_code_of(e: &anyhow::Error, during_setup: bool) -> u8 {
    use ramus::Error as E;
    match e.downcast_ref::<E>() {
        Some(E::Diverged { .. }) => EXIT_DIVERGED,
        Some(
            E::InvalidParameter { .. } | E::UnsupportedLattice { .. } | E::UnknownOption { .. } | E::Checkpoint { .. },
        ) => EXIT_INVALID,
        _ if during_setup => EXIT_INVALID,
        _ => EXIT_FAILED,
    }
}

/// Options of one invocation, not of the case: not read from or written to case files.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct RunFlags {
    /// Case file (TOML) holding any of the flags above, by name in snake_case
    /// (`refine_every`); flags given on the command line override it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Continue from this checkpoint (written with --checkpoint-every); the step count
    /// or time asked for is still the total from t = 0.
    #[arg(long)]
    pub restart: Option<PathBuf>,
}

/// An example's arguments: a clap parser whose case values (everything but
/// [`RunFlags`]) serialise to and from a case file.
pub trait CaseArgs: CommandFactory + FromArgMatches + Serialize + DeserializeOwned {
    /// The invocation's options (`#[serde(skip)]` in the struct).
    fn run_flags(&mut self) -> &mut RunFlags;
    /// Case-file tables that are not flags (e.g. `[units]`).
    const TABLES: &'static [&'static str] = &[];
}

/// Parses the command line into `A`; with `--config FILE`, every flag not given on the
/// command line takes the file's value where it has one. Keys are the flags' names in
/// `snake_case` (`refine_every` for `--refine-every`); an unknown key is an error naming
/// it and the allowed ones.
pub fn load_args<A: CaseArgs>() -> Result<A> {
    let matches = A::command().try_get_matches().unwrap_or_else(|e| e.exit());
    let mut cli = A::from_arg_matches(&matches)?;
    let flags = std::mem::take(cli.run_flags());
    let Some(path) = flags.config.clone() else {
        *cli.run_flags() = flags;
        return Ok(cli);
    };
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading the case file {}", path.display()))?;
    let file: toml::Table =
        toml::from_str(&text).with_context(|| format!("parsing the case file {}", path.display()))?;
    let mut merged = match toml::Value::try_from(&cli)? {
        toml::Value::Table(t) => t,
        _ => bail!("the arguments do not form a table"),
    };
    let not_case = ["config", "restart", "help", "version"];
    let allowed: Vec<String> = A::command()
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .filter(|k| !not_case.contains(&k.as_str()))
        .chain(A::TABLES.iter().map(|t| t.to_string()))
        .collect();
    for (key, value) in file {
        if !allowed.contains(&key) {
            bail!("unknown key '{key}' in the case file {}: allowed keys are {}", path.display(), allowed.join(", "));
        }
        if matches.value_source(&key) != Some(ValueSource::CommandLine) {
            merged.insert(key, value);
        }
    }
    let mut args: A = toml::Value::Table(merged)
        .try_into()
        .with_context(|| format!("a value in the case file {}", path.display()))?;
    *args.run_flags() = flags;
    Ok(args)
}

/// Writes `args` (the values the run used) as `OUT/config.toml`, a case file that
/// `--config` accepts back and that reproduces the run.
pub fn write_case_file<A: Serialize>(out: &Path, args: &A, header: &str) -> Result<()> {
    let text = format!("# {header}\n# Written by the run; `--config` accepts this file.\n{}", toml::to_string(args)?);
    write_file(&out.join(CASE_FILE), text.as_bytes())
}

/// Creates `dir` if needed and checks that files can be written there (before any
/// simulation time is spent); removes the files of `stale` (an earlier run's results,
/// not its checkpoint) so that the folder never mixes two runs.
pub fn prepare_out(dir: &Path, stale: &[&str]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating the output folder {}", dir.display()))?;
    let probe = dir.join(format!(".ramus-probe-{}", std::process::id()));
    std::fs::write(&probe, b"probe").with_context(|| format!("the output folder {} is not writable", dir.display()))?;
    std::fs::remove_file(&probe).with_context(|| format!("removing {}", probe.display()))?;
    for name in stale {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing the earlier result {}", path.display())),
        }
    }
    Ok(())
}

/// Writes a file atomically (temporary name in the same folder, then rename).
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    ramus::output::write_atomic(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// Writes `value` as pretty JSON, atomically. `serde_json` writes a non-finite number as
/// `null` (never `NaN`, never `0.0`).
pub fn write_json(path: &Path, value: &serde_json::Value) -> Result<()> {
    write_file(path, (serde_json::to_string_pretty(value)? + "\n").as_bytes())
}

/// The largest of `values`, or NaN if any is NaN (`f64::max` would drop it and report a
/// diverged run as converged).
pub fn max_propagating_nan(values: impl IntoIterator<Item = f64>) -> f64 {
    values.into_iter().fold(0.0, |m, v| if v.is_nan() || m.is_nan() { f64::NAN } else { m.max(v) })
}

/// SIGINT/SIGTERM seen since [`Interrupt::install`].
#[derive(Clone)]
pub struct Interrupt(Arc<AtomicBool>);

impl Interrupt {
    /// Registers the handlers: the first signal sets the flag (the run winds down and
    /// writes its checkpoint and outputs), a second one ends the process at once.
    pub fn install() -> Result<Self> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let flag = Arc::new(AtomicBool::new(false));
        for sig in [SIGINT, SIGTERM] {
            // Order matters: the shutdown check runs first, so it sees the flag as the
            // previous signal left it.
            signal_hook::flag::register_conditional_shutdown(sig, i32::from(EXIT_INTERRUPTED), flag.clone())?;
            signal_hook::flag::register(sig, flag.clone())?;
        }
        Ok(Interrupt(flag))
    }

    /// Whether a signal arrived.
    pub fn requested(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

#[derive(Default)]
/// Root steps per `advance` call: about [`CHUNK_TIME`] of wall time each (so an
/// interruption is answered within that), at least 1.
pub struct Chunker {
    per_step: Option<Duration>,
}

/// Wall time of one `advance` call of the examples.
pub const CHUNK_TIME: Duration = Duration::from_millis(250);

impl Chunker {
    pub fn new() -> Self {
        Chunker { per_step: None }
    }

    /// Steps of the next call, at most `left`, a multiple of `quantum` (≥ 1) unless `left`
    /// is smaller.
    pub fn next(&self, left: u64, quantum: u64) -> u64 {
        let q = quantum.max(1);
        let n = match self.per_step {
            None => q,
            Some(d) => (CHUNK_TIME.as_secs_f64() / d.as_secs_f64().max(1e-9)) as u64 / q * q,
        };
        n.clamp(q, 1 << 20).min(left)
    }

    /// Records that `steps` took `took`.
    pub fn record(&mut self, steps: u64, took: Duration) {
        if steps > 0 {
            self.per_step = Some(took / steps.min(u32::MAX as u64) as u32);
        }
    }
}

/// Time between two progress lines when stdout is not a terminal.
pub const LINE_INTERVAL: Duration = Duration::from_secs(5);

/// Progress over root steps: a bar on a terminal (stderr), otherwise one line on stdout at
/// most every [`LINE_INTERVAL`] with step, simulated time, MLUPS and ETA.
pub struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    first: u64,
    start: Instant,
    last_line: Instant,
}

impl Progress {
    /// Progress toward `total` root steps, starting at `done` (a restart).
    pub fn new(total: u64, done: u64) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let style = ProgressStyle::with_template(
                "{elapsed_precise} [{wide_bar}] {human_pos}/{human_len} steps, ETA {eta}, {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            let bar = ProgressBar::new(total).with_style(style);
            bar.set_position(done);
            bar
        });
        let now = Instant::now();
        Progress { bar, total, first: done, start: now, last_line: now }
    }

    /// Reports `done` steps; `time` is the simulated time as the example states it.
    pub fn update(&mut self, done: u64, time: &str, mlups: f64) {
        if let Some(bar) = &self.bar {
            bar.set_position(done);
            bar.set_message(format!("{time}, {mlups:.1} MLUPS"));
        } else if self.last_line.elapsed() >= LINE_INTERVAL || done == self.total {
            self.last_line = Instant::now();
            let rate = (done - self.first) as f64 / self.start.elapsed().as_secs_f64().max(1e-9);
            let eta = if rate > 0.0 { format!("{:.0} s", (self.total - done) as f64 / rate) } else { "-".into() };
            println!("step {done}/{}, {time}, {mlups:.1} MLUPS, ETA {eta}", self.total);
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}

/// The checkpoint path of a run writing into `out`.
pub fn checkpoint_path(out: &Path) -> PathBuf {
    out.join(CHECKPOINT)
}

/// Checks that a forest restarted from `path` continues the case asked for: its
/// configuration equals `wanted` (the backend aside) and its step count is at most
/// `total`, the steps of the whole run.
pub fn check_restart(
    path: &Path,
    saved: &ramus::ForestConfig,
    wanted: &ramus::ForestConfig,
    at: u64,
    total: u64,
) -> Result<()> {
    let mut saved = saved.clone();
    saved.backend = wanted.backend;
    if &saved != wanted {
        bail!(
            "the checkpoint {} holds another case than the flags and case file describe (compare its run's \
             config.toml): restart with the same parameters",
            path.display()
        );
    }
    if at > total {
        bail!("the checkpoint {} is at root step {at}, past the {total} steps asked for", path.display());
    }
    Ok(())
}

/// The process exit of a run: its outcome's code (a divergence's message printed), or
/// the code of its error.
pub fn exit(result: Result<Outcome>) -> std::process::ExitCode {
    match result {
        Ok(outcome) => {
            if let Outcome::Diverged(why) = &outcome {
                eprintln!("error: {why}");
            }
            std::process::ExitCode::from(outcome.exit_code())
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(exit_code_of(&e, false))
        }
    }
}
