//! The embedded PTX is complete: it has exactly the entry points of the kernel registry
//! (`ramus::kernels::registry`), and no function is left unresolved (the driver would fail
//! to load such a module).

use std::collections::BTreeSet;

use ramus::kernels::registry::{self, Entry};
use ramus::Native;

/// The embedded PTX text.
fn ptx() -> &'static str {
    ramus::kernels_ptx().expect("the embedded PTX decompresses")
}

/// Names of the `.entry` directives of a PTX text.
fn ptx_entries(ptx: &str) -> BTreeSet<&str> {
    ptx.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            l.strip_prefix(".visible .entry ").or_else(|| l.strip_prefix(".entry "))
        })
        .map(|rest| rest.split('(').next().unwrap_or(rest).trim())
        .collect()
}

/// `Err` naming every registered kernel without its `.entry` in `ptx` and every `.entry`
/// of `ptx` that is not registered (or registered twice).
fn check_registry(ptx: &str) -> Result<(), String> {
    let in_ptx = ptx_entries(ptx);
    let mut registered = BTreeSet::new();
    let mut twice = Vec::new();
    for name in registry::entries() {
        if !registered.insert(name) {
            twice.push(name);
        }
    }
    let missing: Vec<_> = registered.difference(&in_ptx).collect();
    let unregistered: Vec<_> = in_ptx.difference(&registered).collect();
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems.push(format!("registered but without a `.entry` in the PTX (run `cargo xtask ptx`): {missing:?}"));
    }
    if !unregistered.is_empty() {
        problems.push(format!(
            "`.entry` in the PTX but not in ramus_kernels::registry (run `cargo xtask ptx`): {unregistered:?}"
        ));
    }
    if !twice.is_empty() {
        problems.push(format!("registered twice: {twice:?}"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// Every registered kernel has its entry point in the committed PTX, and every entry
/// point there is registered.
#[test]
fn ptx_entries_are_the_registry() {
    if let Err(problems) = check_registry(ptx()) {
        panic!("the committed PTX and the kernel registry differ:\n{problems}");
    }
    assert!(ptx_entries(ptx()).len() >= 190, "parsed too few entries");
}

/// The comparison notices an entry point missing from the PTX and one it does not know.
#[test]
fn registry_check_sees_both_directions() {
    use ramus::kernels::collision::Trt;
    use ramus::kernels::stream::StreamCollide;
    use ramus::D3Q19;
    let name = <StreamCollide<D3Q19, f32, Native, Trt, true> as Entry>::ENTRY;
    let without = ptx().replace(&format!(".entry {name}("), ".entry renamed_away(");
    let err = check_registry(&without).unwrap_err();
    assert!(err.contains(&format!("\"{name}\"")) && err.contains("\"renamed_away\""), "{err}");
}

/// Names follow `<line>_<variant>` (`crate::registry`); the cooperative entries are
/// registered against their CPU counterparts, which the host launches only on the CPU.
#[test]
fn entry_names() {
    use ramus::kernels::amr::select::Sanitize;
    use ramus::kernels::collision::{Bgk, Trt};
    use ramus::kernels::criterion::VorticityMarkSerial;
    use ramus::kernels::primitives::{CompactValues, ScanTileSerial};
    use ramus::kernels::stream::StreamCollide;
    use ramus::{D2Q9, D3, D3Q19, D3Q27};
    assert_eq!(<StreamCollide<D2Q9, f64, Native, Bgk, false> as Entry>::ENTRY, "stream_collide_even_d2q9_f64_bgk");
    assert_eq!(<StreamCollide<D3Q27, f32, Native, Trt, true> as Entry>::ENTRY, "stream_collide_odd_d3q27_f32_trt");
    // The native storage has no key; 16-bit storage adds `f16` after the precision.
    assert_eq!(
        <StreamCollide<D3Q19, f32, ramus::Half, Trt, true> as Entry>::ENTRY,
        "stream_collide_odd_d3q19_f32_f16_trt"
    );
    assert_eq!(
        <VorticityMarkSerial<D2Q9, f32, ramus::Half, false> as Entry>::ENTRY,
        "vorticity_mark_even_d2q9_f32_f16"
    );
    assert_eq!(<Sanitize<D3> as Entry>::ENTRY, "amr_sanitize_d3");
    assert_eq!(<CompactValues<u32> as Entry>::ENTRY, "prim_compact_b4");
    assert_eq!(<VorticityMarkSerial<D3Q27, f32, Native, true> as Entry>::ENTRY, "vorticity_mark_odd_d3q27_f32");
    assert_eq!(<ScanTileSerial<u64, u64> as Entry>::ENTRY, "prim_scan_tiles_u64");
    const { assert!(<VorticityMarkSerial<D3Q27, f32, Native, true> as Entry>::COOPERATIVE) };
    const { assert!(<ScanTileSerial<u32, u32> as Entry>::COOPERATIVE) };
    const { assert!(!<StreamCollide<D2Q9, f32, Native, Bgk, true> as Entry>::COOPERATIVE) };
}

#[test]
fn ptx_has_no_unresolved_functions() {
    assert!(!ptx().contains(".extern .func"), "PTX declares an external function");
}

#[test]
fn ptx_targets_a_baseline_architecture() {
    // sm_70 PTX is JIT-compiled by the driver on Volta through Hopper.
    assert!(ptx().contains(".target sm_70"));
    // Registers only: a run-time-indexed local array would show up as `.local`.
    assert!(!ptx().contains(".local"), "a kernel spills an array to local memory");
}
