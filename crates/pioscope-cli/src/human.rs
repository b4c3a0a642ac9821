//! Number formatting for people: bytes in binary units, times in s/ms/us/ns, rates with SI
//! prefixes. Fixed precision so text output is stable for golden tests.

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

/// Nanoseconds → "1.23 s", "4.56 ms", "7.89 us", "12 ns".
pub fn duration_ns(ns: i64) -> String {
    let a = ns.unsigned_abs() as f64;
    let sign = if ns < 0 { "-" } else { "" };
    if a >= 1e9 {
        format!("{sign}{:.2} s", a / 1e9)
    } else if a >= 1e6 {
        format!("{sign}{:.2} ms", a / 1e6)
    } else if a >= 1e3 {
        format!("{sign}{:.2} us", a / 1e3)
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

/// Prints rows as an aligned table: the first `left` columns left-aligned, the rest right.
pub fn table(header: &[&str], rows: &[Vec<String>], left: usize) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            let pad = widths[i] - c.chars().count();
            if i < left {
                s.push_str(c);
                if i + 1 < cells.len() {
                    s.push_str(&" ".repeat(pad));
                }
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
        }
        s.push('\n');
        s
    };
    let mut out = line(header.to_vec());
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(5 << 30), "5.0 GiB");
        assert_eq!(duration_ns(12), "12 ns");
        assert_eq!(duration_ns(1_500), "1.50 us");
        assert_eq!(duration_ns(2_340_000), "2.34 ms");
        assert_eq!(duration_ns(-3_000_000_000), "-3.00 s");
        assert_eq!(rate(950.0), "950");
        assert_eq!(rate(12_345.0), "12.3k");
        assert_eq!(rate(4_560_000.0), "4.56M");
        assert_eq!(throughput(1048576.0), "1.0 MiB/s");
    }

    #[test]
    fn table_aligns() {
        let t = table(
            &["name", "n"],
            &[
                vec!["a".into(), "10".into()],
                vec!["bbb".into(), "2".into()],
            ],
            1,
        );
        assert_eq!(t, "name   n\na     10\nbbb    2\n");
    }
}
