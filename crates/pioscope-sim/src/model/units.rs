//! Sizes, rates and times as people write them in model files and `--set` ("64M", "117MB/s",
//! "8.5ms"), parsed into what the model stores (bytes, bytes per second, nanoseconds). The
//! other way, figures for people, is `pioscope_trace::units`.
//!
//! Suffix convention (docs/MODEL.md, "Sizes, rates and times"): `K`, `M`, `G`, `T` alone or as
//! `Ki`/`KiB`... are binary (1024-based), because that is how stripe and buffer sizes are set;
//! `kB`/`KB`, `MB`, `GB`, `TB` are decimal, because that is how vendors quote disk and link
//! rates. `bit` forms (`Gbit/s`, `Gb/s`) are decimal bits.

/// Parses a byte count: an integer or decimal number with an optional suffix (see the module
/// note). "1.5M" = 1572864. The result must be a whole number of bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let bytes = parse_quantity(s, false)?;
    if bytes.fract() != 0.0 {
        return Err(format!("'{s}' is not a whole number of bytes"));
    }
    if bytes > u64::MAX as f64 {
        return Err(format!("'{s}' is too large"));
    }
    Ok(bytes as u64)
}

/// Parses a rate in bytes per second: a size ("117MB", "1.25e9", "2G") with an optional "/s",
/// or bits per second ("10Gbit/s", "1Gb/s").
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let t = t.strip_suffix("/s").unwrap_or(t);
    parse_quantity(t, true)
}

/// Parses a time into nanoseconds: a number with `ns`, `us` (or `µs`), `ms` or `s`; a bare
/// number is nanoseconds. Rounded to the nearest nanosecond.
pub fn parse_time_ns(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("us").or_else(|| t.strip_suffix("µs")) {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else {
        (t, 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a time (examples: 50us, 8.5ms, 1s, 1200)"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("'{s}' is not a non-negative time"));
    }
    Ok((v * scale).round() as u64)
}

/// A number with a size suffix; `bits` allows the bit forms.
fn parse_quantity(s: &str, bits: bool) -> Result<f64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(t.len());
    // "1e9" is a number, but "1E" would be an exabyte nobody writes: only letters other than
    // e/E start the suffix.
    let (num, suffix) = t.split_at(split);
    let v: f64 = num.trim().parse().map_err(|_| {
        format!("'{s}' is not a size (examples: 4096, 64K, 1MiB, 1.5M, 117MB, 1.25e9)")
    })?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("'{s}' is not a non-negative number"));
    }
    let mult = suffix_multiplier(suffix.trim(), bits)
        .ok_or_else(|| format!("'{s}': unknown unit '{}'", suffix.trim()))?;
    Ok(v * mult)
}

fn suffix_multiplier(suffix: &str, bits: bool) -> Option<f64> {
    const KI: f64 = 1024.0;
    let binary = |p: i32| Some(KI.powi(p));
    let decimal = |p: i32| Some(1000f64.powi(p));
    match suffix {
        "" | "B" => Some(1.0),
        "K" | "k" | "Ki" | "KiB" | "kiB" => binary(1),
        "M" | "Mi" | "MiB" => binary(2),
        "G" | "Gi" | "GiB" => binary(3),
        "T" | "Ti" | "TiB" => binary(4),
        "kB" | "KB" => decimal(1),
        "MB" => decimal(2),
        "GB" => decimal(3),
        "TB" => decimal(4),
        "kbit" | "Kbit" | "kb" | "Kb" if bits => Some(1e3 / 8.0),
        "Mbit" | "Mb" if bits => Some(1e6 / 8.0),
        "Gbit" | "Gb" if bits => Some(1e9 / 8.0),
        "Tbit" | "Tb" if bits => Some(1e12 / 8.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("512K"), Ok(512 << 10));
        assert_eq!(parse_size("1.5M"), Ok(1_572_864));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("1e3"), Ok(1000));
        assert!(parse_size("1.5").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("12 apples").is_err());
        assert!(parse_size("1Gbit").is_err());
    }

    #[test]
    fn rates_and_times() {
        assert_eq!(parse_rate("117MB/s"), Ok(117e6));
        assert_eq!(parse_rate("1.25e9"), Ok(1.25e9));
        assert_eq!(parse_rate("1Gbit/s"), Ok(125e6));
        assert_eq!(parse_rate("2G"), Ok(2.0 * 1024.0 * 1024.0 * 1024.0));
        assert_eq!(parse_time_ns("50us"), Ok(50_000));
        assert_eq!(parse_time_ns("8.5ms"), Ok(8_500_000));
        assert_eq!(parse_time_ns("1s"), Ok(1_000_000_000));
        assert_eq!(parse_time_ns("300ns"), Ok(300));
        assert_eq!(parse_time_ns("1200"), Ok(1200));
        assert!(parse_time_ns("fast").is_err());
    }
}
