// Colours of one trace's layers and functions, for the painter and the views. The page holds no
// table of its own: the server sends pioscope's one colour table (crates/pioscope-trace/src/
// colours.rs, also used by the HTML report and the exports) with the trace's rows; here only
// the two marks the page draws over them.

/** What the page draws over the trace's colours: states faded by a highlight, and the mark of
 * a row group's worst row. */
export const FADED = "hsl(0, 0%, 86%)";
export const WORST_MARK = "hsl(0, 70%, 30%)";

/** The order the legend lists layers in: outermost calls first. */
export const LAYER_ORDER = ["region", "hdf5", "pnetcdf", "mpiio", "mpi", "posix", "stdio", "server", "disk", "tracer"];

/** The colours of an /api/rows answer: `layer_colours` and `functions[].colour`. */
export class Palette {
  constructor(rowsDoc) {
    this.layers = rowsDoc.layer_colours;
    this.funcs = new Map(rowsDoc.functions.map((f) => [f.id, f.colour]));
  }

  /** The colour of a layer; a layer the server does not know is drawn as the tracer's grey. */
  layer(layer) {
    return this.layers[layer] ?? this.layers.tracer;
  }

  /** The colour of function `func` (an id of the rows' functions) of `layer`: a shade of the
   * layer's colour, or the layer's colour for an id the rows do not list. */
  func(func, layer) {
    return this.funcs.get(func) ?? this.layer(layer);
  }
}
