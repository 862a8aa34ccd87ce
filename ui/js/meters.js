// Live meters: input and output level per channel (peak and RMS, dBFS) and the
// personalization's gain reduction per band, from the meter stream SoundFit sends the page's
// socket after /meters/subscribe (docs/OSC.md, "Response and meters"). The readings are kept on
// `container.meterData` ({input: {peak: [], rms: []}, output: …, reduction: {channel: [dB…]}}).
import { float } from "./osc.js";

const RATE_HZ = 20;
/** The stream's lease is 60 s: renewed well before it ends. */
const RENEW_MS = 30000;
const LEVEL_FLOOR_DB = -60;
const MAX_REDUCTION_DB = 24;
const SVG = "http://www.w3.org/2000/svg";

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A titled group of bars, one row added per channel as readings arrive. The rows share one
 *  grid (label, bar, reading), so their columns line up and a reading never wraps. */
class MeterGroup {
  constructor(container, title, range) {
    this.range = range;
    this.title = title;
    this.bars = [];
    this.group = element("div", "meter-group");
    this.group.append(element("h3", "", title));
    this.rows = element("div", "meter-rows");
    this.group.append(this.rows);
    container.append(this.group);
  }

  show(index, label, value, text) {
    if (!this.bars[index]) {
      const row = element("div", "meter");
      const track = element("meter");
      [track.min, track.max] = this.range;
      track.setAttribute("aria-label", `${this.title} ${label}`);
      const reading = element("output");
      row.append(element("span", "", label), track, reading);
      this.rows.append(row);
      this.bars[index] = { track, reading };
    }
    const { track, reading } = this.bars[index];
    track.value = Math.max(track.min, Math.min(track.max, Number.isFinite(value) ? value : track.min));
    reading.textContent = text;
  }
}

const hertz = (hz) => (hz >= 1000 ? `${Math.round(hz / 100) / 10}k` : `${Math.round(hz)}`);

/** The gain reduction of every band as one bar chart: a pair of bars per band, the left ear's
 *  (channel 1, blue) beside the right ear's (channel 2, red), 0…24 dB upwards. Bars are moved,
 *  not redrawn, at the meter rate; the chart is rebuilt only when the bands or channels change. */
class ReductionChart {
  constructor(container) {
    this.group = element("div", "meter-group reduction");
    this.group.append(element("h3", "", "Gain reduction per band (dB)"));
    this.host = svg("svg", { id: "reduction-chart", class: "chart", role: "img", viewBox: "0 0 600 160" });
    this.legend = element("p", "legend");
    this.legend.append(element("span", "ear-left", "■ left (ch 1)"), " ", element("span", "ear-right", "■ right (ch 2)"));
    this.empty = element("p", "note", "No reduction: the personalization is off or has no preset.");
    this.group.append(this.empty, this.host, this.legend);
    this.host.style.display = "none";
    this.legend.hidden = true;
    container.append(this.group);
    this.shape = "";
    this.centres = [];
  }

  /** Band centres (Hz) for the labels, from /personalization/gains. */
  label(centres) {
    this.centres = centres;
    this.shape = "";  // rebuilt with the labels at the next reading
  }

  show(reduction) {
    const channels = Object.keys(reduction).map(Number).sort((a, b) => a - b);
    const bands = Math.max(0, ...channels.map((channel) => reduction[channel].length));
    const shape = `${channels.join(",")}/${bands}`;
    if (shape !== this.shape) this.build(channels, bands, shape);
    for (const channel of channels) {
      reduction[channel].forEach((db, band) => {
        const bar = this.bars[`${channel}-${band}`];
        const clamped = Math.max(0, Math.min(MAX_REDUCTION_DB, Number.isFinite(db) ? db : 0));
        const height = (clamped / MAX_REDUCTION_DB) * (this.box.bottom - this.box.top);
        bar.rect.setAttribute("y", (this.box.bottom - height).toFixed(1));
        bar.rect.setAttribute("height", height.toFixed(1));
        bar.title.textContent = `${bar.name}: ${db.toFixed(1)} dB`;
      });
    }
    this.host.setAttribute("aria-label", "Gain reduction per band: " + channels.map((channel) =>
      `${this.ear(channel)} ${reduction[channel].map((db) => db.toFixed(1)).join(", ")} dB`).join("; "));
  }

  ear(channel) { return channel === 1 ? "left" : channel === 2 ? "right" : `ch ${channel}`; }

  build(channels, bands, shape) {
    this.shape = shape;
    this.bars = {};
    this.host.replaceChildren();
    const box = { left: 34, top: 14, right: 594, bottom: 124 };
    this.box = box;
    const visible = bands > 0 && channels.length > 0;
    this.host.style.display = visible ? "" : "none";
    this.legend.hidden = !visible;
    this.empty.hidden = visible;
    if (!visible) return;
    const grid = svg("g", { class: "grid" });
    for (let db = 0; db <= MAX_REDUCTION_DB; db += 6) {
      const y = box.bottom - (db / MAX_REDUCTION_DB) * (box.bottom - box.top);
      grid.append(svg("line", { x1: box.left, x2: box.right, y1: y, y2: y }));
      grid.append(svg("text", { x: box.left - 5, y: y + 4, "text-anchor": "end" }, `${db}`));
    }
    const slot = (box.right - box.left) / bands;
    const width = (slot * 0.8) / channels.length;
    const labelled = this.centres.length === bands;
    for (let band = 0; band < bands; band++) {
      const x0 = box.left + band * slot + slot * 0.1;
      const name = labelled ? `${hertz(this.centres[band])} Hz` : `band ${band + 1}`;
      grid.append(svg("text", { x: x0 + slot * 0.4, y: box.bottom + 16, "text-anchor": "middle" },
        labelled ? hertz(this.centres[band]) : `${band + 1}`));
      channels.forEach((channel, index) => {
        const rect = svg("rect", { x: (x0 + index * width).toFixed(1), width: (width - 1).toFixed(1), y: box.bottom, height: 0,
          class: channel === 1 ? "ear-left" : channel === 2 ? "ear-right" : "" });
        const title = svg("title");
        rect.append(title);
        this.bars[`${channel}-${band}`] = { rect, title, name: `${this.ear(channel)} ${name}` };
      });
    }
    grid.append(svg("text", { x: box.right, y: box.bottom + 31, "text-anchor": "end" }, labelled ? "Hz" : "band"));
    this.host.append(grid, ...Object.values(this.bars).map((bar) => bar.rect));
  }
}

export function buildMeters(container, connection) {
  const data = { input: { peak: [], rms: [] }, output: { peak: [], rms: [] }, reduction: {} };
  container.meterData = data;
  const levels = {
    input: new MeterGroup(container, "Input: peak / RMS (dBFS)", [LEVEL_FLOOR_DB, 0]),
    output: new MeterGroup(container, "Output: peak / RMS (dBFS)", [LEVEL_FLOOR_DB, 0]),
  };
  const reduction = new ReductionChart(container);

  for (const side of ["input", "output"]) {
    // ,f peak ,f rms per channel, in channel order.
    connection.on(`/meters/${side}`, (args) => {
      const peaks = args.filter((_, i) => i % 2 === 0), rms = args.filter((_, i) => i % 2 === 1);
      data[side] = { peak: peaks, rms };
      peaks.forEach((peak, channel) =>
        levels[side].show(channel, `ch ${channel + 1}`, peak, `${peak.toFixed(1)} / ${rms[channel].toFixed(1)}`));
    });
  }
  // ,i channel ,f db … per channel: one pair of bars per band. Without the personalization
  // none come: bars not fed for half a second go.
  let lastReduction = 0;
  connection.on("/meters/reduction", ([channel, ...bands]) => {
    data.reduction[channel] = bands;
    lastReduction = Date.now();
    reduction.show(data.reduction);
  });
  connection.on("/meters/input", () => {
    if (Object.keys(data.reduction).length && Date.now() - lastReduction > 500) {
      data.reduction = {};
      reduction.show(data.reduction);
    }
  });
  // The band centres label the bars (the reply's triples: hz, prescribed, applied; then the unit).
  connection.on("/personalization/gains/left", (args) => {
    const numbers = args.filter((value) => typeof value === "number");
    reduction.label(numbers.filter((_, i) => i % 3 === 0));
  });
  const askCentres = () => connection.send("/personalization/gains");
  connection.on("/profile/presets", askCentres);
  connection.on("/meters/subscribed", () => { container.dataset.streaming = "true"; });

  const subscribe = () => connection.send("/meters/subscribe", float(RATE_HZ));
  subscribe();
  askCentres();
  connection.on("#open", () => { subscribe(); askCentres(); });  // a new socket (a reconnection) is a new listener
  setInterval(subscribe, RENEW_MS);
}
