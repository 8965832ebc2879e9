//! Storage precision of the distribution pool, independent of the arithmetic precision.
//!
//! The pool holds the *shifted* populations `h_i = f_i − w_i` (see [`crate::collide`]):
//! they are small, O(Ma² + non-equilibrium), so a 16-bit float keeps their relative error
//! at 2⁻¹¹ of the deviation from rest instead of the population itself (Lehmann et al.
//! 2022, "Accuracy and performance of the lattice Boltzmann method with 64-bit, 32-bit,
//! and customized 16-bit number formats", Phys. Rev. E 106, 015308: FP16S). Every kernel
//! that touches the pool reads through [`Storage::widen`] and writes through
//! [`Storage::narrow`] ([`crate::stream::load`], [`crate::stream::put`]); the
//! arithmetic stays in `F`.
//!
//! # Rounding
//! Round-to-nearest of a steady field makes the same error in the same cell at every
//! step, and where the field changes by less than a unit in the last place over many
//! cells those errors agree in sign: they act as a body force coherent over that region.
//! Measured on the Re = 1000 cavity (root 128², lid 0.1, BENCHMARKS.md): with plain
//! round-to-nearest-even the uniform grid matched f32 (Ghia deviation 0.0199 / 0.0170 vs
//! 0.0199 / 0.0167 U_lid) but four levels, whose fine cells take 8 steps per root step
//! and vary little from cell to cell, missed Ghia by 0.15 U_lid with a mass drift of
//! 1.8e-3. [`Half`] therefore rounds *stochastically* with a deterministic dither: the
//! value is offset by less than half a binary16 unit, by a hash of its bits and its pool
//! index, then rounded to nearest even, so that the error is unbiased and uncorrelated
//! from cell to cell (values of binary16 stay exact). Integer operations and one IEEE
//! conversion: the PTX `cvt.rn.f16.f32` (what `as f16` lowers to) on the GPU, the `half`
//! crate's on the CPU, both correctly rounded, so the backends stay bitwise equal.

use crate::memory::ArgBytes;
use crate::real::Real;

/// How the pool stores a population computed in `F`.
pub trait Storage<F: Real>: Copy + Send + Sync + 'static {
    /// Key of the storage in the kernel registry: empty for [`Native`] (the names of the
    /// `F`-storage entries stay as they were), `"f16"` for [`Half`].
    const NAME: &'static str;
    /// Bytes per population in the pool.
    const BYTES: usize = core::mem::size_of::<Self::Elem>();
    /// What one population occupies in the pool.
    type Elem: Copy
        + Send
        + Sync
        + Default
        + PartialEq
        + core::fmt::Debug
        + bytemuck::Pod
        + ArgBytes
        + crate::pairs::Paired
        + 'static;
    /// The stored value as an `F` (exact).
    fn widen(e: Self::Elem) -> F;
    /// `x` rounded to the storage, for index `salt` of the pool (the seed of
    /// [`Half`]'s dither; ignored by [`Native`]).
    fn narrow(x: F, salt: usize) -> Self::Elem;
}

/// The pool stores `F` itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Native;

impl<F: Real> Storage<F> for Native {
    const NAME: &'static str = "";
    type Elem = F;
    #[inline(always)]
    fn widen(e: F) -> F {
        e
    }
    #[inline(always)]
    fn narrow(x: F, _salt: usize) -> F {
        x
    }
}

/// IEEE 754 binary16 storage of `f32` arithmetic (FluidX3D's FP16S): half the memory
/// traffic of `f32`. The pool holds the bit patterns as `u16`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Half;

impl Storage<f32> for Half {
    const NAME: &'static str = "f16";
    type Elem = u16;
    #[inline(always)]
    fn widen(e: u16) -> f32 {
        #[cfg(target_arch = "nvptx64")]
        {
            f16::from_bits(e) as f32
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            half::f16::from_bits(e).to_f32()
        }
    }
    #[inline(always)]
    fn narrow(x: f32, salt: usize) -> u16 {
        round_to_nearest_even(dithered(x, salt))
    }
}

/// Bits of the `f32` magnitudes whose binary16 is normal and far from overflow: the
/// smallest normal binary16, 2⁻¹⁴, and 2¹⁵ (the populations are below 2).
const DITHER_FROM: u32 = 0x3880_0000;
const DITHER_TO: u32 = 0x4700_0000;

/// `x` offset by an odd multiple of 2⁻¹³ binary16 units in (−½, ½) units, chosen by a
/// hash of `x`'s bits and `salt`: rounding the result to nearest rounds `x` up with a
/// probability that grows with its distance from the value below (stochastic rounding)
/// and leaves binary16 values unchanged (the offset never reaches a tie). Only for
/// binary16's normal range (for a normal binary16 the `f32` significand keeps 13 bits
/// more, and the magnitude's bits are monotonic across binades); the rest as is.
#[inline(always)]
fn dithered(x: f32, salt: usize) -> f32 {
    let b = x.to_bits();
    // The magnitude in [DITHER_FROM, DITHER_TO), tested on the bits shifted past the sign
    // (one shift-and-add and a compare instead of a mask, an add and a compare).
    if (b << 1).wrapping_sub(DITHER_FROM << 1) >= (DITHER_TO - DITHER_FROM) << 1 {
        return x;
    }
    // Fibonacci hashing (Knuth, TAOCP vol. 3, §6.4): the top bits of the product with
    // 2³²/φ spread consecutive indices evenly. One multiply: a full integer mix (three
    // multiplies) cost 21 % of the f16 D3Q19 step's throughput on the H100, this one 9 %
    // (BENCHMARKS.md, twelfth session).
    let h = (b ^ salt as u32).wrapping_mul(0x9e37_79b9);
    // 12 bits → −4095, −4093, …, 4095 (units of 2⁻¹³ binary16 units): never ±½.
    let offset = ((h >> 20) << 1) as i32 - 4095;
    // Added to the whole pattern, it moves the magnitude and keeps the sign: in this range
    // the magnitude stays within (0, 2³¹) and no carry reaches the sign bit.
    f32::from_bits(b.wrapping_add_signed(offset))
}

/// The binary16 nearest to `x`, ties to even (IEEE 754-2019 §4.3.1).
#[inline(always)]
fn round_to_nearest_even(x: f32) -> u16 {
    #[cfg(target_arch = "nvptx64")]
    {
        (x as f16).to_bits()
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        half::f16::from_f32(x).to_bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn narrow(x: f32, salt: usize) -> u16 {
        <Half as Storage<f32>>::narrow(x, salt)
    }
    fn widen(e: u16) -> f32 {
        <Half as Storage<f32>>::widen(e)
    }

    /// The conversion under the dither is round to nearest, ties to even (IEEE 754-2019
    /// §4.3.1), at the binary16 precision of 11 significant bits: the spacing at 1 is 2⁻¹⁰.
    #[test]
    fn conversion_rounds_to_nearest_even() {
        let ulp = 2f32.powi(-10);
        // Ties: 1 + ulp/2 lies between 1 (even) and 1 + ulp (odd) → 1.
        assert_eq!(round_to_nearest_even(1.0 + ulp / 2.0), 0x3c00);
        // 1 + 3ulp/2 lies between 1 + ulp (odd) and 1 + 2ulp (even) → 1 + 2ulp.
        assert_eq!(round_to_nearest_even(1.0 + 1.5 * ulp), 0x3c02);
        assert_eq!(round_to_nearest_even(1.0 + ulp / 2.0 + ulp / 64.0), 0x3c01);
        // Subnormals (2⁻²⁴ is the smallest) and overflow to infinity.
        assert_eq!(round_to_nearest_even(2f32.powi(-24)), 0x0001);
        assert_eq!(round_to_nearest_even(-2f32.powi(-24)), 0x8001);
        assert_eq!(round_to_nearest_even(65520.0), 0x7c00);
        assert_eq!(round_to_nearest_even(65519.0), 0x7bff);
    }

    /// Widening is exact, and a binary16 value is stored unchanged whatever the dither.
    #[test]
    fn binary16_values_are_stored_exactly() {
        for bits in 0..=u16::MAX {
            let x = widen(bits);
            if x.is_finite() {
                for salt in [0, 1, 12_345, usize::MAX] {
                    assert_eq!(narrow(x, salt), bits, "{bits:#06x}");
                }
            }
        }
    }

    /// Every stored value is one of the two binary16 neighbours of `x`, and over many
    /// indices the mean of the stored values is `x` (the rounding is unbiased), to the
    /// statistical error of the sample: with n = 2¹⁶ draws of a two-valued variable
    /// one unit apart, the standard error of the mean is at most ½/√n = 2⁻⁹ units.
    #[test]
    fn dithered_rounding_is_unbiased_between_neighbours() {
        let ulp = 2f64.powi(-10 - 5); // binary16 spacing in [2⁻⁵, 2⁻⁴)
        for frac in [0.1, 0.25, 0.5, 0.75, 0.9] {
            let lo = widen(round_to_nearest_even(0.04)) as f64;
            let (x, hi) = ((lo + frac * ulp) as f32, lo + ulp);
            let n = 1usize << 16;
            let mut sum = 0.0;
            for k in 0..n {
                let v = widen(narrow(x, k)) as f64;
                assert!(v == lo || v == hi, "{v} is not a neighbour of {x}");
                sum += v;
            }
            let bias = (sum / n as f64 - x as f64) / ulp;
            assert!(bias.abs() < 4.0 * 2f64.powi(-9), "fraction {frac}: mean off by {bias} units");
        }
    }

    /// The offset added to the whole bit pattern equals the offset added to the
    /// magnitude with the sign put back (the form the dither is specified in), at every
    /// magnitude of the dithered range's ends and at values spread over it, both signs.
    #[test]
    fn dither_moves_the_magnitude_and_keeps_the_sign() {
        let by_magnitude = |x: f32, salt: usize| -> f32 {
            let b = x.to_bits();
            let mag = b & 0x7fff_ffff;
            if !(DITHER_FROM..DITHER_TO).contains(&mag) {
                return x;
            }
            let h = (b ^ salt as u32).wrapping_mul(0x9e37_79b9);
            let offset = ((h >> 20) << 1) as i32 - 4095;
            f32::from_bits((b & 0x8000_0000) | (mag as i32 + offset) as u32)
        };
        let ends = [DITHER_FROM - 1, DITHER_FROM, DITHER_FROM + 1, DITHER_TO - 1, DITHER_TO];
        let spread = (0..4096u32).map(|k| DITHER_FROM + k * ((DITHER_TO - DITHER_FROM) / 4096));
        let small = (0..256u32).map(|k| k * 0x0100_0001);
        for mag in ends.into_iter().chain(spread).chain(small).chain([0x7f80_0000, 0x7fc0_0000]) {
            for sign in [0, 0x8000_0000] {
                let x = f32::from_bits(sign | mag);
                for salt in [0, 1, 77, 123_456_789, usize::MAX] {
                    let (a, b) = (dithered(x, salt).to_bits(), by_magnitude(x, salt).to_bits());
                    assert_eq!(a, b, "{mag:#010x} sign {sign:#x} salt {salt}");
                }
            }
        }
    }

    /// Values outside binary16's normal range are rounded to nearest without a dither.
    #[test]
    fn subnormal_and_large_values_round_to_nearest() {
        for x in [1e-6f32, -3e-7, 1e-9, 40000.0, 1e6, f32::INFINITY] {
            assert_eq!(narrow(x, 7), round_to_nearest_even(x), "{x}");
        }
        assert!(widen(narrow(f32::NAN, 3)).is_nan());
    }
}
