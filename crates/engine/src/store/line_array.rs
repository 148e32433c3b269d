//! A fixed-length, zero-filled array that starts on a cache line.
//!
//! Why not a `Vec`: the hash tables' groups are 64 bytes (the file hash
//! index) or 80 (the cache), with an alignment of 1, and a large `Vec`
//! from glibc's allocator starts 16 bytes into a page. Every 64-byte group
//! then straddled two cache lines, so a probe that should cost one memory
//! access cost two. A `Vec` cannot be given a stricter alignment than its
//! element's (it frees with the element's layout), hence this type.

use std::alloc::Layout;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// A cache line on the machines we run on.
const LINE: usize = 64;

pub(super) struct LineArray<T> {
    /// The first element: `LINE`-aligned, inside the allocation.
    ptr: NonNull<T>,
    len: usize,
    /// The allocation (of `Self::layout(len)`), freed on drop.
    base: NonNull<u8>,
}

// SAFETY: the array owns its elements as a Vec<T> would.
unsafe impl<T: Send> Send for LineArray<T> {}
// SAFETY: shared access hands out only `&[T]`.
unsafe impl<T: Sync> Sync for LineArray<T> {}

impl<T> LineArray<T> {
    /// Room for `len` elements and a line to align them in, with the
    /// element's own alignment: an over-aligned `alloc_zeroed` would zero
    /// the whole array by hand (Rust's System allocator does for alignments
    /// above 16), touching every page, where calloc's fresh pages are free.
    fn layout(len: usize) -> Layout {
        Layout::array::<T>(len)
            .and_then(|l| Layout::from_size_align(l.size() + LINE, l.align()))
            .expect("table size overflows")
    }

    /// An empty array (no allocation).
    pub(super) fn empty() -> Self {
        LineArray {
            ptr: NonNull::dangling(),
            len: 0,
            base: NonNull::dangling(),
        }
    }

    /// `len` elements of all-zero bytes, on a line boundary. The OS hands
    /// out zero pages on first touch, so elements never written cost
    /// address space, not memory.
    ///
    /// # Safety
    /// All-zero bytes must be a valid `T`, and `T` must not need dropping
    /// (elements are freed without being dropped).
    pub(super) unsafe fn zeroed(len: usize) -> Self {
        if len == 0 || std::mem::size_of::<T>() == 0 {
            return Self::empty();
        }
        let layout = Self::layout(len);
        // SAFETY: the layout has a nonzero size (it has the extra line).
        let Some(base) = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) }) else {
            std::alloc::handle_alloc_error(layout)
        };
        // The next line boundary is fewer than LINE bytes in, and T's
        // alignment (a power of two, as is LINE) divides it: if it is at
        // most LINE it divides LINE, and if larger the allocation is
        // already aligned to it and `skip` is 0.
        let skip = base.as_ptr().align_offset(LINE);
        // SAFETY: `skip` < LINE, so the elements end inside the allocation.
        let ptr = unsafe { base.add(skip) }.cast::<T>();
        LineArray { ptr, len, base }
    }

    /// The first element's address, for prefetching and memory advice.
    pub(super) fn as_ptr(&self) -> *const T {
        self.ptr.as_ptr()
    }
}

impl<T> Deref for LineArray<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised elements (zeroed, valid by `zeroed`'s
        // contract) live at `ptr`, or `len` is 0 and `ptr` is dangling but
        // aligned.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for LineArray<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for LineArray<T> {
    fn drop(&mut self) {
        if self.len != 0 && std::mem::size_of::<T>() != 0 {
            // SAFETY: allocated in `zeroed` with this very layout.
            unsafe { std::alloc::dealloc(self.base.as_ptr(), Self::layout(self.len)) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_on_a_line_and_reads_zero() {
        for len in [1usize, 7, 1000, 100_000] {
            // SAFETY: u8 arrays: zero is valid, nothing to drop.
            let mut a = unsafe { LineArray::<[u8; 56]>::zeroed(len) };
            assert_eq!(a.as_ptr() as usize % LINE, 0, "{len}");
            assert_eq!(a.len(), len);
            assert!(a.iter().all(|g| g.iter().all(|&b| b == 0)));
            a[len - 1][55] = 9;
            assert_eq!(a[len - 1][55], 9);
        }
        let e = LineArray::<u64>::empty();
        assert!(e.is_empty());
    }
}
