//! Device-parallel primitives of the AMR routine (paper, section "Refinement and
//! Coarsening": Thrust's `count_if`, exclusive scan, `copy_if`, `sort_by_key`, `unique`,
//! `scatter`, `remove_if`, `reduce`).
//!
//! PRELIMINARY: CPU paths only; the CUDA paths follow.

use super::device::{Buffer, Device, Elem};
use crate::error::{Error, Result};

/// Reusable temporaries of the primitives (grown on demand, never shrunk).
pub struct Scratch {
    _private: (),
}

impl Scratch {
    /// Empty temporaries for `dev`.
    pub fn new(_dev: &Device) -> Scratch {
        Scratch { _private: () }
    }
}

fn host<T>(b: &Buffer<T>) -> Result<&Vec<T>> {
    match b {
        Buffer::Host(v) => Ok(v),
        _ => Err(Error::Cuda { context: "primitives".into(), message: "CUDA path not implemented yet".into() }),
    }
}

fn host_mut<T>(b: &mut Buffer<T>) -> Result<&mut Vec<T>> {
    match b {
        Buffer::Host(v) => Ok(v),
        _ => Err(Error::Cuda { context: "primitives".into(), message: "CUDA path not implemented yet".into() }),
    }
}

/// `output[i] = Σ_{j<i} input[j]` (wrapping u32) for `i < n`; returns the exact total.
pub fn exclusive_scan(_dev: &Device, _s: &mut Scratch, input: &Buffer<u32>, n: usize, output: &mut Buffer<u32>) -> Result<u64> {
    let i = host(input)?;
    let o = host_mut(output)?;
    let mut acc = 0u64;
    for k in 0..n {
        o[k] = acc as u32;
        acc += i[k] as u64;
    }
    Ok(acc)
}

/// Indices `i < n` with `flags[i] != 0`, ascending, into `out`; returns their count.
pub fn compact_indices(_dev: &Device, _s: &mut Scratch, flags: &Buffer<u32>, n: usize, out: &mut Buffer<u32>) -> Result<usize> {
    let f = host(flags)?;
    let o = host_mut(out)?;
    let mut m = 0;
    for i in 0..n {
        if f[i] != 0 {
            o[m] = i as u32;
            m += 1;
        }
    }
    Ok(m)
}

/// `values[i]` with `flags[i] != 0`, order kept, into `out`; returns their count.
pub fn compact<T: Elem>(_dev: &Device, _s: &mut Scratch, flags: &Buffer<u32>, values: &Buffer<T>, n: usize, out: &mut Buffer<T>) -> Result<usize> {
    let f = host(flags)?;
    let v = host(values)?;
    let o = host_mut(out)?;
    let mut m = 0;
    for i in 0..n {
        if f[i] != 0 {
            o[m] = v[i];
            m += 1;
        }
    }
    Ok(m)
}

/// Keeps `values[i]` with `remove[i] == 0` (order kept, in place); returns the new length.
pub fn remove_if(_dev: &Device, _s: &mut Scratch, values: &mut Buffer<u32>, remove: &Buffer<u32>, n: usize) -> Result<usize> {
    let r = host(remove)?;
    let v = host_mut(values)?;
    let mut m = 0;
    for i in 0..n {
        if r[i] == 0 {
            v[m] = v[i];
            m += 1;
        }
    }
    Ok(m)
}

/// Stable ascending sort of `(keys, values)[..n]` by the low `key_bits` bits of the key.
pub fn sort_by_key(_dev: &Device, _s: &mut Scratch, keys: &mut Buffer<u32>, values: &mut Buffer<u32>, n: usize, key_bits: u32) -> Result<()> {
    if key_bits > 32 {
        return Err(Error::invalid("key_bits", key_bits, "at most 32"));
    }
    let mask = if key_bits == 32 { u32::MAX } else { (1u32 << key_bits) - 1 };
    let k = host_mut(keys)?;
    let v = host_mut(values)?;
    let mut p: Vec<(u32, u32)> = k[..n].iter().copied().zip(v[..n].iter().copied()).collect();
    p.sort_by_key(|&(a, _)| a & mask);
    for (i, (a, b)) in p.into_iter().enumerate() {
        k[i] = a;
        v[i] = b;
    }
    Ok(())
}

/// First element of each run of equal values of `sorted[..n]`, into `out`; returns the count.
pub fn unique(_dev: &Device, _s: &mut Scratch, sorted: &Buffer<u32>, n: usize, out: &mut Buffer<u32>) -> Result<usize> {
    let s = host(sorted)?;
    let o = host_mut(out)?;
    let mut m = 0;
    for i in 0..n {
        if i == 0 || s[i] != s[i - 1] {
            o[m] = s[i];
            m += 1;
        }
    }
    Ok(m)
}

/// `out[indices[i]] = values[i]` for `i < n` (indices distinct).
pub fn scatter<T: Elem>(_dev: &Device, values: &Buffer<T>, indices: &Buffer<u32>, n: usize, out: &mut Buffer<T>) -> Result<()> {
    let v = host(values)?;
    let ix = host(indices)?;
    let o = host_mut(out)?;
    for i in 0..n {
        o[ix[i] as usize] = v[i];
    }
    Ok(())
}

/// Number of `i < n` with `flags[i] != 0`.
pub fn count_nonzero(_dev: &Device, _s: &mut Scratch, flags: &Buffer<u32>, n: usize) -> Result<usize> {
    Ok(host(flags)?[..n].iter().filter(|&&f| f != 0).count())
}

/// Exact sum of `values[..n]`.
pub fn reduce_sum(_dev: &Device, _s: &mut Scratch, values: &Buffer<u32>, n: usize) -> Result<u64> {
    Ok(host(values)?[..n].iter().map(|&v| v as u64).sum())
}

/// Maximum of `values[..n]` (0 for `n = 0`).
pub fn reduce_max(_dev: &Device, _s: &mut Scratch, values: &Buffer<u32>, n: usize) -> Result<u32> {
    Ok(host(values)?[..n].iter().copied().max().unwrap_or(0))
}
