//! A lock-free triple buffer: one writer (the audio thread) hands whole values to one
//! reader (the editor) without either ever waiting for the other.
//!
//! Three slots: the writer fills its back slot and swaps it with the middle one; the reader
//! swaps its front slot with the middle one when the middle is fresh. Each slot is touched
//! by one side at a time, so no value is ever read while it is written.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// Bit set in the state when the middle slot holds a value the reader has not taken.
const FRESH: u8 = 0b100;
const INDEX: u8 = 0b011;

struct Shared<T> {
    slots: [UnsafeCell<T>; 3],
    /// The middle slot's index, and [`FRESH`].
    state: AtomicU8,
}

// SAFETY: the slots are only reached through the writer's back index and the reader's
// front index, which the atomic swaps keep distinct from each other and from the middle.
unsafe impl<T: Send> Sync for Shared<T> {}

/// The writing end.
pub struct TripleWriter<T> {
    shared: Arc<Shared<T>>,
    back: u8,
}

/// The reading end.
pub struct TripleReader<T> {
    shared: Arc<Shared<T>>,
    front: u8,
}

/// A triple buffer with every slot a copy of `initial`. Allocates here, never after.
pub fn triple_buffer<T: Clone + Send>(initial: T) -> (TripleWriter<T>, TripleReader<T>) {
    let shared = Arc::new(Shared { slots: [UnsafeCell::new(initial.clone()), UnsafeCell::new(initial.clone()), UnsafeCell::new(initial)], state: AtomicU8::new(1) });
    (TripleWriter { shared: shared.clone(), back: 0 }, TripleReader { shared, front: 2 })
}

impl<T: Send> TripleWriter<T> {
    /// Fills the back slot in place, then publishes it.
    pub fn publish(&mut self, fill: impl FnOnce(&mut T)) {
        // SAFETY: the back slot belongs to the writer alone until it is swapped out below.
        fill(unsafe { &mut *self.shared.slots[self.back as usize].get() });
        let previous = self.shared.state.swap(self.back | FRESH, Ordering::AcqRel);
        self.back = previous & INDEX;
    }
}

impl<T: Send> TripleReader<T> {
    /// The newest published value (or the last one read, if nothing new came).
    pub fn read(&mut self) -> &T {
        if self.shared.state.load(Ordering::Acquire) & FRESH != 0 {
            let previous = self.shared.state.swap(self.front, Ordering::AcqRel);
            self.front = previous & INDEX;
        }
        // SAFETY: the front slot belongs to the reader alone until it is swapped out.
        unsafe { &*self.shared.slots[self.front as usize].get() }
    }

    /// Whether a value newer than the last read is waiting.
    pub fn has_new(&self) -> bool {
        self.shared.state.load(Ordering::Acquire) & FRESH != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_sees_the_newest_whole_value() {
        let (mut writer, mut reader) = triple_buffer([0u64; 64]);
        assert_eq!(reader.read()[0], 0);
        writer.publish(|v| v.fill(1));
        writer.publish(|v| v.fill(2));
        assert!(reader.has_new());
        assert_eq!(*reader.read(), [2u64; 64]);
        assert!(!reader.has_new());
        assert_eq!(*reader.read(), [2u64; 64]);
    }

    #[test]
    fn no_torn_values_across_threads() {
        let (mut writer, mut reader) = triple_buffer([0u64; 256]);
        let handle = std::thread::spawn(move || {
            for i in 1..=200_000u64 {
                writer.publish(|v| v.fill(i));
            }
        });
        let mut last = 0;
        while !handle.is_finished() || reader.has_new() {
            let v = reader.read();
            let first = v[0];
            assert!(v.iter().all(|&x| x == first), "torn value");
            assert!(first >= last, "went back in time");
            last = first;
        }
        handle.join().unwrap();
        assert_eq!(reader.read()[0], 200_000);
    }
}
