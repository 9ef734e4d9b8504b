//! Building `torch.cuda.memory_snapshot()`'s segment list from the
//! allocator's state.

use super::*;

impl State {
    pub(super) fn snapshot(&self, device: i8) -> Vec<SegmentSnapshot> {
        let mut out = Vec::new();
        for (id, head) in self.blocks.iter() {
            if !head.mapped || head.prev.is_some_and(|p| self.blocks[p].mapped) {
                continue;
            }
            let mut seg = SegmentSnapshot {
                device,
                address: head.ptr,
                total_size: 0,
                allocated_size: 0,
                active_size: 0,
                requested_size: 0,
                stream: head.stream.0,
                segment_type: if head.pool == PoolKind::Small {
                    SegmentType::Small
                } else {
                    SegmentType::Large
                },
                segment_pool_id: (0, 0),
                is_expandable: head.expandable.is_some(),
                frames: Vec::new(),
                blocks: Vec::new(),
            };
            let mut cur = Some(id);
            while let Some(c) = cur {
                let b = &self.blocks[c];
                if !b.mapped {
                    break;
                }
                let state = if b.allocated {
                    BlockState::ActiveAllocated
                } else if b.is_active() {
                    BlockState::ActivePendingFree
                } else {
                    BlockState::Inactive
                };
                seg.total_size += b.size;
                if b.allocated {
                    seg.allocated_size += b.size;
                }
                if b.is_active() {
                    seg.active_size += b.size;
                    seg.requested_size += b.requested_size;
                }
                seg.blocks.push(BlockSnapshot {
                    address: b.ptr,
                    size: b.size,
                    requested_size: b.requested_size,
                    state,
                    frames: Vec::new(),
                });
                cur = b.next;
            }
            out.push(seg);
        }
        out.sort_by_key(|s| s.address);
        out
    }
}
