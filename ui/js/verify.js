// The fitting's verification (GET /verify, the numbers of `soundfit verify`): per ear, the
// insertion gain of speech-shaped noise at 55, 65 and 80 dB SPL, target dashed and measured
// solid, and the prescribed (intensity 1) against the applied gain at 65 dB SPL. The server
// renders offline for a few seconds, so the page asks only when the button is pressed.
// The charts keep what they drew (`plotData`), so a test reads what the page drew.
const SVG = "http://www.w3.org/2000/svg";
const $ = (selector) => document.querySelector(selector);
const LEVEL_CLASSES = { 55: "level-55", 65: "level-65", 80: "level-80" };

function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A log-frequency (200 Hz–12 kHz) × dB plot in `host`, an <svg>. */
function plotArea(host, low, high, title) {
  host.setAttribute("viewBox", "0 0 600 330");
  host.replaceChildren();
  const box = { left: 52, top: 32, right: 586, bottom: 300 };
  const x = (hz) => box.left + (Math.log(hz / 200) / Math.log(12000 / 200)) * (box.right - box.left);
  const y = (db) => box.bottom - ((db - low) / (high - low)) * (box.bottom - box.top);
  const grid = svg("g", { class: "grid" });
  for (const hz of [250, 500, 1000, 2000, 4000, 8000]) {
    grid.append(svg("line", { x1: x(hz), x2: x(hz), y1: box.top, y2: box.bottom }));
    grid.append(svg("text", { x: x(hz), y: box.bottom + 16, "text-anchor": "middle" }, hz >= 1000 ? `${hz / 1000}k` : `${hz}`));
  }
  for (let db = low; db <= high; db += 10) {
    grid.append(svg("line", { x1: box.left, x2: box.right, y1: y(db), y2: y(db) }));
    grid.append(svg("text", { x: box.left - 6, y: y(db) + 4, "text-anchor": "end" }, `${db}`));
  }
  grid.append(svg("text", { x: box.left, y: 18, class: "title" }, title));
  grid.append(svg("text", { x: 12, y: 160, transform: "rotate(-90 12 160)", "text-anchor": "middle" }, "gain (dB)"));
  host.append(grid);
  const layer = svg("g");
  host.append(layer);
  return {
    line(points, className) {
      const path = points.map(([hz, db]) => `${x(hz).toFixed(1)},${y(db).toFixed(1)}`).join(" ");
      layer.append(svg("polyline", { points: path, class: className, fill: "none" }));
    },
    dot(hz, db, className, title) {
      const mark = svg("circle", { cx: x(hz), cy: y(db), r: 4, class: className });
      mark.append(svg("title", {}, title));
      layer.append(mark);
    },
  };
}

function range(values) {
  const finite = values.filter(Number.isFinite);
  const low = Math.floor(Math.min(0, ...finite) / 10) * 10, high = Math.ceil(Math.max(10, ...finite) / 10) * 10;
  return [low, high];
}

/** Draws `report` (the JSON of GET /verify) into the section. */
export function drawVerification(report) {
  for (const ear of ["left", "right"]) {
    const results = report.speech.filter((result) => result.ear === ear);
    const [low, high] = range(results.flatMap((r) => r.bands.flatMap((b) => [b.target, b.measured])));
    const host = $(`#verify-${ear}`);
    const plot = plotArea(host, low, high, `${ear} ear: insertion gain, speech noise`);
    for (const result of results) {
      const level = LEVEL_CLASSES[result.level] ?? "level-65";
      plot.line(result.bands.map((b) => [b.centre, b.target]), `${level} target`);
      plot.line(result.bands.map((b) => [b.centre, b.measured]), `${level} measured`);
      for (const b of result.bands) {
        plot.dot(b.centre, b.measured, b.pass ? level : `${level} miss`,
          `${ear} ${b.centre} Hz at ${result.level} dB SPL: measured ${b.measured} dB, target ${b.target} dB`);
      }
    }
    host.plotData = results;

    const curve = report.prescription.find((p) => p.ear === ear);
    const gains = $(`#prescribed-${ear}`);
    if (curve) {
      const [gLow, gHigh] = range([...curve.prescribed, ...curve.applied]);
      const gainPlot = plotArea(gains, gLow, gHigh, `${ear} ear: gain at 65 dB SPL speech`);
      gainPlot.line(curve.centres.map((hz, i) => [hz, curve.prescribed[i]]), "prescribed");
      gainPlot.line(curve.centres.map((hz, i) => [hz, curve.applied[i]]), "applied");
      gains.plotData = curve;
    }
  }
  const failures = report.failures ?? [];
  $("#verify-verdict").textContent = report.passes
    ? `PASS: every band within tolerance (tech level ${report.techLevel}, intensity ${report.intensity})`
    : `FAIL: ${failures.length} band(s) outside tolerance (tech level ${report.techLevel}, intensity ${report.intensity})`;
  $("#verify-verdict").dataset.passes = String(report.passes);
  const list = $("#verify-failures");
  list.replaceChildren(...failures.map((text) => Object.assign(document.createElement("li"), { textContent: text })));
}

/** Wires the button: GET /verify (with the page's token, as the WebSocket has it), then draws. */
export function wireVerification() {
  const button = $("#verify-run");
  button.addEventListener("click", async () => {
    button.disabled = true;
    $("#verify-state").textContent = "verifying… (a few seconds)";
    try {
      const token = new URLSearchParams(location.search).get("token");
      const response = await fetch("/verify?tones=0" + (token ? `&token=${encodeURIComponent(token)}` : ""));
      const body = await response.json();
      if (!response.ok) throw new Error(body.error ?? `${response.status}`);
      drawVerification(body);
      $("#verify-state").textContent = "";
      $("#verify-section").dataset.state = "done";
    } catch (error) {
      $("#verify-state").textContent = `verification unavailable: ${error.message}`;
      $("#verify-section").dataset.state = "failed";
    } finally {
      button.disabled = false;
    }
  });
}
