// Rectangles batched by colour for the canvas painters (draw.js, draw-overview.js): one path
// and one fill per colour per frame.

/** Rectangles grouped by fill colour, filled with one path each. A rectangle that continues
 * the colour's previous one on the same line (adjacent summaries of one busy call, a run of
 * back-to-back states) extends it instead: fewer path segments to fill. */
export class Batch {
  constructor() { this.byColor = new Map(); }
  rect(color, x, y, w, h) {
    let a = this.byColor.get(color);
    if (!a) { a = []; this.byColor.set(color, a); }
    const n = a.length;
    if (n && a[n - 3] === y && a[n - 1] === h && x >= a[n - 4] && x - (a[n - 4] + a[n - 2]) < 0.5) {
      a[n - 2] = Math.max(a[n - 2], x + w - a[n - 4]);
      return;
    }
    a.push(x, y, w, h);
  }
  flush(ctx) {
    for (const [color, a] of this.byColor) {
      ctx.fillStyle = color;
      ctx.beginPath();
      for (let i = 0; i < a.length; i += 4) ctx.rect(a[i], a[i + 1], a[i + 2], a[i + 3]);
      ctx.fill();
    }
    this.byColor.clear();
  }
}
