//! PTX entry points of the cooperative vorticity criterion
//! ([`crate::criterion::vorticity_mark_cooperative`]), per (velocity set, precision) and
//! AA parity, named after the CPU kernel [`crate::criterion::VorticityMarkSerial`] (a
//! test of the host crate checks every name): the host launches them
//! with `CRITERION_CTA` threads and `CRITERION_SHARED_BYTES` of shared memory per CTA.

use super::Nv;
use crate::criterion::{vorticity_mark_cooperative, CriterionArgs};
use crate::lattice::{D2Q9, D3Q19, D3Q27};

macro_rules! criterion_entries {
    ($($entry:ident => $l:ty, $f:ty, $odd:literal;)*) => {$(
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $entry(args: CriterionArgs<$f>) {
            vorticity_mark_cooperative::<Nv, $l, $f, $odd>(&Nv, &args)
        }
    )*};
}

criterion_entries! {
    vorticity_mark_even_d2q9_f32 => D2Q9, f32, false;
    vorticity_mark_odd_d2q9_f32 => D2Q9, f32, true;
    vorticity_mark_even_d2q9_f64 => D2Q9, f64, false;
    vorticity_mark_odd_d2q9_f64 => D2Q9, f64, true;
    vorticity_mark_even_d3q19_f32 => D3Q19, f32, false;
    vorticity_mark_odd_d3q19_f32 => D3Q19, f32, true;
    vorticity_mark_even_d3q19_f64 => D3Q19, f64, false;
    vorticity_mark_odd_d3q19_f64 => D3Q19, f64, true;
    vorticity_mark_even_d3q27_f32 => D3Q27, f32, false;
    vorticity_mark_odd_d3q27_f32 => D3Q27, f32, true;
    vorticity_mark_even_d3q27_f64 => D3Q27, f64, false;
    vorticity_mark_odd_d3q27_f64 => D3Q27, f64, true;
}
