//! Text for people: aligned tables, and the number formats the commands' tables use (owned by
//! `pioscope_trace::units`, shared with the findings' evidence and the simulator's reports).

pub use pioscope_trace::units::{bytes, duration_ns, rate, throughput};

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
