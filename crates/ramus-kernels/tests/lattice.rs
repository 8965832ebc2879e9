//! Properties of the velocity sets and of the discrete equilibrium.
//!
//! Every check is written once, generic over `L: VelocitySet`, and run for D2Q9, D3Q19
//! and D3Q27. The moment identities are what makes the lattice Boltzmann method recover
//! Navier–Stokes (isotropy up to 4th order, c_s² = 1/3); the equilibrium checks verify
//! that `collide::equilibrium` has exactly the moments ρ, ρu and ρ c_s² δ + ρ u u.

use ramus_kernels::collide::{equilibrium, moments, unshift};
use ramus_kernels::lattice::CS2;
use ramus_kernels::{Dim, VelocitySet, D2Q9, D3Q19, D3Q27};

/// Sums of a handful of exact dyadic weights: only round-off of a few additions.
const TOL_MOMENT: f64 = 1e-15;
/// Equilibrium moments to round-off (acceptance: ≤ 1e-14 relative).
const TOL_EQ: f64 = 1e-14;

fn c<L: VelocitySet>(i: usize) -> [f64; 3] {
    L::C[i].map(f64::from)
}

fn delta(a: usize, b: usize) -> f64 {
    if a == b {
        1.0
    } else {
        0.0
    }
}

/// Axes the set lives on (moments along the unused third axis of a 2D set all vanish and
/// would spoil the isotropy formulas).
fn axes<L: VelocitySet>() -> usize {
    <L::Dim as Dim>::D
}

fn check_shape<L: VelocitySet>() {
    let name = L::NAME;
    assert_eq!(L::C.len(), L::Q, "{name}: C has Q entries");
    assert_eq!(L::W.len(), L::Q, "{name}: W has Q entries");
    assert_eq!(L::C[0], [0, 0, 0], "{name}: direction 0 is the rest velocity");
    for i in 0..L::Q {
        assert!(L::W[i] > 0.0, "{name}: weight w_{i} = {} must be positive", L::W[i]);
        assert!(
            L::C[i].iter().all(|&x| (-1..=1).contains(&x)),
            "{name}: c_{i} = {:?} has components outside -1..=1",
            L::C[i]
        );
        if axes::<L>() == 2 {
            assert_eq!(L::C[i][2], 0, "{name}: c_{i} = {:?} has a third component in 2D", L::C[i]);
        }
        for j in 0..i {
            assert_ne!(L::C[i], L::C[j], "{name}: c_{i} and c_{j} coincide");
        }
    }
    let mut visited = Vec::new();
    L::unroll(|i| visited.push(i));
    assert_eq!(visited, (0..L::Q).collect::<Vec<_>>(), "{name}: unroll visits 0..Q in order");
}

fn check_opposites<L: VelocitySet>() {
    let name = L::NAME;
    for i in 0..L::Q {
        let o = L::opposite(i);
        assert!(o < L::Q, "{name}: opposite({i}) = {o} out of range");
        assert_eq!(L::C[o], L::C[i].map(|x| -x), "{name}: c[opposite({i})] = -c[{i}]");
        assert_eq!(L::opposite(o), i, "{name}: opposite(opposite({i})) = {i}");
        assert_eq!(L::W[o], L::W[i], "{name}: w[opposite({i})] = w[{i}]");
    }
}

fn check_weight_moments<L: VelocitySet>() {
    let name = L::NAME;
    let d = axes::<L>();
    let q = L::Q;
    let w = L::W;

    let m0: f64 = w.iter().sum();
    assert!((m0 - 1.0).abs() <= TOL_MOMENT, "{name}: Σ w = {m0}, expected 1");

    for a in 0..3 {
        let m1: f64 = (0..q).map(|i| w[i] * c::<L>(i)[a]).sum();
        assert!(m1.abs() <= TOL_MOMENT, "{name}: Σ w c_{a} = {m1}, expected 0");
    }

    for a in 0..d {
        for b in 0..d {
            let m2: f64 = (0..q).map(|i| w[i] * c::<L>(i)[a] * c::<L>(i)[b]).sum();
            let expected = CS2 * delta(a, b);
            assert!((m2 - expected).abs() <= TOL_MOMENT, "{name}: Σ w c_{a} c_{b} = {m2}, expected {expected}");
        }
    }

    for a in 0..d {
        for b in 0..d {
            for g in 0..d {
                let m3: f64 = (0..q).map(|i| w[i] * c::<L>(i)[a] * c::<L>(i)[b] * c::<L>(i)[g]).sum();
                assert!(m3.abs() <= TOL_MOMENT, "{name}: Σ w c_{a} c_{b} c_{g} = {m3}, expected 0");
            }
        }
    }

    for a in 0..d {
        for b in 0..d {
            for g in 0..d {
                for e in 0..d {
                    let m4: f64 = (0..q)
                        .map(|i| {
                            let ci = c::<L>(i);
                            w[i] * ci[a] * ci[b] * ci[g] * ci[e]
                        })
                        .sum();
                    let expected =
                        CS2 * CS2 * (delta(a, b) * delta(g, e) + delta(a, g) * delta(b, e) + delta(a, e) * delta(b, g));
                    assert!(
                        (m4 - expected).abs() <= TOL_MOMENT,
                        "{name}: Σ w c_{a} c_{b} c_{g} c_{e} = {m4}, expected {expected}"
                    );
                }
            }
        }
    }
}

/// SplitMix64: a tiny deterministic generator, so the test needs no extra dependency and
/// always draws the same states.
struct SplitMix(u64);

impl SplitMix {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }
}

/// States (ρ, u) to test the equilibrium with: a few edge cases, then random ones within
/// the range the solver accepts (ρ around 1, |u_a| < 0.3).
fn states(dim: usize) -> Vec<(f64, [f64; 3])> {
    let mut out = vec![(1.0, [0.0; 3]), (1.0, [0.1, 0.0, 0.0]), (0.5, [0.0, -0.2, 0.0]), (2.0, [0.05, 0.05, 0.05])];
    let mut rng = SplitMix(0x5eed_1982);
    for _ in 0..64 {
        let rho = rng.uniform(0.5, 2.0);
        let mut u = [0.0; 3];
        for ua in u.iter_mut().take(dim) {
            *ua = rng.uniform(-0.25, 0.25);
        }
        out.push((rho, u));
    }
    for s in &mut out {
        for a in dim..3 {
            s.1[a] = 0.0;
        }
    }
    out
}

fn check_equilibrium<L: VelocitySet>() {
    let name = L::NAME;
    let d = axes::<L>();
    for (rho, u) in states(d) {
        // The kernels store populations shifted by their weights (h = f − w); the
        // moments below are those of f = h + w.
        let heq = equilibrium::<L, f64>(rho, u);
        let unshifted: Vec<f64> = (0..L::Q).map(|i| unshift::<L, f64>(i, heq[i])).collect();
        let f = unshifted.as_slice();
        assert_eq!(f.len(), L::Q, "{name}: equilibrium has Q entries");

        // Relative to ρ: every moment below scales with ρ, and |u| < 1.
        let scale = rho;
        let m0: f64 = f.iter().sum();
        assert!((m0 - rho).abs() <= TOL_EQ * scale, "{name}: Σ f^eq = {m0}, expected ρ = {rho} (u = {u:?})");
        for a in 0..3 {
            let m1: f64 = (0..L::Q).map(|i| f[i] * c::<L>(i)[a]).sum();
            let expected = rho * u[a];
            assert!(
                (m1 - expected).abs() <= TOL_EQ * scale,
                "{name}: Σ f^eq c_{a} = {m1}, expected ρu_{a} = {expected} (ρ = {rho}, u = {u:?})"
            );
        }
        for a in 0..d {
            for b in 0..d {
                let pi: f64 = (0..L::Q).map(|i| f[i] * c::<L>(i)[a] * c::<L>(i)[b]).sum();
                let expected = rho * CS2 * delta(a, b) + rho * u[a] * u[b];
                assert!(
                    (pi - expected).abs() <= TOL_EQ * scale,
                    "{name}: Π^eq_{a}{b} = {pi}, expected ρ c_s² δ + ρ u u = {expected} (ρ = {rho}, u = {u:?})"
                );
            }
        }

        // `moments` is the inverse of `equilibrium` on (ρ, u).
        let (rho2, u2) = moments::<L, f64>(&heq);
        assert!((rho2 - rho).abs() <= TOL_EQ * scale, "{name}: moments(f^eq).ρ = {rho2}, expected {rho}");
        for a in 0..3 {
            assert!(
                (u2[a] - u[a]).abs() <= TOL_EQ,
                "{name}: moments(f^eq).u_{a} = {}, expected {} (ρ = {rho})",
                u2[a],
                u[a]
            );
        }
    }
}

fn check_all<L: VelocitySet>() {
    check_shape::<L>();
    check_opposites::<L>();
    check_weight_moments::<L>();
    check_equilibrium::<L>();
}

#[test]
fn d2q9() {
    assert_eq!(D2Q9::Q, 9);
    check_all::<D2Q9>();
}

#[test]
fn d3q19() {
    assert_eq!(D3Q19::Q, 19);
    check_all::<D3Q19>();
}

#[test]
fn d3q27() {
    assert_eq!(D3Q27::Q, 27);
    check_all::<D3Q27>();
}

/// The diagonal third moment is where the lattice departs from the Maxwellian: since
/// `c_a ∈ {-1, 0, 1}`, `c_a³ = c_a` and `Σ f^eq c_a³ = ρ u_a`, whereas the continuum gives
/// `ρ (3 c_s² u_a + u_a³) = ρ (u_a + u_a³)`. The missing `ρ u_a³` is the known O(Ma³)
/// error of the BGK model; pinning it catches a silent change of the velocity sets or of
/// the equilibrium's order.
#[test]
fn equilibrium_diagonal_third_moment() {
    fn check<L: VelocitySet>() {
        for (rho, u) in states(axes::<L>()) {
            let feq = equilibrium::<L, f64>(rho, u);
            for (a, &ua) in u.iter().enumerate().take(axes::<L>()) {
                let m3: f64 = (0..L::Q).map(|i| feq[i] * c::<L>(i)[a].powi(3)).sum();
                let expected = rho * ua;
                assert!(
                    (m3 - expected).abs() <= TOL_EQ * rho,
                    "{}: Σ f^eq c_{a}³ = {m3}, expected ρ u_{a} = {expected}",
                    L::NAME
                );
            }
        }
    }
    check::<D2Q9>();
    check::<D3Q19>();
    check::<D3Q27>();
}
