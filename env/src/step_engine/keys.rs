//! Each lane's Threefry key, as the host last set it, and how a reset sets it ([`Seeding`]).
//!
//! A lane draws reset number `r` from Threefry blocks `(0, B r + j)` under its own key (see
//! [`crate::graph`]), so its episodes depend on its own seed only, as a gymnasium vector
//! env's sub-envs do. One batch seed `s` keys lane `i` by `s + i` (gymnasium's
//! `reset(seed=s)`); per-lane seeds key each lane by its own. Engines upload the keys where
//! their draws read them.

use cartfuse_fusion::rng;

use crate::error::EnvError;

/// How one reset seeds the lanes it resets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seeding<'a> {
    /// Lane `i` keyed by `seed + i`; the reset lanes draw from reset number 0 when
    /// `restart` (a new seed), else their next.
    Batch {
        /// The batch's seed.
        seed: u64,
        /// Whether the reset lanes start their streams over.
        restart: bool,
    },
    /// Lane `i` keyed by its own seed `seeds[i]`, drawing from reset number 0, or going on
    /// with its own stream where `None`.
    PerLane(&'a [Option<u64>]),
}

/// One reset: which lanes, how they are seeded, and the bounds they draw in.
#[derive(Debug, Clone, Copy)]
pub struct ResetRequest<'a> {
    /// How the reset lanes are seeded.
    pub seeding: Seeding<'a>,
    /// The lanes that reset (every lane where `None`); the others keep their state, step
    /// counters and pending autoresets.
    pub mask: Option<&'a [bool]>,
    /// The `(low, high)` of each drawn component for this reset only (the environment's
    /// defaults where `None`; autoresets always use the defaults).
    pub bounds: Option<&'a [(f64, f64)]>,
}

impl<'a> ResetRequest<'a> {
    /// Every lane, seeded by `seeding`, in the default bounds.
    pub fn all(seeding: Seeding<'a>) -> Self {
        Self {
            seeding,
            mask: None,
            bounds: None,
        }
    }
}

/// Every lane's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneKeys {
    /// Each lane's first key word.
    pub key0: Vec<u32>,
    /// Each lane's second key word.
    pub key1: Vec<u32>,
}

impl LaneKeys {
    /// `n` lanes keyed by batch seed 0 (lane `i` by seed `i`).
    pub fn new(n: usize) -> Self {
        let mut keys = Self {
            key0: vec![0; n],
            key1: vec![0; n],
        };
        keys.set_batch(0, 0..n);
        keys
    }

    /// Keys lanes `lanes` by `seed + k`, the `k`-th of them.
    pub fn set_batch(&mut self, seed: u64, lanes: std::ops::Range<usize>) {
        for (k, lane) in lanes.enumerate() {
            [self.key0[lane], self.key1[lane]] = rng::seed_key(seed.wrapping_add(k as u64));
        }
    }

    /// Applies `seeding` to the lanes `mask` selects (every lane where `None`) and returns
    /// each lane's restart flag: whether it draws from reset number 0. A batch seed keys
    /// every lane (lane `i` by `seed + i`), as it restarts the batch's streams.
    pub fn seed(
        &mut self,
        seeding: Seeding<'_>,
        mask: Option<&[bool]>,
    ) -> Result<Vec<bool>, EnvError> {
        let n = self.key0.len();
        let masked = |i: usize| mask.is_none_or(|m| m[i]);
        match seeding {
            Seeding::Batch { seed, restart } => {
                self.set_batch(seed, 0..n);
                Ok((0..n).map(|i| restart && masked(i)).collect())
            }
            Seeding::PerLane(seeds) => {
                if seeds.len() != n {
                    return Err(EnvError::WrongCount {
                        what: "seeds",
                        per_env: 1,
                        expected: n,
                        found: seeds.len(),
                    });
                }
                Ok((0..n)
                    .map(|i| {
                        let Some(seed) = seeds[i].filter(|_| masked(i)) else {
                            return false;
                        };
                        [self.key0[i], self.key1[i]] = rng::seed_key(seed);
                        true
                    })
                    .collect())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_and_per_lane_seeding_set_keys_and_restarts() {
        let mut keys = LaneKeys::new(3);
        assert_eq!((keys.key0[2], keys.key1[2]), (2, 0));
        let batch = Seeding::Batch {
            seed: 7,
            restart: true,
        };
        let restart = keys.seed(batch, Some(&[true, false, true])).unwrap();
        assert_eq!(restart, [true, false, true]);
        assert_eq!(
            (keys.key0[1], keys.key1[1]),
            (8, 0),
            "lane 1 keyed by 7 + 1"
        );
        let all = [Some(1), Some(2), Some(1 << 40)];
        assert_eq!(keys.seed(Seeding::PerLane(&all), None).unwrap(), [true; 3]);
        assert_eq!((keys.key0[2], keys.key1[2]), (0, 256));
        // A lane without a seed, or outside the mask, keeps its key and its stream.
        let partial = [Some(1), None, Some(3)];
        let restart = keys.seed(Seeding::PerLane(&partial), Some(&[false, true, true]));
        assert_eq!(restart.unwrap(), [false, false, true]);
        assert_eq!((keys.key0[0], keys.key0[2]), (1, 3));
        let wrong = keys.seed(Seeding::PerLane(&[None]), None).unwrap_err();
        assert!(matches!(
            wrong,
            EnvError::WrongCount {
                expected: 3,
                found: 1,
                ..
            }
        ));
    }
}
