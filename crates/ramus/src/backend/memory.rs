//! Host memory: how much this process may still allocate, and allocations that fail with
//! [`Error::OutOfMemory`] instead of aborting the process.
//!
//! The free memory of the machine (`MemAvailable`) is not what a process can use inside a
//! container or under `ulimit -v`: [`host_available_memory`] also honours the cgroup memory
//! limit (v2 and v1) and the address-space limit `RLIMIT_AS`. Sizes that come from the
//! user (grid sizes, pool capacities) are checked against it and allocated with
//! `try_reserve`, so that a run too large for its limits ends with a named error, not with
//! "memory allocation of N bytes failed" and an abort (or the OOM killer).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Bytes assumed available where none of the limits can be read (not Linux).
const UNKNOWN_AVAILABLE: usize = 4 << 30;

/// The memory this process can still allocate on the host, in bytes: the least of
/// - `MemAvailable` of `/proc/meminfo` (free memory plus reclaimable caches),
/// - the cgroup limit minus the cgroup's usage, for the process's cgroup and each of its
///   ancestors (v2: `memory.max` − `memory.current`; v1: `memory.limit_in_bytes` −
///   `memory.usage_in_bytes`; the inactive file cache of `memory.stat` counts as free, as
///   the kernel reclaims it before it kills),
/// - the address-space limit (`RLIMIT_AS`, `ulimit -v`) minus the current `VmSize` of
///   `/proc/self/status`.
///
/// 4 GiB where none of these can be read.
pub fn host_available_memory() -> usize {
    [mem_available(), cgroup_available(), address_space_available()]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(UNKNOWN_AVAILABLE)
}

/// Allocations up to this size are not checked against [`host_available_memory`] (which
/// reads `/proc` and the cgroup files): they cannot take a process past its limit by
/// themselves, and the CPU backend's scalar read-backs would pay for the files on every
/// call. `try_reserve` still turns a failure into an error.
const CHECKED_FROM_BYTES: usize = 16 << 20;

/// An error instead of an aborting allocation: `bytes` (None if the size overflowed)
/// must fit in [`host_available_memory`] (sizes below 16 MiB pass unchecked).
pub(crate) fn check_host_memory(what: &str, bytes: Option<usize>) -> Result<()> {
    if bytes.is_some_and(|b| b < CHECKED_FROM_BYTES) {
        return Ok(());
    }
    let available = host_available_memory();
    match bytes {
        Some(b) if b <= available => Ok(()),
        _ => Err(Error::OutOfMemory {
            what: what.to_string(),
            needed: bytes.map_or(u64::MAX, |b| b as u64),
            available: available as u64,
        }),
    }
}

/// Bytes of `n` elements of `T` (None on overflow).
pub(crate) fn bytes_of<T>(n: usize) -> Option<usize> {
    n.checked_mul(std::mem::size_of::<T>())
}

/// Reserves room for `n` elements, checked against [`host_available_memory`] first.
fn reserve<T>(what: &str, n: usize) -> Result<Vec<T>> {
    check_host_memory(what, bytes_of::<T>(n))?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Error::OutOfMemory {
        what: what.to_string(),
        needed: bytes_of::<T>(n).map_or(u64::MAX, |b| b as u64),
        available: host_available_memory() as u64,
    })?;
    Ok(v)
}

/// `vec![value; n]`, or [`Error::OutOfMemory`] naming `what`.
pub(crate) fn try_vec<T: Clone>(what: &str, value: T, n: usize) -> Result<Vec<T>> {
    let mut v = reserve(what, n)?;
    v.resize(n, value);
    Ok(v)
}

/// `iter.collect()` of `n` items (an exact count), or [`Error::OutOfMemory`] naming `what`.
pub(crate) fn try_collect<T>(what: &str, n: usize, iter: impl Iterator<Item = T>) -> Result<Vec<T>> {
    let mut v = reserve(what, n)?;
    v.extend(iter.take(n));
    Ok(v)
}

/// A copy of `data`, or [`Error::OutOfMemory`] naming `what`.
pub(crate) fn try_to_vec<T: Copy>(what: &str, data: &[T]) -> Result<Vec<T>> {
    let mut v = reserve(what, data.len())?;
    v.extend_from_slice(data);
    Ok(v)
}

/// `n` zeros without touching them: the allocation comes zeroed from the allocator
/// (`calloc`, whose large blocks are fresh pages the kernel maps on first write), so a
/// pool whose tail is never used costs address space, not memory. Checked against
/// [`host_available_memory`] like the other allocations.
pub(crate) fn try_zeroed<T: bytemuck::Zeroable>(what: &str, n: usize) -> Result<Vec<T>> {
    let bytes = bytes_of::<T>(n);
    check_host_memory(what, bytes)?;
    if n == 0 || std::mem::size_of::<T>() == 0 {
        return Ok((0..n).map(|_| T::zeroed()).collect());
    }
    let fail = || Error::OutOfMemory {
        what: what.to_string(),
        needed: bytes.map_or(u64::MAX, |b| b as u64),
        available: host_available_memory() as u64,
    };
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| fail())?;
    // SAFETY: `layout` has a non-zero size (n > 0, T not zero-sized).
    let p = unsafe { std::alloc::alloc_zeroed(layout) } as *mut T;
    if p.is_null() {
        return Err(fail());
    }
    // SAFETY: `p` comes from the global allocator with the layout of `n` elements of `T`
    // (length = capacity = n), and all-zero bytes are a valid `T` (`Zeroable`).
    Ok(unsafe { Vec::from_raw_parts(p, n, n) })
}

/// `MemAvailable` of `/proc/meminfo`.
fn mem_available() -> Option<usize> {
    let m = std::fs::read_to_string("/proc/meminfo").ok()?;
    kib_field(&m, "MemAvailable:")
}

/// A `Name:  123 kB` field of a `/proc` file, in bytes.
fn kib_field(text: &str, name: &str) -> Option<usize> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: usize = line[name.len()..].split_whitespace().next()?.parse().ok()?;
    kib.checked_mul(1024)
}

/// A number in a cgroup file (`max` and unreadable files: None).
fn read_number(path: &Path) -> Option<usize> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// A `name value` line of a cgroup `memory.stat`.
fn stat_field(dir: &Path, name: &str) -> Option<usize> {
    let text = std::fs::read_to_string(dir.join("memory.stat")).ok()?;
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        if k == name {
            v.trim().parse().ok()
        } else {
            None
        }
    })
}

/// The least `limit − usage` over the process's cgroup and its ancestors (v2, else v1).
fn cgroup_available() -> Option<usize> {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    // v2: the line `0::/path`; v1: `N:...memory...:/path`.
    let v2 = own.lines().find_map(|l| l.strip_prefix("0::")).unwrap_or("/");
    let v1 = own.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers.split(',').any(|c| c == "memory").then_some(path)
    });
    let v2_root = Path::new("/sys/fs/cgroup");
    let v1_root = Path::new("/sys/fs/cgroup/memory");
    let mut best: Option<usize> = None;
    let mut take = |a: Option<usize>| {
        if let Some(a) = a {
            best = Some(best.map_or(a, |b| b.min(a)));
        }
    };
    if v2_root.join("cgroup.controllers").exists() {
        for dir in ancestors(v2_root, v2) {
            let limit = read_number(&dir.join("memory.max"));
            let usage = read_number(&dir.join("memory.current"));
            let reclaimable = stat_field(&dir, "inactive_file").unwrap_or(0);
            take(limit.map(|l| l.saturating_sub(usage.unwrap_or(0).saturating_sub(reclaimable))));
        }
    } else if v1_root.exists() {
        for dir in ancestors(v1_root, v1.unwrap_or("/")) {
            let limit = read_number(&dir.join("memory.limit_in_bytes"));
            let usage = read_number(&dir.join("memory.usage_in_bytes"));
            let reclaimable = stat_field(&dir, "total_inactive_file").unwrap_or(0);
            take(limit.map(|l| l.saturating_sub(usage.unwrap_or(0).saturating_sub(reclaimable))));
        }
    }
    best
}

/// `root/path` and each of its ancestors up to `root` (only folders that exist: inside a
/// container the process's cgroup path may not be visible, then `root` itself is used).
fn ancestors(root: &Path, path: &str) -> Vec<PathBuf> {
    let mut dir = root.join(path.trim_start_matches('/'));
    let mut out = Vec::new();
    while dir.starts_with(root) {
        if dir.is_dir() {
            out.push(dir.clone());
        }
        if !dir.pop() {
            break;
        }
    }
    if out.is_empty() {
        out.push(root.to_path_buf());
    }
    out
}

/// `RLIMIT_AS − VmSize` where an address-space limit is set.
fn address_space_available() -> Option<usize> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the limit into `lim`, a valid `rlimit`.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } != 0 || lim.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    let limit = usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX);
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used = kib_field(&status, "VmSize:").unwrap_or(0);
    Some(limit.saturating_sub(used))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn available_memory_is_positive_and_bounded_by_meminfo() {
        let a = host_available_memory();
        assert!(a > 0);
        if let Some(m) = mem_available() {
            assert!(a <= m);
        }
    }

    #[test]
    fn huge_allocations_are_named_errors() {
        let e = try_vec("a test vector", 0u64, usize::MAX / 4).unwrap_err();
        assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
        assert!(e.to_string().contains("a test vector"), "{e}");
        assert!(matches!(try_zeroed::<u32>("zeros", usize::MAX / 2), Err(Error::OutOfMemory { .. })));
        let z = try_zeroed::<f64>("zeros", 1000).unwrap();
        assert_eq!(z.len(), 1000);
        assert!(z.iter().all(|&x| x == 0.0));
        assert_eq!(try_collect("ids", 3, 0u32..).unwrap(), vec![0, 1, 2]);
    }

    #[test]
    fn ancestors_walk_up_to_the_root() {
        let root = Path::new("/");
        let a = ancestors(root, "/tmp");
        assert!(a.iter().any(|d| d == Path::new("/tmp")) && a.last().unwrap() == root, "{a:?}");
    }
}
