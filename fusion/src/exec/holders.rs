//! [`Holders`]: which of an executor's buffer handles share memory, kept across runs.
//!
//! An input may be bound to the same buffer as another (or, updated in place, be its own
//! next value): the CPU runtime must lock each distinct buffer once a run, and a binding
//! must not alias a buffer the plan writes. Searching all pairs at
//! every run cost a third of a run at n = 1 (about 30 ns of CartPole's 220); the answer
//! only changes when a binding does, and the binding done at every step (the actions)
//! usually shares nothing, so it is updated in one pass and recomputed only otherwise.

/// For each buffer, the first index holding the same memory (itself when distinct).
#[derive(Debug, Default)]
pub struct Holders {
    first: Vec<usize>,
    stale: bool,
}

impl Holders {
    /// Holders to be computed at the first run.
    pub fn new() -> Self {
        Self {
            first: Vec::new(),
            stale: true,
        }
    }

    /// The first index holding buffer `i`'s memory, as of the last [`Self::refresh`].
    pub fn first(&self, i: usize) -> usize {
        self.first[i]
    }

    /// Recomputes after changes [`Self::rebound`] could not follow.
    pub fn refresh<T>(&mut self, buffers: &[T], same: impl Fn(&T, &T) -> bool) {
        if self.stale {
            self.first = (0..buffers.len())
                .map(|i| {
                    (0..i)
                        .find(|&j| same(&buffers[j], &buffers[i]))
                        .unwrap_or(i)
                })
                .collect();
            self.stale = false;
        }
    }

    /// Any buffer may have changed.
    pub fn invalidate(&mut self) {
        self.stale = true;
    }

    /// Buffer `b` was replaced: one pass when it shared its memory with none before or
    /// after, or with an earlier buffer only; else recomputed at the next refresh.
    pub fn rebound<T>(&mut self, buffers: &[T], b: usize, same: impl Fn(&T, &T) -> bool) {
        if self.stale {
            return;
        }
        let was_shared = self.first[b] != b
            || self
                .first
                .iter()
                .enumerate()
                .any(|(i, f)| *f == b && i != b);
        let now_with = (0..buffers.len()).find(|&j| j != b && same(&buffers[j], &buffers[b]));
        match now_with {
            _ if was_shared => self.stale = true,
            None => {}
            Some(j) if j < b => self.first[b] = j,
            Some(_) => self.stale = true,
        }
    }

    /// Buffers were exchanged pairwise: distinct ones stay distinct, shared ones moved.
    pub fn swapped(&mut self) {
        self.stale |= self.first.iter().enumerate().any(|(i, f)| *f != i);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn same(a: &Arc<u8>, b: &Arc<u8>) -> bool {
        Arc::ptr_eq(a, b)
    }

    #[test]
    fn shared_buffers_are_found_and_followed_through_rebinding() {
        let fresh = || Arc::new(0u8);
        let (a, b) = (fresh(), fresh());
        let mut buffers = vec![a.clone(), b.clone(), a.clone()];
        let mut holders = Holders::new();
        holders.refresh(&buffers, same);
        assert_eq!(
            (0..3).map(|i| holders.first(i)).collect::<Vec<_>>(),
            [0, 1, 0]
        );
        // A distinct buffer rebound to a fresh one: followed without a recompute.
        buffers[1] = fresh();
        holders.rebound(&buffers, 1, same);
        holders.refresh(&buffers, same);
        assert_eq!(holders.first(1), 1);
        // Rebound onto an earlier buffer's memory.
        buffers[1] = a.clone();
        holders.rebound(&buffers, 1, same);
        holders.refresh(&buffers, same);
        assert_eq!(
            (0..3).map(|i| holders.first(i)).collect::<Vec<_>>(),
            [0, 0, 0]
        );
        // The first holder rebound: the others now share without it.
        buffers[0] = b;
        holders.rebound(&buffers, 0, same);
        holders.refresh(&buffers, same);
        assert_eq!(
            (0..3).map(|i| holders.first(i)).collect::<Vec<_>>(),
            [0, 1, 1]
        );
        // Swaps move the shared pair.
        buffers.swap(0, 1);
        holders.swapped();
        holders.refresh(&buffers, same);
        assert_eq!(
            (0..3).map(|i| holders.first(i)).collect::<Vec<_>>(),
            [0, 1, 0]
        );
    }
}
