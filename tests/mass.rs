//! Mass conservation in a closed box: every face a wall, one of them moving tangentially
//! (a lid), started from a non-uniform state. BGK collision conserves ρ per cell, streaming
//! moves populations without loss, and bounce-back returns every population that hits a
//! wall; the moving-wall term `2 w_i ρ_w (c_i·u_w)/c_s²` cancels between the links of a
//! cell for a tangential wall velocity. So the total mass may only drift by round-off.
//! Acceptance (from the issue): |M(t) − M(0)| / M(0) ≤ 1e-10 after 10⁴ steps.

use std::f64::consts::PI;

use ramus::{Backend, Boundary, Dim, Face, Fluid, Forest, ForestConfig, VelocitySet, D2, D2Q9, D3, D3Q19};

const TOL_DRIFT: f64 = 1e-10;
const STEPS: u64 = 10_000;

/// Runs a closed box of `n` cells per side whose top face (the last axis) moves with
/// `lid` along x, and the first side face (x_min) along y, from a smooth non-uniform
/// (ρ, u); checks the mass at several times, odd step counts included (the AA layout
/// alternates with the step parity).
fn check<D: Dim, Q: VelocitySet<Dim = D>>(n: usize) {
    let d = D::D;
    let top = if d == 2 { Face::YMax } else { Face::ZMax };
    let config = ForestConfig::new([n; 3])
        .boundary(top, Boundary::moving_wall([0.1, 0.0, 0.0]))
        .boundary(Face::XMin, Boundary::moving_wall([0.0, 0.05, 0.0]))
        .fluid(Fluid::Viscosity { nu: 0.05 })
        .backend(Backend::Cpu);
    let mut forest = Forest::<D, Q, f64>::new(config).expect("valid closed box");

    let k = 2.0 * PI / n as f64;
    forest
        .initialize(|x| {
            let (sx, cy) = ((k * x[0]).sin(), (k * x[1]).cos());
            let z = if d == 3 { (k * x[2]).cos() } else { 1.0 };
            let rho = 1.0 + 0.05 * sx * cy * z + 0.02 * (2.0 * k * x[1]).sin();
            let mut u = [0.03 * cy * z, -0.03 * sx * z, 0.0];
            if d == 3 {
                u[2] = 0.02 * sx * cy;
            }
            (rho, u)
        })
        .expect("initialize");
    let fields = forest.fields().expect("fields");
    let m0 = fields.mass();
    let spread = fields.rho.iter().fold(0.0f64, |m, r| m.max((r - 1.0).abs()));
    assert!(spread > 0.01, "{}: initial density should be non-uniform (max |ρ-1| = {spread})", Q::NAME);

    let mut worst: f64 = 0.0;
    for chunk in [1, 2498, 2501, 2500, 2500] {
        forest.advance(chunk).expect("advance");
        let fields = forest.fields().expect("fields");
        let drift = (fields.mass() - m0).abs() / m0;
        assert!(
            drift <= TOL_DRIFT,
            "{}: relative mass drift {drift:.3e} after {} steps exceeds {TOL_DRIFT:e}",
            Q::NAME,
            forest.steps()
        );
        assert!(fields.rho.iter().all(|r| r.is_finite() && *r > 0.0), "{}: bad density", Q::NAME);
        worst = worst.max(drift);
    }
    assert_eq!(forest.steps(), STEPS);
    println!(
        "mass {}: {n}^{d} closed box with moving walls, {STEPS} steps: M(0) = {m0:.12}, \
         max |M(t) - M(0)| / M(0) = {worst:.3e}",
        Q::NAME
    );
}

#[test]
fn mass_conserved_d2q9() {
    check::<D2, D2Q9>(32);
}

#[test]
fn mass_conserved_d3q19() {
    check::<D3, D3Q19>(16);
}
