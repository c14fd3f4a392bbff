//! Note events held back for a few samples, so that no sample does more than its share of
//! note-on work.
//!
//! A note whose string grid was never designed at these settings (another string set,
//! stiffness or damping, or a key outside the range designed ahead) would cost 1 to 76 us of
//! design on the audio thread, up to fifteen ordinary samples of sixteen voices (issue 18),
//! and a chord of sixteen such notes on one sample thirty times one. So such a note-on waits,
//! and every event after it, in order, while the engine designs its grid
//! [`crate::voices::MODES_PER_SAMPLE`] modes a sample; then it plays. A sample also starts at
//! most [`crate::voices::NOTE_ONS_PER_SAMPLE`] notes and works out at most one body response;
//! a note-on after those waits for the next sample. A chord of sixteen notes on new settings
//! sounds within 1.5 ms at 48 kHz.
//!
//! Fixed capacity, no allocation after [`HeldEvents::new`]. Generic over the event, so that
//! it depends on nothing of the engine's (the engine holds `crate::voices::NoteEvent`s).

/// How many events can wait. Only events behind a note-on that waits do, for a sample or
/// two, or while its grid is designed (about 80 samples at most); a storm larger than this
/// behind it plays its oldest events at once (see `crate::voices::Engine::handle_event`).
pub const HELD_EVENTS: usize = 512;

/// A first-in first-out queue of events.
pub struct HeldEvents<E> {
    events: Box<[E]>,
    /// The index of the oldest event.
    first: usize,
    len: usize,
}

impl<E: Copy> HeldEvents<E> {
    /// An empty queue; `filler` only fills the room (it is never read).
    pub fn new(filler: E) -> Self {
        Self { events: vec![filler; HELD_EVENTS].into_boxed_slice(), first: 0, len: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn is_full(&self) -> bool {
        self.len == self.events.len()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Appends `event`; false (and nothing kept) when full.
    pub fn push(&mut self, event: E) -> bool {
        if self.is_full() {
            return false;
        }
        let at = (self.first + self.len) % self.events.len();
        self.events[at] = event;
        self.len += 1;
        true
    }

    /// The oldest event, without taking it.
    pub fn front(&self) -> Option<&E> {
        (self.len > 0).then(|| &self.events[self.first])
    }

    /// Takes the oldest event.
    pub fn pop(&mut self) -> Option<E> {
        if self.len == 0 {
            return None;
        }
        let event = self.events[self.first];
        self.first = (self.first + 1) % self.events.len();
        self.len -= 1;
        Some(event)
    }

    /// Forgets every event.
    pub fn clear(&mut self) {
        self.first = 0;
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_leave_in_the_order_they_came_and_a_full_queue_refuses() {
        let mut held = HeldEvents::new(0usize);
        assert!(held.is_empty() && held.pop().is_none() && held.front().is_none());
        // Around the ring more than once.
        for round in 0..3 {
            for i in 0..HELD_EVENTS {
                assert!(held.push(1000 * round + i), "round {round}: event {i} refused");
            }
            assert!(held.is_full() && !held.push(7), "a full queue took one more");
            assert_eq!(held.front(), Some(&(1000 * round)));
            for i in 0..HELD_EVENTS - 1 {
                assert_eq!(held.pop(), Some(1000 * round + i));
            }
            assert_eq!(held.len(), 1);
            held.clear();
            assert!(held.is_empty());
            assert!(held.push(7) && held.pop() == Some(7) && held.is_empty());
        }
    }
}
