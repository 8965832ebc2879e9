//! Which executable graphs [`super::GraphCache`] keeps: the last few launch sequences,
//! most recently used first, and which of them a new sequence of the same kernels takes
//! over (updated in place) instead of a new graph.

use std::collections::VecDeque;

use crate::error::Result;

/// Graphs kept: the two root-step parities of the current mesh state and of the one
/// before (a mesh whose adaptation changed nothing reuses its graphs).
const CACHED_GRAPHS: usize = 4;

/// The most recently used graphs never updated for a new sequence: the two parities of
/// the mesh state in use.
const CURRENT: usize = 2;

/// The executable graphs of the last launch sequences, most recently used first, each
/// with the sequence it runs (kernel names and the bytes of `device::launch::launch_key` and the
/// arguments).
pub(super) struct Cache<G> {
    entries: VecDeque<Entry<G>>,
}

/// A cached graph and the sequence it runs: its kernels, its dependencies' bytes
/// (the recording's `topo`) and the whole key.
struct Entry<G> {
    names: Vec<&'static str>,
    topo: Vec<u8>,
    key: Vec<u8>,
    graph: G,
}

impl<G> Default for Cache<G> {
    fn default() -> Self {
        Cache { entries: VecDeque::new() }
    }
}

impl<G> Cache<G> {
    /// The graph of exactly this sequence, now the most recently used.
    pub(super) fn find(&mut self, names: &[&'static str], key: &[u8]) -> Option<&G> {
        let k = self.entries.iter().position(|e| e.names == names && e.key == key)?;
        let hit = self.entries.remove(k)?;
        self.entries.push_front(hit);
        self.entries.front().map(|e| &e.graph)
    }

    /// Gives the least recently used graph that runs the same kernels with the same
    /// dependencies and can be updated in place (`usable`) the parameters of the new
    /// sequence (`set`), and makes it the most recently used under `key`. The graphs of
    /// the mesh state in use are candidates too: a new sequence of the same kernels means
    /// a new mesh state, and a mesh state that comes back replays ([`Self::find`]) before
    /// anything is updated. `None` if there is no such graph or `set` fails (that graph,
    /// perhaps half updated, is dropped).
    pub(super) fn reuse(
        &mut self,
        names: &[&'static str],
        topo: &[u8],
        key: Vec<u8>,
        usable: impl Fn(&G) -> bool,
        set: impl FnOnce(&mut G) -> bool,
    ) -> Option<&G> {
        let k = (0..self.entries.len()).rev().find(|&k| {
            let e = &self.entries[k];
            e.names == names && e.topo == topo && usable(&e.graph)
        })?;
        let mut hit = self.entries.remove(k)?;
        if !set(&mut hit.graph) {
            return None;
        }
        hit.key = key;
        self.entries.push_front(hit);
        self.entries.front().map(|e| &e.graph)
    }

    /// Adds the graph of a new sequence as the most recently used: while the cache is
    /// not full a new one (`make`); then the least recently used graph with as many
    /// launches outside the [`CURRENT`] most recent ones (those of the mesh state in use),
    /// if `update` can give it the new sequence's parameters in place (a new mesh state
    /// changes list lengths and sizes but rarely the number of launches, and an update is
    /// cheaper than an instantiation), else a new one replacing the least recently used.
    pub(super) fn insert(
        &mut self,
        names: Vec<&'static str>,
        topo: Vec<u8>,
        key: Vec<u8>,
        mut update: impl FnMut(&mut G) -> bool,
        make: impl FnOnce() -> Result<G>,
    ) -> Result<&mut G> {
        let full = self.entries.len() >= CACHED_GRAPHS;
        let same_length =
            (CURRENT..self.entries.len()).rev().find(|&k| full && self.entries[k].names.len() == names.len());
        let updated = same_length.filter(|&k| update(&mut self.entries[k].graph)).and_then(|k| self.entries.remove(k));
        let graph = match updated {
            Some(e) => e.graph,
            None => make()?,
        };
        self.entries.push_front(Entry { names, topo, key, graph });
        self.entries.truncate(CACHED_GRAPHS);
        Ok(&mut self.entries[0].graph)
    }

    pub(super) fn clear(&mut self) {
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new sequence of the kernels and dependencies of a cached graph updates that graph
    /// in place, least recently used first, only graphs that can be (`usable`); a failed
    /// update drops the graph.
    #[test]
    fn graphs_of_the_same_kernels_are_updated_in_place() {
        let mut cache = Cache::<u32>::default();
        for (k, name) in ["even", "odd", "even", "odd"].into_iter().enumerate() {
            let made = cache.insert(vec![name], vec![1], vec![k as u8], |_| false, || Ok(k as u32)).unwrap();
            assert_eq!(*made, k as u32);
        }
        let usable = |g: &u32| *g != 0;
        // Most recent first: odd 3, even 2, odd 1, even 0. Graph 0 cannot be updated in
        // place: a new even sequence takes graph 2.
        let set = cache.reuse(&["even"], &[1], vec![9], usable, |g| {
            *g += 10;
            true
        });
        assert_eq!(set.copied(), Some(12));
        assert_eq!(cache.find(&["even"], &[9]).copied(), Some(12));
        // Another topology: none.
        assert!(cache.reuse(&["odd"], &[2], vec![8], usable, |_| true).is_none());
        let len = cache.entries.len();
        assert!(cache.reuse(&["odd"], &[1], vec![6], usable, |_| false).is_none());
        assert_eq!(cache.entries.len(), len - 1, "a failed update drops the graph");
        // Odd 1 was dropped: odd 3 is next.
        assert_eq!(cache.reuse(&["odd"], &[1], vec![5], usable, |_| true).copied(), Some(3));
    }

    /// The cache's policy over root steps: two parities per mesh state, a new state every
    /// 32 steps, levels (launches) added over the first states; graphs are numbered as
    /// made, updates counted.
    #[test]
    fn two_parities_per_mesh_state_replay_after_their_first_step() {
        let mut cache = Cache::<(u32, u32)>::default();
        let (mut made, mut updates, mut hits) = (0u32, 0u32, 0u32);
        for state in 0..10u8 {
            // Levels appear over the first states: sequences of 1, 2, then 3 launches.
            let launches = 1 + state.min(2) as usize;
            for step in 0..32u8 {
                let names = vec![if step % 2 == 0 { "even" } else { "odd" }; launches];
                let key = vec![state, step % 2];
                if cache.find(&names, &key).is_some() {
                    hits += 1;
                    continue;
                }
                cache
                    .insert(
                        names,
                        Vec::new(),
                        key,
                        |g| {
                            g.1 += 1;
                            updates += 1;
                            true
                        },
                        || {
                            made += 1;
                            Ok((made, 0))
                        },
                    )
                    .unwrap();
            }
        }
        assert_eq!(hits, 10 * 30, "every step but the first two of a state replays");
        // States 0–2 make their graphs, and so does state 3's first (the only graphs of
        // three launches are the current pair's); every later one updates a graph of the
        // state before.
        assert_eq!((made, updates), (7, 13));
        assert_eq!(cache.entries.len(), CACHED_GRAPHS);
    }
}
