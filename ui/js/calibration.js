// Calibration you can do: a steady tone per ear and frequency at a nominal dB SPL, the sound
// level meter's reading entered, and the table of corrections (reading − nominal) SoundFit keeps.
import { float, string } from "./osc.js";

const $ = (selector) => document.querySelector(selector);

/** `/calibration ,s earphone ,s name ,s left [,f hz ,f db …] ,s right [,f hz ,f db …]`. */
function parseTable(args) {
  const table = { earphone: args[1], left: [], right: [] };
  let side = null;
  for (let i = 2; i < args.length; i++) {
    if (typeof args[i] === "string") { side = args[i]; continue; }
    if (side && typeof args[i + 1] === "number") { table[side].push([args[i], args[i + 1]]); i++; }
  }
  return table;
}

function drawTable(table) {
  $("#calibration-earphone").textContent = table.earphone;
  const body = $("#calibration-rows");
  body.replaceChildren();
  const frequencies = [...new Set([...table.left, ...table.right].map(([hz]) => hz))].sort((a, b) => a - b);
  for (const hz of frequencies) {
    const row = document.createElement("tr");
    const head = document.createElement("th");
    head.scope = "row";
    head.textContent = `${hz} Hz`;
    row.append(head);
    for (const ear of ["right", "left"]) {
      const cell = document.createElement("td");
      const point = table[ear].find(([f]) => f === hz);
      cell.textContent = point ? `${point[1] > 0 ? "+" : ""}${Math.round(point[1] * 10) / 10} dB` : "–";
      cell.dataset.ear = ear; cell.dataset.hz = hz;
      row.append(cell);
    }
    body.append(row);
  }
  const count = table.left.length + table.right.length;
  $("#calibration-empty").textContent = count === 0
    ? "No corrections: the tones play as the calibration and the earphone table say."
    : `${count} correction${count === 1 ? "" : "s"} (reading − nominal), interpolated in log frequency between them.`;
}

export function wireCalibration(connection) {
  const status = $("#calibration-state");
  const selected = () => [string($("#calibration-ear").value), float(Number($("#calibration-hz").value))];
  connection.on("/calibration", (args) => drawTable(parseTable(args)));
  connection.on("/calibration/tone", ([ear, hz, db, dbfs]) => {
    status.textContent = `playing ${ear} ${hz} Hz at ${db} dB SPL (${Math.round(dbfs * 10) / 10} dBFS): read the meter`;
    $("#calibration-panel").dataset.state = "playing";
  });
  connection.on("/calibration/stop", () => {
    status.textContent = "stopped";
    $("#calibration-panel").dataset.state = "idle";
  });
  connection.on("/calibration/measured", ([ear, hz, correction]) => {
    status.textContent = `${ear} ${hz} Hz: correction ${Math.round(correction * 10) / 10} dB kept`;
  });
  connection.on("/error", ([address, reason]) => {
    if (address.startsWith("/calibration")) status.textContent = reason;
  });
  $("#calibration-play").addEventListener("click", () =>
    connection.send("/calibration/tone", ...selected(), float(Number($("#calibration-level").value))));
  $("#calibration-stop").addEventListener("click", () => connection.send("/calibration/stop"));
  $("#calibration-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const reading = $("#calibration-reading").value;
    if (reading === "") { status.textContent = "enter what the meter reads, in dB SPL"; return; }
    connection.send("/calibration/measured", ...selected(), float(Number(reading)));
  });
  $("#calibration-reset").addEventListener("click", () => connection.send("/calibration/reset"));
  connection.on("#open", () => connection.send("/calibration"));
}
