//! The built-in shapes' geometry (`ramus_kernels::shape`): where a link first meets a
//! shape's solid (the `q` of interpolated bounce-back), against closed-form values and a
//! brute-force march along random links; surface velocities of a rotating shape; and a
//! cylinder along z in 3D carrying a Taylor–Couette flow.

use ramus::kernels::shape::{Shapes, SHAPE_BOX, SHAPE_CYLINDER, SHAPE_OUTSIDE, SHAPE_SPHERE};
use ramus::{Backend, Boundary, Face, Fluid, Forest, ForestConfig, Obstacle, Shape, Walls, D3, D3Q19};

/// Round-off of a few operations on numbers of order 10.
const TOL: f64 = 1e-12;

fn one(kind: u32, p: [f64; 6]) -> Shapes {
    let mut s = Shapes { count: 1, ..Shapes::default() };
    s.kind[0] = kind;
    s.p[0] = p;
    s
}

fn q(s: &Shapes, x: [f64; 3], d: [f64; 3], dim: usize) -> f64 {
    s.link_wall(x, d, dim).expect("the link meets the solid").0
}

#[test]
fn link_crossings_in_closed_form() {
    // Circle of radius 3 about (10, 10): straight and diagonal links.
    let c = one(SHAPE_SPHERE, [10.0, 10.0, 0.0, 3.0, 0.0, 0.0]);
    assert!((q(&c, [6.5, 10.0, 0.0], [1.0, 0.0, 0.0], 2) - 0.5).abs() < TOL);
    assert!((q(&c, [6.9, 10.0, 0.0], [1.0, 0.0, 0.0], 2) - 0.1).abs() < TOL);
    let r = 3.0 / 2f64.sqrt(); // the diagonal meets the circle at (10 − r, 10 − r)
    let x0 = 10.0 - r - 0.3;
    assert!((q(&c, [x0, x0, 0.0], [1.0, 1.0, 0.0], 2) - 0.3).abs() < TOL);
    assert!(c.link_wall([5.0, 10.0, 0.0], [1.0, 0.0, 0.0], 2).is_none(), "stops short of the circle");
    // The container outside a circle of radius 5: the link leaves it at x = 15.
    let o = one(SHAPE_SPHERE | SHAPE_OUTSIDE, [10.0, 10.0, 0.0, 5.0, 0.0, 0.0]);
    assert!((q(&o, [14.7, 10.0, 0.0], [1.0, 0.0, 0.0], 2) - 0.3).abs() < TOL);
    assert!(o.link_wall([12.0, 10.0, 0.0], [1.0, 0.0, 0.0], 2).is_none(), "stays inside the container");
    // Box [2, 4]²: a face and a corner.
    let b = one(SHAPE_BOX, [2.0, 2.0, 0.0, 4.0, 4.0, 0.0]);
    assert!((q(&b, [1.25, 3.0, 0.0], [1.0, 0.0, 0.0], 2) - 0.75).abs() < TOL);
    assert!((q(&b, [1.5, 1.5, 0.0], [1.0, 1.0, 0.0], 2) - 0.5).abs() < TOL);
    // Cylinder along x (axis 0), radius 2, half-length 3, about (8, 8, 8): the mantle,
    // a cap, and a link along the axis inside the radius.
    let y = one(SHAPE_CYLINDER, [8.0, 8.0, 8.0, 2.0, 0.0, 3.0]);
    assert!((q(&y, [8.0, 5.5, 8.0], [0.0, 1.0, 0.0], 3) - 0.5).abs() < TOL);
    assert!((q(&y, [4.5, 8.0, 8.0], [1.0, 0.0, 0.0], 3) - 0.5).abs() < TOL);
    assert!((q(&y, [4.8, 9.0, 8.5], [1.0, 0.0, 0.0], 3) - 0.2).abs() < TOL);
    assert!(y.link_wall([4.5, 10.5, 8.0], [1.0, 0.0, 0.0], 3).is_none(), "passes beside the mantle");
    // Along z in 2D it is a disc.
    let z = one(SHAPE_CYLINDER, [10.0, 10.0, 0.0, 3.0, 2.0, 1.0]);
    assert!((q(&z, [6.9, 10.0, 0.0], [1.0, 0.0, 0.0], 2) - 0.1).abs() < TOL);
    assert!(z.contains([10.0, 12.9, 0.0], 2) && !z.contains([10.0, 13.1, 0.0], 2));
}

/// A small deterministic generator (no dependency): uniform in `[0, 1)`.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn link_crossings_match_a_march_along_random_links() {
    // Two shapes of every kind, some of them containers; links of length up to √3 from
    // fluid points. Marching in 2·10⁴ steps finds the first solid point to 5e-5 of the link.
    let mut rng = Lcg(7);
    let mut checked = 0;
    for trial in 0..400 {
        let dim = if trial % 2 == 0 { 2 } else { 3 };
        let mut s = Shapes { count: 2, ..Shapes::default() };
        for k in 0..2 {
            let c = [4.0 + 4.0 * rng.next(), 4.0 + 4.0 * rng.next(), 4.0 + 4.0 * rng.next()];
            let kind = [SHAPE_BOX, SHAPE_SPHERE, SHAPE_CYLINDER][(rng.next() * 3.0) as usize];
            let r = 0.5 + 2.0 * rng.next();
            s.p[k] = match kind {
                SHAPE_BOX => [c[0] - r, c[1] - 0.7 * r, c[2] - 1.3 * r, c[0] + r, c[1] + 0.7 * r, c[2] + 1.3 * r],
                SHAPE_SPHERE => [c[0], c[1], c[2], r, 0.0, 0.0],
                _ => [c[0], c[1], c[2], r, (rng.next() * 3.0).floor(), 1.0 + 2.0 * rng.next()],
            };
            s.kind[k] = kind | if k == 1 && trial % 5 == 0 { SHAPE_OUTSIDE } else { 0 };
        }
        for _ in 0..20 {
            let x = [12.0 * rng.next(), 12.0 * rng.next(), if dim == 3 { 12.0 * rng.next() } else { 0.0 }];
            if s.contains(x, dim) {
                continue;
            }
            let d = [
                (rng.next() * 3.0).floor() - 1.0,
                (rng.next() * 3.0).floor() - 1.0,
                if dim == 3 { (rng.next() * 3.0).floor() - 1.0 } else { 0.0 },
            ];
            if d == [0.0; 3] {
                continue;
            }
            let steps = 20_000;
            let first = (1..=steps)
                .map(|k| k as f64 / steps as f64)
                .find(|&t| s.contains([x[0] + t * d[0], x[1] + t * d[1], x[2] + t * d[2]], dim));
            let got = s.link_wall(x, d, dim).map(|(q, _)| q);
            match (first, got) {
                (None, None) => {}
                (Some(t), Some(q)) => {
                    assert!((t - q).abs() <= 1.0 / steps as f64 + TOL, "{s:?} from {x:?} along {d:?}: q {q}, march {t}")
                }
                // A link that grazes a surface between two march points.
                (None, Some(q)) => assert!(q > 0.0, "{s:?} from {x:?} along {d:?}: q {q}, march finds no solid"),
                (Some(t), None) => panic!("{s:?} from {x:?} along {d:?}: march finds solid at {t}, q none"),
            }
            checked += 1;
        }
    }
    assert!(checked > 4000, "{checked} links checked");
}

#[test]
fn surface_velocity_of_a_rotating_shape() {
    let mut s = one(SHAPE_SPHERE, [10.0, 10.0, 10.0, 3.0, 0.0, 0.0]);
    s.motion[0] = [0.01, 0.0, 0.0, 0.0, 0.0, 0.002];
    let u = s.velocity(0, [13.0, 10.0, 10.0]);
    assert!((u[0] - 0.01).abs() < TOL && (u[1] - 0.006).abs() < TOL && u[2].abs() < TOL, "{u:?}");
    // A box turns about its midpoint.
    let mut b = one(SHAPE_BOX, [0.0, 0.0, 0.0, 4.0, 2.0, 2.0]);
    b.motion[0] = [0.0, 0.0, 0.0, 0.001, 0.0, 0.0];
    let u = b.velocity(0, [2.0, 1.0, 2.0]);
    assert!(u[0].abs() < TOL && (u[1] + 0.001).abs() < TOL && u[2].abs() < TOL, "{u:?}");
}

/// Taylor–Couette flow between cylinders along z in a D3Q19 box periodic in z: the same
/// flow as `tests/taylor_couette.rs`'s 2D cell at n = 32 (0.73 % there), through the 3D
/// path (the cylinder shape, 3D links, the z-periodic neighbours). The cylinders run
/// through the periodic faces: links that cross them meet the infinite cylinders.
#[test]
fn taylor_couette_between_cylinders_along_z() {
    let n = 32;
    let (c, r1, r2) = ([16.0, 16.0, 4.0], 6.4, 12.8);
    let omega = 0.01 / r1;
    let cylinder = |radius| Shape::Cylinder { center: c, radius, axis: ramus::Axis::Z, length: 64.0 };
    let config = ForestConfig::new([n, n, 8])
        .boundary(Face::ZMin, Boundary::Periodic)
        .boundary(Face::ZMax, Boundary::Periodic)
        .fluid(Fluid::Viscosity { nu: 0.1 })
        .obstacle(Obstacle::from(cylinder(r1)).rotating([0.0, 0.0, omega]))
        .obstacle(Obstacle::outside(cylinder(r2)))
        .walls(Walls::Interpolated)
        .backend(Backend::Cpu);
    let mut forest = Forest::<D3, D3Q19, f64>::new(config).expect("forest");
    forest.advance(582).expect("advance");
    let cells = forest.leaf_cells().expect("cells");
    let (a, b) = (-omega * r1 * r1 / (r2 * r2 - r1 * r1), omega * r1 * r1 * r2 * r2 / (r2 * r2 - r1 * r1));
    let (mut err2, mut ref2, mut uz) = (0.0, 0.0, 0.0f64);
    for k in 0..cells.len() {
        let (x, y) = (cells.center[k][0] - c[0], cells.center[k][1] - c[1]);
        let r = x.hypot(y);
        if cells.solid[k] || r <= r1 || r >= r2 {
            continue;
        }
        let u = cells.u[k];
        let exact = a * r + b / r;
        err2 += ((-u[0] * y + u[1] * x) / r - exact).powi(2);
        ref2 += exact * exact;
        uz = uz.max(u[2].abs());
    }
    let l2 = (err2 / ref2).sqrt();
    let torque = forest.torque(0).expect("torque")[2] / 8.0;
    let exact = -4.0 * std::f64::consts::PI * 0.1 * omega * r1 * r1 * r2 * r2 / (r2 * r2 - r1 * r1);
    println!(
        "3D Taylor–Couette n = 32: L2 {l2:.3e}, max |u_z| {uz:.1e}, torque per unit length {:+.3e}",
        torque / exact - 1.0
    );
    assert!(l2 < 1e-2, "L2 error {l2}");
    assert!(uz < 1e-12, "the flow stays in the plane: |u_z| = {uz}");
    assert!((torque / exact - 1.0).abs() < 1e-2, "torque {torque} against {exact}");
}
