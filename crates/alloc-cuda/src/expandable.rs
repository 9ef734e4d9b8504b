//! One expandable segment: a large reserved virtual range backed on demand
//! by physical pages (PyTorch's `ExpandableSegment`).

use crate::device::{DeviceError, DevicePtr, PhysHandle, RawDevice, StreamId};

/// A reserved virtual range of `page_size * max_pages` bytes; page `i`
/// covers `[base + i * page_size, base + (i + 1) * page_size)` and is
/// mapped iff `pages[i]` holds its physical handle.
#[derive(Debug)]
pub(crate) struct ExpandableSegment {
    pub(crate) base: u64,
    pub(crate) page_size: u64,
    pub(crate) max_pages: u64,
    pub(crate) pages: Vec<Option<PhysHandle>>,
    pub(crate) stream: StreamId,
}

impl ExpandableSegment {
    /// Reserves enough address space for 9/8 of the device's memory, as
    /// PyTorch does (so pages unmapped early in the range can be mapped
    /// again at its end).
    pub(crate) fn new<D: RawDevice>(
        dev: &D,
        stream: StreamId,
        page_size: u64,
        total_memory: u64,
    ) -> Result<ExpandableSegment, DeviceError> {
        let want = total_memory.saturating_add(total_memory / 8);
        let max_pages = want.div_ceil(page_size).max(1);
        let size = page_size.saturating_mul(max_pages);
        let base = dev.reserve_address_range(size, dev.vmm_granularity())?;
        Ok(ExpandableSegment {
            base: base.addr(),
            page_size,
            max_pages,
            pages: Vec::new(),
            stream,
        })
    }

    /// Bytes of address space reserved.
    pub(crate) fn size(&self) -> u64 {
        self.page_size * self.max_pages
    }

    fn range(&self, begin: u64, end: u64) -> (u64, u64) {
        (
            self.base + self.page_size * begin,
            self.page_size * (end - begin),
        )
    }

    fn trim(&mut self) {
        while matches!(self.pages.last(), Some(None)) {
            self.pages.pop();
        }
    }

    fn page_index(&self, i: u64) -> usize {
        // Page indices are < max_pages, whose byte size fits the address
        // space, so they fit a usize on 64-bit targets.
        usize::try_from(i).unwrap_or(usize::MAX)
    }

    /// Maps every page overlapping `[ptr, ptr + size)`; `ptr` is
    /// page-aligned. Returns the mapped range, whose size is 0 when the
    /// device ran out of memory (then nothing was mapped).
    pub(crate) fn map<D: RawDevice>(
        &mut self,
        dev: &D,
        ptr: u64,
        size: u64,
    ) -> Result<(u64, u64), DeviceError> {
        let begin = (ptr - self.base) / self.page_size;
        let end = (ptr + size - self.base).div_ceil(self.page_size);
        if begin == end {
            return Ok(self.range(begin, begin));
        }
        let end_idx = self.page_index(end);
        if self.pages.len() < end_idx {
            self.pages.resize(end_idx, None);
        }
        for i in begin..end {
            let idx = self.page_index(i);
            if self.pages[idx].is_some() {
                return Err(DeviceError::InvalidValue(format!(
                    "expandable segment page {i} is already mapped"
                )));
            }
            match dev.create_physical(self.page_size) {
                Ok(h) => self.pages[idx] = Some(h),
                Err(e) => {
                    // Give back what this call created, as PyTorch does on
                    // CUDA_ERROR_OUT_OF_MEMORY.
                    for j in begin..i {
                        let jdx = self.page_index(j);
                        if let Some(h) = self.pages[jdx].take() {
                            // SAFETY: `h` was created just above and never
                            // mapped.
                            unsafe { dev.release_physical(h)? };
                        }
                    }
                    self.trim();
                    return if e.is_out_of_memory() {
                        Ok(self.range(begin, begin))
                    } else {
                        Err(e)
                    };
                }
            }
        }
        for i in begin..end {
            let idx = self.page_index(i);
            if let Some(h) = self.pages[idx] {
                let (p, s) = self.range(i, i + 1);
                dev.map(DevicePtr(p), s, h)?;
            }
        }
        let (p, s) = self.range(begin, end);
        dev.set_access(DevicePtr(p), s)?;
        Ok((p, s))
    }

    /// Unmaps every page lying entirely inside `[ptr, ptr + size)`, after
    /// synchronizing the segment's stream. Returns the unmapped range
    /// (size 0 if no whole page fits).
    pub(crate) fn unmap<D: RawDevice>(
        &mut self,
        dev: &D,
        ptr: u64,
        size: u64,
    ) -> Result<(u64, u64), DeviceError> {
        let begin = (ptr - self.base).div_ceil(self.page_size);
        let end = (ptr + size - self.base) / self.page_size;
        if begin >= end {
            return Ok((ptr, 0));
        }
        self.unmap_pages(dev, begin, end)?;
        Ok(self.range(begin, end))
    }

    fn unmap_pages<D: RawDevice>(
        &mut self,
        dev: &D,
        begin: u64,
        end: u64,
    ) -> Result<(), DeviceError> {
        // cuMemUnmap/cuMemRelease do not synchronize: wait for the stream.
        dev.synchronize_stream(self.stream)?;
        for i in begin..end {
            let idx = self.page_index(i);
            if let Some(h) = self.pages.get_mut(idx).and_then(Option::take) {
                let (p, s) = self.range(i, i + 1);
                // SAFETY: the page is free (the caller only unmaps pages of
                // free blocks) and its stream was just synchronized.
                unsafe {
                    dev.unmap(DevicePtr(p), s)?;
                    dev.release_physical(h)?;
                }
            }
        }
        self.trim();
        Ok(())
    }

    /// Unmaps everything still mapped and frees the address range.
    pub(crate) fn release<D: RawDevice>(&mut self, dev: &D) -> Result<(), DeviceError> {
        let n = self.pages.len() as u64;
        if self.pages.iter().any(Option::is_some) {
            self.unmap_pages(dev, 0, n)?;
        }
        // SAFETY: the range is our reservation and nothing is mapped in it.
        unsafe { dev.free_address_range(DevicePtr(self.base), self.size()) }
    }

    /// Whether page `i` is mapped.
    pub(crate) fn is_mapped(&self, i: u64) -> bool {
        self.pages
            .get(self.page_index(i))
            .is_some_and(Option::is_some)
    }
}
