// The viewer's state: the visible time window shared by every pane, the selected state, the
// selected time range, the highlighted function. Views subscribe; nothing here draws or fetches.

const MIN_SPAN_NS = 100; // deeper zoom shows nothing more: times are whole nanoseconds

export class Model {
  constructor(duration) {
    this.duration = Math.max(1, duration); // the longest trace: the shared time axis
    this.t0 = 0;
    this.t1 = this.duration;
    this.selected = null; // {pane, id} of the clicked state
    this.range = null; // {t0, t1} of a shift-drag selection
    this.highlight = null; // {pane, func} from the legend or search: others drawn faded
    this.listeners = [];
  }

  /** `fn(what)` is called after each change; `what` is "window", "selection", "range" or "highlight". */
  subscribe(fn) { this.listeners.push(fn); }

  emit(what) { for (const fn of this.listeners) fn(what); }

  /** Sets the window, kept inside [0, duration] (a little beyond so edges can be centred). */
  setWindow(t0, t1) {
    let span = Math.max(MIN_SPAN_NS, t1 - t0);
    const slack = this.duration * 0.05;
    if (span > this.duration + 2 * slack) span = this.duration + 2 * slack;
    if (t0 < -slack) t0 = -slack;
    if (t0 + span > this.duration + slack) t0 = this.duration + slack - span;
    this.t0 = Math.round(t0);
    this.t1 = Math.round(t0 + span);
    this.emit("window");
  }

  /** Zooms by `factor` (< 1 zooms in) keeping time `anchor` at the same place on screen. */
  zoom(factor, anchor = (this.t0 + this.t1) / 2) {
    const span = this.t1 - this.t0;
    const frac = span > 0 ? (anchor - this.t0) / span : 0.5;
    const next = Math.max(MIN_SPAN_NS, span * factor);
    this.setWindow(anchor - frac * next, anchor - frac * next + next);
  }

  /** Moves the window by `dt` ns (positive: later). */
  pan(dt) { this.setWindow(this.t0 + dt, this.t1 + dt); }

  reset() { this.setWindow(0, this.duration); }

  /** Shows [t0, t1] with a margin of `pad` of its span on each side. */
  show(t0, t1, pad = 0.1) {
    const span = Math.max(MIN_SPAN_NS, t1 - t0);
    this.setWindow(t0 - span * pad, t1 + span * pad);
  }

  select(pane, id) { this.selected = id == null ? null : { pane, id }; this.emit("selection"); }

  setRange(range) { this.range = range; this.emit("range"); }

  setHighlight(h) { this.highlight = h; this.emit("highlight"); }
}
