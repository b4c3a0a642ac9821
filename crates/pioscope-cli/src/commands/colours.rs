//! `pioscope colours`: the layer and function colour table (`pioscope_trace::colours`) for tools
//! outside the binary, such as the Python package's plots.

use anyhow::Result;
use clap::Parser;
use pioscope_trace::colours;
use pioscope_trace::functions;
use serde_json::json;

/// Print the colours layers and functions are drawn in
///
/// The one colour table of the viewer, the HTML report and the exports: a hue per layer and a
/// shade of it per traced function (functions.def), as CSS `hsl()`. Text: one line per layer,
/// then one per function. With --json: {"layers": {LAYER: CSS}, "functions": [{"name",
/// "layer", "colour"}]}.
#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES)]
pub struct Args {
    /// One JSON object on stdout instead of text
    #[arg(long)]
    pub json: bool,
}

/// Prints the table.
pub fn run(args: Args) -> Result<u8> {
    let layers = colours::css_by_layer();
    let functions = functions::all()
        .iter()
        .map(|f| (f, colours::function_colour(f.layer, f.name).css()));
    let mut out = super::Output::stdout();
    if args.json {
        let functions: Vec<_> = functions
            .map(|(f, colour)| json!({"name": f.name, "layer": f.layer.name(), "colour": colour}))
            .collect();
        out.line(format_args!(
            "{}",
            json!({"layers": layers, "functions": functions})
        ))?;
    } else {
        for (layer, colour) in &layers {
            out.line(format_args!("{layer:<10} {colour}"))?;
        }
        for (f, colour) in functions {
            out.line(format_args!(
                "{:<10} {:<28} {colour}",
                f.layer.name(),
                f.name
            ))?;
        }
    }
    out.finish()?;
    Ok(0)
}
