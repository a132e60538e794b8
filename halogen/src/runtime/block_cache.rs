//! Freed memory blocks kept for reuse, found by size: what the host's pooled heap
//! ([`super::pool`]) and the GPU runtime's device memory ([`super::gpu`]) share. A block
//! is a handle (an address, or a device's memory handle) with the size it was allocated
//! with; a request takes the smallest cached block that holds it and is at most twice as
//! large (a huge block stays for the request it suits), and past the cache's capacity the
//! largest blocks go back to their owner.
//!
//! ```
//! use halogen::runtime::block_cache::BlockCache;
//! let mut cache = BlockCache::new(1000);
//! assert!(cache.put(600, 1).is_empty());
//! // Over the capacity: the largest block comes back to be freed.
//! assert_eq!(cache.put(500, 2), vec![1]);
//! assert_eq!(cache.take(400), Some((500, 2)));
//! assert_eq!(cache.take(100), None);
//! ```

/// Freed blocks waiting for reuse (see the module's documentation).
#[derive(Debug, Default)]
pub struct BlockCache {
    /// (size in bytes, handle).
    blocks: Vec<(usize, u64)>,
    bytes: usize,
    capacity: usize,
}

impl BlockCache {
    /// An empty cache that keeps at most `capacity` bytes of blocks.
    pub fn new(capacity: usize) -> BlockCache {
        BlockCache { blocks: Vec::new(), bytes: 0, capacity }
    }

    /// Takes out the smallest block of at least `bytes` bytes and at most twice that:
    /// its size and handle.
    pub fn take(&mut self, bytes: usize) -> Option<(usize, u64)> {
        let best = (0..self.blocks.len())
            .filter(|&i| self.blocks[i].0 >= bytes && self.blocks[i].0 / 2 <= bytes)
            .min_by_key(|&i| self.blocks[i].0)?;
        let block = self.blocks.swap_remove(best);
        self.bytes -= block.0;
        Some(block)
    }

    /// Keeps a freed block of `size` bytes; returns the handles of the blocks (the largest
    /// first) that no longer fit under the capacity, for the caller to free.
    pub fn put(&mut self, size: usize, handle: u64) -> Vec<u64> {
        self.blocks.push((size, handle));
        self.bytes += size;
        let mut evicted = Vec::new();
        while self.bytes > self.capacity {
            let largest = (0..self.blocks.len()).max_by_key(|&i| self.blocks[i].0).expect("bytes come from blocks");
            let (size, handle) = self.blocks.swap_remove(largest);
            self.bytes -= size;
            evicted.push(handle);
        }
        evicted
    }

    /// Takes out every block: their handles, for the caller to free.
    pub fn take_all(&mut self) -> Vec<u64> {
        self.bytes = 0;
        std::mem::take(&mut self.blocks).into_iter().map(|(_, handle)| handle).collect()
    }

    /// Bytes held in cached blocks.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::BlockCache;

    #[test]
    fn the_smallest_block_that_fits_without_wasting_half_is_taken() {
        let mut c = BlockCache::new(1 << 20);
        for (size, handle) in [(100, 1), (300, 2), (200, 3), (1000, 4)] {
            assert!(c.put(size, handle).is_empty());
        }
        assert_eq!(c.bytes(), 1600);
        assert_eq!(c.take(150), Some((200, 3)));
        // 1000 would waste more than half of itself on 400.
        assert_eq!(c.take(400), None);
        assert_eq!(c.take(500), Some((1000, 4)));
        assert_eq!(c.bytes(), 400);
        let mut rest = c.take_all();
        rest.sort();
        assert_eq!((rest, c.bytes()), (vec![1, 2], 0));
    }
}
