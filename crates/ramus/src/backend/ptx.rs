//! The embedded PTX as one module per kernel, JIT-compiled on first launch.
//!
//! Loading the whole PTX (332 entry points, 28 MB) made the driver JIT-compile every
//! kernel of every lattice and precision before the first launch: 91 s on an H100 without
//! the driver's JIT cache (first run on a machine, or a new ramus version), 0.6 s with it.
//! A run launches a few dozen of them. The PTX that `cargo xtask ptx` writes (LLVM's NVPTX
//! back end) is laid out as a prelude (version, target, declarations of the panic
//! functions, global tables, the dynamic shared memory), the entry points one after the
//! other, and the definitions of the panic functions; a module of the prelude, one entry
//! and those definitions is valid PTX with the same code for that entry.

use std::collections::HashMap;
use std::ops::Range;

use crate::error::{Error, Result};

const ENTRY: &str = "\n.visible .entry ";
const FUNC: &str = "\n.func ";

/// A PTX text split into its prelude, its entry points and its trailing functions.
pub(crate) struct PtxModules {
    text: String,
    prelude: Range<usize>,
    epilogue: Range<usize>,
    entries: HashMap<String, Range<usize>>,
}

impl PtxModules {
    /// Splits `text`; an error if it has no entry point or an entry without a name.
    pub fn parse(text: String) -> Result<Self> {
        let malformed = |what: &str| Error::Cuda { context: "splitting the PTX".into(), message: what.to_string() };
        let starts: Vec<usize> = text.match_indices(ENTRY).map(|(i, _)| i + 1).collect();
        let (&first, &last) = match (starts.first(), starts.last()) {
            (Some(f), Some(l)) => (f, l),
            _ => return Err(malformed("no entry point")),
        };
        // The trailing functions start at the first `.func` after the last entry.
        let tail = text[last..].find(FUNC).map_or(text.len(), |i| last + i + 1);
        let mut entries = HashMap::with_capacity(starts.len());
        for (k, &start) in starts.iter().enumerate() {
            let end = starts.get(k + 1).copied().unwrap_or(tail);
            let name = text[start + ENTRY.len() - 1..end]
                .split('(')
                .next()
                .map(str::trim)
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
                .ok_or_else(|| malformed("an entry point without a name"))?;
            entries.insert(name.to_string(), start..end);
        }
        Ok(PtxModules { prelude: 0..first, epilogue: tail..text.len(), entries, text })
    }

    /// The module holding entry point `name` alone, or `None` if the PTX has no such entry.
    pub fn module(&self, name: &str) -> Option<String> {
        let entry = self.entries.get(name)?;
        let parts = [&self.prelude, entry, &self.epilogue].map(|r| &self.text[r.clone()]);
        Some(parts.concat())
    }

    /// Number of entry points.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_of_the_embedded_ptx_gets_a_module_of_its_own() {
        let ptx = PtxModules::parse(super::super::cuda::KERNELS_PTX.to_string()).expect("parse");
        let total = super::super::cuda::KERNELS_PTX.matches(".visible .entry ").count();
        assert_eq!(ptx.len(), total);
        for name in ["stream_collide_odd_d3q19_f32_bgk", "prim_scan_tiles_u32", "pack_blocks_b4"] {
            let m = ptx.module(name).expect(name);
            assert!(m.starts_with("//") && m.contains(".version ") && m.contains(".target sm_70"), "{name}: prelude");
            assert_eq!(m.matches(".visible .entry ").count(), 1, "{name}: one entry");
            assert!(m.contains(&format!(".visible .entry {name}(")), "{name}: its entry");
            // The panic functions it may call are declared (prelude) and defined (epilogue).
            assert!(m.trim_end().ends_with('}'), "{name}: ends with the last function");
            assert!(m.matches(".func _RNvNtCs").count() >= 2, "{name}: panic functions");
        }
        assert!(ptx.module("no_such_kernel").is_none());
    }

    #[test]
    fn text_without_entries_is_an_error() {
        assert!(PtxModules::parse(".version 6.0\n.target sm_70\n".into()).is_err());
    }
}
