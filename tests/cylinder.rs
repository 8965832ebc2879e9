//! Flow past a square cylinder at Re = 100 on the CPU (paper, section "Flow Past a Square
//! Cylinder"): a coarse, short run of the paper's set-up (root 256, 2 levels, linear
//! interpolation, height 16 D) to t = 100 D/U_0, with the drag averaged over the last
//! 16 D/U_0 as in the paper's sampling. Reference: time-averaged C_D = 1.50 at Re = 100
//! (the paper's Table "FPSC" with uniform 2048² and cubic AMR runs; Saha et al. 2000:
//! 1.51; Fakhari & Lee 2014: 1.51). The acceptance asks for 15 % at this resolution; the
//! full runs to 240 D/U_0 are in BENCHMARKS.md.

use ramus::cases::cylinder::Cylinder;
use ramus::cases::shedding::{mean_over_periods, strouhal};
use ramus::{Backend, Forest, D2, D2Q9};

#[test]
#[cfg_attr(
    not(feature = "long-validation"),
    ignore = "long validation (minutes on 2 cores): cargo test --release --features long-validation, run by .ci/run"
)]
fn coarse_cylinder_drag_within_15_percent_of_literature() {
    // Height 16 D (the paper's table) halves the cells of the default 32 D: CI time.
    let case = Cylinder { root: 256, levels: 2, height: 16.0, ..Cylinder::default() };
    let mut forest = Forest::<D2, D2Q9, f64>::new(case.forest_config(Backend::Cpu).expect("config")).expect("forest");
    forest.initialize(|x| case.initial_state(x)).expect("init");
    let (mut t, mut cd, mut cl) = (Vec::new(), Vec::new(), Vec::new());
    let steps = case.steps_for(100.0);
    let mut done = 0;
    while done < steps {
        forest.advance(16).expect("advance");
        done += 16;
        let (d, l) = case.coefficients(forest.force(Some(0)).expect("force"));
        if case.time(done) >= 100.0 - 16.0 {
            t.push(case.time(done));
            cd.push(d);
            cl.push(l);
        }
    }
    let mean = cd.iter().sum::<f64>() / cd.len() as f64;
    let shedding = strouhal(&t, &cl);
    println!(
        "C_D over the last 16 D/U0: {mean:.4}; lift fit: {shedding:?}; cells per level {:?}",
        forest.cells_per_level()
    );
    // Measured: 1.541 (the uniform 2048 run at this height gives 1.526, BENCHMARKS.md).
    assert!((mean - 1.5).abs() < 0.15 * 1.5, "mean C_D = {mean:.4}, more than 15 % from 1.5");
    // Shedding (started by the initial kick) is saturated by t = 100: the lift oscillates
    // at the Strouhal frequency, 0.147 in the paper (measured here 0.1494; 0.149 for every
    // grid at this height on the GPU, BENCHMARKS.md), with amplitude 0.28.
    let (st, fit) = shedding.expect("lift oscillates");
    assert!((st - 0.147).abs() < 0.01 && fit.amplitude > 0.1, "St = {st}, C_L amplitude {}", fit.amplitude);
    let periods_mean = mean_over_periods(&t, &cd, fit.frequency, fit.periods.floor().max(1.0)).expect("mean");
    assert!((periods_mean - 1.5).abs() < 0.15 * 1.5, "C_D over whole periods {periods_mean:.4}");
}

/// `Inlet::Parabolic`: a channel (resting walls on top and bottom) with a Poiseuille inlet
/// of mean velocity U_0 (centreline 1.5 U_0), the same parabola as the initial state, and
/// a named error for an unknown inlet.
#[test]
fn parabolic_inlet_makes_a_channel() {
    use ramus::cases::cylinder::Inlet;
    use ramus::{Boundary, Error, Face};
    let case = Cylinder { root: 128, levels: 1, re: 50.0, inlet: Inlet::Parabolic, ..Cylinder::default() };
    let config = case.forest_config(Backend::Cpu).expect("config");
    assert_eq!(config.boundaries[Face::XMin.index()], Boundary::parabolic([1.5 * case.u0, 0.0, 0.0]));
    assert_eq!(config.boundaries[Face::YMin.index()], Boundary::NO_SLIP);
    assert_eq!(config.boundaries[Face::YMax.index()], Boundary::NO_SLIP);
    // The initial state's mean over the cell centres of the inlet column: U_0 up to the
    // midpoint rule's error for a parabola, 1.5 U_0 · 2/(3 n²).
    let n = case.height_cells();
    let mean = (0..n).map(|j| case.initial_state([0.5, j as f64 + 0.5, 0.0]).1[0]).sum::<f64>() / n as f64;
    assert!((mean - case.u0).abs() <= 1.5 * case.u0 / (n * n) as f64, "mean {mean}, U_0 {}", case.u0);
    let bad = "plug".parse::<Inlet>();
    assert!(matches!(bad, Err(Error::InvalidParameter { field: "inlet", .. })), "{bad:?}");
}
