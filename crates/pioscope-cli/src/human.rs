//! Text for people: aligned tables, and the number formats the commands' tables use (owned by
//! `pioscope_trace::units`, shared with the findings' evidence and the simulator's reports).

use std::borrow::Cow;

pub use pioscope_trace::units::{bytes, duration_ns, rate, throughput};

/// `text` made safe for a terminal, keeping its line breaks: what pioscope prints on standard
/// output passes here (`commands::Output`), since it quotes the trace (paths, region names,
/// hosts, command lines) and the trace is whatever the traced program named things.
pub fn printable_text(text: &str) -> Cow<'_, str> {
    escape_controls(text, |c| c == '\n')
}

/// `text` made safe for a terminal as one line (errors and warnings on standard error).
pub fn printable_line(text: &str) -> Cow<'_, str> {
    escape_controls(text, |_| false)
}

/// Writes every control character (C0 but those `keep` allows, DEL, C1) as `\uXXXX`, so that
/// no escape sequence, carriage return or backspace from the trace reaches the terminal. The
/// form is JSON's: inside a JSON string it decodes to the same character.
fn escape_controls(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && !keep(c);
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Prints rows as an aligned table: the first `left` columns left-aligned, the rest right.
pub fn table(header: &[&str], rows: &[Vec<String>], left: usize) -> String {
    // Cells escaped here, before measuring, so that a cell holding trace text keeps its width.
    let rows: Vec<Vec<Cow<'_, str>>> = rows
        .iter()
        .map(|r| r.iter().map(|c| printable_line(c)).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
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
    for r in &rows {
        out.push_str(&line(r.iter().map(|c| c.as_ref()).collect()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 12: text from the trace reached the terminal raw, escape sequences included.
    #[test]
    fn control_characters_are_escaped() {
        let path = "/scratch/\x1b[31mred\x1b[0m\rover\u{9b}2J\x7f";
        let want = "/scratch/\\u001b[31mred\\u001b[0m\\u000dover\\u009b2J\\u007f";
        assert_eq!(printable_line(path), want);
        assert_eq!(printable_text(&format!("{path}\n")), format!("{want}\n"));
        assert_eq!(printable_line("a\nb\tc"), "a\\u000ab\\u0009c");
        assert!(matches!(printable_text("plain é\n"), Cow::Borrowed(_)));
        // Inside JSON the escape decodes to the same character.
        let json = format!("\"{}\"", printable_line("\u{7f}\u{85}"));
        assert_eq!(
            serde_json::from_str::<String>(&json).unwrap(),
            "\u{7f}\u{85}"
        );
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
