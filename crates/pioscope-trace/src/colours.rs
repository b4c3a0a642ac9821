//! The colour of each layer and of each function: the one table the viewer, the HTML report and
//! the exports draw with. One hue per layer, shades of it per function, so a glance tells the
//! layer and a closer look the call.
//!
//! Design note: the pages never hold a copy. The viewer's server sends the table with each
//! trace's rows (`/api/rows`), `pioscope colours` prints it (for the Python package), the report
//! page carries it beside its data, the exports convert it to RGB; a test of each checks that it
//! draws what this module says.

use std::collections::BTreeMap;

use crate::functions::{self, Layer};

/// A colour as hue (degrees), saturation and lightness (percent): what the pages draw as CSS
/// `hsl()` and the exports as RGB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hsl {
    /// Hue in degrees (may leave 0..360 by a function's shift; it wraps).
    pub hue: i32,
    /// Saturation in percent (0: grey).
    pub saturation: u8,
    /// Lightness in percent.
    pub lightness: u8,
}

impl Hsl {
    /// The CSS spelling, e.g. `hsl(212, 62%, 52%)`.
    pub fn css(self) -> String {
        format!(
            "hsl({}, {}%, {}%)",
            self.hue, self.saturation, self.lightness
        )
    }

    /// Red, green and blue in 0..=1 (the CSS conversion).
    pub fn rgb(self) -> (f32, f32, f32) {
        let s = f32::from(self.saturation) / 100.0;
        let l = f32::from(self.lightness) / 100.0;
        let chroma = (1.0 - (2.0 * l - 1.0).abs()) * s;
        let sector = self.hue.rem_euclid(360) as f32 / 60.0;
        let x = chroma * (1.0 - (sector % 2.0 - 1.0).abs());
        let (r, g, b) = match sector as u32 {
            0 => (chroma, x, 0.0),
            1 => (x, chroma, 0.0),
            2 => (0.0, chroma, x),
            3 => (0.0, x, chroma),
            4 => (x, 0.0, chroma),
            _ => (chroma, 0.0, x),
        };
        let m = l - chroma / 2.0;
        (r + m, g + m, b + m)
    }
}

impl Layer {
    /// The layer's colour (its legend swatch, its bars in the report, its busy share in the
    /// viewer's density rows): MPI-IO orange, POSIX blue, STDIO cyan, MPI green, regions
    /// purple, servers gold, disks pink, HDF5 red, PnetCDF olive, the tracer's own records
    /// grey.
    pub fn colour(self) -> Hsl {
        let (hue, saturation) = match self {
            Layer::Posix => (212, 62),
            Layer::Stdio => (188, 62),
            Layer::MpiIo => (28, 62),
            Layer::Mpi => (130, 62),
            Layer::Region => (275, 62),
            Layer::Tracer => (0, 0),
            Layer::Server => (45, 62),
            Layer::Disk => (330, 62),
            Layer::Hdf5 => (355, 62),
            Layer::Pnetcdf => (75, 62),
        };
        Hsl {
            hue,
            saturation,
            lightness: 52,
        }
    }
}

/// Layer name → CSS colour: the table as the pages receive it.
pub fn css_by_layer() -> BTreeMap<&'static str, String> {
    Layer::ALL
        .iter()
        .map(|l| (l.name(), l.colour().css()))
        .collect()
}

/// The colour of function `name` of `layer`: the layer's hue, shifted by at most 8 degrees,
/// with a lightness (36..68 %) and saturation (50, 65 or 80 %) picked by a hash of the function,
/// so neighbouring calls of one layer stay apart and a function looks the same in every trace,
/// page and export. A grey layer's functions stay grey.
pub fn function_colour(layer: Layer, name: &str) -> Hsl {
    let base = layer.colour();
    // Knuth's multiplicative hash of the function's key.
    let h = shade_key(name).wrapping_add(1).wrapping_mul(2_654_435_761);
    let saturation = if base.saturation == 0 {
        0
    } else {
        50 + ((h >> 8) % 3) as u8 * 15
    };
    Hsl {
        hue: base.hue + (((h >> 16) % 3) as i32 - 1) * 8,
        saturation,
        lightness: 36 + (h % 5) as u8 * 8,
    }
}

/// What picks a function's shade: its functions.def id (also for the `func_<id>` names of ids
/// the table lacks), else an FNV-1a hash of a name the table does not know.
fn shade_key(name: &str) -> u32 {
    if let Some(f) = functions::by_name(name) {
        return u32::from(f.id);
    }
    if let Some(id) = name.strip_prefix("func_").and_then(|n| n.parse().ok()) {
        return id;
    }
    name.bytes().fold(2_166_136_261, |h, c| {
        (h ^ u32::from(c)).wrapping_mul(16_777_619)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table as the viewer drew it before it became the one table (issue 11): the report
    /// and the exports changed to match, the viewer did not.
    #[test]
    fn layer_colours_are_the_viewers() {
        let css: Vec<String> = Layer::ALL.iter().map(|l| l.colour().css()).collect();
        assert_eq!(
            css,
            [
                "hsl(212, 62%, 52%)",
                "hsl(188, 62%, 52%)",
                "hsl(28, 62%, 52%)",
                "hsl(130, 62%, 52%)",
                "hsl(275, 62%, 52%)",
                "hsl(0, 0%, 52%)",
                "hsl(45, 62%, 52%)",
                "hsl(330, 62%, 52%)",
                "hsl(355, 62%, 52%)",
                "hsl(75, 62%, 52%)",
            ]
        );
    }

    /// Shades of functions.def functions are those the viewer gave their ids before.
    #[test]
    fn function_shades_follow_the_id() {
        assert_eq!(
            function_colour(Layer::MpiIo, "MPI_File_write_all").css(),
            "hsl(36, 50%, 52%)"
        );
        assert_eq!(
            function_colour(Layer::Posix, "pwrite").css(),
            "hsl(212, 65%, 44%)"
        );
        assert_eq!(
            function_colour(Layer::Mpi, "MPI_Barrier").css(),
            "hsl(130, 50%, 36%)"
        );
        assert_eq!(
            function_colour(Layer::Tracer, "func_600").css(),
            "hsl(0, 0%, 36%)"
        );
        // A name the table does not know: stable, and in its layer's family.
        let a = function_colour(Layer::Stdio, "my_fwrite");
        assert_eq!(a, function_colour(Layer::Stdio, "my_fwrite"));
        assert!((a.hue - 188).abs() <= 8);
    }

    #[test]
    fn rgb_is_the_css_conversion() {
        let close = |a: (f32, f32, f32), b: (f32, f32, f32)| {
            (a.0 - b.0).abs() < 1e-3 && (a.1 - b.1).abs() < 1e-3 && (a.2 - b.2).abs() < 1e-3
        };
        // hsl(28, 62%, 52%) is rgb(208, 128, 57) in a browser.
        let (r, g, b) = Layer::MpiIo.colour().rgb();
        assert_eq!([r, g, b].map(|x| (x * 255.0).round() as u8), [208, 128, 57]);
        assert!(close(Layer::Tracer.colour().rgb(), (0.52, 0.52, 0.52)));
        // A hue shifted below 0 wraps.
        let wrapped = Hsl {
            hue: -8,
            saturation: 50,
            lightness: 50,
        };
        assert!(close(
            wrapped.rgb(),
            Hsl {
                hue: 352,
                ..wrapped
            }
            .rgb()
        ));
        for l in Layer::ALL {
            let (r, g, b) = function_colour(l, "MPI_File_write_all").rgb();
            assert!([r, g, b].iter().all(|x| (0.0..=1.0).contains(x)));
        }
    }
}
