//! A second field on the same mesh through the `BlockData` hooks: a per-block value that
//! records the level a block was born on (a child gets its parent's value + 1, a parent
//! that is coarsened keeps its own). After any sequence of adaptations every active block
//! must hold its level, and a serialise/deserialise round trip must restore it: this
//! fails if a hook is not called, called with the wrong blocks (e.g. a refined parent
//! filed under the wrong level), or called in the wrong order.

use std::ops::Range;

use ramus::amr::{AdaptStage, AdaptWorkspace, BlockData, Capacity, Mesh, MeshSpec, RefinedBlocks, RelinkedBlocks};
use ramus::backend::{Buffer, Device};
use ramus::{Boundary, Dim, Error, Mark, Result, D2, D3};

/// The level each block was born on, one `f64` per pool block.
struct BirthLevel {
    value: Buffer<f64>,
    /// Calls of each hook, in their order: `before_coarsen`, `after_connectivity`,
    /// `fill_new_children`, `after_relink`.
    calls: [usize; 4],
    /// Relinked parents seen over all adaptations.
    relinked: usize,
}

impl BirthLevel {
    fn new<D: Dim>(mesh: &Mesh<D>) -> Self {
        // Root blocks are born on level 0: the pool starts zeroed.
        BirthLevel { value: mesh.device().zeros(mesh.capacity()).unwrap(), calls: [0; 4], relinked: 0 }
    }
}

impl<D: Dim> BlockData<D> for BirthLevel {
    fn before_coarsen(&mut self, _mesh: &Mesh<D>, _stage: AdaptStage) -> Result<()> {
        self.calls[0] += 1;
        Ok(())
    }

    fn after_connectivity(&mut self, _mesh: &Mesh<D>, relinked: RelinkedBlocks<'_>, _stage: AdaptStage) -> Result<()> {
        // After this adaptation's `before_coarsen`, before its fill.
        assert_eq!(self.calls, [self.calls[1] + 1, self.calls[1], self.calls[1], self.calls[1]], "hook order");
        self.calls[1] += 1;
        assert!(relinked.levels() == 0 || relinked.per_level() > 0);
        Ok(())
    }

    fn fill_new_children(&mut self, mesh: &Mesh<D>, refined: RefinedBlocks<'_>, _stage: AdaptStage) -> Result<()> {
        assert_eq!(self.calls[1], self.calls[2] + 1, "fill before after_connectivity");
        self.calls[2] += 1;
        let dev = mesh.device();
        let child = dev.download(mesh.arrays().child)?;
        let mut value = dev.download(&self.value)?;
        for l in 1..refined.offsets.len().saturating_sub(1) {
            let parents = dev.read(refined.parents, refined.offsets[l]..refined.offsets[l + 1])?;
            for p in parents {
                let c = child[p as usize] as usize;
                for k in 0..D::CHILDREN {
                    // The parents of level-`l` children are on level `l - 1`.
                    assert_eq!(value[p as usize], (l - 1) as f64, "parent {p} filed under level {l}");
                    value[c + k] = value[p as usize] + 1.0;
                }
            }
        }
        dev.write(&mut self.value, 0, &value)
    }

    fn after_relink(&mut self, mesh: &Mesh<D>, relinked: RelinkedBlocks<'_>, _stage: AdaptStage) -> Result<()> {
        assert_eq!(self.calls[2], self.calls[3] + 1, "after_relink before the fill");
        self.calls[3] += 1;
        // Level `l`'s list: blocks with children on level `l`, ascending, every level's
        // list within `ids` and apart from the others.
        assert!(relinked.levels() == mesh.max_levels() - 1 || relinked.per_level() == 0);
        let dev = mesh.device();
        let (child, level) = (dev.download(mesh.arrays().child)?, dev.download(mesh.arrays().level)?);
        let lists = relinked.lists(mesh)?;
        assert_eq!(lists.levels(), relinked.levels());
        let mut end = 0;
        for l in 0..lists.levels() {
            let (offset, count) = lists.ranges[l];
            assert!(offset >= end && offset + count <= lists.ids.len(), "level {l}: {offset} + {count}");
            end = if count > 0 { offset + count } else { end };
            assert_eq!(lists.level(l)?.len(), count);
            self.relinked += count;
            let ids = dev.read(&lists.ids, offset..offset + count)?;
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "level {l}: not ascending: {ids:?}");
            for b in ids {
                assert!(child[b as usize] >= 0 && level[b as usize] == l as i32, "block {b} listed on level {l}");
            }
        }
        assert!(lists.level(lists.levels())?.is_empty());
        Ok(())
    }

    fn serialize(&self, mesh: &Mesh<D>, blocks: Range<usize>) -> Result<Vec<u8>> {
        let v = mesh.device().read(&self.value, blocks)?;
        Ok(v.iter().flat_map(|x| x.to_le_bytes()).collect())
    }

    fn deserialize(&mut self, mesh: &Mesh<D>, blocks: Range<usize>, bytes: &[u8]) -> Result<()> {
        if bytes.len() != 8 * blocks.len() {
            let (value, allowed) = (bytes.len().to_string(), format!("{} bytes", 8 * blocks.len()));
            return Err(Error::InvalidParameter { field: "bytes", value, allowed });
        }
        let v: Vec<f64> = bytes.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect();
        mesh.device().write(&mut self.value, blocks.start, &v)
    }
}

/// Every active block holds its level.
fn check_levels<D: Dim>(mesh: &Mesh<D>, field: &BirthLevel) {
    let s = mesh.snapshot().unwrap();
    let value = mesh.device().download(&field.value).unwrap();
    for ids in &s.id_sets {
        for &b in ids {
            assert_eq!(value[b as usize], s.level[b as usize] as f64, "block {b}");
        }
    }
}

fn adapt<D: Dim>(mesh: &mut Mesh<D>, ws: &mut AdaptWorkspace, field: &mut BirthLevel) {
    let stage = AdaptStage { steps: 0 };
    mesh.adapt_blocks(ws, &mut [field as &mut dyn BlockData<D>], stage).unwrap();
}

fn run<D: Dim>(cells: [usize; 3]) {
    let spec = MeshSpec {
        cells,
        boundaries: [Boundary::NO_SLIP; 6],
        max_levels: 4,
        capacity: Capacity::Blocks { blocks: 40_000 },
    };
    let mut mesh = Mesh::<D>::new(Device::Cpu, spec, 8).unwrap();
    let mut ws = AdaptWorkspace::new(mesh.device()).unwrap();
    let mut field = BirthLevel::new(&mesh);
    // Refine a region three times (levels 1–3), then coarsen part of it, then refine again.
    for _ in 0..3 {
        let leaves = mesh.leaf_geometry().unwrap();
        let ids: Vec<u32> = leaves.iter().filter(|g| g.origin[0] < 8.0).map(|g| g.id).collect();
        mesh.mark_blocks(&ids, Mark::Refine).unwrap();
        adapt(&mut mesh, &mut ws, &mut field);
        check_levels(&mesh, &field);
    }
    assert!(mesh.blocks_per_level().iter().all(|&n| n > 0), "{:?}", mesh.blocks_per_level());
    let leaves = mesh.leaf_geometry().unwrap();
    let fine: Vec<u32> = leaves.iter().filter(|g| g.level == 3 && g.origin[1] < 4.0).map(|g| g.id).collect();
    mesh.mark_blocks(&fine, Mark::Coarsen).unwrap();
    let before = mesh.active_blocks();
    adapt(&mut mesh, &mut ws, &mut field);
    assert!(mesh.active_blocks() < before, "nothing was coarsened");
    check_levels(&mesh, &field);
    mesh.mark_with(|g| if g.level == 2 && g.origin[1] < 4.0 { Mark::Refine } else { Mark::None }).unwrap();
    adapt(&mut mesh, &mut ws, &mut field);
    check_levels(&mesh, &field);
    assert_eq!(field.calls, [5, 5, 5, 5]);
    assert!(field.relinked > 0, "no adaptation relinked a parent: the check above saw nothing");

    // Checkpoint round trip of the field alone.
    let hw = mesh.high_water();
    let bytes = BlockData::<D>::serialize(&field, &mesh, 0..hw).unwrap();
    let mut restored = BirthLevel::new(&mesh);
    BlockData::<D>::deserialize(&mut restored, &mesh, 0..hw, &bytes).unwrap();
    check_levels(&mesh, &restored);
    assert!(BlockData::<D>::deserialize(&mut restored, &mesh, 0..hw, &bytes[1..]).is_err());
}

#[test]
fn a_second_field_follows_refinement_and_coarsening_2d() {
    run::<D2>([32, 32, 0]);
}

#[test]
fn a_second_field_follows_refinement_and_coarsening_3d() {
    run::<D3>([16, 16, 16]);
}
