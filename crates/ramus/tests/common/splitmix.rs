//! SplitMix64 (Steele, Lea & Flood 2014, "Fast splittable pseudorandom number
//! generators"): a small deterministic generator for test data, shared by the test files
//! that draw random IDs, flags and marks (`#[path]`-included; each uses part of it).

#![allow(dead_code)]

/// SplitMix64 state; `Rng(seed)` starts a sequence.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The high 32 bits of [`Self::next`].
    pub fn u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }

    /// Uniform in `0..m` (multiply-shift, no modulo bias worth speaking of for tests).
    pub fn below(&mut self, m: u32) -> u32 {
        ((self.u32() as u64 * m as u64) >> 32) as u32
    }

    /// True with probability `pct` percent.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.next() % 100 < pct
    }
}
