//! Typed device slices: what host code hands to kernels instead of raw pointers.
//!
//! A [`DeviceSlice`] (read by the kernel) or [`DeviceSliceMut`] (written) borrows a range
//! of a [`Buffer`] and carries its length and its device, as candle passes `CudaSlice`s
//! and cubecl `ArrayArg`s. Kernel argument structs are built from them on the host
//! ([`Views`]); [`Device::launch`](super::Device::launch) lowers them to the kernels' raw
//! pointers in one place (`ToRaw`), refusing a slice of another device, and checks the
//! item count against the slices' lengths ([`ramus_kernels::launch::Kernel::max_items`]).

use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

use cudarc::driver::DevicePtr;
use ramus_kernels::memory::{Lens, Lower, Memory, Raw};

use super::device::{Buffer, Device, Elem};
use crate::error::{Error, Result};

/// The memory a slice addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    /// An absent argument (a null pointer in the kernel).
    None,
    /// Host memory (the CPU backend).
    Host,
    /// Memory of the CUDA context at this address.
    Cuda(usize),
}

/// Ties a view to the borrow of its buffer (`'a`) and to its element type.
type Borrow<'a, T> = PhantomData<(&'a (), fn() -> T)>;

/// A borrowed range of a [`Buffer`] that a kernel reads.
#[derive(Clone, Copy, Debug)]
pub struct DeviceSlice<'a, T> {
    addr: usize,
    len: usize,
    side: Side,
    _borrow: Borrow<'a, T>,
}

/// A borrowed range of a [`Buffer`] that a kernel writes (and may read).
#[derive(Debug)]
pub struct DeviceSliceMut<'a, T> {
    addr: usize,
    len: usize,
    side: Side,
    // Not `Copy`: one writer per range (a `&'a mut` borrow's exclusivity).
    _borrow: Borrow<'a, T>,
}

/// `range` of a sequence of `len` elements, or a named error.
fn bounds(range: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.saturating_add(1),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        return Err(Error::invalid("slice range", format!("{start}..{end}"), format!("a range within {len} elements")));
    }
    Ok((start, end - start))
}

impl<T: Elem> Buffer<T> {
    /// Address and side of the buffer's first element.
    fn base(&self) -> (usize, Side) {
        match self {
            Buffer::Host(v) => (v.as_ptr() as usize, Side::Host),
            Buffer::Cuda { slice, .. } => {
                let ctx = std::sync::Arc::as_ptr(slice.context()) as usize;
                (slice.device_ptr(slice.stream()).0 as usize, Side::Cuda(ctx))
            }
        }
    }

    /// The whole buffer, for a kernel that reads it.
    pub fn view(&self) -> DeviceSlice<'_, T> {
        let (addr, side) = self.base();
        DeviceSlice { addr, len: self.len(), side, _borrow: PhantomData }
    }

    /// The whole buffer, for a kernel that writes it.
    pub fn view_mut(&mut self) -> DeviceSliceMut<'_, T> {
        let (addr, side) = self.base();
        DeviceSliceMut { addr, len: self.len(), side, _borrow: PhantomData }
    }

    /// `range` of the buffer, for a kernel that reads it (a named error if the range does
    /// not lie inside the buffer).
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceSlice<'_, T>> {
        self.view().slice(range)
    }

    /// `range` of the buffer, for a kernel that writes it (checked as [`Self::slice`]).
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceSliceMut<'_, T>> {
        self.view_mut().slice_mut(range)
    }
}

impl<'a, T> DeviceSlice<'a, T> {
    /// No array: the kernel gets a null pointer (for optional arguments it checks).
    pub fn none() -> Self {
        DeviceSlice { addr: 0, len: 0, side: Side::None, _borrow: PhantomData }
    }

    /// Elements in the slice.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the slice holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `range` of this slice (a named error if it does not lie inside).
    pub fn slice(self, range: impl RangeBounds<usize>) -> Result<Self> {
        let (start, len) = bounds(range, self.len)?;
        Ok(DeviceSlice { addr: self.addr + start * std::mem::size_of::<T>(), len, ..self })
    }
}

/// Reinterprets `len` elements of `T` as elements of `U` (same size and alignment, both
/// plain data): the data-moving kernels work on words of 1, 4 or 8 bytes.
fn cast_len<T, U>(len: usize) -> Result<usize> {
    if std::mem::size_of::<T>() == std::mem::size_of::<U>() && std::mem::align_of::<T>() >= std::mem::align_of::<U>() {
        Ok(len)
    } else {
        Err(Error::invalid(
            "element type",
            std::any::type_name::<T>(),
            format!("the size of {}", std::any::type_name::<U>()),
        ))
    }
}

impl<'a, T: Elem> DeviceSlice<'a, T> {
    /// The same bytes as elements of `U` (an error unless `U` has `T`'s size).
    pub fn cast<U: Elem>(self) -> Result<DeviceSlice<'a, U>> {
        Ok(DeviceSlice { addr: self.addr, len: cast_len::<T, U>(self.len)?, side: self.side, _borrow: PhantomData })
    }
}

impl<'a, T: Elem> DeviceSliceMut<'a, T> {
    /// The same bytes as elements of `U` (an error unless `U` has `T`'s size).
    pub fn cast<U: Elem>(self) -> Result<DeviceSliceMut<'a, U>> {
        Ok(DeviceSliceMut { addr: self.addr, len: cast_len::<T, U>(self.len)?, side: self.side, _borrow: PhantomData })
    }
}

impl<'a, T> DeviceSliceMut<'a, T> {
    /// No array: the kernel gets a null pointer (for optional arguments it checks).
    pub fn none() -> Self {
        DeviceSliceMut { addr: 0, len: 0, side: Side::None, _borrow: PhantomData }
    }

    /// Elements in the slice.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the slice holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `range` of this slice (a named error if it does not lie inside).
    pub fn slice_mut(self, range: impl RangeBounds<usize>) -> Result<Self> {
        let (start, len) = bounds(range, self.len)?;
        Ok(DeviceSliceMut { addr: self.addr + start * std::mem::size_of::<T>(), len, ..self })
    }

    /// A shorter-lived view of the same range (to pass it to one launch and keep it).
    pub fn reborrow(&mut self) -> DeviceSliceMut<'_, T> {
        DeviceSliceMut { addr: self.addr, len: self.len, side: self.side, _borrow: PhantomData }
    }

    /// The range for a kernel that only reads it.
    pub fn into_ref(self) -> DeviceSlice<'a, T> {
        DeviceSlice { addr: self.addr, len: self.len, side: self.side, _borrow: PhantomData }
    }

    /// Elements `..mid` and `mid..` as two views (a named error if `mid` is past the end).
    pub fn split_at(self, mid: usize) -> Result<(Self, Self)> {
        if mid > self.len {
            return Err(Error::invalid("split point", mid, format!("at most the slice's {} elements", self.len)));
        }
        let tail = DeviceSliceMut {
            addr: self.addr + mid * std::mem::size_of::<T>(),
            len: self.len - mid,
            side: self.side,
            _borrow: PhantomData,
        };
        Ok((DeviceSliceMut { len: mid, ..self }, tail))
    }

    /// The same range, once to read and once to write, for a kernel that works in place
    /// through two arguments (e.g. a scan over its own tile totals).
    pub fn in_place(self) -> (DeviceSlice<'a, T>, DeviceSliceMut<'a, T>) {
        let read = DeviceSlice { addr: self.addr, len: self.len, side: self.side, _borrow: PhantomData };
        (read, self)
    }
}

/// Kernel arguments built from device slices on the host (see [`ramus_kernels::memory`]).
#[derive(Clone, Copy, Debug)]
pub struct Views<'a>(PhantomData<&'a ()>);

impl<'a> Memory for Views<'a> {
    type Ref<T> = DeviceSlice<'a, T>;
    type Mut<T> = DeviceSliceMut<'a, T>;
}

/// Lowers views to the kernels' raw pointers for `device`: the one place where host
/// arguments become addresses. A slice of another device is an error naming the field.
pub(crate) struct ToRaw<'d> {
    pub(crate) device: &'d Device,
}

impl ToRaw<'_> {
    fn check(&self, field: &'static str, side: Side) -> Result<()> {
        let ok = match (self.device, side) {
            (_, Side::None) | (Device::Cpu, Side::Host) => true,
            (Device::Cuda(c), Side::Cuda(ctx)) => c.context_id() == ctx,
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(Error::Cuda {
                context: format!("passing `{field}` to a kernel"),
                message: "the buffer belongs to another device".into(),
            })
        }
    }
}

// An empty slice names no memory: it lowers to a null pointer whatever its buffer (the
// empty host placeholder a workspace starts with, on a CUDA device, included), since no
// item may touch it.
impl<'a> Lower<Views<'a>, Raw> for ToRaw<'_> {
    type Error = Error;
    fn by_ref<T>(&mut self, field: &'static str, x: &DeviceSlice<'a, T>) -> Result<<Raw as Memory>::Ref<T>> {
        if x.len == 0 {
            return Ok(std::ptr::null());
        }
        self.check(field, x.side)?;
        Ok(x.addr as *const T)
    }
    fn by_mut<T>(&mut self, field: &'static str, x: &DeviceSliceMut<'a, T>) -> Result<<Raw as Memory>::Mut<T>> {
        if x.len == 0 {
            return Ok(std::ptr::null_mut());
        }
        self.check(field, x.side)?;
        Ok(x.addr as *mut T)
    }
}

/// The slices' lengths, for [`ramus_kernels::launch::Kernel::max_items`].
pub(crate) struct ToLens;

impl<'a> Lower<Views<'a>, Lens> for ToLens {
    type Error = Error;
    fn by_ref<T>(&mut self, _: &'static str, x: &DeviceSlice<'a, T>) -> Result<usize> {
        Ok(x.len)
    }
    fn by_mut<T>(&mut self, _: &'static str, x: &DeviceSliceMut<'a, T>) -> Result<usize> {
        Ok(x.len)
    }
}
