// Live meters: one bar per channel for every meter node of the namespace (input, output
// levels in dBFS, the personalization's per-band gain reduction in dB), updated from the
// values SoundFit streams to LISTENers (20–30 per second).
import { formatted } from "./namespace.js";

const FLOOR_DB = -60;
const MAX_REDUCTION_DB = 24;

/** One bar: a level in dBFS (−60…0), or a gain reduction as its amount in dB (0…24). */
function bar(label, isReduction) {
  const row = document.createElement("div");
  row.className = "meter";
  const name = document.createElement("span");
  name.textContent = label;
  const track = document.createElement("meter");
  [track.min, track.max] = isReduction ? [0, MAX_REDUCTION_DB] : [FLOOR_DB, 0];
  track.value = track.min;
  track.setAttribute("aria-label", label);
  const reading = document.createElement("output");
  row.append(name, track, reading);
  return { row, track, reading };
}

/** Draws the meters into `container` and keeps each node's latest values on `container.meterData`. */
export function buildMeters(container, meters, connection) {
  container.meterData = {};
  for (const meter of meters) {
    const group = document.createElement("div");
    group.className = "meter-group";
    const title = document.createElement("h3");
    title.textContent = meter.label;
    group.append(title);
    container.append(group);
    const bars = [];
    const isReduction = /reduction/.test(meter.path);
    const update = (values) => {
      container.meterData[meter.path] = values;
      values.forEach((value, index) => {
        if (!bars[index]) {
          bars[index] = bar(isReduction ? `band ${index + 1}` : `ch ${index + 1}`, isReduction);
          group.append(bars[index].row);
        }
        const { track, reading } = bars[index];
        const shown = Number.isFinite(value) ? (isReduction ? Math.abs(value) : value) : track.min;
        track.value = Math.max(track.min, Math.min(track.max, shown));
        reading.textContent = formatted({ ...meter, kind: "float" }, value);
      });
    };
    update(meter.values.filter((v) => typeof v === "number"));
    connection.listen(meter.path);
    connection.on(meter.path, (args) => update(args.filter((a) => typeof a === "number")));
  }
}
