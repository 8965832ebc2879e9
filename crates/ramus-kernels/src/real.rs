//! Floating-point precision of the distributions: `f32` or `f64`.

use core::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};

/// A floating-point type the kernels can run in.
///
/// Deliberately small: the kernels need the four operations and conversions only, so
/// that the same arithmetic compiles for the CPU and for `nvptx64` without `libm`.
pub trait Real:
    Copy
    + Send
    + Sync
    + Default
    + PartialOrd
    + core::fmt::Debug
    + bytemuck::Pod
    + crate::memory::ArgBytes
    + crate::pairs::Paired
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + 'static
{
    /// Name used in file output and as the precision's key in the kernel registry (`"f32"`, `"f64"`).
    const NAME: &'static str;
    const ZERO: Self;
    const ONE: Self;
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
}

macro_rules! impl_real {
    ($t:ty, $name:literal) => {
        impl Real for $t {
            const NAME: &'static str = $name;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline(always)]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    };
}
impl_real!(f32, "f32");
impl_real!(f64, "f64");
