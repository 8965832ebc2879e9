//! The collision operators (`ramus_kernels::collision`): conservation, the TRT ↔ BGK
//! limit, the relaxation of each parity part at its own rate, and the parity-wise
//! rescaling of grid transfers (`interpolate::scale_neq`). Generic over the velocity set,
//! run for D2Q9, D3Q19 and D3Q27.

use ramus_kernels::collide::{bgk, equilibrium, moments};
use ramus_kernels::collision::{trt, Bgk, Collision, Trt};
use ramus_kernels::interpolate::scale_neq;
use ramus_kernels::les::{has_les, les_rates};
use ramus_kernels::regularized::Rr;
use ramus_kernels::stream::StepParams;
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

/// Guo's body force (Guo, Zheng & Shi, Phys. Rev. E 65 (2002) 046308): a forced collision
/// conserves mass, adds exactly `F` to the momentum `Σ h c` (the source's first moment is
/// `F`: half of it before the collision, in `u = (Σ h c + F/2)/ρ`, half after), returns
/// that `u`; TRT with equal rates is forced BGK; without a force the unforced code runs.
fn forced<L: VelocitySet>() {
    let name = L::NAME;
    let force = [2e-4, -1e-4, if L::Q == 9 { 0.0 } else { 3e-4 }];
    let h0 = sample::<L>();
    let (rho0, u_raw) = moments::<L, f64>(&h0);
    let mut p = StepParams::<f64> { omega: 1.0 / 0.8, omega_minus: 1.0 / 1.3, force, ..Default::default() };
    for (kind, wm) in [("bgk", p.omega), ("trt", 1.0 / 1.3)] {
        p.omega_minus = wm;
        let mut h = h0;
        let (rho, u) =
            if kind == "bgk" { Bgk::collide::<L, f64>(&mut h, &p) } else { Trt::collide::<L, f64>(&mut h, &p) };
        assert_eq!(rho, rho0, "{name} {kind}");
        for a in 0..3 {
            let want = u_raw[a] + 0.5 * force[a] / rho0;
            assert!((u[a] - want).abs() <= 1e-16, "{name} {kind}: returned u_{a} {} vs {want}", u[a]);
        }
        let (rho1, u1) = moments::<L, f64>(&h);
        assert!((rho1 - rho0).abs() <= 1e-15, "{name} {kind}: mass {rho1} vs {rho0}");
        for a in 0..3 {
            let gained = rho1 * u1[a] - rho0 * u_raw[a];
            assert!((gained - force[a]).abs() <= 1e-15, "{name} {kind}: momentum gain {gained} vs F = {}", force[a]);
        }
    }
    // TRT with ω⁻ = ω⁺ is forced BGK (to round-off).
    p.omega_minus = p.omega;
    let (mut a, mut b) = (h0, h0);
    Trt::collide::<L, f64>(&mut a, &p);
    Bgk::collide::<L, f64>(&mut b, &p);
    for i in 0..L::Q {
        assert!((a[i] - b[i]).abs() <= 1e-16, "{name}: forced TRT(ω, ω) vs BGK at {i}: {} vs {}", a[i], b[i]);
    }
    // No force: the unforced operators, bit for bit.
    let p0 = StepParams::<f64> { omega: 1.0 / 0.8, omega_minus: 1.0 / 0.8, ..Default::default() };
    let (mut a, mut b) = (h0, h0);
    Bgk::collide::<L, f64>(&mut a, &p0);
    bgk::<L, f64>(&mut b, p0.omega);
    assert!((0..L::Q).all(|i| a[i].to_bits() == b[i].to_bits()), "{name}: unforced BGK path");
}

#[test]
fn guo_forcing_adds_the_force_and_conserves_mass() {
    forced::<D2Q9>();
    forced::<D3Q19>();
    forced::<D3Q27>();
}

/// Second and third moments `Σ c_a c_b n`, `Σ c_a² c_b n` of a non-equilibrium part.
fn moments23<L: VelocitySet>(n: &[f64]) -> ([[f64; 3]; 3], [[f64; 3]; 3], f64) {
    let (mut m2, mut m3, mut xyz) = ([[0.0; 3]; 3], [[0.0; 3]; 3], 0.0);
    for (ci, &ni) in L::C.iter().zip(n) {
        let c = ci.map(f64::from);
        for a in 0..3 {
            for b in 0..3 {
                m2[a][b] += c[a] * c[b] * ni;
                m3[a][b] += c[a] * c[a] * c[b] * ni;
            }
        }
        xyz += c[0] * c[1] * c[2] * ni;
    }
    (m2, m3, xyz)
}

/// The recursive regularized operator (Malaspinas 2015; Coreixas et al. 2017): conserves
/// ρ and ρu; the post-collision non-equilibrium part is `(1 − ω)` times the regularized
/// one, whose second moment is the pre-collision `Π` and whose third moments `Σ c_a² c_b`
/// (a ≠ b, those the lattice carries) are the recursive `2 u_a Π_ab + u_b Π_aa`, and
/// `Σ c_x c_y c_z = u_x Π_yz + u_y Π_xz + u_z Π_xy` on D3Q27; a population that is already
/// regularized relaxes like BGK.
fn regularized<L: VelocitySet>() {
    let name = L::NAME;
    let d3 = L::Q != 9;
    let h0 = sample::<L>();
    let (rho0, u) = moments::<L, f64>(&h0);
    let heq = equilibrium::<L, f64>(rho0, u);
    let n0: Vec<f64> = (0..L::Q).map(|i| h0[i] - heq[i]).collect();
    let (pi, _, _) = moments23::<L>(&n0);
    let omega = 1.0 / 0.7;
    let p = StepParams::<f64> { omega, omega_minus: omega, ..Default::default() };
    let mut h = h0;
    let (rho, uu) = Rr::collide::<L, f64>(&mut h, &p);
    assert_eq!((rho, uu), (rho0, u), "{name}: returns the pre-collision moments");
    let (rho1, u1) = moments::<L, f64>(&h);
    assert!((rho1 - rho0).abs() <= 1e-15, "{name}: mass");
    for a in 0..3 {
        assert!((u1[a] - u[a]).abs() <= 1e-15, "{name}: momentum {a}");
    }
    // The regularized part: (h − h^eq)/(1 − ω).
    let reg: Vec<f64> = (0..L::Q).map(|i| (h[i] - heq[i]) / (1.0 - omega)).collect();
    let (m2, m3, xyz) = moments23::<L>(&reg);
    let axes = if d3 { 3 } else { 2 };
    for a in 0..axes {
        for b in 0..axes {
            assert!((m2[a][b] - pi[a][b]).abs() <= 1e-15, "{name}: Π_{a}{b} {} vs {}", m2[a][b], pi[a][b]);
            if a != b {
                let want = 2.0 * u[a] * pi[a][b] + u[b] * pi[a][a];
                assert!((m3[a][b] - want).abs() <= 1e-15, "{name}: a_{a}{a}{b} {} vs {want}", m3[a][b]);
            }
        }
    }
    if L::Q == 27 {
        let want = u[0] * pi[1][2] + u[1] * pi[0][2] + u[2] * pi[0][1];
        assert!((xyz - want).abs() <= 1e-15, "{name}: a_xyz {xyz} vs {want}");
    }
    // Regularized input: RR is BGK on it (to round-off).
    let mut hr = heq;
    for i in 0..L::Q {
        hr[i] += reg[i];
    }
    let (mut a, mut b) = (hr, hr);
    Rr::collide::<L, f64>(&mut a, &p);
    bgk::<L, f64>(&mut b, omega);
    for i in 0..L::Q {
        assert!((a[i] - b[i]).abs() <= 1e-15, "{name}: RR vs BGK on a regularized population at {i}");
    }
    // With a body force: the momentum gains exactly F.
    let force = [2e-4, -1e-4, if d3 { 3e-4 } else { 0.0 }];
    let pf = StepParams::<f64> { force, ..p };
    let mut h = h0;
    Rr::collide::<L, f64>(&mut h, &pf);
    let (rho2, u2) = moments::<L, f64>(&h);
    for a in 0..3 {
        let gained = rho2 * u2[a] - rho0 * u[a];
        assert!((gained - force[a]).abs() <= 1e-15, "{name}: forced momentum gain {gained} vs {}", force[a]);
    }
}

#[test]
fn regularized_rebuilds_the_hydrodynamic_moments() {
    regularized::<D2Q9>();
    regularized::<D3Q19>();
    regularized::<D3Q27>();
}

/// Smagorinsky (1963) through the local stress (Hou et al. 1996): the relaxation time a
/// collision uses satisfies `τ = τ₀ + 3 ν_t` with `ν_t = C² |S|`, `|S| = √(2 S:S)` and the
/// strain rate of the same `τ`, `S = −Π/(2ρ c_s² τ)`; without the model the rates are the
/// level's. TRT keeps `Λ` per cell.
fn smagorinsky<L: VelocitySet>() {
    let name = L::NAME;
    let h0 = sample::<L>();
    let (rho, u) = moments::<L, f64>(&h0);
    let heq = equilibrium::<L, f64>(rho, u);
    let n0: Vec<f64> = (0..L::Q).map(|i| h0[i] - heq[i]).collect();
    let (pi, _, _) = moments23::<L>(&n0);
    let pi_norm = pi.iter().flatten().map(|x| x * x).sum::<f64>().sqrt();
    let (tau0, c) = (0.56, 0.17);
    let mut p = StepParams::<f64> { omega: 1.0 / tau0, omega_minus: 1.0 / tau0, ..Default::default() };
    assert!(!has_les(&p), "no model: the operators use the level's rates");
    p.smagorinsky = c * c;
    let (wp, wm) = les_rates::<L, f64>(&h0, &p);
    let tau = 1.0 / wp;
    let s_norm = 2f64.sqrt() * pi_norm / (2.0 * rho / 3.0 * tau);
    let nu_t = (tau - tau0) / 3.0;
    assert!(nu_t > 0.0, "{name}: eddy viscosity {nu_t}");
    assert!((nu_t - c * c * s_norm).abs() <= 1e-12 * nu_t, "{name}: ν_t {nu_t} vs C²|S| {}", c * c * s_norm);
    assert_eq!(wm, wp, "{name}: one-rate operators relax both parity parts alike");
    // TRT: Λ kept per cell.
    p.magic = 3.0 / 16.0;
    let (wp, wm) = les_rates::<L, f64>(&h0, &p);
    let (tp, tm) = (1.0 / wp, 1.0 / wm);
    assert!(((tp - 0.5) * (tm - 0.5) - 3.0 / 16.0).abs() <= 1e-13, "{name}: Λ per cell");
    // The square root used on both backends: correctly rounded, like std's.
    for x in [0.0, 1e-30, 2.0, 0.3, 12345.678, 1e20, 1e-310] {
        let r = ramus_kernels::les::sqrt(x);
        assert_eq!(r.to_bits(), x.sqrt().to_bits(), "sqrt({x}) = {r}");
    }
}

#[test]
fn smagorinsky_relaxation_time_is_self_consistent() {
    smagorinsky::<D2Q9>();
    smagorinsky::<D3Q19>();
    smagorinsky::<D3Q27>();
}
