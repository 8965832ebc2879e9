//! The embedded PTX is complete: every kernel the CUDA backend launches is there, and no
//! function is left unresolved (the driver would fail to load such a module).

const LATTICES: [&str; 3] = ["d2q9", "d3q19", "d3q27"];
const PRECISIONS: [&str; 2] = ["f32", "f64"];

#[test]
fn ptx_has_no_unresolved_functions() {
    assert!(!ramus::KERNELS_PTX.contains(".extern .func"), "PTX declares an external function");
}

#[test]
fn ptx_has_every_stream_collide_kernel() {
    for l in LATTICES {
        for f in PRECISIONS {
            for parity in ["even", "odd"] {
                let name = format!(".entry stream_collide_{parity}_{l}_{f}(");
                assert!(ramus::KERNELS_PTX.contains(&name), "missing kernel {name}");
            }
        }
    }
}

#[test]
fn ptx_targets_a_baseline_architecture() {
    // sm_70 PTX is JIT-compiled by the driver on Volta through Hopper.
    assert!(ramus::KERNELS_PTX.contains(".target sm_70"));
    // Registers only: a run-time-indexed local array would show up as `.local`.
    assert!(!ramus::KERNELS_PTX.contains(".local"), "a kernel spills an array to local memory");
}

/// The cooperative criterion entries carry the names the host derives from the serial CPU
/// kernel (`kernel_name::<VorticityMarkSerial<..>>`).
#[test]
fn ptx_has_every_criterion_kernel() {
    use ramus::backend::device::kernel_name;
    use ramus::kernels::criterion::VorticityMarkSerial as V;
    use ramus::{D2Q9, D3Q19, D3Q27};
    let names = [
        kernel_name::<V<D2Q9, f32, false>>(),
        kernel_name::<V<D2Q9, f32, true>>(),
        kernel_name::<V<D2Q9, f64, false>>(),
        kernel_name::<V<D2Q9, f64, true>>(),
        kernel_name::<V<D3Q19, f32, false>>(),
        kernel_name::<V<D3Q19, f32, true>>(),
        kernel_name::<V<D3Q19, f64, false>>(),
        kernel_name::<V<D3Q19, f64, true>>(),
        kernel_name::<V<D3Q27, f32, false>>(),
        kernel_name::<V<D3Q27, f32, true>>(),
        kernel_name::<V<D3Q27, f64, false>>(),
        kernel_name::<V<D3Q27, f64, true>>(),
    ];
    for name in names {
        assert!(ramus::KERNELS_PTX.contains(&format!(".entry {name}(")), "missing PTX entry {name}");
    }
}
