//! The collision operators (`ramus_kernels::collision`): conservation, the TRT ↔ BGK
//! limit, the relaxation of each parity part at its own rate, and the parity-wise
//! rescaling of grid transfers (`interpolate::scale_neq`). Generic over the velocity set,
//! run for D2Q9, D3Q19 and D3Q27.

use ramus_kernels::collide::{bgk, equilibrium, moments};
use ramus_kernels::collision::trt;
use ramus_kernels::interpolate::scale_neq;
use ramus_kernels::{VelocitySet, D2Q9, D3Q19, D3Q27};

/// A shifted population away from equilibrium in both parity parts: an equilibrium plus
/// a deterministic perturbation (the collision conserves whatever moments it has).
fn sample<L: VelocitySet>() -> L::Pop<f64> {
    let mut h = equilibrium::<L, f64>(1.02, [0.04, -0.03, 0.02]);
    for i in 0..L::Q {
        // Deterministic, parity-mixed perturbation.
        h[i] += 1e-3 * ((i * 7 % 11) as f64 - 5.0) * L::W[i];
    }
    h
}

fn even_odd<L: VelocitySet>(v: &L::Pop<f64>) -> (Vec<f64>, Vec<f64>) {
    let opp = |i: usize| {
        if i == 0 {
            0
        } else if i % 2 == 1 {
            i + 1
        } else {
            i - 1
        }
    };
    (0..L::Q).map(|i| (0.5 * (v[i] + v[opp(i)]), 0.5 * (v[i] - v[opp(i)]))).unzip()
}

fn check<L: VelocitySet>() {
    let name = L::NAME;
    let h0 = sample::<L>();
    let (rho0, u0) = moments::<L, f64>(&h0);
    let heq = equilibrium::<L, f64>(rho0, u0);
    let (wp, wm) = (1.0 / 0.8, 1.0 / 1.3);
    let mut h = h0;
    let (rho, u) = trt::<L, f64>(&mut h, wp, wm);
    assert_eq!((rho, u), (rho0, u0), "{name}: returns the pre-collision moments");
    // Conservation of mass and momentum (to round-off).
    let (rho1, u1) = moments::<L, f64>(&h);
    assert!((rho1 - rho0).abs() <= 1e-15, "{name}: mass {rho1} vs {rho0}");
    for a in 0..3 {
        assert!((u1[a] - u0[a]).abs() <= 1e-15, "{name}: momentum {a}: {} vs {}", u1[a], u0[a]);
    }
    // Each parity part of h − h^eq shrinks by its own factor 1 − ω±.
    let neq_before: Vec<f64> = (0..L::Q).map(|i| h0[i] - heq[i]).collect();
    let neq_after: Vec<f64> = (0..L::Q).map(|i| h[i] - heq[i]).collect();
    let to_pop = |v: &[f64]| {
        let mut p = L::Pop::<f64>::default();
        p.as_mut().copy_from_slice(v);
        p
    };
    let (eb, ob) = even_odd::<L>(&to_pop(&neq_before));
    let (ea, oa) = even_odd::<L>(&to_pop(&neq_after));
    for i in 0..L::Q {
        assert!(
            (ea[i] - (1.0 - wp) * eb[i]).abs() <= 1e-16,
            "{name}: even part {i}: {} vs {}",
            ea[i],
            (1.0 - wp) * eb[i]
        );
        assert!(
            (oa[i] - (1.0 - wm) * ob[i]).abs() <= 1e-16,
            "{name}: odd part {i}: {} vs {}",
            oa[i],
            (1.0 - wm) * ob[i]
        );
    }
    // ω⁻ = ω⁺ is BGK (to round-off: the pairs are combined in another order).
    let (mut a, mut b) = (h0, h0);
    trt::<L, f64>(&mut a, wp, wp);
    bgk::<L, f64>(&mut b, wp);
    for i in 0..L::Q {
        assert!((a[i] - b[i]).abs() <= 1e-16, "{name}: TRT(ω, ω) vs BGK at {i}: {} vs {}", a[i], b[i]);
    }
    // scale_neq: equal factors are the plain product, bit for bit; different ones scale
    // each parity part by its own factor.
    let mut p = to_pop(&neq_before);
    scale_neq::<L, f64>(&mut p, 0.7, 0.7);
    for i in 0..L::Q {
        assert_eq!(p[i].to_bits(), (neq_before[i] * 0.7).to_bits(), "{name}: equal factors at {i}");
    }
    let mut p = to_pop(&neq_before);
    scale_neq::<L, f64>(&mut p, 0.7, 0.3);
    let (es, os) = even_odd::<L>(&p);
    for i in 0..L::Q {
        assert!(
            (es[i] - 0.7 * eb[i]).abs() <= 1e-17 && (os[i] - 0.3 * ob[i]).abs() <= 1e-17,
            "{name}: parity scaling at {i}"
        );
    }
}

#[test]
fn trt_conserves_and_relaxes_each_parity_at_its_rate() {
    check::<D2Q9>();
    check::<D3Q19>();
    check::<D3Q27>();
}
