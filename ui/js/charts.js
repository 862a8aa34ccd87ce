// The pictures, drawn as inline SVG: the audiogram as audiologists draw it and the frequency
// response per ear. Each chart keeps the data it plotted on its element (`plotData`), so a
// test reads what the page drew, not what it fetched.
const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A log-frequency × dB plot area inside `host` (an <svg> with a viewBox). */
class Plot {
  constructor(host, { fMin, fMax, dbTop, dbBottom, xTicks, yStep, yLabel }) {
    Object.assign(this, { host, fMin, fMax, dbTop, dbBottom });
    this.box = { left: 52, top: 14, right: 586, bottom: 300 };
    host.setAttribute("viewBox", "0 0 600 330");
    host.replaceChildren();
    const grid = svg("g", { class: "grid" });
    for (const hz of xTicks) {
      const x = this.x(hz);
      grid.append(svg("line", { x1: x, x2: x, y1: this.box.top, y2: this.box.bottom }));
      grid.append(svg("text", { x, y: this.box.bottom + 16, "text-anchor": "middle" }, hz >= 1000 ? `${hz / 1000}k` : `${hz}`));
    }
    const [low, high] = [Math.min(dbTop, dbBottom), Math.max(dbTop, dbBottom)];
    for (let db = Math.ceil(low / yStep) * yStep; db <= high; db += yStep) {
      const y = this.y(db);
      grid.append(svg("line", { x1: this.box.left, x2: this.box.right, y1: y, y2: y }));
      grid.append(svg("text", { x: this.box.left - 6, y: y + 4, "text-anchor": "end" }, `${db}`));
    }
    grid.append(svg("text", { x: 12, y: this.box.top + 140, transform: `rotate(-90 12 ${this.box.top + 140})`, "text-anchor": "middle" }, yLabel));
    grid.append(svg("text", { x: this.box.right, y: this.box.bottom + 28, "text-anchor": "end" }, "Hz"));
    host.append(grid);
    this.layer = svg("g");
    host.append(this.layer);
  }

  x(hz) {
    const { left, right } = this.box;
    return left + (Math.log(hz / this.fMin) / Math.log(this.fMax / this.fMin)) * (right - left);
  }

  y(db) {
    const { top, bottom } = this.box;
    const clamped = Math.min(Math.max(db, Math.min(this.dbTop, this.dbBottom)), Math.max(this.dbTop, this.dbBottom));
    return top + ((clamped - this.dbTop) / (this.dbBottom - this.dbTop)) * (bottom - top);
  }

  line(points, className) {
    const path = points.map(([hz, db]) => `${this.x(hz).toFixed(1)},${this.y(db).toFixed(1)}`).join(" ");
    this.layer.append(svg("polyline", { points: path, class: className, fill: "none" }));
  }
}

/** The audiogram: 125 Hz–8 kHz on a log axis, dB HL increasing downward, O red for the
 *  right ear, X blue for the left, each ear's points joined. `ears` = {left: [[hz, dB HL]…], right: …}. */
export function drawAudiogram(host, ears) {
  const plot = new Plot(host, {
    fMin: 105, fMax: 9500, dbTop: -10, dbBottom: 120, yStep: 10, yLabel: "dB HL",
    xTicks: [125, 250, 500, 1000, 2000, 4000, 8000],
  });
  const data = { left: [...(ears.left ?? [])].sort((a, b) => a[0] - b[0]), right: [...(ears.right ?? [])].sort((a, b) => a[0] - b[0]) };
  for (const [ear, className] of [["right", "ear-right"], ["left", "ear-left"]]) {
    plot.line(data[ear], className);
    for (const [hz, db] of data[ear]) {
      const x = plot.x(hz), y = plot.y(db);
      const mark = ear === "right"
        ? svg("circle", { cx: x, cy: y, r: 7, class: className, fill: "none" })
        : svg("path", { d: `M${x - 6},${y - 6}L${x + 6},${y + 6}M${x - 6},${y + 6}L${x + 6},${y - 6}`, class: className });
      mark.append(svg("title", {}, `${ear} ${hz} Hz: ${db} dB HL`));
      mark.dataset.ear = ear; mark.dataset.hz = hz; mark.dataset.db = db;
      plot.layer.append(mark);
    }
  }
  host.plotData = data;
  host.setAttribute("aria-label", `Audiogram. Right: ${describe(data.right)}. Left: ${describe(data.left)}.`);
}

const describe = (points) => (points.length ? points.map(([hz, db]) => `${hz} Hz ${db} dB HL`).join(", ") : "no thresholds");

/** The response of the whole chain per ear: `{frequencies, left, right}` in Hz and dB, as
 *  SoundFit computed it at `requested` (ms since the epoch, when the page asked). The right ear
 *  is drawn solid and the left dashed on top of it, so two equal ears still show both. */
export function drawResponse(host, response, requested) {
  const all = [...response.left, ...response.right].filter(Number.isFinite);
  const top = Math.max(12, Math.ceil((Math.max(...all, 0) + 2) / 6) * 6);  // 2 dB clear of the frame
  const plot = new Plot(host, {
    fMin: 20, fMax: 20000, dbTop: top, dbBottom: top - 60, yStep: 6, yLabel: "dB",
    xTicks: [20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000],
  });
  for (const [ear, className] of [["right", "ear-right"], ["left", "ear-left"]]) {
    plot.line(response.frequencies.map((hz, i) => [hz, response[ear][i]]), className);
  }
  host.plotData = response;
  host.dataset.requested = String(requested);
}
