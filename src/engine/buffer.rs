//! [`AlignedBuf`]: the I/O buffers of one engine, in one aligned, zeroed allocation.
//!
//! ```text
//!  ptr ─► ┌──────── stride ────────┬──────── stride ────────┬─ … ─┐
//!         │ slot 0: len bytes │ pad │ slot 1: len bytes │ pad │     │
//!         └───────────────────┴─────┴───────────────────┴─────┴─────┘
//!  every slot starts on a multiple of `align`; stride = len rounded up to `align`
//! ```
//!
//! Why one allocation: O_DIRECT needs every buffer aligned to the device's logical block
//! size, and io_uring reads and writes it behind Rust's back, so its address must not move
//! for as long as the ring may touch it. A heap block owned by this type never moves, and
//! the engines only hand out slices of slots that the kernel is not using.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// Why a buffer could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BufferError {
    /// A slot of zero bytes cannot carry any I/O.
    #[error("buffer length must be at least 1 byte")]
    ZeroLen,
    /// At least one slot is needed.
    #[error("buffer count must be at least 1")]
    ZeroSlots,
    /// The alignment is not a power of two.
    #[error("buffer alignment {0} is not a power of two")]
    BadAlign(usize),
    /// `slots × stride` does not fit in memory.
    #[error("{slots} buffers of {len} bytes aligned to {align} do not fit in the address space")]
    TooLarge {
        /// Slots asked for.
        slots: usize,
        /// Bytes per slot asked for.
        len: usize,
        /// Alignment asked for.
        align: usize,
    },
    /// The allocator said no.
    #[error("cannot allocate {0} bytes for I/O buffers")]
    AllocFailed(usize),
}

/// `slots` buffers of `len` bytes each, every one aligned to `align`, zeroed at creation,
/// at a fixed address until drop.
#[derive(Debug)]
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
    slots: usize,
    len: usize,
    stride: usize,
    /// Set by an engine that could not make sure the kernel is done with the memory:
    /// then leaking it is the only sound choice.
    leak: bool,
}

// SAFETY: `AlignedBuf` uniquely owns its heap block (like a `Box<[u8]>`); the raw pointer is
// never shared with another `AlignedBuf`, so moving the owner to another thread is sound.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `slots` zeroed buffers of `len` bytes, each starting on a multiple of
    /// `align` (a power of two).
    pub fn new(slots: usize, len: usize, align: usize) -> Result<Self, BufferError> {
        if len == 0 {
            return Err(BufferError::ZeroLen);
        }
        if slots == 0 {
            return Err(BufferError::ZeroSlots);
        }
        if !align.is_power_of_two() {
            return Err(BufferError::BadAlign(align));
        }
        let too_large = BufferError::TooLarge { slots, len, align };
        let stride = len
            .checked_next_multiple_of(align)
            .ok_or_else(|| too_large.clone())?;
        let size = stride.checked_mul(slots).ok_or_else(|| too_large.clone())?;
        let layout = Layout::from_size_align(size, align).map_err(|_| too_large)?;
        // SAFETY: `layout` has a non-zero size (len >= 1 and slots >= 1), as `alloc_zeroed`
        // requires.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or(BufferError::AllocFailed(size))?;
        Ok(AlignedBuf {
            ptr,
            layout,
            slots,
            len,
            stride,
            leak: false,
        })
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Usable bytes per slot (the `len` asked for).
    pub fn slot_len(&self) -> usize {
        self.len
    }

    /// Distance in bytes between the starts of two neighbouring slots.
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// Alignment of every slot.
    pub fn align(&self) -> usize {
        self.layout.align()
    }

    /// The bytes of slot `i`. An out-of-range `i` is a caller bug: it trips a
    /// `debug_assert` and, in release builds, yields an empty slice rather than a panic.
    pub fn slot(&mut self, i: usize) -> &mut [u8] {
        debug_assert!(
            i < self.slots,
            "slot {i} out of range ({} slots)",
            self.slots
        );
        if i >= self.slots {
            return &mut [];
        }
        // SAFETY: i < slots, so [i*stride, i*stride + len) lies inside the allocation of
        // slots*stride bytes; the memory is initialised (zeroed at creation, only ever written
        // with bytes since); `&mut self` guarantees no other Rust reference to it exists, and
        // the engines never call this for a slot the kernel is using.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(i * self.stride), self.len) }
    }

    /// Start of slot `i`, for handing to the kernel; null for an out-of-range `i` (the
    /// kernel then fails the I/O with EFAULT instead of touching foreign memory).
    pub fn ptr(&self, i: usize) -> *mut u8 {
        if i >= self.slots {
            return std::ptr::null_mut();
        }
        // `wrapping_add` keeps this safe code; i*stride < size, so it never wraps.
        self.ptr.as_ptr().wrapping_add(i * self.stride)
    }

    /// Never free the memory: for an engine that could not confirm that the kernel has
    /// finished every I/O into it (a later write by the kernel must not land in memory
    /// the allocator has handed to someone else).
    pub(crate) fn leak_on_drop(&mut self) {
        self.leak = true;
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.leak {
            return;
        }
        // SAFETY: `ptr` came from `alloc_zeroed(self.layout)` and is freed exactly once, here.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_aligned_and_zeroed() {
        for (slots, len, align) in [
            (1, 1, 512),
            (3, 4096, 4096),
            (8, 1000, 512),
            (5, 4097, 4096),
        ] {
            let mut b = AlignedBuf::new(slots, len, align).expect("alloc");
            assert_eq!(b.slots(), slots);
            assert_eq!(b.slot_len(), len);
            assert_eq!(b.align(), align);
            assert_eq!(b.stride() % align, 0);
            assert!(b.stride() >= len);
            for i in 0..slots {
                assert_eq!(b.ptr(i) as usize % align, 0, "slot {i} misaligned");
                let s = b.slot(i);
                assert_eq!(s.len(), len);
                assert!(s.iter().all(|&x| x == 0), "slot {i} not zeroed");
            }
        }
    }

    #[test]
    fn slots_do_not_overlap() {
        let mut b = AlignedBuf::new(4, 100, 512).expect("alloc");
        for i in 0..4 {
            b.slot(i).fill(i as u8 + 1);
        }
        for i in 0..4 {
            assert!(b.slot(i).iter().all(|&x| x == i as u8 + 1));
        }
        assert_eq!(b.ptr(1) as usize - b.ptr(0) as usize, 512);
    }

    #[test]
    fn bad_shapes_are_errors() {
        assert_eq!(
            AlignedBuf::new(1, 0, 4096).unwrap_err(),
            BufferError::ZeroLen
        );
        assert_eq!(
            AlignedBuf::new(0, 1, 4096).unwrap_err(),
            BufferError::ZeroSlots
        );
        assert_eq!(
            AlignedBuf::new(1, 1, 0).unwrap_err(),
            BufferError::BadAlign(0)
        );
        assert_eq!(
            AlignedBuf::new(1, 1, 3000).unwrap_err(),
            BufferError::BadAlign(3000)
        );
        assert!(matches!(
            AlignedBuf::new(usize::MAX / 2, 4096, 4096),
            Err(BufferError::TooLarge { .. })
        ));
    }

    #[test]
    fn out_of_range_slot_is_not_memory() {
        let b = AlignedBuf::new(2, 16, 512).expect("alloc");
        assert!(b.ptr(2).is_null());
    }

    #[test]
    fn is_send() {
        fn send<T: Send>() {}
        send::<AlignedBuf>();
    }
}
