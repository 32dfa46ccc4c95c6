//! Device memory: the global space of one emulated device.
//!
//! Allocations get fresh, increasing addresses with a red zone after each, and freed
//! ranges are never handed out again, so every out-of-bounds or use-after-free access
//! falls outside all live allocations and is detected.

use crate::MemError;

/// First global address: far from 0 so that null and small offsets are never valid.
const GLOBAL_BASE: u64 = 0x0000_0001_0000_0000;
/// Global addresses stay below this; the generic local window lies above it.
pub(crate) const GLOBAL_LIMIT: u64 = 0x0000_8000_0000_0000;
/// Generic addresses `LOCAL_WINDOW + a` name local-space address `a` of the running thread.
pub(crate) const LOCAL_WINDOW: u64 = 0x0001_0000_0000_0000;
/// Allocation base alignment, as cuMemAlloc guarantees.
const ALIGN: u64 = 256;
/// Unallocated bytes after each allocation, so a straddling access is never inside a neighbour.
const RED_ZONE: u64 = 4096;
/// Default capacity of a device: live bytes beyond it are refused (host memory backs
/// every byte, and the machine running the tests is shared).
pub const DEFAULT_CAPACITY: usize = 4 << 30;

pub(crate) struct Allocation {
    pub base: u64,
    pub data: Vec<u8>,
}

impl Allocation {
    pub fn end(&self) -> u64 {
        self.base + self.data.len() as u64
    }
}

/// The global space: live allocations (module globals included) and the freed ranges.
pub struct Memory {
    /// Live allocations, sorted by base (bases only increase, so pushes keep the order).
    pub(crate) live: Vec<Allocation>,
    /// Freed ranges (base, len), sorted by base, for use-after-free diagnostics.
    freed: Vec<(u64, usize)>,
    next: u64,
    live_bytes: usize,
    capacity: usize,
}

impl Default for Memory {
    fn default() -> Self {
        Self::new()
    }
}

impl Memory {
    /// A device with [`DEFAULT_CAPACITY`] bytes.
    pub fn new() -> Memory {
        Self::with_capacity(DEFAULT_CAPACITY)
    }

    /// A device that holds at most `capacity` live bytes.
    pub fn with_capacity(capacity: usize) -> Memory {
        Memory { live: Vec::new(), freed: Vec::new(), next: GLOBAL_BASE, live_bytes: 0, capacity }
    }

    /// The most live bytes this device holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// A new zero-filled allocation of `bytes` bytes; its address is 256-byte aligned.
    pub fn alloc(&mut self, bytes: usize) -> Result<u64, MemError> {
        if bytes == 0 {
            return Err(MemError::ZeroSize);
        }
        if bytes > self.capacity - self.live_bytes {
            return Err(MemError::OutOfMemory(bytes));
        }
        let base = self.next;
        let end = (bytes as u64)
            .checked_add(base)
            .and_then(|e| e.checked_add(RED_ZONE + ALIGN - 1))
            .map(|e| e & !(ALIGN - 1))
            .filter(|&e| e <= GLOBAL_LIMIT)
            .ok_or(MemError::OutOfMemory(bytes))?;
        let mut data = Vec::new();
        data.try_reserve_exact(bytes).map_err(|_| MemError::OutOfMemory(bytes))?;
        data.resize(bytes, 0);
        self.next = end;
        self.live_bytes += bytes;
        self.live.push(Allocation { base, data });
        Ok(base)
    }

    /// Frees the allocation whose base is `addr`.
    pub fn free(&mut self, addr: u64) -> Result<(), MemError> {
        let i = self.live.binary_search_by_key(&addr, |a| a.base).map_err(|_| MemError::NotABase(addr))?;
        let a = self.live.remove(i);
        self.live_bytes -= a.data.len();
        let at = self.freed.partition_point(|f| f.0 < a.base);
        self.freed.insert(at, (a.base, a.data.len()));
        Ok(())
    }

    /// Copies `out.len()` bytes from `addr`; the range must lie in one live allocation.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemError> {
        let (a, off) = self.range(addr, out.len())?;
        out.copy_from_slice(&self.live[a].data[off..off + out.len()]);
        Ok(())
    }

    /// Copies `data` to `addr`; the range must lie in one live allocation.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        let (a, off) = self.range(addr, data.len())?;
        self.live[a].data[off..off + data.len()].copy_from_slice(data);
        Ok(())
    }

    /// Writes `pattern` (1, 2 or 4 bytes) `count` times from `addr` (cuMemsetD8/16/32).
    pub fn fill(&mut self, addr: u64, pattern: &[u8], count: usize) -> Result<(), MemError> {
        if !matches!(pattern.len(), 1 | 2 | 4) {
            return Err(MemError::BadPattern(pattern.len()));
        }
        let len = count.checked_mul(pattern.len()).ok_or(MemError::OutOfBounds { addr, len: usize::MAX })?;
        let (a, off) = self.range(addr, len)?;
        for chunk in self.live[a].data[off..off + len].chunks_exact_mut(pattern.len()) {
            chunk.copy_from_slice(pattern);
        }
        Ok(())
    }

    /// Bytes in live allocations.
    pub fn live_bytes(&self) -> usize {
        self.live_bytes
    }

    /// (base, len) of the live allocation holding `addr`.
    pub fn allocation_of(&self, addr: u64) -> Option<(u64, usize)> {
        self.index_of(addr).map(|i| (self.live[i].base, self.live[i].data.len()))
    }

    /// Index in `live` of the allocation holding `addr`.
    pub(crate) fn index_of(&self, addr: u64) -> Option<usize> {
        let i = self.live.partition_point(|a| a.base <= addr).checked_sub(1)?;
        (addr < self.live[i].end()).then_some(i)
    }

    /// (allocation index, offset) of a `len`-byte range inside one live allocation.
    fn range(&self, addr: u64, len: usize) -> Result<(usize, usize), MemError> {
        let bad = MemError::OutOfBounds { addr, len };
        let i = self.index_of(addr).ok_or(bad.clone())?;
        let a = &self.live[i];
        let off = (addr - a.base) as usize;
        if len > a.data.len() - off {
            return Err(bad);
        }
        Ok((i, off))
    }

    /// Why `len` bytes at global address `addr` are not accessible: the nearest live or
    /// freed allocation and where the access lies relative to it.
    pub(crate) fn describe_miss(&self, addr: u64, len: u64) -> String {
        let at = self.freed.partition_point(|f| f.0 <= addr);
        if let Some(&(b, l)) = at.checked_sub(1).map(|i| &self.freed[i]) {
            if addr < b + l as u64 {
                return format!("use after free: offset {} of the freed {l}-byte allocation at {b:#x}", addr - b);
            }
        }
        let after = self.live.partition_point(|a| a.base <= addr);
        let before = after.checked_sub(1).map(|i| &self.live[i]);
        let next = self.live.get(after);
        if let Some(a) = before {
            if addr < a.end() {
                return format!(
                    "straddles the end of the {}-byte allocation at {:#x} (offset {}, {} bytes past its end)",
                    a.data.len(),
                    a.base,
                    addr - a.base,
                    addr + len - a.end()
                );
            }
        }
        let dist_before = before.map(|a| addr - a.end());
        let dist_next = next.map(|a| a.base - addr);
        match (before, dist_before, next, dist_next) {
            (Some(a), Some(d), _, dn) if dn.is_none_or(|dn| d <= dn) => format!(
                "out of bounds: offset {} of the {}-byte allocation at {:#x} ({} bytes past its end)",
                addr - a.base,
                a.data.len(),
                a.base,
                d
            ),
            (_, _, Some(a), Some(d)) => {
                format!("out of bounds: {} bytes before the {}-byte allocation at {:#x}", d, a.data.len(), a.base)
            }
            _ => "no allocation exists".to_string(),
        }
    }
}
