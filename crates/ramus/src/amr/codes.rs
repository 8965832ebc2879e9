//! The refinement marks and block statuses of the public API, as `#[repr(i32)]` enums
//! over the integer codes the device arrays hold ([`ramus_kernels::amr`]; paper, table
//! `tab:amr_data_struct`). Kernels keep the integers; the host speaks in these types.

use ramus_kernels::amr::{status, MARK_COARSEN, MARK_NONE, MARK_REFINE, MARK_REFINE_FREEZE};

/// A refinement request for one leaf, applied by the next adaptation
/// ([`super::Mesh::adapt`]).
#[repr(i32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mark {
    /// No request.
    #[default]
    None = MARK_NONE,
    /// Refine this leaf (ignored at the level limit or where 2:1 balance forbids it).
    Refine = MARK_REFINE,
    /// Refine this leaf and freeze the refinement: the block becomes
    /// [`Status::RefinedPermanent`] (the paper's wall-distance rule with freezing).
    RefineFreeze = MARK_REFINE_FREEZE,
    /// Coarsen this leaf into its parent: honoured only when every sibling asks too, the
    /// parent is not permanent, and 2:1 balance allows it.
    Coarsen = MARK_COARSEN,
}

impl Mark {
    /// The device code.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The mark of a device code (`None` for a value no mark has).
    pub const fn from_code(code: i32) -> Option<Mark> {
        match code {
            MARK_NONE => Some(Mark::None),
            MARK_REFINE => Some(Mark::Refine),
            MARK_REFINE_FREEZE => Some(Mark::RefineFreeze),
            MARK_COARSEN => Some(Mark::Coarsen),
            _ => None,
        }
    }
}

/// The refinement status of a pool slot (paper, `cblock_ID_ref`).
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// A free pool slot.
    Inactive = status::INACTIVE,
    /// A leaf.
    Unrefined = status::UNREFINED,
    /// Has children, all leaves: may be coarsened.
    Refined = status::REFINED,
    /// Has children, at least one refined: coarsening it would orphan grandchildren.
    RefinedWithChild = status::REFINED_WITH_CHILD,
    /// Has children and is never coarsened (frozen by the wall-distance rule).
    RefinedPermanent = status::REFINED_PERMANENT,
    /// Transient, inside an adaptation: a leaf to be refined.
    MarkedRefine = status::MARKED_REFINE,
    /// Transient, inside an adaptation: a block whose children are to be removed.
    MarkedCoarsen = status::MARKED_COARSEN,
    /// Transient, inside an adaptation: a child just created.
    New = status::NEW,
    /// Transient, inside an adaptation: a child being removed.
    Remove = status::REMOVE,
}

impl Status {
    /// The device code.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The status of a device code (`None` for a value no status has).
    pub const fn from_code(code: i32) -> Option<Status> {
        Some(match code {
            status::INACTIVE => Status::Inactive,
            status::UNREFINED => Status::Unrefined,
            status::REFINED => Status::Refined,
            status::REFINED_WITH_CHILD => Status::RefinedWithChild,
            status::REFINED_PERMANENT => Status::RefinedPermanent,
            status::MARKED_REFINE => Status::MarkedRefine,
            status::MARKED_COARSEN => Status::MarkedCoarsen,
            status::NEW => Status::New,
            status::REMOVE => Status::Remove,
            _ => return None,
        })
    }

    /// Whether a block with this status has children.
    pub const fn has_children(self) -> bool {
        status::has_children(self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for m in [Mark::None, Mark::Refine, Mark::RefineFreeze, Mark::Coarsen] {
            assert_eq!(Mark::from_code(m.code()), Some(m));
        }
        for code in -1..=7 {
            assert_eq!(Status::from_code(code).map(Status::code), Some(code));
        }
        assert_eq!(Mark::from_code(3), None);
        assert_eq!(Status::from_code(8), None);
    }
}
