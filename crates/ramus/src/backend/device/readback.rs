//! Copies from the device to the host: whole ranges, single elements, and pairs of
//! ranges with one synchronisation (the adapt routine's counts).

use std::ops::Range;

use cudarc::driver::DevicePtr;

use super::{checked_range, driver_error, mismatch, Buffer, Device, Elem, STAGING_BYTES};
use crate::backend::memory::try_to_vec;
use crate::error::{Error, Result};

impl Device {
    /// Copies `buf[range]` to the host; an [`Error::InvalidParameter`] naming the range and
    /// the buffer's length if it does not lie inside the buffer (or ends before it starts).
    pub fn read<T: Elem>(&self, buf: &Buffer<T>, range: Range<usize>) -> Result<Vec<T>> {
        let range = checked_read_range(range, buf.len())?;
        if range.is_empty() {
            return Ok(Vec::new());
        }
        match (self, buf) {
            (Device::Cpu, Buffer::Host(v)) => try_to_vec("a read-back", &v[range]),
            (Device::Cuda(c), Buffer::Cuda { slice, .. }) => {
                c.flush()?;
                let _waiting = c.counters.wait();
                let bytes = range.len() * std::mem::size_of::<T>();
                if bytes > STAGING_BYTES {
                    return c.stream.clone_dtoh(&slice.slice(range)).map_err(|e| driver_error("downloading", e));
                }
                let mut staging = c.staging.lock().unwrap_or_else(|p| p.into_inner());
                let host = staging.as_mut_ptr().map_err(|e| driver_error("staging a read", e))? as *mut T;
                let src = slice.device_ptr(&c.stream).0 + (range.start * std::mem::size_of::<T>()) as u64;
                // SAFETY: the staging buffer is page-aligned and holds STAGING_BYTES >= bytes;
                // `src` lies inside `slice`; the copy completes before the synchronisation.
                unsafe {
                    let dst = std::slice::from_raw_parts_mut(host, range.len());
                    cudarc::driver::result::memcpy_dtoh_async(dst, src, c.stream.cu_stream())
                        .map_err(|e| driver_error("downloading", e))?;
                    c.stream.synchronize().map_err(|e| driver_error("synchronising", e))?;
                    Ok(dst.to_vec())
                }
            }
            _ => Err(mismatch()),
        }
    }

    /// Copies the whole buffer to the host.
    pub fn download<T: Elem>(&self, buf: &Buffer<T>) -> Result<Vec<T>> {
        self.read(buf, 0..buf.len())
    }

    /// One element, copied to the host (the scalar read-backs of the AMR routine); an
    /// [`Error::InvalidParameter`] if `index` is not below the buffer's length.
    pub fn get<T: Elem>(&self, buf: &Buffer<T>, index: usize) -> Result<T> {
        if index >= buf.len() {
            return Err(Error::invalid("index", index, format!("below the buffer's length {}", buf.len())));
        }
        Ok(self.read(buf, index..index + 1)?[0])
    }

    /// Copies `a[ra]` and `b[rb]` to the host with one synchronisation: two scalar
    /// read-backs of the AMR routine in one host–device round trip. Ranges are checked as
    /// in [`Self::read`].
    pub fn read_pair<T: Elem, U: Elem>(
        &self,
        a: &Buffer<T>,
        ra: Range<usize>,
        b: &Buffer<U>,
        rb: Range<usize>,
    ) -> Result<(Vec<T>, Vec<U>)> {
        let ra = checked_read_range(ra, a.len())?;
        let rb = checked_read_range(rb, b.len())?;
        if let (Device::Cuda(c), Buffer::Cuda { slice: sa, .. }, Buffer::Cuda { slice: sb, .. }) = (self, a, b) {
            // `b`'s part starts 8-byte aligned after `a`'s in the staging memory.
            let at = (ra.len() * std::mem::size_of::<T>()).next_multiple_of(8);
            if !ra.is_empty() && !rb.is_empty() && at + rb.len() * std::mem::size_of::<U>() <= STAGING_BYTES {
                c.flush()?;
                let _waiting = c.counters.wait();
                let mut staging = c.staging.lock().unwrap_or_else(|p| p.into_inner());
                let host = staging.as_mut_ptr().map_err(|e| driver_error("staging a read", e))? as *mut u8;
                let src_a = sa.device_ptr(&c.stream).0 + (ra.start * std::mem::size_of::<T>()) as u64;
                let src_b = sb.device_ptr(&c.stream).0 + (rb.start * std::mem::size_of::<U>()) as u64;
                // SAFETY: the staging memory is page-aligned and holds STAGING_BYTES, which
                // covers both parts (checked above); `b`'s part starts 8-byte aligned, enough
                // for every `Elem`; the sources lie inside their slices (checked ranges); both
                // copies complete before the synchronisation.
                unsafe {
                    let da = std::slice::from_raw_parts_mut(host as *mut T, ra.len());
                    let db = std::slice::from_raw_parts_mut(host.add(at) as *mut U, rb.len());
                    cudarc::driver::result::memcpy_dtoh_async(da, src_a, c.stream.cu_stream())
                        .map_err(|e| driver_error("downloading", e))?;
                    cudarc::driver::result::memcpy_dtoh_async(db, src_b, c.stream.cu_stream())
                        .map_err(|e| driver_error("downloading", e))?;
                    c.stream.synchronize().map_err(|e| driver_error("synchronising", e))?;
                    return Ok((da.to_vec(), db.to_vec()));
                }
            }
        }
        Ok((self.read(a, ra)?, self.read(b, rb)?))
    }
}

/// `range` as a checked range of a buffer of `len` elements (an error naming it if it ends
/// before it starts or past the buffer).
fn checked_read_range(range: Range<usize>, len: usize) -> Result<Range<usize>> {
    if range.start > range.end {
        return Err(Error::invalid(
            "read range",
            format!("{}..{}", range.start, range.end),
            format!("start <= end, within a buffer of {len} elements"),
        ));
    }
    checked_range("read range", range.start, range.len(), len)
}
