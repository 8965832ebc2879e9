//! Checkpoints: everything that determines a forest's future in one versioned binary file
//! with a checksum, so that a run continued from it is bitwise the run that was never
//! interrupted, on either backend.
//!
//! Layout (little-endian):
//!
//! | bytes | content |
//! | --- | --- |
//! | 8 | magic `RAMUSCKP` |
//! | 4 | format version ([`FORMAT_VERSION`]) |
//! | 12 | dimension, velocities `Q`, bytes per float (the forest's `<D, Q, F, S>`: the low 16 bits of the third word are `F`'s bytes, the high 16 bits the bytes of a stored population when the storage is not `F` itself, 0 otherwise) |
//! | … | sections: 4-byte tag, 8-byte length, payload |
//! | 4 | CRC-32 of everything before it |
//!
//! Sections: `CONF` (the [`ForestConfig`] as TOML), `STEP` (root steps, whether the forest
//! had a user solid closure), `MESH` (the mesh state: arrays of every block ID handed
//! out, ID sets, freed IDs), `POPS` (the block data of those blocks, raw: each block's
//! distributions, and under a WALE or Vreman model its cells' eddy viscosities), `USER`
//! (bytes the caller stores along, e.g. an example's force history).
//!
//! Solid masks, work lists and scratch buffers are not stored: they are recomputed from
//! the configuration and the mesh, deterministically.

use std::path::Path;

use crate::amr::state::MeshState;
use crate::config::ForestConfig;
use crate::error::{CheckpointProblem, Error, Result};

/// Magic bytes at the start of every checkpoint.
pub const MAGIC: &[u8; 8] = b"RAMUSCKP";
/// Version of the layout written; files of another version are refused.
pub const FORMAT_VERSION: u32 = 1;

/// The decoded content of a checkpoint.
pub(crate) struct Contents {
    pub config: ForestConfig,
    pub steps: u64,
    pub user_geometry: bool,
    pub mesh: MeshState,
    /// Distributions of blocks `0 … mesh.high_water`, as raw little-endian bytes.
    pub populations: Vec<u8>,
    pub user: Vec<u8>,
}

/// The `<D, Q, F, S>` of a forest, as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Kind {
    pub dim: u32,
    pub q: u32,
    pub float_bytes: u32,
    /// Bytes of a stored population when the storage is not `F` ([`crate::Half`]: 2), 0
    /// for [`crate::Native`] (files written before the storage axis read as native).
    pub storage_bytes: u32,
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}D, Q = {}, f{}", self.dim, self.q, 8 * self.float_bytes)?;
        if self.storage_bytes > 0 {
            write!(f, ", f{} storage", 8 * self.storage_bytes)?;
        }
        Ok(())
    }
}

/// Encodes a checkpoint.
pub(crate) fn encode(kind: Kind, c: &Contents) -> Result<Vec<u8>> {
    let config = c.config.to_toml()?;
    let mut out = Vec::with_capacity(c.populations.len() + 1024);
    out.extend_from_slice(MAGIC);
    for v in [FORMAT_VERSION, kind.dim, kind.q, kind.float_bytes | kind.storage_bytes << 16] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    section(&mut out, b"CONF", config.as_bytes());
    let mut step = c.steps.to_le_bytes().to_vec();
    step.push(c.user_geometry as u8);
    section(&mut out, b"STEP", &step);
    section(&mut out, b"MESH", &encode_mesh(&c.mesh));
    section(&mut out, b"POPS", &c.populations);
    section(&mut out, b"USER", &c.user);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    Ok(out)
}

/// Decodes a checkpoint written for a forest of `expected` kind; `path` names it in errors.
pub(crate) fn decode(bytes: &[u8], expected: Kind, path: &Path) -> Result<Contents> {
    let fail = |problem: CheckpointProblem| Error::Checkpoint { path: path.to_path_buf(), problem };
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(fail(CheckpointProblem::NotACheckpoint));
    }
    if bytes.len() < MAGIC.len() + 16 + 4 {
        return Err(fail(CheckpointProblem::Truncated));
    }
    let word = |k: usize| u32::from_le_bytes(bytes[8 + 4 * k..12 + 4 * k].try_into().expect("4 bytes"));
    let version = word(0);
    if version != FORMAT_VERSION {
        return Err(fail(CheckpointProblem::Version { found: version, supported: FORMAT_VERSION }));
    }
    let (body, tail) = bytes.split_at(bytes.len() - 4);
    let stored = u32::from_le_bytes(tail.try_into().expect("4 bytes"));
    if crc32fast::hash(body) != stored {
        // A file cut short also fails the checksum; tell the two apart by its structure.
        // Complete sections with a wrong checksum: altered; sections that run past the
        // end: cut short.
        return Err(fail(if sections(&body[24..]).is_ok() {
            CheckpointProblem::Corrupted
        } else {
            CheckpointProblem::Truncated
        }));
    }
    let found = Kind { dim: word(1), q: word(2), float_bytes: word(3) & 0xffff, storage_bytes: word(3) >> 16 };
    if found != expected {
        return Err(fail(CheckpointProblem::WrongForest { found: found.to_string(), expected: expected.to_string() }));
    }
    let secs = sections(&body[24..]).map_err(|_| fail(CheckpointProblem::Malformed("section lengths".into())))?;
    let get = |tag: &[u8; 4]| {
        secs.iter()
            .find(|(t, _)| t == tag)
            .map(|(_, d)| *d)
            .ok_or_else(|| fail(CheckpointProblem::Malformed(format!("no {} section", String::from_utf8_lossy(tag)))))
    };
    let text = std::str::from_utf8(get(b"CONF")?).map_err(|_| fail(CheckpointProblem::Malformed("CONF".into())))?;
    let config = ForestConfig::from_toml(text)?;
    let step = get(b"STEP")?;
    if step.len() != 9 {
        return Err(fail(CheckpointProblem::Malformed("STEP".into())));
    }
    let mesh = decode_mesh(get(b"MESH")?).ok_or_else(|| fail(CheckpointProblem::Malformed("MESH".into())))?;
    Ok(Contents {
        config,
        steps: u64::from_le_bytes(step[..8].try_into().expect("8 bytes")),
        user_geometry: step[8] != 0,
        mesh,
        populations: get(b"POPS")?.to_vec(),
        user: get(b"USER")?.to_vec(),
    })
}

fn section(out: &mut Vec<u8>, tag: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(tag);
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    out.extend_from_slice(data);
}

/// A section: its four-byte tag and its bytes.
type Section<'a> = ([u8; 4], &'a [u8]);

/// Splits a run of sections; an error if a length runs past the end.
fn sections(mut b: &[u8]) -> std::result::Result<Vec<Section<'_>>, ()> {
    let mut out = Vec::new();
    while !b.is_empty() {
        if b.len() < 12 {
            return Err(());
        }
        let tag: [u8; 4] = b[..4].try_into().expect("4 bytes");
        let len = u64::from_le_bytes(b[4..12].try_into().expect("8 bytes"));
        let len = usize::try_from(len).map_err(|_| ())?;
        let rest = &b[12..];
        if len > rest.len() {
            return Err(());
        }
        out.push((tag, &rest[..len]));
        b = &rest[len..];
    }
    Ok(out)
}

/// Appends a length-prefixed array.
fn put<T: bytemuck::Pod>(out: &mut Vec<u8>, v: &[T]) {
    out.extend_from_slice(&(v.len() as u64).to_le_bytes());
    out.extend_from_slice(bytemuck::cast_slice(v));
}

/// Reads a length-prefixed array written by [`put`].
fn take<T: bytemuck::Pod>(b: &mut &[u8]) -> Option<Vec<T>> {
    let len = usize::try_from(u64::from_le_bytes(b.get(..8)?.try_into().ok()?)).ok()?;
    let bytes = len.checked_mul(std::mem::size_of::<T>())?;
    let data = b.get(8..8 + bytes)?;
    let mut v = vec![T::zeroed(); len];
    bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(data);
    *b = &b[8 + bytes..];
    Some(v)
}

fn encode_mesh(m: &MeshState) -> Vec<u8> {
    let mut out = Vec::new();
    put(&mut out, &[m.high_water as u64, m.id_sets.len() as u64]);
    for v in [&m.level, &m.status, &m.mark, &m.parent, &m.child, &m.origin, &m.nbr, &m.nbr_child] {
        put(&mut out, v);
    }
    put(&mut out, &m.onb);
    put(&mut out, &m.block_mask);
    put(&mut out, &m.cell_mask);
    for ids in &m.id_sets {
        put(&mut out, ids);
    }
    put(&mut out, &m.freed);
    out
}

fn decode_mesh(mut b: &[u8]) -> Option<MeshState> {
    let head: Vec<u64> = take(&mut b)?;
    let [hw, levels]: [u64; 2] = head.as_slice().try_into().ok()?;
    let b = &mut b;
    let mut ints = Vec::new();
    for _ in 0..8 {
        ints.push(take::<i32>(b)?);
    }
    let onb = take(b)?;
    let block_mask = take(b)?;
    let cell_mask = take(b)?;
    let mut id_sets = Vec::new();
    for _ in 0..levels {
        id_sets.push(take(b)?);
    }
    let freed = take(b)?;
    if !b.is_empty() {
        return None;
    }
    let mut it = ints.into_iter();
    let mut next = || it.next().expect("8 arrays");
    Some(MeshState {
        high_water: usize::try_from(hw).ok()?,
        level: next(),
        status: next(),
        mark: next(),
        parent: next(),
        child: next(),
        origin: next(),
        nbr: next(),
        nbr_child: next(),
        onb,
        block_mask,
        cell_mask,
        id_sets,
        freed,
    })
}
