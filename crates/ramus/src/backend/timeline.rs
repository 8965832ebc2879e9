//! A kernel timeline for diagnosing latency-bound runs: when the first and the last CTA
//! of every kernel started, passed their wait for the kernel before them and ended, read
//! from the GPU's global nanosecond timer (`%globaltimer`) by probes that the module
//! builder adds to each kernel's PTX (`backend/ptx.rs`) while the
//! timeline is on ([`super::Device::record_kernel_timeline`]).
//!
//! Why by hand: Nsight Systems is not on every GPU machine, and Nsight Compute serialises
//! the kernels, so neither shows how the kernels of a replayed CUDA graph overlap; CUPTI
//! has no maintained Rust binding. A probe costs thread 0 of two CTAs per launch an
//! atomic increment, issued after `griddepcontrol.launch_dependents` and read only after
//! the wait for the kernel before (so neither the next kernel's early launch nor the
//! loads before the wait are held back by its round trip), and three stores.

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};

use super::cuda::driver_error;
use crate::error::{Error, Result};

/// One CTA of one kernel launch: times in ns of the GPU's global timer (an arbitrary
/// origin: compare spans of one reading).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSpan {
    /// The kernel's PTX entry point.
    pub kernel: String,
    /// The CTA (`ctaid.x`): the first (0) or the last of its launch (modulo 2^24).
    pub cta: u32,
    /// CTAs in the launch (`nctaid.x`, modulo 2^24).
    pub ctas: u32,
    /// When thread 0 of the CTA began.
    pub start_ns: u64,
    /// When it passed its wait for the kernel before it (programmatic dependent launch);
    /// `None` where the launch does not wait (the GPU or the switch,
    /// [`super::Device::set_dependent_launches`]).
    pub waited_ns: Option<u64>,
    /// When it returned (`None` if it had not returned, or left by another way, when read).
    pub end_ns: Option<u64>,
}

/// The most records a timeline holds ([`super::Device::record_kernel_timeline`]).
pub const MAX_RECORDS: usize = 1 << 24;

/// Bytes before the first record: the record counter, alone in its sector.
const HEADER_BYTES: u64 = 64;
/// Bytes per record: `(entry << 48) | (last CTA << 24) | CTA` (CTA indices modulo
/// 2^24), start, waited, end.
const RECORD_BYTES: u64 = 32;
const RECORD_WORDS: usize = (RECORD_BYTES / 8) as usize;
/// The mask of a CTA index in a record's first word.
const FIELD: u64 = (1 << 24) - 1;

/// The probe's view of one entry point: where its records go and which entry it is.
pub(crate) struct Probe {
    /// Device address of the timeline's buffer.
    addr: u64,
    /// Records the buffer holds, not counting the last, which takes every record past
    /// them (overwritten: [`Timeline::read`] reports the overflow).
    capacity: u64,
    /// The entry's index in [`Timeline::names`] (below 2^16: the PTX has a few hundred).
    entry: u32,
}

impl Probe {
    /// The probe of entry `entry` writing into the buffer at `addr` of `capacity` records
    /// (and the overflow record).
    pub fn new(addr: u64, capacity: u64, entry: u32) -> Self {
        Probe { addr, capacity, entry }
    }

    /// Declarations, the start time, the predicate "thread 0 of the first or the last
    /// CTA" and the overflow record's address (where a path that reaches no wait would
    /// write): at the top of the entry's body.
    pub fn head(&self) -> String {
        let sink = self.addr + HEADER_BYTES + self.capacity * RECORD_BYTES;
        format!(
            "\t// ramus.timeline\n\
             \t.reg .pred \t%tl_p<2>;\n\
             \t.reg .b32 \t%tl_r<3>;\n\
             \t.reg .b64 \t%tl_d<6>;\n\
             \tmov.u64 \t%tl_d0, %globaltimer;\n\
             \tmov.u32 \t%tl_r0, %ctaid.x;\n\
             \tmov.u32 \t%tl_r1, %nctaid.x;\n\
             \tadd.s32 \t%tl_r1, %tl_r1, -1;\n\
             \tsetp.eq.s32 \t%tl_p0, %tl_r0, 0;\n\
             \tsetp.eq.s32 \t%tl_p1, %tl_r0, %tl_r1;\n\
             \tor.pred \t%tl_p0, %tl_p0, %tl_p1;\n\
             \tmov.u32 \t%tl_r2, %tid.x;\n\
             \tsetp.eq.s32 \t%tl_p1, %tl_r2, 0;\n\
             \tand.pred \t%tl_p0, %tl_p0, %tl_p1;\n\
             \tmov.u64 \t%tl_d2, {sink};\n\
             \tmov.u64 \t%tl_d3, 0;\n"
        )
    }

    /// The record's slot: an atomic increment of the counter into `%tl_d3`, whose result
    /// nothing reads before [`Self::record`], so the thread goes on meanwhile.
    pub fn slot(&self) -> String {
        format!("\tmov.u64 \t%tl_d1, {};\n\t@%tl_p0 atom.global.add.u64 \t%tl_d3, [%tl_d1], 1;\n", self.addr)
    }

    /// The record's address in `%tl_d2` (the slot clamped to the overflow record) and its
    /// first two words: entry and CTAs, start time.
    pub fn record(&self) -> String {
        let Probe { addr, capacity, entry } = self;
        format!(
            "\tmov.u64 \t%tl_d1, {addr};\n\
             \tmin.u64 \t%tl_d5, %tl_d3, {capacity};\n\
             \tmul.lo.u64 \t%tl_d5, %tl_d5, {RECORD_BYTES};\n\
             \tadd.s64 \t%tl_d5, %tl_d5, %tl_d1;\n\
             \tadd.s64 \t%tl_d2, %tl_d5, {HEADER_BYTES};\n\
             \tmov.u32 \t%tl_r0, %ctaid.x;\n\
             \tmov.u32 \t%tl_r1, %nctaid.x;\n\
             \tadd.s32 \t%tl_r1, %tl_r1, -1;\n\
             \tcvt.u64.u32 \t%tl_d4, %tl_r0;\n\
             \tand.b64 \t%tl_d4, %tl_d4, {FIELD};\n\
             \tcvt.u64.u32 \t%tl_d5, %tl_r1;\n\
             \tand.b64 \t%tl_d5, %tl_d5, {FIELD};\n\
             \tshl.b64 \t%tl_d5, %tl_d5, 24;\n\
             \tor.b64 \t%tl_d4, %tl_d4, %tl_d5;\n\
             \tor.b64 \t%tl_d4, %tl_d4, {tag};\n\
             \t@%tl_p0 st.global.v2.u64 \t[%tl_d2], {{%tl_d4, %tl_d0}};\n",
            tag = u64::from(*entry) << 48,
        )
    }

    /// What follows a wait for the kernel before, on its line: the record's first words
    /// ([`Self::record`]) and the time after the wait (word 2).
    pub fn waited(&self) -> String {
        let stamp = "\tmov.u64 \t%tl_d4, %globaltimer;\n\t@%tl_p0 st.global.u64 \t[%tl_d2+16], %tl_d4;";
        format!("\n{}{stamp}", self.record())
    }

    /// The time before a return (record word 3).
    pub fn end(&self) -> &'static str {
        "\tmov.u64 \t%tl_d4, %globaltimer;\n\t@%tl_p0 st.global.u64 \t[%tl_d2+24], %tl_d4;\n"
    }
}

/// The device side of a kernel timeline: its buffer (the counter, then the records) and
/// the entry points its records name.
pub(crate) struct Timeline {
    buffer: CudaSlice<u64>,
    capacity: usize,
    names: Mutex<Vec<String>>,
}

impl Timeline {
    /// A timeline of at most `capacity` records (two per kernel launch), zeroed.
    pub fn new(stream: &Arc<CudaStream>, capacity: usize) -> Result<Self> {
        if capacity == 0 || capacity > MAX_RECORDS {
            return Err(Error::invalid("kernel timeline records", capacity, "1 to MAX_RECORDS = 2^24"));
        }
        let words = (HEADER_BYTES / 8) as usize + (capacity + 1) * RECORD_WORDS;
        let buffer = stream.alloc_zeros::<u64>(words).map_err(|e| driver_error("allocating the kernel timeline", e))?;
        Ok(Timeline { buffer, capacity, names: Mutex::new(Vec::new()) })
    }

    /// The probe for entry point `name`.
    pub fn probe(&self, stream: &Arc<CudaStream>, name: &str) -> Probe {
        let mut names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        let entry = match names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                names.push(name.to_string());
                names.len() - 1
            }
        };
        let (addr, _sync) = self.buffer.device_ptr(stream);
        Probe::new(addr, self.capacity as u64, entry as u32)
    }

    /// The records so far, in the order their CTAs took their slots, and whether some were
    /// lost (more than the capacity); then empties the timeline. The caller has waited
    /// for the kernels that write it.
    pub fn read(&mut self, stream: &Arc<CudaStream>) -> Result<(Vec<KernelSpan>, bool)> {
        let words = stream.clone_dtoh(&self.buffer).map_err(|e| driver_error("reading the kernel timeline", e))?;
        stream.memset_zeros(&mut self.buffer).map_err(|e| driver_error("clearing the kernel timeline", e))?;
        let taken = words[0] as usize;
        let names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        let header = (HEADER_BYTES / 8) as usize;
        let spans = words[header..]
            .chunks_exact(RECORD_WORDS)
            .take(taken.min(self.capacity))
            .map(|r| KernelSpan {
                kernel: names.get((r[0] >> 48) as usize).cloned().unwrap_or_default(),
                cta: (r[0] & FIELD) as u32,
                ctas: ((r[0] >> 24) & FIELD) as u32 + 1,
                start_ns: r[1],
                waited_ns: (r[2] != 0).then_some(r[2]),
                end_ns: (r[3] != 0).then_some(r[3]),
            })
            .collect();
        Ok((spans, taken > self.capacity))
    }
}
