"""The colours of layers and functions, as the viewer draws them: the one table of
crates/pioscope-trace/src/colours.rs, received from the binary (`pioscope colours --json`), never
a copy; converted from CSS `hsl()` to the RGB triples matplotlib takes.
"""
import colorsys
import re
from dataclasses import dataclass
from typing import Dict, Tuple

RGB = Tuple[float, float, float]

_HSL = re.compile(r"hsl\(\s*(-?\d+(?:\.\d+)?)\s*,\s*(\d+(?:\.\d+)?)%\s*,\s*(\d+(?:\.\d+)?)%\s*\)")


def css_to_rgb(css: str) -> RGB:
    """`hsl(212, 62%, 52%)` as red, green, blue in 0..1 (the CSS conversion)."""
    m = _HSL.fullmatch(css.strip())
    if m is None:
        raise ValueError(f"not a CSS hsl() colour: {css!r}")
    hue, saturation, lightness = (float(g) for g in m.groups())
    return colorsys.hls_to_rgb((hue % 360) / 360, lightness / 100, saturation / 100)


@dataclass(frozen=True)
class Colours:
    """Layer and function colours of one trace (RGB in 0..1)."""
    layers: Dict[str, RGB]
    functions: Dict[str, RGB]

    @classmethod
    def from_table(cls, table: dict) -> "Colours":
        """From `pioscope colours --json`: `layers` and `functions[].colour`."""
        return cls(layers={name: css_to_rgb(c) for name, c in table["layers"].items()},
                   functions={f["name"]: css_to_rgb(f["colour"]) for f in table["functions"]})

    def of_function(self, func: str, layer: str) -> RGB:
        """A function's shade, or its layer's colour for a function the table lacks."""
        return self.functions.get(func) or self.layers[layer]
