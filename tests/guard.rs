//! The stability guard (issue "Trustworthy runs"): a diverging run stops with
//! `Error::Diverged` naming step, level and position, within `guard.every` root steps of
//! the first bad value; initial states that are not physical are rejected.

use ramus::cases::cavity::Cavity;
use ramus::{Backend, Error, Forest, ForestConfig, Quantity, Refinement, D2, D2Q9, D3, D3Q19};

/// The reproduction of the issue: `cavity --backend cpu --n 16 --re 5000 --lid 0.25`
/// (τ = 0.5024 with a lid at Ma 0.43) goes non-finite and used to run NaN to the end.
fn unstable_cavity(dim: u32, levels: usize) -> ForestConfig {
    let cavity = Cavity { dim, n: 16, re: 5000.0, lid: 0.25 };
    let refinement = Refinement { levels, ..Refinement::default() };
    cavity.forest_config(Backend::Cpu).expect("valid configuration").refinement(refinement)
}

/// Root step at which `advance` stops with `Diverged`, with the guard every `every` steps.
fn diverges_at<D: ramus::Dim, Q: ramus::VelocitySet<Dim = D>>(mut config: ForestConfig, every: u64) -> (u64, Error) {
    config.guard.every = every;
    let mut forest = Forest::<D, Q, f32>::new(config).expect("forest");
    for _ in 0..20_000 {
        if let Err(e) = forest.advance(1) {
            return (forest.steps(), e);
        }
    }
    panic!("the unstable cavity did not diverge in 20000 steps");
}

fn check_diverged<D: ramus::Dim, Q: ramus::VelocitySet<Dim = D>>(config: ForestConfig) {
    // Guard at every step: the first step with a bad value.
    let (first, e) = diverges_at::<D, Q>(config.clone(), 1);
    match e {
        Error::Diverged { step, level, position, quantity, value } => {
            assert_eq!(step, first);
            assert_eq!(level, 0);
            assert!(position.iter().all(|x| x.is_finite()), "{position:?}");
            for (a, &x) in position.iter().enumerate().take(D::D) {
                assert!(x > 0.0 && x < 16.0, "position {x} on axis {a} inside the 16-cell box");
            }
            match quantity {
                // The Mach limit is c_s: the first bad value is a finite speed above it.
                Quantity::Speed => assert!(value > 0.5773 && value.is_finite(), "|u| = {value}"),
                Quantity::Density => assert!(value.is_nan() || value <= 0.0 || value.is_infinite(), "rho = {value}"),
                Quantity::Population => assert!(!value.is_finite(), "h = {value}"),
            }
        }
        other => panic!("expected Diverged, got {other}"),
    }
    // Default guard (every 100 root steps): caught within 100 steps of the first bad one.
    let (caught, e) = diverges_at::<D, Q>(config, 100);
    assert!(matches!(e, Error::Diverged { .. }), "{e}");
    assert!(caught >= first && caught < first + 100, "first bad at {first}, caught at {caught}");
    let text = e.to_string();
    assert!(text.contains("root step") && text.contains("level"), "{text}");
}

#[test]
fn a_diverging_2d_cavity_stops_with_step_level_and_position() {
    check_diverged::<D2, D2Q9>(unstable_cavity(2, 1));
}

#[test]
fn a_diverging_3d_cavity_stops_with_step_level_and_position() {
    check_diverged::<D3, D3Q19>(unstable_cavity(3, 1));
}

#[test]
fn a_healthy_run_passes_the_guard() {
    let cavity = Cavity { dim: 2, n: 16, re: 100.0, lid: 0.05 };
    let mut config = cavity.forest_config(Backend::Cpu).expect("config");
    config.guard.every = 1;
    let mut forest = Forest::<D2, D2Q9, f64>::new(config).expect("forest");
    forest.advance(300).expect("a stable cavity never trips the guard");
    assert_eq!(forest.timings().guard_checks, 300);
}

#[test]
fn the_guard_checks_refined_levels() {
    // Two levels, the fine level everywhere under a coarse root: a 2D cavity that blows up
    // shows up on the finest level it reaches first or on the root, never unreported.
    let mut config = unstable_cavity(2, 2);
    config.refinement.criterion = ramus::Criterion::Vorticity { n_start: -10.0, n_inc: 1.0, length: None };
    config.refinement.every = 8;
    config.guard.every = 1;
    let mut forest = Forest::<D2, D2Q9, f32>::new(config).expect("forest");
    let e = (0..20_000).find_map(|_| forest.advance(1).err()).expect("diverges");
    let Error::Diverged { level, .. } = e else { panic!("expected Diverged, got {e}") };
    assert!(level < 2);
    assert!(forest.blocks_per_level()[1] > 0, "the criterion refined something");
}

#[test]
fn initial_states_that_are_not_physical_are_rejected() {
    let config = ForestConfig::new([16, 16, 0]).backend(Backend::Cpu);
    let mut forest = Forest::<D2, D2Q9, f64>::new(config).expect("forest");
    for (state, what) in [
        ((f64::NAN, [0.0; 3]), "NaN density"),
        ((0.0, [0.0; 3]), "zero density"),
        ((-1.0, [0.0; 3]), "negative density"),
        ((1.0, [f64::INFINITY, 0.0, 0.0]), "infinite velocity"),
        ((1.0, [0.6, 0.0, 0.0]), "supersonic velocity (Ma > 1)"),
    ] {
        let e = forest.initialize(|_| state).expect_err(what);
        assert!(
            matches!(&e, Error::InvalidParameter { field: "initial state", .. }),
            "{what}: expected a named error, got {e}"
        );
    }
    forest.initialize(|_| (1.0, [0.1, 0.0, 0.0])).expect("a physical state");
}
