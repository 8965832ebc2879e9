//! Buffers on either backend: allocation, uploads, writes, fills and device-to-device
//! copies, their ranges checked (an error naming the range instead of a panic), each
//! driver call counted ([`super::DeviceCounters::copies`]).

use cudarc::driver::{DevicePtrMut, DeviceSlice};

use super::checks::{checked_range, mismatch, overflow};
use super::{Buffer, Device, Elem};
use crate::backend::cuda::driver_error;
use crate::backend::memory::{bytes_of, try_to_vec, try_zeroed};
use crate::error::Result;

impl Device {
    /// A buffer of `n` zeros; [`Error::OutOfMemory`](crate::Error::OutOfMemory) if it does not fit (on the CPU: in
    /// the memory this process may still use, see [`crate::backend::memory::host_available_memory`]).
    /// On the CPU the zeros come untouched from the allocator: pages are only mapped when
    /// first written, so a pool of which only a part is ever used costs only that part.
    pub fn zeros<T: Elem>(&self, n: usize) -> Result<Buffer<T>> {
        match self {
            Device::Cpu => Ok(Buffer::Host(try_zeroed("a host buffer", n)?)),
            Device::Cuda(c) => {
                c.flush()?;
                let bytes = bytes_of::<T>(n).ok_or_else(|| overflow("a device buffer", n))?;
                c.check_free(bytes, "a device buffer")?;
                // A zero-length allocation is not allowed by the driver; keep one element.
                let slice = c.stream.alloc_zeros::<T>(n.max(1)).map_err(|e| driver_error("allocating", e))?;
                Ok(Buffer::Cuda { slice, len: n })
            }
        }
    }

    /// A buffer holding `data`.
    pub fn upload<T: Elem>(&self, data: &[T]) -> Result<Buffer<T>> {
        match self {
            Device::Cpu => Ok(Buffer::Host(try_to_vec("a host buffer", data)?)),
            Device::Cuda(c) => {
                if data.is_empty() {
                    return self.zeros(0);
                }
                c.flush()?;
                c.check_free(std::mem::size_of_val(data), "a device buffer")?;
                c.counters.copy();
                let slice = c.stream.clone_htod(data).map_err(|e| driver_error("uploading", e))?;
                Ok(Buffer::Cuda { slice, len: data.len() })
            }
        }
    }

    /// Overwrites `buf[offset..offset + data.len()]`; an [`Error::InvalidParameter`](crate::Error::InvalidParameter) naming
    /// the range and the buffer's length if it does not lie inside the buffer.
    pub fn write<T: Elem>(&self, buf: &mut Buffer<T>, offset: usize, data: &[T]) -> Result<()> {
        let range = checked_range("write range", offset, data.len(), buf.len())?;
        if data.is_empty() {
            return Ok(());
        }
        match (self, buf) {
            (Device::Cpu, Buffer::Host(v)) => {
                v[range].copy_from_slice(data);
                Ok(())
            }
            (Device::Cuda(c), Buffer::Cuda { slice, .. }) => {
                c.flush()?;
                c.counters.copy();
                let mut view = slice.slice_mut(range);
                c.stream.memcpy_htod(data, &mut view).map_err(|e| driver_error("uploading", e))
            }
            _ => Err(mismatch()),
        }
    }

    /// Sets every byte of `buf[offset..offset + n]` to `byte` on the device (a memset: e.g.
    /// 0xFF makes every `i32` −1 without a host copy); an [`Error::InvalidParameter`](crate::Error::InvalidParameter) naming
    /// the range if it does not lie inside the buffer.
    pub fn fill_bytes<T: Elem>(&self, buf: &mut Buffer<T>, offset: usize, n: usize, byte: u8) -> Result<()> {
        let range = checked_range("fill range", offset, n, buf.len())?;
        if n == 0 {
            return Ok(());
        }
        match (self, buf) {
            (Device::Cpu, Buffer::Host(v)) => {
                bytemuck::cast_slice_mut::<T, u8>(&mut v[range]).fill(byte);
                Ok(())
            }
            (Device::Cuda(c), Buffer::Cuda { slice, .. }) => {
                c.flush()?;
                c.counters.copy();
                c.stream.context().bind_to_thread().map_err(|e| driver_error("filling", e))?;
                let mut view = slice.slice_mut(range);
                let bytes = view.num_bytes();
                let (ptr, _record) = view.device_ptr_mut(&c.stream);
                // SAFETY: `ptr` addresses the `bytes` bytes of `view`, a checked range of a live
                // allocation; the memset is ordered on the stream the buffer is used on, and
                // `_record` keeps cudarc's event bookkeeping for the write.
                unsafe { cudarc::driver::result::memset_d8_async(ptr, byte, bytes, c.stream.cu_stream()) }
                    .map_err(|e| driver_error("filling", e))
            }
            _ => Err(mismatch()),
        }
    }

    /// Copies `src[..n]` into `dst[offset..offset + n]` on the device (ranges checked as
    /// in [`Self::copy_range`]).
    pub fn copy<T: Elem>(&self, src: &Buffer<T>, n: usize, dst: &mut Buffer<T>, offset: usize) -> Result<()> {
        self.copy_range(src, 0, n, dst, offset)
    }

    /// Copies `src[from..from + n]` into `dst[offset..offset + n]` on the device; an
    /// [`Error::InvalidParameter`](crate::Error::InvalidParameter) naming the range and the buffer's length if either range
    /// does not lie inside its buffer.
    pub fn copy_range<T: Elem>(
        &self,
        src: &Buffer<T>,
        from: usize,
        n: usize,
        dst: &mut Buffer<T>,
        offset: usize,
    ) -> Result<()> {
        let source = checked_range("copy source range", from, n, src.len())?;
        let target = checked_range("copy target range", offset, n, dst.len())?;
        if n == 0 {
            return Ok(());
        }
        match (self, src, dst) {
            (Device::Cpu, Buffer::Host(s), Buffer::Host(d)) => {
                d[target].copy_from_slice(&s[source]);
                Ok(())
            }
            (Device::Cuda(c), Buffer::Cuda { slice: s, .. }, Buffer::Cuda { slice: d, .. }) => {
                c.flush()?;
                c.counters.copy();
                let mut view = d.slice_mut(target);
                c.stream.memcpy_dtod(&s.slice(source), &mut view).map_err(|e| driver_error("copying", e))
            }
            _ => Err(mismatch()),
        }
    }
}
