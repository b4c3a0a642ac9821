//! Numbers for people: bytes in binary units, times in s/ms/us/ns, rates with SI prefixes,
//! shares in percent. One implementation for the findings' evidence text and the CLI's tables
//! (`pioscope-cli`'s `human` re-exports them); fixed precision so text output is stable for
//! golden tests.

/// 1536 → "1.5 KiB"; under 1 KiB exact bytes.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(20 << 20), "20.0 MiB");
        assert_eq!(bytes(5 << 30), "5.0 GiB");
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
}
