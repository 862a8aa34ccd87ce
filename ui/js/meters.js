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

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A titled group of bars, one added per channel or band as readings arrive. */
class MeterGroup {
  constructor(container, title, range) {
    this.range = range;
    this.bars = [];
    this.group = element("div", "meter-group");
    this.group.append(element("h3", "", title));
    container.append(this.group);
  }

  show(index, label, value, text) {
    if (!this.bars[index]) {
      const row = element("div", "meter");
      const track = element("meter");
      [track.min, track.max] = this.range;
      track.setAttribute("aria-label", `${this.group.firstChild.textContent} ${label}`);
      const reading = element("output");
      row.append(element("span", "", label), track, reading);
      this.group.append(row);
      this.bars[index] = { track, reading };
    }
    const { track, reading } = this.bars[index];
    track.value = Math.max(track.min, Math.min(track.max, Number.isFinite(value) ? value : track.min));
    reading.textContent = text;
  }
}

export function buildMeters(container, connection) {
  const data = { input: { peak: [], rms: [] }, output: { peak: [], rms: [] }, reduction: {} };
  container.meterData = data;
  const levels = {
    input: new MeterGroup(container, "Input (peak, dBFS)", [LEVEL_FLOOR_DB, 0]),
    output: new MeterGroup(container, "Output (peak, dBFS)", [LEVEL_FLOOR_DB, 0]),
  };
  const reduction = new MeterGroup(container, "Gain reduction per band (dB)", [0, MAX_REDUCTION_DB]);

  for (const side of ["input", "output"]) {
    // ,f peak ,f rms per channel, in channel order.
    connection.on(`/meters/${side}`, (args) => {
      const peaks = args.filter((_, i) => i % 2 === 0), rms = args.filter((_, i) => i % 2 === 1);
      data[side] = { peak: peaks, rms };
      peaks.forEach((peak, channel) =>
        levels[side].show(channel, `ch ${channel + 1}`, peak, `${peak.toFixed(1)} / ${rms[channel].toFixed(1)}`));
    });
  }
  // ,i channel ,f db … per channel: one bar per channel and band.
  connection.on("/meters/reduction", ([channel, ...bands]) => {
    data.reduction[channel] = bands;
    bands.forEach((db, band) => reduction.show(`${channel}-${band}`, `ch ${channel} band ${band + 1}`, db, `${db.toFixed(1)} dB`));
  });
  connection.on("/meters/subscribed", () => { container.dataset.streaming = "true"; });

  const subscribe = () => connection.send("/meters/subscribe", float(RATE_HZ));
  subscribe();
  connection.on("#open", subscribe);  // a new socket (a reconnection) is a new listener
  setInterval(subscribe, RENEW_MS);
}
