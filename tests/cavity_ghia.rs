use ramus::cases::cavity::{Cavity, Centerlines};
use ramus::{Backend, Forest, D2, D2Q9};
use std::time::Instant;

struct Reference {
    coords: Vec<f64>,
    values: Vec<f64>,
}

fn read_column(file: &str, column: &str) -> Reference {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| h.trim() == column).unwrap();
    let mut r = Reference { coords: vec![], values: vec![] };
    for l in lines {
        let f: Vec<f64> = l.split(',').map(|x| x.trim().parse().unwrap()).collect();
        r.coords.push(f[0]);
        r.values.push(f[col]);
    }
    r
}

fn dev(c: &Centerlines, re: u32) -> (f64, f64) {
    let u = read_column("ghia1982_u_vertical_centerline.csv", &format!("u_Re{re}"));
    let v = read_column("ghia1982_v_horizontal_centerline.csv", &format!("v_Re{re}"));
    let mut du: f64 = 0.0;
    for (y, uu) in u.coords.iter().zip(&u.values) {
        if *y > 0.0 && *y < 1.0 {
            du = du.max((c.u.at(*y) - uu).abs());
        }
    }
    let mut dv: f64 = 0.0;
    for (x, vv) in v.coords.iter().zip(&v.values) {
        if *x > 0.0 && *x < 1.0 && !(re == 400 && (*x - 0.9063).abs() < 1e-6) {
            dv = dv.max((c.v.at(*x) - vv).abs());
        }
    }
    (du, dv)
}

#[test]
fn explore() {
    let re: u32 = std::env::var("RE").unwrap().parse().unwrap();
    let lid: f64 = std::env::var("LID").unwrap().parse().unwrap();
    let n: usize = std::env::var("N").map(|s| s.parse().unwrap()).unwrap_or(128);
    let chunk: f64 = std::env::var("CHUNK").unwrap().parse().unwrap();
    let total: f64 = std::env::var("PASSES").unwrap().parse().unwrap();
    let cavity = Cavity { dim: 2, n, re: re as f64, lid };
    let cfg = cavity.forest_config(Backend::Cpu).unwrap();
    let mut forest = Forest::<D2, D2Q9, f64>::new(cfg).unwrap();
    println!("tau = {}", forest.tau());
    let t0 = Instant::now();
    let mut passes = 0.0;
    let mut prev: Option<Centerlines> = None;
    while passes < total - 1e-9 {
        forest.advance(cavity.steps_for_passes(chunk)).unwrap();
        passes += chunk;
        let c = cavity.centerlines(&forest.fields().unwrap());
        let (du, dv) = dev(&c, re);
        let change = prev.as_ref().map(|p| {
            p.u.values.iter().zip(&c.u.values).chain(p.v.values.iter().zip(&c.v.values)).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max)
        });
        println!("passes {passes:5.1}  t={:6.1}s  du={du:.4} dv={dv:.4}  change={change:?}", t0.elapsed().as_secs_f64());
        prev = Some(c);
    }
}
