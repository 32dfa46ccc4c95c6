//! Parsing of link rates, durations and byte sizes given on the command line.

use std::time::Duration;

/// A rate in bits per second from `1gbit`, `100mbit`, `2.5Gbit/s`, `10g`, `500k`, `1e9`.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.trim_end_matches("/s").trim_end_matches("ps").trim_end_matches("bit");
    let (num, mult) = split_suffix(t, &[("k", 1e3), ("m", 1e6), ("g", 1e9), ("t", 1e12)]);
    let v: f64 = num.parse().map_err(|_| format!("bad rate {s:?} (e.g. 1gbit, 100mbit)"))?;
    let bits = v * mult;
    if !(1e3..=1e13).contains(&bits) {
        return Err(format!("rate {s:?} out of range (1 kbit/s to 10 Tbit/s)"));
    }
    Ok(bits.round() as u64)
}

/// A duration from `50us`, `1ms`, `0.2ms`, `1s`, `0`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim().to_ascii_lowercase();
    let (num, mult) = split_suffix(&t, &[("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0)]);
    let v: f64 = num.parse().map_err(|_| format!("bad duration {s:?} (e.g. 50us, 1ms)"))?;
    if !(v >= 0.0 && v * mult <= 10.0) {
        return Err(format!("duration {s:?} out of range (0 to 10 s)"));
    }
    Ok(Duration::from_secs_f64(v * mult))
}

/// A byte count from `64M`, `16MB`, `1G`, `4096` (K, M, G are powers of 1024, as
/// ccoll-bench reads them).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.trim_end_matches("ib").trim_end_matches('b');
    let (num, mult) = split_suffix(t, &[("k", 1024.0), ("m", 1048576.0), ("g", 1073741824.0)]);
    let v: f64 = num.parse().map_err(|_| format!("bad size {s:?} (e.g. 64M)"))?;
    if !(v >= 0.0 && v * mult < 1e15) {
        return Err(format!("size {s:?} out of range"));
    }
    Ok((v * mult).round() as u64)
}

fn split_suffix<'a>(t: &'a str, units: &[(&str, f64)]) -> (&'a str, f64) {
    // Longest suffix first, so "ms" wins over "s".
    let mut sorted: Vec<_> = units.to_vec();
    sorted.sort_by_key(|(u, _)| std::cmp::Reverse(u.len()));
    for (u, m) in sorted {
        if let Some(num) = t.strip_suffix(u) {
            return (num.trim(), m);
        }
    }
    (t, 1.0)
}

/// `1 Gbit/s`, `100 Mbit/s`, `2.5 Gbit/s`.
pub fn fmt_rate(bps: u64) -> String {
    let (v, u) = if bps >= 1_000_000_000 { (bps as f64 / 1e9, "Gbit/s") } else if bps >= 1_000_000 { (bps as f64 / 1e6, "Mbit/s") } else { (bps as f64 / 1e3, "kbit/s") };
    format!("{} {u}", trim_float(v))
}

/// `16M`, `256M`, `1G`, `4K`, `100`: the inverse of [`parse_size`] for exact multiples.
pub fn fmt_size(bytes: u64) -> String {
    for (m, u) in [(1u64 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")] {
        if bytes >= m && bytes.is_multiple_of(m) {
            return format!("{}{u}", bytes / m);
        }
    }
    bytes.to_string()
}

/// A CPU cost per byte moved, seconds per byte, in the microseconds per MB (10^6 bytes)
/// that `xtask model --net-cpu-us-per-mb` takes and the reports print; and back.
pub fn us_per_mb(s_per_byte: f64) -> f64 {
    s_per_byte * 1e12
}
pub fn s_per_byte(us_per_mb: f64) -> f64 {
    us_per_mb * 1e-12
}

pub fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_costs_per_byte_read_in_us_per_mb() {
        assert!((us_per_mb(1.1e-9) - 1100.0).abs() < 1e-9);
        assert!((s_per_byte(1100.0) - 1.1e-9).abs() < 1e-21);
    }

    #[test]
    fn units_parse_and_format() {
        assert_eq!(parse_rate("1gbit"), Ok(1_000_000_000));
        assert_eq!(parse_rate("100Mbit/s"), Ok(100_000_000));
        assert_eq!(parse_rate("2.5g"), Ok(2_500_000_000));
        assert_eq!(parse_rate("1e9"), Ok(1_000_000_000));
        assert!(parse_rate("fast").is_err() && parse_rate("0").is_err() && parse_rate("-1g").is_err());
        assert_eq!(parse_duration("50us"), Ok(Duration::from_micros(50)));
        assert_eq!(parse_duration("1ms"), Ok(Duration::from_millis(1)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert!(parse_duration("1h").is_err() && parse_duration("-1ms").is_err() && parse_duration("11s").is_err());
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("16MB"), Ok(16 << 20));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(fmt_rate(1_000_000_000), "1 Gbit/s");
        assert_eq!(fmt_rate(2_500_000_000), "2.5 Gbit/s");
        assert_eq!(fmt_size(256 << 20), "256M");
        assert_eq!(fmt_size(1000), "1000");
    }
}
