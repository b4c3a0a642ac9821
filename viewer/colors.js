// Colours: one hue per layer, shades of it per function, so a glance tells the layer and a
// closer look the call. Shared by the painter and the legend.

const LAYER_HUE = {
  posix: 212, stdio: 188, mpiio: 28, mpi: 130, region: 275, tracer: 0, server: 45, disk: 330,
};

export const LAYER_ORDER = ["region", "mpiio", "mpi", "posix", "stdio", "server", "disk", "tracer"];

/** The base colour of a layer. */
export function layerColor(layer, alpha = 1) {
  const hue = LAYER_HUE[layer];
  if (hue === undefined) return `hsla(0, 0%, 55%, ${alpha})`;
  const sat = layer === "tracer" ? 0 : 62;
  return `hsla(${hue}, ${sat}%, 52%, ${alpha})`;
}

const cache = new Map();

/** The colour of function `func` (an id of /api/rows functions) of `layer`: the layer's hue
 * with a lightness and saturation picked from the id, stable across reloads. */
export function funcColor(func, layer) {
  const key = `${layer}:${func}`;
  let c = cache.get(key);
  if (c) return c;
  const hue = LAYER_HUE[layer];
  if (hue === undefined) {
    c = "hsl(0, 0%, 55%)";
  } else {
    const h = Math.imul(func + 1, 2654435761) >>> 0; // Knuth's multiplicative hash
    const light = 36 + (h % 5) * 8; // 36..68 %
    const sat = layer === "tracer" ? 0 : 50 + ((h >>> 8) % 3) * 15;
    const dh = ((h >>> 16) % 3 - 1) * 8;
    c = `hsl(${hue + dh}, ${sat}%, ${light}%)`;
  }
  cache.set(key, c);
  return c;
}
