//! Numbers for people: every figure pioscope prints (CLI tables, the findings' evidence, the
//! simulator's bounds and calibration reports) is formatted here, at fixed precision so text
//! output is stable for golden tests. Parsing what people write stays with its inputs (model
//! files: `pioscope_sim::model::units`; hints: ROMIO's rules in `pioscope_sim`'s romio).
//!
//! Two families, because they describe different things:
//! - measured figures of a trace (`bytes`, `throughput`, `duration_ns`, `duration_prose`,
//!   `rate`, `pct`): binary sizes to one decimal, "us" for microseconds;
//! - a machine model's settings and the figures derived from them (`fmt_size`, `fmt_rate`,
//!   `fmt_time_ns`, `fmt_ops`): sizes exact when they are whole ("64 KiB", as stripe and
//!   buffer sizes are set), rates in decimal units ("117 MB/s", as vendors quote disks and
//!   links), three significant digits.

const BINARY: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// `v` divided by `base` until it is below `base` or the largest of `units` units is reached,
/// and the index of its unit.
fn scaled(mut v: f64, base: f64, units: usize) -> (f64, usize) {
    let mut i = 0;
    while v >= base && i + 1 < units {
        v /= base;
        i += 1;
    }
    (v, i)
}

/// 1536 → "1.5 KiB"; under 1 KiB exact bytes.
pub fn bytes(n: u64) -> String {
    if n < 1024 {
        return format!("{n} B");
    }
    let (v, i) = scaled(n as f64, 1024.0, BINARY.len());
    format!("{v:.1} {}", BINARY[i])
}

/// Bytes per second → "12.3 MiB/s".
pub fn throughput(bps: f64) -> String {
    format!("{}/s", bytes(bps.round().max(0.0) as u64))
}

/// Nanoseconds for tables → "1.23 s", "4.56 ms", "7.89 us", "12 ns".
pub fn duration_ns(ns: i64) -> String {
    duration(ns, 2)
}

/// Nanoseconds for sentences (the findings' evidence) → "1.23 s", "4.56 ms", "7.9 us",
/// "12 ns": microseconds to one decimal.
pub fn duration_prose(ns: i64) -> String {
    duration(ns, 1)
}

fn duration(ns: i64, us_decimals: usize) -> String {
    let a = ns.unsigned_abs() as f64;
    let sign = if ns < 0 { "-" } else { "" };
    if a >= 1e9 {
        format!("{sign}{:.2} s", a / 1e9)
    } else if a >= 1e6 {
        format!("{sign}{:.2} ms", a / 1e6)
    } else if a >= 1e3 {
        format!("{sign}{:.*} us", us_decimals, a / 1e3)
    } else {
        format!("{sign}{a} ns")
    }
}

/// A rate → "950", "12.3k", "4.56M".
pub fn rate(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// A share as a percentage → "42 %" (one decimal below 1 %: "0.4 %").
pub fn pct(share: f64) -> String {
    if share > 0.0 && share < 0.01 {
        format!("{:.1} %", share * 100.0)
    } else {
        format!("{:.0} %", share * 100.0)
    }
}

/// A model's size → "64 KiB", "1.50 MiB", "117 B": binary units, exact when whole, as sizes
/// are set.
pub fn fmt_size(bytes: f64) -> String {
    let (v, i) = scaled(bytes, 1024.0, 5);
    if i == 0 || v.fract() == 0.0 {
        format!("{v:.0} {}", BINARY[i])
    } else {
        format!("{v:.2} {}", BINARY[i])
    }
}

/// A model's rate → "117 MB/s", "5.86 GB/s": decimal units, as rates are quoted.
pub fn fmt_rate(bytes_per_s: f64) -> String {
    const UNITS: [&str; 5] = ["B/s", "kB/s", "MB/s", "GB/s", "TB/s"];
    let (v, i) = scaled(bytes_per_s, 1000.0, UNITS.len());
    format!("{} {}", three_digits(v), UNITS[i])
}

/// A model's time → "8.50 ms", "50.0 µs", "1.00 s".
pub fn fmt_time_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{} s", three_digits(ns / 1e9))
    } else if ns >= 1e6 {
        format!("{} ms", three_digits(ns / 1e6))
    } else if ns >= 1e3 {
        format!("{} µs", three_digits(ns / 1e3))
    } else {
        format!("{} ns", three_digits(ns))
    }
}

/// An operation rate → "101/s", "12.3k/s".
pub fn fmt_ops(per_s: f64) -> String {
    if per_s >= 1e6 {
        format!("{}M/s", three_digits(per_s / 1e6))
    } else if per_s >= 1e3 {
        format!("{}k/s", three_digits(per_s / 1e3))
    } else {
        format!("{}/s", three_digits(per_s))
    }
}

/// Three significant digits.
fn three_digits(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_figures() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(20 << 20), "20.0 MiB");
        assert_eq!(bytes(5 << 30), "5.0 GiB");
        assert_eq!(bytes(u64::MAX), "16.0 EiB");
        assert_eq!(duration_ns(12), "12 ns");
        assert_eq!(duration_ns(1_500), "1.50 us");
        assert_eq!(duration_ns(2_340_000), "2.34 ms");
        assert_eq!(duration_ns(-3_000_000_000), "-3.00 s");
        assert_eq!(duration_prose(850), "850 ns");
        assert_eq!(duration_prose(12_300), "12.3 us");
        assert_eq!(duration_prose(-12_300), "-12.3 us");
        assert_eq!(duration_prose(4_560_000), "4.56 ms");
        assert_eq!(duration_prose(1_230_000_000), "1.23 s");
        assert_eq!(rate(950.0), "950");
        assert_eq!(rate(12_345.0), "12.3k");
        assert_eq!(rate(4_560_000.0), "4.56M");
        assert_eq!(throughput(1048576.0), "1.0 MiB/s");
        assert_eq!(pct(0.4249), "42 %");
        assert_eq!(pct(0.004), "0.4 %");
    }

    #[test]
    fn model_figures() {
        assert_eq!(fmt_size(117.0), "117 B");
        assert_eq!(fmt_size(65536.0), "64 KiB");
        assert_eq!(fmt_size(1.5 * 1048576.0), "1.50 MiB");
        assert_eq!(fmt_size(2048.0 * 1024f64.powi(4)), "2048 TiB");
        assert_eq!(fmt_rate(117e6), "117 MB/s");
        assert_eq!(fmt_rate(5.86e9), "5.86 GB/s");
        assert_eq!(fmt_time_ns(8.5e6), "8.50 ms");
        assert_eq!(fmt_time_ns(50e3), "50.0 µs");
        assert_eq!(fmt_ops(100.0), "100/s");
        assert_eq!(fmt_ops(12_345.0), "12.3k/s");
    }
}
