//! Seeded variance of service times (the model's `[variance]` table): each network transfer
//! and disk access takes its exact time times a factor uniform in [1 − spread, 1 + spread],
//! and with `stall_probability` it stalls `stall_ns` longer.
//!
//! Every source of variance draws from its own ChaCha8 stream of the run's seed (the network
//! one, and one per disk), so a disk's draws depend only on the accesses it served: the same
//! job, model and seed give the same run to the nanosecond, another seed another run. Without
//! variance nothing is drawn and every time is the model's exact one.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::engine::storage::server::Server;
use crate::model::Variance;

/// Gives every disk of `servers` (each copy of a RAID-1 pair too) its own stream of `seed`.
pub fn seed_disks(mut servers: Vec<Server>, v: &Variance, seed: u64) -> Vec<Server> {
    for (s, server) in servers.iter_mut().enumerate() {
        let copies: u32 = server
            .disks
            .iter_mut()
            .map(|q| q.copies().len() as u32)
            .sum();
        let mut d = 0;
        for volume in server.disks.iter_mut() {
            for disk in volume.copies() {
                disk.jitter = Jitter::disk(v, seed, s as u32, d, copies);
                d += 1;
            }
        }
    }
    servers
}

/// One source's draws: its spread, what a stall adds, its stream (None: exact).
#[derive(Clone, Debug, Default)]
pub struct Jitter {
    spread: f64,
    stall_probability: f64,
    /// What a stall adds to a sample: nanoseconds (disks) or bytes (network load).
    stall: u64,
    rng: Option<ChaCha8Rng>,
}

impl Jitter {
    /// The network's jitter, stream 0 of `seed`, over loads in bytes: a shared link's time
    /// is in bytes, so a stall holds the links for stall_ns more at full `bandwidth` (a
    /// retransmission).
    pub fn network(v: &Variance, seed: u64, bandwidth: f64) -> Jitter {
        let stall = (v.stall_ns as f64 * bandwidth * 1e-9).round() as u64;
        Jitter::new(v.network_jitter, v.stall_probability, stall, seed, 0)
    }

    /// The jitter of disk `disk` of server `server` (`disks` per server), over service
    /// times in nanoseconds: streams 1, 2, ... of `seed`.
    pub fn disk(v: &Variance, seed: u64, server: u32, disk: u32, disks: u32) -> Jitter {
        let stream = 1 + u64::from(server) * u64::from(disks) + u64::from(disk);
        Jitter::new(v.disk_jitter, v.stall_probability, v.stall_ns, seed, stream)
    }

    fn new(spread: f64, stall_probability: f64, stall: u64, seed: u64, stream: u64) -> Jitter {
        let stalls = stall_probability > 0.0 && stall > 0;
        let rng = (spread > 0.0 || stalls).then(|| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(stream);
            rng
        });
        Jitter {
            spread,
            stall_probability,
            stall,
            rng,
        }
    }

    /// One sample of an exact `amount` (a service time, a load): amount × f, f uniform in
    /// [1 − spread, 1 + spread], plus the stall with its probability. Two draws each,
    /// whatever the values, so a stream's position depends only on how many samples it gave.
    pub fn stretch(&mut self, amount: u64) -> u64 {
        let Some(rng) = self.rng.as_mut() else {
            return amount;
        };
        let factor = 1.0 + self.spread * (2.0 * unit(rng.next_u64()) - 1.0);
        let stalled = unit(rng.next_u64()) < self.stall_probability;
        (amount as f64 * factor).round() as u64 + if stalled { self.stall } else { 0 }
    }
}

/// A uniform number in [0, 1) from the top 53 bits of a draw.
fn unit(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variance(jitter: f64, p: f64, stall_ns: u64) -> Variance {
        Variance {
            network_jitter: jitter,
            disk_jitter: jitter,
            stall_probability: p,
            stall_ns,
        }
    }

    #[test]
    fn without_variance_times_are_exact() {
        let mut j = Jitter::disk(&Variance::default(), 7, 0, 0, 1);
        assert_eq!(j.stretch(1_000_000), 1_000_000);
        let mut j = Jitter::network(&variance(0.0, 0.5, 0), 7, 1e9);
        assert_eq!(j.stretch(4096), 4096);
        assert_eq!(Jitter::default().stretch(12), 12);
    }

    #[test]
    fn the_same_seed_gives_the_same_draws_another_seed_others() {
        let v = variance(0.3, 0.1, 5_000_000);
        let draws = |seed, server| {
            let mut j = Jitter::disk(&v, seed, server, 0, 1);
            (0..100).map(|_| j.stretch(1_000_000)).collect::<Vec<_>>()
        };
        assert_eq!(draws(1, 0), draws(1, 0));
        assert_ne!(draws(1, 0), draws(2, 0));
        // Each disk has its own stream.
        assert_ne!(draws(1, 0), draws(1, 1));
    }

    /// Mean and range in closed form: a factor uniform in [1 − s, 1 + s] has mean 1 and
    /// standard deviation s / √3; a stall adds stall_ns with probability p. So the mean of n
    /// samples of t is t + p × stall_ns, within 4 standard errors (fixed seed: deterministic).
    #[test]
    fn the_mean_of_many_samples_is_the_exact_time_plus_the_expected_stall() {
        let (t, s, p, stall) = (1_000_000.0, 0.5, 0.01, 10_000_000.0);
        let v = variance(s, p, stall as u64);
        let mut j = Jitter::disk(&v, 42, 3, 1, 2);
        let n = 100_000;
        let samples: Vec<f64> = (0..n).map(|_| j.stretch(t as u64) as f64).collect();
        let mean = samples.iter().sum::<f64>() / n as f64;
        let variance = (t * s).powi(2) / 3.0 + p * (1.0 - p) * stall * stall;
        let bound = 4.0 * (variance / n as f64).sqrt();
        assert!(
            (mean - (t + p * stall)).abs() < bound,
            "mean {mean}, expected {} ± {bound}",
            t + p * stall
        );
        // Every sample within [t(1 − s), t(1 + s) + stall].
        assert!(samples
            .iter()
            .all(|&x| x >= t * (1.0 - s) && x <= t * (1.0 + s) + stall));
        // The share of stalled samples (above t(1 + s)) near p.
        let stalled = samples.iter().filter(|&&x| x > t * (1.0 + s)).count() as f64 / n as f64;
        assert!((stalled - p).abs() < 4.0 * (p * (1.0 - p) / n as f64).sqrt());
    }

    #[test]
    fn a_network_stall_holds_the_links_for_stall_ns_at_full_bandwidth() {
        // Always stalls, no spread: 1 ms at 1 GB/s = 1,000,000 bytes more.
        let mut j = Jitter::network(&variance(0.0, 1.0, 1_000_000), 5, 1e9);
        assert_eq!(j.stretch(4096), 4096 + 1_000_000);
    }
}
