//! Clock handling: per-process ticks → CLOCK_MONOTONIC ns (a linear fit), then
//! CLOCK_MONOTONIC → the reference rank's clock (the offsets measured at MPI_Init and
//! MPI_Finalize).
//!
//! Fit rules (the one used is recorded in meta.json as `clock.fit`). A least-squares line
//! through a process's own (ticks, mono_ns) pairs is as good as the CLOCK_MONOTONIC span they
//! cover: the two reads of a pair are tens of ns apart, so over 100 µs the rate is off by
//! ~0.05 %, over 10 ms by ~5 ppm. For a TSC clock, in order:
//! 1. `least_squares`: own pairs spanning >= 10 ms;
//! 2. `tsc_hz`: the `tsc_hz` job fact, if the runtime wrote one;
//! 3. `same_host`: the median rate of processes on the same host fitted by rule 1 (an
//!    invariant TSC runs at one rate on a host);
//! 4. `least_squares`: own pairs spanning >= 100 µs;
//! 5. `other_hosts`: the median rate of rule-1 processes on other hosts;
//! 6. `least_squares`: own pairs spanning any time at all (two distinct tick values);
//! 7. `assumed`: 1 ns per tick (one pair only, nothing else known; a warning says so).
//!
//! A MONOTONIC clock counts ns already: rule 1 if its pairs span >= 10 ms, else `monotonic`
//! (rate 1). Every line other than a least-squares one goes through the mean of the pairs.

use crate::raw::format::{clock_kind, sync_phase};
use crate::raw::ClockSync;
use crate::store::meta::{FitMethod, OffsetPoint, OffsetSource};

/// CLOCK_MONOTONIC span of a process's pairs that makes its own fit the best rate.
pub const GOOD_SPAN_NS: u64 = 10_000_000;
/// Span below which other processes' rates are preferred to a process's own fit.
pub const SHORT_SPAN_NS: u64 = 100_000;

/// A line mono_ns = base_ns + intercept + ns_per_tick * (ticks - base_ticks).
///
/// Anchored at a base pair so that the f64 arithmetic works on small differences and keeps
/// sub-nanosecond precision even with uptimes of years.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TickFit {
    /// Anchor ticks.
    pub base_ticks: u64,
    /// Anchor CLOCK_MONOTONIC ns.
    pub base_ns: u64,
    /// ns at base_ticks minus base_ns.
    pub intercept: f64,
    /// Nanoseconds per tick.
    pub ns_per_tick: f64,
    /// How it was obtained.
    pub method: FitMethod,
    /// Pairs used.
    pub pairs: usize,
    /// Largest |residual| over the pairs, in ns.
    pub max_residual_ns: f64,
}

impl TickFit {
    /// CLOCK_MONOTONIC ns at `ticks`.
    pub fn mono_ns(&self, ticks: u64) -> i64 {
        let dt = ticks as i128 - self.base_ticks as i128;
        let rel = self.intercept + self.ns_per_tick * dt as f64;
        self.base_ns as i64 + rel.round() as i64
    }

    /// The line of slope `ns_per_tick` through the mean of `pairs` (which must not be empty).
    pub fn through_mean(pairs: &[(u64, u64)], ns_per_tick: f64, method: FitMethod) -> TickFit {
        let (base_ticks, base_ns) = pairs.first().copied().unwrap_or((0, 0));
        let n = pairs.len().max(1) as f64;
        let (mut mx, mut my) = (0.0, 0.0);
        for &(t, ns) in pairs {
            mx += (t as i128 - base_ticks as i128) as f64;
            my += (ns as i128 - base_ns as i128) as f64;
        }
        let (mx, my) = (mx / n, my / n);
        let mut fit = TickFit {
            base_ticks,
            base_ns,
            intercept: my - ns_per_tick * mx,
            ns_per_tick,
            method,
            pairs: pairs.len(),
            max_residual_ns: 0.0,
        };
        fit.max_residual_ns = fit.residual(pairs);
        fit
    }

    /// Least squares through `pairs`, or None without two distinct tick values (or when the
    /// line does not rise).
    pub fn least_squares(pairs: &[(u64, u64)]) -> Option<TickFit> {
        let (base_ticks, base_ns) = *pairs.first()?;
        let min_t = pairs.iter().map(|p| p.0).min()?;
        let max_t = pairs.iter().map(|p| p.0).max()?;
        if min_t == max_t {
            return None;
        }
        let n = pairs.len() as f64;
        let xs = pairs
            .iter()
            .map(|&(t, _)| (t as i128 - base_ticks as i128) as f64);
        let ys = pairs
            .iter()
            .map(|&(_, ns)| (ns as i128 - base_ns as i128) as f64);
        let mx = xs.clone().sum::<f64>() / n;
        let my = ys.clone().sum::<f64>() / n;
        let (mut sxx, mut sxy) = (0.0, 0.0);
        for (x, y) in xs.zip(ys) {
            sxx += (x - mx) * (x - mx);
            sxy += (x - mx) * (y - my);
        }
        if sxx <= 0.0 {
            return None;
        }
        let slope = sxy / sxx;
        if !(slope.is_finite() && slope > 0.0) {
            return None;
        }
        let mut fit = TickFit {
            base_ticks,
            base_ns,
            intercept: my - slope * mx,
            ns_per_tick: slope,
            method: FitMethod::LeastSquares,
            pairs: pairs.len(),
            max_residual_ns: 0.0,
        };
        fit.max_residual_ns = fit.residual(pairs);
        Some(fit)
    }

    fn residual(&self, pairs: &[(u64, u64)]) -> f64 {
        pairs
            .iter()
            .map(|&(t, ns)| (self.mono_ns(t) - ns as i64).unsigned_abs() as f64)
            .fold(0.0, f64::max)
    }
}

/// CLOCK_MONOTONIC time covered by the pairs.
pub fn span_ns(pairs: &[(u64, u64)]) -> u64 {
    let min = pairs.iter().map(|p| p.1).min().unwrap_or(0);
    let max = pairs.iter().map(|p| p.1).max().unwrap_or(0);
    max - min
}

/// A process's own fit (rule 1 quality when `span_ns >= GOOD_SPAN_NS`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OwnFit {
    /// Least squares through its pairs, if they have two distinct tick values.
    pub fit: Option<TickFit>,
    /// CLOCK_MONOTONIC span of its pairs.
    pub span_ns: u64,
}

impl OwnFit {
    /// Fits `pairs`.
    pub fn of(pairs: &[(u64, u64)]) -> OwnFit {
        OwnFit {
            fit: TickFit::least_squares(pairs),
            span_ns: span_ns(pairs),
        }
    }

    /// The rate this process offers to others on its host (rule 1 only).
    pub fn good_rate(&self) -> Option<f64> {
        self.fit
            .filter(|_| self.span_ns >= GOOD_SPAN_NS)
            .map(|f| f.ns_per_tick)
    }
}

/// What other processes say about TSC rates.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Neighbours {
    /// Median good rate on the same host.
    pub same_host: Option<f64>,
    /// Median good rate on other hosts.
    pub other_hosts: Option<f64>,
}

/// Applies the rules of the module docs to one process.
pub fn resolve_fit(
    kind: u16,
    pairs: &[(u64, u64)],
    own: &OwnFit,
    tsc_hz: Option<f64>,
    n: Neighbours,
) -> TickFit {
    let own_if = |min_span: u64| own.fit.filter(|_| own.span_ns >= min_span);
    if let Some(fit) = own_if(GOOD_SPAN_NS) {
        return fit;
    }
    if kind == clock_kind::MONOTONIC {
        return TickFit::through_mean(pairs, 1.0, FitMethod::Monotonic);
    }
    if let Some(hz) = tsc_hz.filter(|hz| hz.is_finite() && *hz > 0.0) {
        return TickFit::through_mean(pairs, 1e9 / hz, FitMethod::TscHz);
    }
    if let Some(rate) = n.same_host {
        return TickFit::through_mean(pairs, rate, FitMethod::SameHost);
    }
    if let Some(fit) = own_if(SHORT_SPAN_NS) {
        return fit;
    }
    if let Some(rate) = n.other_hosts {
        return TickFit::through_mean(pairs, rate, FitMethod::OtherHosts);
    }
    if let Some(fit) = own.fit {
        return fit;
    }
    TickFit::through_mean(pairs, 1.0, FitMethod::Assumed)
}

/// The median of some rates, if any.
pub fn median(mut rates: Vec<f64>) -> Option<f64> {
    if rates.is_empty() {
        return None;
    }
    rates.sort_by(f64::total_cmp);
    Some(rates[rates.len() / 2])
}

/// offset(t) to add to our CLOCK_MONOTONIC to get the reference's.
///
/// With both points the offset is linear in t, extrapolated outside [init, finalize] (the
/// drift of a crystal is steady over a run); with one it is constant; with none it is 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OffsetModel {
    /// The INIT measurement used.
    pub init: Option<OffsetPoint>,
    /// The FINALIZE measurement used.
    pub finalize: Option<OffsetPoint>,
    /// Where it came from.
    pub source: OffsetSource,
}

impl OffsetModel {
    /// Offset 0.
    pub const NONE: OffsetModel = OffsetModel {
        init: None,
        finalize: None,
        source: OffsetSource::None,
    };

    /// The model from a process's CLOCK_SYNC records; of several per phase the one with the
    /// smallest round trip wins.
    pub fn from_syncs(syncs: &[ClockSync]) -> OffsetModel {
        let best = |phase: u32| {
            syncs
                .iter()
                .filter(|s| s.phase == phase)
                .min_by_key(|s| s.rtt_ns)
                .map(|s| OffsetPoint {
                    local_mono_ns: s.local_mono_ns,
                    offset_ns: s.offset_ns,
                    rtt_ns: s.rtt_ns,
                })
        };
        let init = best(sync_phase::INIT);
        let finalize = best(sync_phase::FINALIZE);
        let source = match (init, finalize) {
            (Some(i), Some(f)) if f.local_mono_ns != i.local_mono_ns => OffsetSource::InitFinalize,
            (Some(_), _) => OffsetSource::Init,
            (None, Some(_)) => OffsetSource::Finalize,
            (None, None) => OffsetSource::None,
        };
        OffsetModel {
            init,
            finalize,
            source,
        }
    }

    /// The same measurements, not applied: the process reads the reference's own clock.
    pub fn shared_clock(self) -> OffsetModel {
        OffsetModel {
            source: OffsetSource::SharedClock,
            ..self
        }
    }

    /// Reference minus ours at our CLOCK_MONOTONIC `mono_ns`.
    pub fn offset_at(&self, mono_ns: i64) -> i64 {
        match (self.source, self.init, self.finalize) {
            (OffsetSource::SharedClock, _, _) => 0,
            (OffsetSource::InitFinalize, Some(i), Some(_)) => {
                let t0 = i.local_mono_ns as f64;
                i.offset_ns + (self.slope() * (mono_ns as f64 - t0)).round() as i64
            }
            (_, Some(i), _) => i.offset_ns,
            (_, None, Some(f)) => f.offset_ns,
            _ => 0,
        }
    }

    /// How much the offset changes per ns of CLOCK_MONOTONIC (0 unless it is a line).
    pub fn slope(&self) -> f64 {
        match (self.source, self.init, self.finalize) {
            (OffsetSource::InitFinalize, Some(i), Some(f)) => {
                (f.offset_ns - i.offset_ns) as f64
                    / (f.local_mono_ns as f64 - i.local_mono_ns as f64)
            }
            _ => 0.0,
        }
    }

    /// A constant offset from the hosts' CLOCK_REALTIME (`OffsetSource::Realtime`): reference
    /// minus ours, `offset_ns`, as seen at our CLOCK_MONOTONIC `local_mono_ns`.
    pub fn realtime(local_mono_ns: u64, offset_ns: i64) -> OffsetModel {
        OffsetModel {
            init: Some(OffsetPoint {
                local_mono_ns,
                offset_ns,
                rtt_ns: 0,
            }),
            finalize: None,
            source: OffsetSource::Realtime,
        }
    }

    /// The same model, marked as inherited from the parent process.
    pub fn inherited(self) -> OffsetModel {
        OffsetModel {
            source: if self.init.is_some() || self.finalize.is_some() {
                OffsetSource::Parent
            } else {
                OffsetSource::None
            },
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sync(phase: u32, off: i64, rtt: u64, at: u64) -> ClockSync {
        ClockSync {
            phase,
            reference_rank: 0,
            offset_ns: off,
            rtt_ns: rtt,
            local_mono_ns: at,
        }
    }

    #[test]
    fn least_squares_recovers_a_tsc_rate() {
        // 2.5 GHz TSC: 0.4 ns per tick, with +-3 ns of read jitter on the mono side.
        let t0 = 9_000_000_000_000u64;
        let m0 = 5_000_000_000_000u64;
        let jitter = [3i64, -2, 0, 1, -3, 2, -1, 0];
        let pairs: Vec<(u64, u64)> = (0..8u64)
            .map(|i| {
                let t = t0 + i * 250_000_000; // 100 ms apart
                let ns = m0 as i64 + ((t - t0) as f64 * 0.4) as i64 + jitter[i as usize];
                (t, ns as u64)
            })
            .collect();
        let fit = TickFit::least_squares(&pairs).expect("fit");
        assert_eq!(fit.method, FitMethod::LeastSquares);
        assert!((fit.ns_per_tick - 0.4).abs() < 1e-9, "{}", fit.ns_per_tick);
        assert!(fit.max_residual_ns <= 4.0);
        let t = t0 + 1_000_000_000;
        assert!((fit.mono_ns(t) - (m0 as i64 + 400_000_000)).abs() <= 3);
    }

    #[test]
    fn one_pair_monotonic_is_rate_one() {
        let pairs = [(1_000, 1_020)];
        let fit = resolve_fit(
            clock_kind::MONOTONIC,
            &pairs,
            &OwnFit::of(&pairs),
            None,
            Neighbours::default(),
        );
        assert_eq!(fit.method, FitMethod::Monotonic);
        assert_eq!(fit.mono_ns(5_000), 5_020);
    }

    #[test]
    fn tsc_rules_in_order() {
        let tsc = clock_kind::TSC;
        let none = Neighbours::default();
        let short = [(1_000, 1_000), (3_000, 1_800)]; // 800 ns: a 0.4 ns/tick fit, but short
        let own = OwnFit::of(&short);
        assert_eq!(own.span_ns, 800);
        assert_eq!(own.good_rate(), None);
        let f = resolve_fit(
            tsc,
            &short,
            &own,
            Some(2.5e9),
            Neighbours {
                same_host: Some(0.3),
                other_hosts: None,
            },
        );
        assert_eq!(f.method, FitMethod::TscHz);
        assert!((f.ns_per_tick - 0.4).abs() < 1e-12);
        assert_eq!(
            f.mono_ns(2_000),
            1_400,
            "through the mean pair (2000, 1400)"
        );
        let f = resolve_fit(
            tsc,
            &short,
            &own,
            None,
            Neighbours {
                same_host: Some(0.3),
                other_hosts: Some(0.2),
            },
        );
        assert_eq!((f.method, f.ns_per_tick), (FitMethod::SameHost, 0.3));
        let f = resolve_fit(
            tsc,
            &short,
            &own,
            None,
            Neighbours {
                same_host: None,
                other_hosts: Some(0.2),
            },
        );
        assert_eq!((f.method, f.ns_per_tick), (FitMethod::OtherHosts, 0.2));
        let f = resolve_fit(tsc, &short, &own, None, none);
        assert_eq!(f.method, FitMethod::LeastSquares);
        assert!((f.ns_per_tick - 0.4).abs() < 1e-12);
        // 200 µs of span beats other hosts but not the same host.
        let medium = [(0, 0), (500_000, 200_000)];
        let own = OwnFit::of(&medium);
        let f = resolve_fit(
            tsc,
            &medium,
            &own,
            None,
            Neighbours {
                same_host: None,
                other_hosts: Some(0.2),
            },
        );
        assert_eq!((f.method, f.ns_per_tick), (FitMethod::LeastSquares, 0.4));
        let one = [(10, 10)];
        let f = resolve_fit(tsc, &one, &OwnFit::of(&one), None, none);
        assert_eq!(f.method, FitMethod::Assumed);
        assert_eq!(median(vec![0.5, 0.3, 0.4]), Some(0.4));
        assert_eq!(median(vec![]), None);
    }

    #[test]
    fn offsets_drift_linearly_between_init_and_finalize() {
        let m = OffsetModel::from_syncs(&[
            sync(sync_phase::INIT, 1_000, 50, 10_000),
            sync(sync_phase::INIT, 9_999, 90, 10_000), // worse round trip: ignored
            sync(sync_phase::FINALIZE, 2_000, 40, 1_010_000),
        ]);
        assert_eq!(m.source, OffsetSource::InitFinalize);
        assert_eq!(m.offset_at(10_000), 1_000);
        assert_eq!(m.offset_at(510_000), 1_500);
        assert_eq!(m.offset_at(1_010_000), 2_000);
        assert_eq!(m.offset_at(2_010_000), 3_000); // extrapolated

        let only_init = OffsetModel::from_syncs(&[sync(sync_phase::INIT, -700, 10, 5)]);
        assert_eq!(only_init.source, OffsetSource::Init);
        assert_eq!(only_init.offset_at(1 << 40), -700);
        assert_eq!(OffsetModel::from_syncs(&[]).offset_at(123), 0);
        let measured = OffsetModel::from_syncs(&[sync(sync_phase::INIT, 2_500_000, 5_000_000, 1)]);
        assert_eq!(measured.shared_clock().offset_at(1 << 40), 0);
        assert_eq!(only_init.inherited().source, OffsetSource::Parent);
        assert_eq!(OffsetModel::NONE.inherited().source, OffsetSource::None);
    }
}
