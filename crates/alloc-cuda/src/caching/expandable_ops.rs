//! The caching allocator's expandable-segment operations (PyTorch's
//! `expandable_segments:True`): finding room in a segment's reserved
//! address range, mapping and unmapping pages, releasing segments.

use super::*;

impl State {
    pub(super) fn page_size(&self, kind: PoolKind, granularity: u64) -> u64 {
        let page = if kind == PoolKind::Small {
            SMALL_BUFFER
        } else {
            LARGE_BUFFER
        };
        page.div_ceil(granularity.max(1)) * granularity.max(1)
    }

    /// The lowest-address place with `size` bytes of free or unmapped space
    /// on `stream`, or a new segment (PyTorch's `find_expandable_block`).
    pub(super) fn find_expandable_block<D: RawDevice>(
        &mut self,
        dev: &D,
        stream: StreamId,
        kind: PoolKind,
        size: u64,
    ) -> Result<BlockId, DeviceError> {
        let allocatable =
            |blocks: &Arena, id: Option<BlockId>| id.is_some_and(|i| blocks[i].is_free());
        let candidates: Vec<BlockId> = self
            .pool(kind)
            .unmapped
            .range((stream, 0)..)
            .take_while(|(k, _)| k.0 == stream)
            .map(|(_, &id)| id)
            .collect();
        for id in candidates {
            let mut c = id;
            if allocatable(&self.blocks, self.blocks[c].prev) {
                if let Some(p) = self.blocks[c].prev {
                    c = p;
                }
            }
            let mut bytes = 0u64;
            let mut cur = Some(c);
            while bytes < size && allocatable(&self.blocks, cur) {
                if let Some(i) = cur {
                    bytes += self.blocks[i].size;
                    cur = self.blocks[i].next;
                }
            }
            if bytes >= size {
                return Ok(c);
            }
        }
        let page = self.page_size(kind, dev.vmm_granularity());
        let (_, total) = dev.mem_get_info()?;
        let es = ExpandableSegment::new(dev, stream, page, total)?;
        let (base, es_size) = (es.base, es.size());
        let seg_id = match self.segments.iter().position(Option::is_none) {
            Some(i) => {
                self.segments[i] = Some(es);
                i
            }
            None => {
                self.segments.push(Some(es));
                self.segments.len() - 1
            }
        };
        let mut b = Block::new(stream, es_size, kind, base);
        b.mapped = false;
        b.expandable = Some(seg_id);
        let id = self.blocks.insert(b);
        self.pool_mut(kind).unmapped.insert((stream, base), id);
        tracing::debug!(
            target: "alloc_cuda",
            address = base,
            reserved = es_size,
            page,
            stream = stream.0,
            "expandable segment reserved"
        );
        Ok(id)
    }

    /// Maps the pages covering the first `size` bytes of the unmapped block
    /// `id` and merges it with free neighbours (PyTorch's `map_block`).
    pub(super) fn map_block<D: RawDevice>(
        &mut self,
        dev: &D,
        id: BlockId,
        size: u64,
    ) -> Result<bool, DeviceError> {
        let (seg, ptr, bsize, stream, kind, next) = {
            let b = &self.blocks[id];
            (b.expandable, b.ptr, b.size, b.stream, b.pool, b.next)
        };
        let Some(es) = seg
            .and_then(|s| self.segments.get_mut(s))
            .and_then(Option::as_mut)
        else {
            return Ok(false);
        };
        let (mptr, msize) = es.map(dev, ptr, size.min(bsize))?;
        if msize == 0 {
            return Ok(false);
        }
        debug_assert_eq!(mptr, ptr);
        self.pool_mut(kind).unmapped.remove(&(stream, ptr));
        self.blocks[id].mapped = true;
        if msize < bsize {
            let mut rem = Block::new(stream, bsize - msize, kind, ptr + msize);
            rem.mapped = false;
            rem.expandable = seg;
            rem.prev = Some(id);
            rem.next = next;
            let rid = self.blocks.insert(rem);
            if let Some(n) = next {
                self.blocks[n].prev = Some(rid);
            }
            self.blocks[id].next = Some(rid);
            self.blocks[id].size = msize;
            self.pool_mut(kind)
                .unmapped
                .insert((stream, ptr + msize), rid);
        }
        if let Some(p) = self.blocks[id].prev {
            self.try_merge_blocks(id, p);
        }
        if let Some(n) = self.blocks[id].next {
            self.try_merge_blocks(id, n);
        }
        self.insert_into_blocks(id);
        self.total_allocated_memory += msize;
        inc(&mut self.stats.reserved_bytes, kind, msize);
        self.stats.num_device_alloc += 1;
        if let Some(h) = self.history.as_mut() {
            h.record_segment(TraceAction::SegmentMap, mptr, msize, stream.0);
        }
        tracing::debug!(target: "alloc_cuda", address = mptr, size = msize, "segment mapped");
        Ok(true)
    }

    /// PyTorch's `try_allocate_expandable_block`.
    pub(super) fn try_allocate_expandable_block<D: RawDevice>(
        &mut self,
        dev: &D,
        stream: StreamId,
        kind: PoolKind,
        size: u64,
    ) -> Result<Option<BlockId>, DeviceError> {
        let mut c = self.find_expandable_block(dev, stream, kind, size)?;
        if !self.blocks[c].mapped {
            let csize = self.blocks[c].size;
            if !self.map_block(dev, c, csize.min(size))? {
                return Ok(None);
            }
        }
        while self.blocks[c].size < size {
            let remaining = size - self.blocks[c].size;
            let Some(n) = self.blocks[c].next else {
                return Ok(None);
            };
            let nsize = self.blocks[n].size;
            if !self.map_block(dev, n, remaining.min(nsize))? {
                return Ok(None);
            }
            c = n;
        }
        self.erase_from_blocks(c);
        Ok(Some(c))
    }

    /// Unmaps the whole pages of the free block `id` (PyTorch's
    /// `unmap_block`).
    pub(super) fn unmap_block<D: RawDevice>(
        &mut self,
        dev: &D,
        id: BlockId,
    ) -> Result<(), DeviceError> {
        let (seg, ptr, bsize, stream, kind) = {
            let b = &self.blocks[id];
            (b.expandable, b.ptr, b.size, b.stream, b.pool)
        };
        let Some(es) = seg
            .and_then(|s| self.segments.get_mut(s))
            .and_then(Option::as_mut)
        else {
            return Ok(());
        };
        let (uptr, usize_) = es.unmap(dev, ptr, bsize)?;
        if usize_ == 0 {
            return Ok(());
        }
        self.erase_from_blocks(id);
        let before = uptr - ptr;
        if before > 0 {
            let prev = self.blocks[id].prev;
            let mut bf = Block::new(stream, before, kind, ptr);
            bf.expandable = seg;
            bf.prev = prev;
            bf.next = Some(id);
            let bid = self.blocks.insert(bf);
            if let Some(p) = prev {
                self.blocks[p].next = Some(bid);
            }
            self.blocks[id].prev = Some(bid);
            self.insert_into_blocks(bid);
        }
        let after = bsize - (before + usize_);
        if after > 0 {
            let next = self.blocks[id].next;
            let mut af = Block::new(stream, after, kind, uptr + usize_);
            af.expandable = seg;
            af.prev = Some(id);
            af.next = next;
            let aid = self.blocks.insert(af);
            if let Some(n) = next {
                self.blocks[n].prev = Some(aid);
            }
            self.blocks[id].next = Some(aid);
            self.insert_into_blocks(aid);
        }
        {
            let b = &mut self.blocks[id];
            b.ptr = uptr;
            b.size = usize_;
            b.mapped = false;
        }
        if let Some(p) = self.blocks[id].prev {
            self.try_merge_blocks(id, p);
        }
        if let Some(n) = self.blocks[id].next {
            self.try_merge_blocks(id, n);
        }
        let new_ptr = self.blocks[id].ptr;
        self.pool_mut(kind).unmapped.insert((stream, new_ptr), id);
        self.total_allocated_memory -= usize_;
        dec(&mut self.stats.reserved_bytes, kind, usize_);
        self.stats.num_device_free += 1;
        if let Some(h) = self.history.as_mut() {
            h.record_segment(TraceAction::SegmentUnmap, uptr, usize_, stream.0);
        }
        tracing::debug!(target: "alloc_cuda", address = uptr, size = usize_, "segment unmapped");
        Ok(())
    }

    /// Deletes a fully unmapped expandable segment (PyTorch's
    /// `release_expandable_segment`).
    pub(super) fn release_expandable_segment<D: RawDevice>(
        &mut self,
        dev: &D,
        id: BlockId,
    ) -> Result<(), DeviceError> {
        let (seg, stream, ptr, kind) = {
            let b = &self.blocks[id];
            (b.expandable, b.stream, b.ptr, b.pool)
        };
        let Some(s) = seg else {
            return Ok(());
        };
        if let Some(es) = self.segments.get_mut(s).and_then(Option::as_mut) {
            es.release(dev)?;
        }
        if let Some(slot) = self.segments.get_mut(s) {
            *slot = None;
        }
        self.pool_mut(kind).unmapped.remove(&(stream, ptr));
        self.blocks.remove(id);
        tracing::debug!(target: "alloc_cuda", address = ptr, "expandable segment released");
        Ok(())
    }

    /// Releases expandable segments with nothing mapped. PyTorch keeps
    /// them (a failed first mapping leaves one behind, to be reused by the
    /// next growth); they hold address space only, so this runs on drop.
    pub(super) fn release_unmapped_segments<D: RawDevice>(
        &mut self,
        dev: &D,
    ) -> Result<(), DeviceError> {
        let ids: Vec<BlockId> = self
            .pools
            .iter()
            .flat_map(|p| p.unmapped.values().copied())
            .collect();
        for id in ids {
            let b = &self.blocks[id];
            if !b.mapped && !b.is_split() {
                self.release_expandable_segment(dev, id)?;
            }
        }
        Ok(())
    }

    // ---- snapshot and validation ------------------------------------------
}
