//! The Taylor–Green vortex at Re = 1600 to t = 20 on a GPU (D3Q27, f32, Ma = 0.1, the
//! recursive regularized operator, 64³ and 128³, without LES and with each subgrid
//! model), against the 512³ spectral DNS of the High-Order CFD Workshops
//! (`ramus::cases::taylor_green_dns`). Every test needs a CUDA device and is ignored;
//! `scripts/gpu-check.sh run` runs this binary with `--ignored --nocapture
//! --test-threads=1` and prints the figures.
//!
//! Compared: the largest relative deviation of the kinetic energy over t ≤ 20, and the
//! peak of the dissipation rate (value and time; the DNS's is 1.2858e-2 at t = 8.97).
//!
//! The tolerances are provisional, set before the first device run and not tuned to it:
//! they were not taken from a published lattice Boltzmann figure (none was checked for
//! this file). They follow from resolution: at 128³ a second-order scheme resolves the
//! energy-containing scales through the transition, so E within 5 % and the peak within
//! 10 % in value and 0.5 time units; at 64³ (a coarse LES, Δx ≈ 0.1 L) 10 % on E and 20 %
//! and 1 time unit on the peak. A failure is a finding to report, not a tolerance to
//! widen.

use ramus::cases::taylor_green::TaylorGreen;
use ramus::cases::taylor_green_dns::{deviation, History};
use ramus::{Backend, Collision, Forest, Les, D3, D3Q27};

/// Energy samples per convective time unit.
const SAMPLES_PER_UNIT: f64 = 10.0;

/// Acceptance bounds of one grid.
struct Tolerance {
    energy: f64,
    peak_value: f64,
    peak_time: f64,
}

const FINE: Tolerance = Tolerance { energy: 0.05, peak_value: 0.10, peak_time: 0.5 };
const COARSE: Tolerance = Tolerance { energy: 0.10, peak_value: 0.20, peak_time: 1.0 };

/// Runs 20 time units at `n`³ with the subgrid model named `les` (as `--les` takes it) and
/// checks the deviation from the DNS against `tol`.
fn validate(n: usize, les: &str, tol: Tolerance) {
    let case = TaylorGreen { n, re: 1600.0, u0: TaylorGreen::U0_MACH_01 };
    let les = Les::parse(les).expect("a subgrid model ramus knows");
    let config =
        case.forest_config(Backend::Cuda).expect("valid case").collision(Collision::RecursiveRegularized).les(les);
    let mut forest = Forest::<D3, D3Q27, f32>::new(config).expect("a CUDA device");
    forest.initialize_with_gradient(|x| case.state(x), |x| case.gradient(x)).expect("initial state");
    let (mut t, mut e) = (Vec::new(), Vec::new());
    let start = std::time::Instant::now();
    for j in 0..=(20.0 * SAMPLES_PER_UNIT) as u64 {
        let target = case.steps_for_time(j as f64 / SAMPLES_PER_UNIT);
        forest.advance(target - forest.steps()).expect("the run stays stable");
        t.push(case.time(forest.steps()));
        e.push(case.kinetic_energy(&forest.fields().expect("fields")));
    }
    let history = History::from_energy(t, e);
    let d = deviation(&history, 20.0).expect("a finite history");
    let (tp, vp) = history.peak().expect("a peak");
    println!(
        "{n}³ rr {}: {:.1} s, {:.0} MLUPS; max |dE|/E {:.2} %, max |d eps|/peak {:.2} %, peak eps {vp:.5e} at t = {tp:.2} \
         ({:+.2} %, {:+.2}); final E {:.5}",
        les.name(),
        start.elapsed().as_secs_f64(),
        forest.mlups(),
        100.0 * d.energy,
        100.0 * d.dissipation_of_peak,
        100.0 * d.peak_value,
        d.peak_time,
        history.e.last().unwrap()
    );
    assert!(d.energy <= tol.energy, "E deviates by {:.2} % (tolerance {} %)", 100.0 * d.energy, 100.0 * tol.energy);
    assert!(
        d.peak_value.abs() <= tol.peak_value,
        "peak dissipation off by {:+.2} % (tolerance {} %)",
        100.0 * d.peak_value,
        100.0 * tol.peak_value
    );
    assert!(d.peak_time.abs() <= tol.peak_time, "peak time off by {:+.2} (tolerance {})", d.peak_time, tol.peak_time);
}

#[test]
#[ignore = "device: 64³ D3Q27 f32 to t = 20, run via scripts/gpu-check.sh"]
fn tgv_64_no_les() {
    validate(64, "none", COARSE);
}

#[test]
#[ignore = "device: 64³ D3Q27 f32 to t = 20, run via scripts/gpu-check.sh"]
fn tgv_64_smagorinsky() {
    validate(64, "smagorinsky", COARSE);
}

#[test]
#[ignore = "device: 64³ D3Q27 f32 to t = 20, run via scripts/gpu-check.sh (needs Les::parse(\"wale\"))"]
fn tgv_64_wale() {
    validate(64, "wale", COARSE);
}

#[test]
#[ignore = "device: 64³ D3Q27 f32 to t = 20, run via scripts/gpu-check.sh (needs Les::parse(\"vreman\"))"]
fn tgv_64_vreman() {
    validate(64, "vreman", COARSE);
}

#[test]
#[ignore = "device: 128³ D3Q27 f32 to t = 20, run via scripts/gpu-check.sh"]
fn tgv_128_no_les() {
    validate(128, "none", FINE);
}

#[test]
#[ignore = "device: 128³ D3Q27 f32 to t = 20, run via scripts/gpu-check.sh"]
fn tgv_128_smagorinsky() {
    validate(128, "smagorinsky", FINE);
}

#[test]
#[ignore = "device: 128³ D3Q27 f32 to t = 20, run via scripts/gpu-check.sh (needs Les::parse(\"wale\"))"]
fn tgv_128_wale() {
    validate(128, "wale", FINE);
}

#[test]
#[ignore = "device: 128³ D3Q27 f32 to t = 20, run via scripts/gpu-check.sh (needs Les::parse(\"vreman\"))"]
fn tgv_128_vreman() {
    validate(128, "vreman", FINE);
}
