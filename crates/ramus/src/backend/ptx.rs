//! The embedded PTX as one module per kernel, JIT-compiled on first launch.
//!
//! Loading the whole PTX (332 entry points, 28 MB) made the driver JIT-compile every
//! kernel of every lattice and precision before the first launch: 91 s on an H100 without
//! the driver's JIT cache (first run on a machine, or a new ramus version), 0.6 s with it.
//! A run launches a few dozen of them. The PTX that `cargo xtask ptx` writes (LLVM's NVPTX
//! back end) is laid out as a prelude (version, target, declarations of the panic
//! functions, global tables, the dynamic shared memory), the entry points one after the
//! other, and the definitions of the panic functions; a module of the prelude, one entry
//! and those definitions is valid PTX with the same code for that entry.
//!
//! A module of its own also lets one entry carry a register cap ([`REGISTER_CAPS`]), and,
//! on Hopper and later GPUs, the two instructions of programmatic dependent launch
//! ([`PtxModules::module`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use ramus_kernels::collision::{Bgk, Trt};
use ramus_kernels::registry::Entry;
use ramus_kernels::stream::{StreamCollide, StreamCollideBulk};
use ramus_kernels::{Half, Native, D2Q9, D3Q19, D3Q27};

use super::timeline::Probe;
use crate::error::{Error, Result};

/// Register caps (PTX `.maxnreg`) of entry points whose occupancy, and with it the
/// number of loads in flight, the cap raises more than its spills cost. Measured on the
/// H100 against the uncapped kernel and other caps, on the uniform benchmark
/// (BENCHMARKS.md, eleventh session); in parentheses the registers without a cap and the
/// CTAs of 128 threads per SM without and with it:
/// - odd AA step, BGK, f32: D2Q9 56 (71; 7 → 9; +1.7 %), D3Q19 96 (128; 4 → 5; +2 %);
/// - odd AA step, TRT, f32: D2Q9 56 (74; 6 → 9; +2.8 %), D3Q19 96 (145; 3 → 5; +5.4 %);
/// - odd AA step, BGK, f64: D2Q9 80 (96; 5 → 6; +0.9 %), D3Q19 168 (184; 2 → 3; +4.7 %);
/// - odd AA step, BGK, f16 storage of f32: D3Q19 96 (128; 4 → 5), measured on an H200
///   (forty-second session): the 3D AMR cavity (A3L) +3.7 % MLUPS, the uniform 256³ grid
///   +0.6 %; 112 was slower on both (−1.0 %, −1.9 %). The thirteenth session found 96
///   "slower or equal" on the H100's uniform grid, without the AMR case. Measured again
///   after the dither's cheaper form (forty-third session): A3L +3.8 % over uncapped,
///   uniform −1.2 %; 80 slower on both;
/// - odd AA step, BGK, f16 storage of f32: D3Q27 128 (168; 3 → 4), the uniform 256³ grid
///   +3.3 % on an H200 (forty-third session; not measured on the H100, no 3D AMR case runs
///   D3Q27);
/// - the bulk odd steps with f16 storage ([`StreamCollideBulk`], forty-fourth session)
///   keep the caps of the plain ones they were measured with: D3Q19 96 (95 uncapped),
///   D3Q27 128 (128 uncapped with CUDA 12.9's `ptxas`; the cap keeps 4 CTAs per SM should
///   the driver's JIT take more).
///
/// Measured and not kept (none better, the lower ones slower): D2Q9 f32 64, 48, 40;
/// D3Q19 f32 112, 80, 64; D3Q27 f32 144, 128, 96, 80 (BGK), 128 (TRT); D2Q9 f64 72;
/// D3Q19 f64 128; D3Q27 f64 168, 128; the f16-storage odd steps (BGK) at f32's caps and
/// at 48 / 80 / 112 and 64 / 112 / 144 (D2Q9 / D3Q19 / D3Q27; slower or equal on the
/// H100's uniform grids: thirteenth session; D3Q19's 96 and D3Q27's 128, measured on an
/// H200 later, are kept, above); the even step of D3Q19 with f16 storage at 64 / 56 / 48
/// (72 uncapped; A3L −0.6 / −1.5 / −4.9 %) and with f32 at 72 / 64 (80 uncapped; A3L ±0 /
/// −2.4 %; H200, forty-second session); the D2Q9 f16 odd step at 64 / 56 (71 uncapped;
/// −1 / −10 %, forty-third session).
/// Entries not listed (other operators) are not measured or not helped, and stay
/// uncapped. Every GPU from Volta to Hopper has 64 K registers per SM, so a cap buys the
/// same CTAs per SM on each. (`ptxas -v` on the whole PTX file, as
/// `scripts/gpu-check.sh run` prints it, shows these entries uncapped: the cap is added to
/// the module when it is loaded.)
pub(crate) const REGISTER_CAPS: [(&str, u32); 10] = [
    (<StreamCollide<D2Q9, f32, Native, Bgk, true> as Entry>::ENTRY, 56),
    (<StreamCollide<D3Q19, f32, Native, Bgk, true> as Entry>::ENTRY, 96),
    (<StreamCollide<D2Q9, f32, Native, Trt, true> as Entry>::ENTRY, 56),
    (<StreamCollide<D3Q19, f32, Native, Trt, true> as Entry>::ENTRY, 96),
    (<StreamCollide<D2Q9, f64, Native, Bgk, true> as Entry>::ENTRY, 80),
    (<StreamCollide<D3Q19, f64, Native, Bgk, true> as Entry>::ENTRY, 168),
    (<StreamCollide<D3Q19, f32, Half, Bgk, true> as Entry>::ENTRY, 96),
    (<StreamCollide<D3Q27, f32, Half, Bgk, true> as Entry>::ENTRY, 128),
    (<StreamCollideBulk<D3Q19, f32, Half, Bgk, true> as Entry>::ENTRY, 96),
    (<StreamCollideBulk<D3Q27, f32, Half, Bgk, true> as Entry>::ENTRY, 128),
];

const ENTRY: &str = "\n.visible .entry ";
const FUNC: &str = "\n.func ";

/// A PTX text split into its prelude, its entry points and its trailing functions.
pub(crate) struct PtxModules {
    text: Cow<'static, str>,
    prelude: Range<usize>,
    epilogue: Range<usize>,
    entries: HashMap<String, Range<usize>>,
}

impl PtxModules {
    /// Splits `text`; an error if it has no entry point or an entry without a name.
    pub fn parse(text: Cow<'static, str>) -> Result<Self> {
        let malformed = |what: &str| Error::Cuda { context: "splitting the PTX".into(), message: what.to_string() };
        let starts: Vec<usize> = text.match_indices(ENTRY).map(|(i, _)| i + 1).collect();
        let (&first, &last) = match (starts.first(), starts.last()) {
            (Some(f), Some(l)) => (f, l),
            _ => return Err(malformed("no entry point")),
        };
        // The trailing functions start at the first `.func` after the last entry.
        let tail = text[last..].find(FUNC).map_or(text.len(), |i| last + i + 1);
        let mut entries = HashMap::with_capacity(starts.len());
        for (k, &start) in starts.iter().enumerate() {
            let end = starts.get(k + 1).copied().unwrap_or(tail);
            let name = text[start + ENTRY.len() - 1..end]
                .split('(')
                .next()
                .map(str::trim)
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
                .ok_or_else(|| malformed("an entry point without a name"))?;
            entries.insert(name.to_string(), start..end);
        }
        Ok(PtxModules { prelude: 0..first, epilogue: tail..text.len(), entries, text })
    }

    /// The module holding entry point `name` alone, with its register cap
    /// ([`REGISTER_CAPS`]) if it has one; `None` if the PTX has no such entry.
    ///
    /// `dependent` (a GPU of compute capability 9.0 or later): every thread first lets the
    /// next kernel in the stream launch (`griddepcontrol.launch_dependents`) and then
    /// waits until the kernel before it has completed and its writes are visible
    /// (`griddepcontrol.wait`): before any other instruction, or, in an entry that marks
    /// where its reads of the mesh end ([`ramus_kernels::launch::wait_for_prior_kernels`]),
    /// there ([`Module::reads_mesh_early`]). A launch with programmatic stream
    /// serialisation ([`super::device`]) then overlaps its start with the end of the kernel
    /// before it, and nothing that kernel writes is touched early; without that attribute
    /// the wait returns at once. The instructions need PTX ISA 7.8 and `sm_90`, which the
    /// module then declares (the embedded PTX targets `sm_70`: the code is the same, only
    /// what the module may use grows).
    ///
    /// `probe`: the entry also records when its first and last CTA start, pass that wait
    /// and return ([`super::timeline`]).
    pub fn module(&self, name: &str, dependent: bool, probe: Option<&Probe>) -> Option<Module> {
        let entry = &self.text[self.entries.get(name)?.clone()];
        let [prelude, epilogue] = [&self.prelude, &self.epilogue].map(|r| &self.text[r.clone()]);
        let cap = REGISTER_CAPS.iter().find(|(n, _)| *n == name).map(|&(_, c)| c);
        let mut entry = Cow::Borrowed(entry);
        let mut prelude = Cow::Borrowed(prelude);
        let mut reads_mesh_early = false;
        let (head, slot, waited) = match probe {
            Some(p) => (p.head(), p.slot(), p.waited()),
            None => (String::new(), String::new(), String::new()),
        };
        if dependent {
            let at = first_instruction(&entry)?;
            reads_mesh_early = entry.contains(WAIT_MARK);
            let (top, rest) = entry.split_at(at);
            entry = Cow::Owned(if reads_mesh_early {
                format!("{top}{head}{LAUNCH_DEPENDENTS}{slot}{rest}").replace(WAIT_MARK, &format!("{WAIT}{waited}"))
            } else {
                format!("{top}{head}{LAUNCH_DEPENDENTS}{slot}\t{WAIT}{waited}\n{rest}")
            });
            prelude = Cow::Owned(for_sm_90(&prelude)?);
        } else if let Some(p) = probe {
            let (top, rest) = entry.split_at(first_instruction(&entry)?);
            entry = Cow::Owned(format!("{top}{head}{slot}{}{rest}", p.record()));
        }
        if let Some(p) = probe {
            entry = Cow::Owned(entry.replace("\tret;\n", &format!("{}\tret;\n", p.end())));
        }
        // A performance directive sits between the parameter list and the body.
        let body = cap.and_then(|_| entry.find("\n{\n"));
        let text = match (cap, body) {
            (Some(cap), Some(at)) => {
                format!("{prelude}{}\n.maxnreg {cap}{}{epilogue}", &entry[..at], &entry[at..])
            }
            _ => [&*prelude, &*entry, epilogue].concat(),
        };
        Some(Module { text, reads_mesh_early })
    }

    /// Whether [`Self::module`] can give modules for programmatic dependent launch (the
    /// prelude declares a PTX ISA version and target `sm_70`).
    pub fn dependent_ready(&self) -> bool {
        for_sm_90(&self.text[self.prelude.clone()]).is_some()
    }

    /// Number of entry points.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

/// A kernel's PTX module ([`PtxModules::module`]).
pub(crate) struct Module {
    /// The PTX text.
    pub text: String,
    /// The entry reads the mesh before it waits for the kernel before it (its wait is at
    /// the mark of [`ramus_kernels::launch::wait_for_prior_kernels`]): a launch may then
    /// start early only behind kernels that do not write the mesh
    /// ([`ramus_kernels::launch::Kernel::WRITES_MESH`]).
    pub reads_mesh_early: bool,
}

/// Both instructions of programmatic dependent launch at the top of an entry's body, as
/// [`PtxModules::module`] writes them where the entry marks no wait.
#[cfg(test)]
const DEPENDENT_LAUNCH: &str = "\tgriddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;\n";
/// The first instruction of programmatic dependent launch, at the top of an entry's body;
/// the second ([`WAIT`]) follows it, or replaces the entry's mark ([`WAIT_MARK`]).
const LAUNCH_DEPENDENTS: &str = "\tgriddepcontrol.launch_dependents;\n";
/// The comment [`ramus_kernels::launch::wait_for_prior_kernels`] leaves in the PTX, and
/// what replaces it.
const WAIT_MARK: &str = "// ramus.wait_for_prior_kernels";
const WAIT: &str = "griddepcontrol.wait;";

/// Where the first instruction of `entry`'s body starts: after the body's `{` and its
/// register declarations. `None` if the entry has no body.
fn first_instruction(entry: &str) -> Option<usize> {
    let mut at = entry.find("\n{\n")? + 3;
    for line in entry[at..].split_inclusive('\n') {
        let t = line.trim();
        if !(t.is_empty() || t.starts_with(".reg") || t.starts_with(".local") || t.starts_with(".shared")) {
            break;
        }
        at += line.len();
    }
    Some(at)
}

/// `prelude` declaring PTX ISA 7.8 (or its own, if later) and target `sm_90`. `None` if it
/// lacks either line or names another target than `sm_70`.
fn for_sm_90(prelude: &str) -> Option<String> {
    let version = prelude.lines().find(|l| l.starts_with(".version "))?;
    let (major, minor) = version[".version ".len()..].trim().split_once('.')?;
    let (major, minor): (u32, u32) = (major.parse().ok()?, minor.parse().ok()?);
    let text = if (major, minor) < (7, 8) { prelude.replacen(version, ".version 7.8", 1) } else { prelude.to_string() };
    text.contains("\n.target sm_70\n").then(|| text.replacen("\n.target sm_70\n", "\n.target sm_90\n", 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn embedded() -> Cow<'static, str> {
        Cow::Borrowed(super::super::cuda::kernels_ptx().expect("the embedded PTX decompresses"))
    }

    #[test]
    fn every_entry_of_the_embedded_ptx_gets_a_module_of_its_own() {
        let ptx = PtxModules::parse(embedded()).expect("parse");
        let total = embedded().matches(".visible .entry ").count();
        assert_eq!(ptx.len(), total);
        for name in ["stream_collide_odd_d3q19_f32_bgk", "prim_scan_tiles_u32", "pack_blocks_b4"] {
            let m = ptx.module(name, false, None).expect(name).text;
            assert!(m.starts_with("//") && m.contains(".version ") && m.contains(".target sm_70"), "{name}: prelude");
            assert_eq!(m.matches(".visible .entry ").count(), 1, "{name}: one entry");
            assert!(m.contains(&format!(".visible .entry {name}(")), "{name}: its entry");
            // The panic functions it may call are declared (prelude) and defined (epilogue).
            assert!(m.trim_end().ends_with('}'), "{name}: ends with the last function");
            assert!(m.matches(".func _RNvNtCs").count() >= 2, "{name}: panic functions");
        }
        assert!(ptx.module("no_such_kernel", false, None).is_none());
    }

    #[test]
    fn capped_entries_carry_their_register_cap_before_their_body() {
        let ptx = PtxModules::parse(embedded()).expect("parse");
        for (name, cap) in REGISTER_CAPS {
            let m = ptx.module(name, false, None).expect(name).text;
            let head = format!(".visible .entry {name}(");
            let entry = &m[m.find(&head).expect(name)..];
            let directive = format!("\n.maxnreg {cap}\n{{\n");
            let at = entry.find(&directive).unwrap_or_else(|| panic!("{name}: no `.maxnreg {cap}` before the body"));
            assert_eq!(entry[..at].matches('{').count(), 0, "{name}: the directive precedes the body");
            assert_eq!(m.matches(".maxnreg").count(), 1, "{name}: one directive");
        }
        let uncapped = ptx.module("stream_collide_even_d3q19_f32_bgk", false, None).expect("even step").text;
        assert!(!uncapped.contains(".maxnreg"));
    }

    /// The entries that read the mesh before their wait: the per-cell steps
    /// ([`ramus_kernels::stream::StreamCollide`], [`ramus_kernels::stream::StreamCollideGradient`])
    /// and the grid communication's kernels ([`ramus_kernels::average::AverageToParents`],
    /// [`ramus_kernels::interpolate::InterpolateChildren`], the two passes
    /// [`ramus_kernels::interpolate::RescaleParents`] and
    /// [`ramus_kernels::interpolate::InterpolateGhosts`], and the fused
    /// [`ramus_kernels::exchange::AverageInterpolate`]).
    fn early_entry(name: &str) -> bool {
        let step = name.starts_with("stream_collide_") && !name.starts_with("stream_collide_pairs_");
        let exchange = [
            "interpolate_linear_",
            "interpolate_cubic_",
            "average_even_",
            "average_odd_",
            "average_interpolate_",
            "rescale_parents_",
            "interpolate_ghosts_",
        ]
        .iter()
        .any(|p| name.starts_with(p));
        step || exchange
    }

    #[test]
    fn dependent_modules_wait_for_the_kernel_before_them_first_or_where_marked() {
        let ptx = PtxModules::parse(embedded()).expect("parse");
        assert!(ptx.dependent_ready());
        let mut names: Vec<&str> = ptx.entries.keys().map(String::as_str).collect();
        names.sort_unstable();
        let mut marked = 0;
        for name in names {
            let plain = ptx.module(name, false, None).expect(name);
            let dependent = ptx.module(name, true, None).expect(name);
            let (m, marks) = (&dependent.text, plain.text.matches(WAIT_MARK).count());
            assert!(!plain.reads_mesh_early, "{name}: no early reads without the instructions");
            assert_eq!(dependent.reads_mesh_early, marks > 0, "{name}");
            assert!(m.contains("\n.version 7.8\n") && m.contains("\n.target sm_90\n"), "{name}: PTX ISA 7.8, sm_90");
            assert!(!m.contains(WAIT_MARK), "{name}: every mark replaced");
            // Nothing but the entry's declarations before the first instruction(s).
            let first = if marks > 0 { LAUNCH_DEPENDENTS } else { DEPENDENT_LAUNCH };
            let body = &m[m.find(&format!(".visible .entry {name}(")).expect(name)..];
            let body = &body[body.find("\n{\n").expect("body") + 3..];
            let head = &body[..body.find(first).expect("the instructions")];
            let declaration = |l: &str| [".reg", ".local", ".shared"].iter().any(|d| l.trim().starts_with(d));
            assert!(head.lines().all(|l| l.trim().is_empty() || declaration(l)), "{name}: {head}");
            assert!(!head.is_empty(), "{name}: the body declares registers first");
            if marks > 0 {
                // Only the per-cell step kernels and the grid communication's mark their
                // wait (the contract of the mark is theirs; the paired step waits first).
                assert!(early_entry(name), "{name}: marks its wait");
                assert!(!body.starts_with(DEPENDENT_LAUNCH) && !m.contains(DEPENDENT_LAUNCH), "{name}");
                assert_eq!(m.matches(WAIT).count(), marks, "{name}: a wait at each mark");
                marked += 1;
            } else {
                assert_eq!(m.matches(WAIT).count(), 1, "{name}: one wait");
            }
            // Otherwise the module is the plain one.
            let back = m.replacen(first, "", 1).replace(WAIT, WAIT_MARK).replacen(".target sm_90", ".target sm_70", 1);
            assert_eq!(back.replacen(".version 7.8", "", 1), plain.text.replacen(".version 6.0", "", 1), "{name}");
        }
        // Every per-cell step kernel (the plain and gradient-LES entries of each lattice,
        // precision, storage and operator, even and odd) and every exchange kernel.
        assert!(marked > 0 && marked == ptx.entries.keys().filter(|n| early_entry(n)).count());
        // With a register cap, both.
        let (name, cap) = REGISTER_CAPS[1];
        let m = ptx.module(name, true, None).expect(name);
        assert!(m.text.contains(&format!("\n.maxnreg {cap}\n{{\n")) && m.text.contains(LAUNCH_DEPENDENTS), "{name}");
        assert!(m.reads_mesh_early, "{name}");
    }

    #[test]
    fn probed_modules_are_the_plain_ones_with_the_probe_added() {
        let ptx = PtxModules::parse(embedded()).expect("parse");
        let probe = Probe::new(0x7f00_0000_1000, 100, 3);
        let (head, slot, record, end) = (probe.head(), probe.slot(), probe.record(), probe.end());
        let waited = probe.waited();
        for name in ptx.entries.keys() {
            for dependent in [false, true] {
                let plain = ptx.module(name, dependent, None).expect(name);
                let probed = ptx.module(name, dependent, Some(&probe)).expect(name);
                let m = &probed.text;
                assert_eq!(probed.reads_mesh_early, plain.reads_mesh_early, "{name}");
                assert_eq!((m.matches(&head).count(), m.matches(&slot).count()), (1, 1), "{name}");
                let rets = plain.text.matches("\tret;\n").count();
                assert!(rets > 0, "{name}: returns");
                assert_eq!(m.matches(&format!("{end}\tret;\n")).count(), rets, "{name}: a stamp before each return");
                let waits = plain.text.matches(WAIT).count();
                assert_eq!(m.matches(&format!("{WAIT}{waited}")).count(), waits, "{name}: a stamp after each wait");
                // The record's first words after each wait; without waits, at the top.
                assert_eq!(m.matches(&record).count(), waits.max(usize::from(!dependent)), "{name}");
                // Only the declarations before the probe's start time.
                let body = &m[m.find("\n{\n").expect("body") + 3..];
                let top = &body[..body.find(&head).expect("head")];
                assert!(top.lines().all(|l| l.trim().is_empty() || l.trim().starts_with(".reg")), "{name}: {top}");
                // In a dependent module the slot follows the first instruction of
                // programmatic dependent launch.
                if dependent {
                    assert!(m.contains(&format!("{head}{LAUNCH_DEPENDENTS}{slot}")), "{name}");
                }
                let back =
                    m.replace(&head, "").replace(&slot, "").replace(&waited, "").replace(&record, "").replace(end, "");
                assert_eq!(back, plain.text, "{name}");
            }
        }
    }

    #[test]
    fn text_without_entries_is_an_error() {
        assert!(PtxModules::parse(".version 6.0\n.target sm_70\n".into()).is_err());
    }
}
