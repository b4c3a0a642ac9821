//! `pioscope report --html FILE`: the report as one self-contained HTML page. The page embeds
//! the report JSON (the object `--json` prints) and draws everything in the browser with plain
//! JavaScript and inline SVG / canvas (report.js, report.css, included here at build time):
//! no network, no external font, no CDN; one file that opens from disk. Two things it shares
//! with the viewer come from their one owner: the number formatters (viewer/units.js, inlined
//! before report.js in one module script) and the layer colours (`pioscope_trace::colours`,
//! in the app element's `data-layer-colours`); the ids of the server finding rules
//! (`findings::SERVER_RULE_IDS`) are in its `data-server-rules`.
//!
//! Design note: the Rust side only serializes and escapes; all layout, aggregation for large
//! rank counts and drawing live in report.js, so the same data can be checked with `--json`.
//! The JSON sits in a `<script type="application/json">` element; every `<`, `>` and `&` in it
//! is written as a `\u00XX` escape (only possible inside JSON strings, where the escape means
//! the same character), so no file path or command line can close the element or open a
//! comment. A Content-Security-Policy forbids every fetch, so the page cannot reach the network
//! even if a future edit tried to.
//!
//! `report --against A` adds the diff of this run against A (the object `pioscope diff A TRACE
//! --json` prints) in a second JSON element, `DIFF_ID`; report.js draws its section when the
//! element is there.

use pioscope_analysis::diff::Diff;
use pioscope_analysis::{findings, Profile};
use pioscope_trace::colours;

/// The page's style sheet.
const CSS: &str = include_str!("report.css");
/// The page's script: reads the embedded JSON and draws every section.
const JS: &str = include_str!("report.js");
/// The number formatters both pages use (an ES module; its exports are the page's functions).
const UNITS_JS: &str = include_str!("../../../../viewer/units.js");
/// The viewer's colours (the heat map's ramp), inlined the same way.
const COLORS_JS: &str = include_str!("../../../../viewer/colors.js");
/// Id of the element that holds the JSON (report.js reads it).
pub const DATA_ID: &str = "pioscope-report";
/// Id of the element that holds the diff against another run (`report --against`).
pub const DIFF_ID: &str = "pioscope-diff";

/// The page for `profile`, with its diff against another run when there is one.
pub fn page(profile: &Profile, against: Option<&Diff>) -> serde_json::Result<String> {
    let json = serde_json::to_string(profile)?;
    let diff = against.map(serde_json::to_string).transpose()?;
    let title = match &profile.job.command {
        Some(c) => format!("pioscope report: {c}"),
        None => "pioscope report".to_string(),
    };
    Ok(page_from_json(&json, diff.as_deref(), &title))
}

/// The page around an already serialized report object (and diff object).
pub fn page_from_json(json: &str, diff: Option<&str>, title: &str) -> String {
    let data = embed_json(json);
    let mut out = String::with_capacity(data.len() + CSS.len() + UNITS_JS.len() + JS.len() + 2048);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n",
    );
    out.push_str("<meta name=\"generator\" content=\"pioscope ");
    out.push_str(env!("CARGO_PKG_VERSION"));
    out.push_str("\">\n<title>");
    out.push_str(&escape_html(title));
    out.push_str("</title>\n<style>\n");
    out.push_str(CSS);
    out.push_str("</style>\n</head>\n<body>\n");
    out.push_str(
        "<noscript><p>This page draws the report with JavaScript; \
         `pioscope report --json` gives the same data.</p></noscript>\n",
    );
    out.push_str("<main id=\"app\" data-layer-colours=\"");
    out.push_str(&escape_html(
        &serde_json::json!(colours::css_by_layer()).to_string(),
    ));
    out.push_str("\" data-server-rules=\"");
    out.push_str(&escape_html(
        &serde_json::json!(findings::SERVER_RULE_IDS).to_string(),
    ));
    out.push_str("\"></main>\n<script type=\"application/json\" id=\"");
    out.push_str(DATA_ID);
    out.push_str("\">");
    out.push_str(&data);
    if let Some(diff) = diff {
        out.push_str("</script>\n<script type=\"application/json\" id=\"");
        out.push_str(DIFF_ID);
        out.push_str("\">");
        out.push_str(&embed_json(diff));
    }
    // A module script, so viewer/units.js and colors.js go in as they are: `export` is legal
    // there (unused).
    out.push_str("</script>\n<script type=\"module\">\n");
    out.push_str(UNITS_JS);
    out.push_str(COLORS_JS);
    out.push_str(JS);
    out.push_str("</script>\n</body>\n</html>\n");
    out
}

/// JSON made safe inside a `<script>` element: `<`, `>` and `&` become `\u003c`, `\u003e` and
/// `\u0026` (they can only occur inside JSON strings, where the escape is the same character),
/// and U+2028/U+2029 are escaped too so the text is also valid as a JavaScript literal.
pub fn embed_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 64);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Text made safe in HTML content and attribute values.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pioscope_trace::Layer;

    /// The text between the data element's opening tag and its first `</script`.
    fn embedded(page: &str) -> &str {
        let open = format!("<script type=\"application/json\" id=\"{DATA_ID}\">");
        let start = page.find(&open).expect("data element") + open.len();
        let len = page[start..].find("</script").expect("closed");
        &page[start..start + len]
    }

    #[test]
    fn json_cannot_close_the_script_element() {
        let v = serde_json::json!({
            "path": "/tmp/</script><script>alert(1)</script>",
            "comment": "<!-- x -->",
            "amp": "a & b > c",
            "sep": "line\u{2028}para\u{2029}",
        });
        let json = serde_json::to_string(&v).expect("json");
        let page = page_from_json(&json, None, "t");
        let data = embedded(&page);
        assert!(!data.contains('<') && !data.contains('>') && !data.contains('&'));
        assert!(!data.contains('\u{2028}'));
        // The escaped text is still the same JSON value.
        let back: serde_json::Value = serde_json::from_str(data).expect("valid json");
        assert_eq!(back, v);
    }

    /// The layer colours the page draws with are the one table's (issue 11: the page once had
    /// its own, with MPI-IO purple); tests/test_colours.py checks the drawn bars.
    #[test]
    fn layer_colours_are_the_one_table() {
        let page = page_from_json("{}", None, "t");
        let open = "<main id=\"app\" data-layer-colours=\"";
        let start = page.find(open).expect("app element") + open.len();
        let len = page[start..].find('"').expect("closed");
        let json = page[start..start + len].replace("&quot;", "\"");
        let table: serde_json::Value = serde_json::from_str(&json).expect("json");
        for l in Layer::ALL {
            assert_eq!(table[l.name()], l.colour().css().as_str(), "{l}");
        }
    }

    /// The diff of `--against` sits in its own element, escaped like the report.
    #[test]
    fn the_diff_has_its_own_element() {
        let page = page_from_json("{}", Some("{\"a\":\"</script>\"}"), "t");
        let open = format!("<script type=\"application/json\" id=\"{DIFF_ID}\">");
        let start = page.find(&open).expect("diff element") + open.len();
        let len = page[start..].find("</script").expect("closed");
        assert_eq!(
            &page[start..start + len],
            "{\"a\":\"\\u003c/script\\u003e\"}"
        );
        assert_eq!(page.matches("<script").count(), 3);
        let plain = page_from_json("{}", None, "t");
        assert!(!plain.contains(&format!("id=\"{DIFF_ID}\"")));
        assert_eq!(plain.matches("<script").count(), 2);
    }

    #[test]
    fn title_is_escaped() {
        let page = page_from_json("{}", None, "run <a & \"b\">");
        assert!(page.contains("<title>run &lt;a &amp; &quot;b&quot;&gt;</title>"));
    }

    /// One file: style and script are inline, nothing is loaded from elsewhere.
    #[test]
    fn the_page_is_one_file() {
        let page = page_from_json("{\"job\":{}}", None, "t");
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains(CSS) && page.contains(JS) && page.contains(UNITS_JS));
        // The one URL allowed: the SVG namespace (an identifier, never fetched).
        let page = page.replace("\"http://www.w3.org/2000/svg\"", "SVGNS");
        for needle in [
            "src=",
            "href=\"http",
            "@import",
            "url(",
            "http://",
            "https://",
            "fetch(",
            "XMLHttpRequest",
            "<link",
            "<img",
        ] {
            let n = page.matches(needle).count();
            assert_eq!(n, 0, "{needle} appears {n} times");
        }
        assert!(
            page.contains("default-src 'none'"),
            "the CSP forbids network access"
        );
        // Exactly the two scripts and one style element, none closed early by the assets.
        assert_eq!(page.matches("<script").count(), 2);
        assert_eq!(page.matches("</script>").count(), 2);
        assert_eq!(page.matches("</style>").count(), 1);
        assert!(
            ![CSS, UNITS_JS, JS].iter().any(|a| a.contains("</")),
            "assets never hold a closing tag"
        );
    }
}
