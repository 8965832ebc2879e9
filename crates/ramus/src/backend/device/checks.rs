//! The checks of a buffer operation's or a launch's arguments, and their errors.

use crate::error::{Error, Result};

/// An error unless `n` items are within `max`, what the argument slices of `entry` hold.
pub(super) fn check_launch_size(n: usize, max: Option<usize>, entry: &str) -> Result<()> {
    match max {
        Some(max) if n > max => Err(Error::invalid(
            "launch size",
            format!("{n} items of {entry}"),
            format!("at most {max}, what the argument slices hold"),
        )),
        _ => Ok(()),
    }
}

/// `start..start + n` if it lies within a buffer of `len` elements, else an
/// [`Error::InvalidParameter`] named `field` giving the range and the length.
pub(super) fn checked_range(field: &'static str, start: usize, n: usize, len: usize) -> Result<std::ops::Range<usize>> {
    match start.checked_add(n) {
        Some(end) if end <= len => Ok(start..end),
        end => Err(Error::invalid(
            field,
            match end {
                Some(end) => format!("{start}..{end}"),
                None => format!("{start}..{start} + {n} (overflows)"),
            },
            format!("a range within the buffer's {len} elements"),
        )),
    }
}

/// The error for an element count whose byte size overflows.
pub(super) fn overflow(what: &str, n: usize) -> Error {
    Error::OutOfMemory { what: format!("{what} of {n} elements"), needed: u64::MAX, available: 0 }
}

pub(super) fn mismatch() -> Error {
    Error::Cuda { context: "using a buffer".into(), message: "the buffer belongs to another device".into() }
}
