//! Time series for ParaView: numbered hierarchical outputs ([`super::amr`]) and one `.pvd`
//! collection with the simulated time of each, which ParaView opens as an animation (the
//! `.pvd` series waLBerla and OpenLB write).
//!
//! The files are written on a host thread while the solver goes on: [`AmrSeries::write`]
//! takes a [`HostSolution`] (the copy from the device is all the solver thread waits for)
//! and hands it over; the moments, the vorticity, the encoding and the files are the
//! writer's. At most one output waits while another is being written (bounded memory):
//! a solver that produces outputs faster than they can be written waits for the writer.
//! The `.pvd` is rewritten atomically after each output, naming only complete outputs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ramus_kernels::{Real, VelocitySet};

use super::amr::{write_amr, AmrOutput};
use super::write_atomic;
use crate::error::{Error, Result};
use crate::solver::HostSolution;

/// Work for a [`Writer`]: returns how long it took.
pub type Job = Box<dyn FnOnce() -> Result<Duration> + Send>;

/// A host thread that runs output jobs in order while the solver goes on. At most one
/// job waits while another runs: [`Writer::submit`] blocks when the writer is behind
/// (bounded memory). The first error stops the writer; it is returned by the next
/// `submit` or by [`Writer::finish`].
pub struct Writer {
    tx: Option<SyncSender<Job>>,
    worker: Option<JoinHandle<Result<Duration>>>,
}

impl Writer {
    /// Starts the thread (`what` names it in errors).
    pub fn new(what: &Path) -> Result<Self> {
        let (tx, rx) = sync_channel::<Job>(1);
        let worker = std::thread::Builder::new()
            .name("ramus-output".into())
            .spawn(move || {
                let mut busy = Duration::ZERO;
                for job in rx {
                    busy += job()?;
                }
                Ok(busy)
            })
            .map_err(|e| Error::io("starting the output thread for", what, e))?;
        Ok(Writer { tx: Some(tx), worker: Some(worker) })
    }

    /// Queues `job`; an error of an earlier job if the writer stopped.
    pub fn submit(&mut self, job: Job) -> Result<()> {
        let sent = self.tx.as_ref().map(|tx| tx.send(job).is_ok()).unwrap_or(false);
        if !sent {
            return Err(self
                .join()
                .err()
                .unwrap_or_else(|| Error::invalid("output thread", "stopped", "a running writer")));
        }
        Ok(())
    }

    /// Waits for every queued job; returns the writer's busy time or the first error.
    pub fn finish(mut self) -> Result<Duration> {
        self.join()
    }

    fn join(&mut self) -> Result<Duration> {
        self.tx = None;
        match self.worker.take() {
            Some(w) => w.join().map_err(|_| Error::invalid("output thread", "panicked", "a writer that returns"))?,
            None => Ok(Duration::ZERO),
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        let _ = self.join();
    }
}

/// Writes `DIR/NAME_0000.vthb`, `DIR/NAME_0001.vthb`, … and `DIR/NAME.pvd` on a
/// [`Writer`] thread (see the module documentation).
pub struct AmrSeries {
    dir: PathBuf,
    name: String,
    out: AmrOutput,
    count: usize,
    entries: std::sync::Arc<std::sync::Mutex<Vec<(f64, String)>>>,
    writer: Writer,
}

impl AmrSeries {
    /// A series in the existing folder `dir`, files named after `name`.
    pub fn new(dir: impl AsRef<Path>, name: &str, out: AmrOutput) -> Result<Self> {
        if name.is_empty() || name.contains(['/', '\\']) {
            return Err(Error::invalid("series name", name, "a file name without a path"));
        }
        Ok(AmrSeries {
            dir: dir.as_ref().to_path_buf(),
            name: name.into(),
            out,
            count: 0,
            entries: Default::default(),
            writer: Writer::new(dir.as_ref())?,
        })
    }

    /// Queues output number `self.outputs()` of `solution` at simulated time `time` (the
    /// case's own unit: it labels the `.pvd`). Returns once the writer has taken it or has
    /// room for it; an error of an earlier output (the writer stopped) is returned here.
    pub fn write<Q: VelocitySet, F: Real>(&mut self, time: f64, solution: HostSolution<Q, F>) -> Result<()> {
        if !time.is_finite() {
            return Err(Error::invalid("output time", time, "a finite time"));
        }
        let file = format!("{}_{:04}", self.name, self.count);
        self.count += 1;
        let (dir, out, entries, name) = (self.dir.clone(), self.out.clone(), self.entries.clone(), self.name.clone());
        self.writer.submit(Box::new(move || {
            let t = Instant::now();
            let blocks = solution.active_blocks();
            write_amr(&dir, &file, &blocks, &out)?;
            let mut e = entries.lock().map_err(|_| Error::invalid("output thread", "poisoned", "a running writer"))?;
            e.push((time, format!("{file}.vthb")));
            write_atomic(dir.join(format!("{name}.pvd")), collection(&e, out.units).as_bytes())?;
            Ok(t.elapsed())
        }))
    }

    /// Outputs queued so far.
    pub fn outputs(&self) -> usize {
        self.count
    }

    /// Waits for every queued output; returns the writer's busy time (what the outputs
    /// cost, overlapped with the solver) or the first error.
    pub fn finish(self) -> Result<Duration> {
        self.writer.finish()
    }
}

/// The `.pvd` text of `entries` (time, file).
fn collection(entries: &[(f64, String)], units: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, r#"<?xml version="1.0"?>"#);
    let _ = writeln!(s, r#"<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">"#);
    let _ = writeln!(s, "  <!-- ramus: time in the case's unit; fields in {units} units -->");
    let _ = writeln!(s, "  <Collection>");
    for (t, f) in entries {
        let _ = writeln!(s, r#"    <DataSet timestep="{t:e}" group="" part="0" file="{f}"/>"#);
    }
    let _ = writeln!(s, "  </Collection>\n</VTKFile>");
    s
}
