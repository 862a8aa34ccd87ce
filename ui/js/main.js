// Builds the page from SoundFit's namespace and wires every panel to one WebSocket.
import { Connection } from "./connection.js";
import { loadNamespace } from "./namespace.js";
import { buildControls } from "./controls.js";
import { buildMeters } from "./meters.js";
import { drawResponse } from "./charts.js";
import { wireDelivery, wireErrors, wirePatches, wirePersistence, wireSession } from "./panels.js";
import { wireHearing } from "./hearing.js";
import { wireCalibration } from "./calibration.js";
import { wireVerification } from "./verify.js";

const $ = (selector) => document.querySelector(selector);
const RESPONSE_POINTS = 256;
/** Live redraws while a signal plays: at most one GET /response per 250 ms (4 a second). */
const LIVE_INTERVAL_MS = 250;
/** An input peak above this (dBFS) is a signal; silence reads −120. */
const SIGNAL_FLOOR_DB = -100;
/** After the signal the gains return to rest (the detectors' release): redrawn until no point
 *  moves more than 0.1 dB between two redraws, at most 40 times (10 s). */
const SETTLED_DB = 0.1;
const MAX_SETTLE_REDRAWS = 40;
/** A failed fetch (no audio yet at start, a restart) is tried again after 1 s. */
const RETRY_MS = 1000;

/** The largest difference (dB) between two responses, Infinity when they cannot be compared. */
function largestChange(a, b) {
  if (!a || a.frequencies.length !== b.frequencies.length) return Infinity;
  let largest = 0;
  for (const ear of ["left", "right"]) {
    a[ear].forEach((db, i) => { largest = Math.max(largest, Math.abs(db - b[ear][i])); });
  }
  return largest;
}

/** Fetches GET /response and redraws it, one fetch at a time, on the page's main thread:
 *  `schedule()` after a change (100 ms later; asked during a fetch, once more after it),
 *  `live()` with a meter reading that shows a signal (now, unless a fetch runs or one started
 *  less than 250 ms ago), `settle()` when the signal stops (every 250 ms until the chart rests). */
function responseRefresher() {
  let running = false, pending = null, timer = null, lastStart = 0;
  let settling = 0;  // redraws left while the gains return to rest; 0: at rest
  const chart = $("#response-chart");
  const state = $("#response-state");
  // `data-idle` is "true" while no fetch runs, waits or is due: a test waits on it, not on time.
  const showIdle = () => { chart.dataset.idle = String(!running && pending === null && timer === null); };
  const later = (reason, ms) => {
    clearTimeout(timer);
    timer = setTimeout(() => { timer = null; refresh(reason); }, ms);
    showIdle();
  };
  const refresh = async (reason = "change") => {
    if (running) { pending = reason; showIdle(); return; }
    running = true;
    showIdle();
    lastStart = Date.now();
    chart.dataset.fetches = String(Number(chart.dataset.fetches ?? 0) + 1);  // what a test counts
    let failed = false;
    try {
      const requested = Date.now();
      const response = await fetch(`/response?points=${RESPONSE_POINTS}`);
      if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
      const previous = chart.plotData, next = await response.json();
      drawResponse(chart, next, requested);
      chart.dataset.live = String(reason !== "change");
      state.textContent = reason === "live" ? "following the signal" : "";
      if (settling > 0) settling = largestChange(previous, next) > SETTLED_DB ? settling - 1 : 0;
    } catch (error) {
      state.textContent = `response unavailable: ${error.message}`;
      failed = true;
    }
    running = false;
    const next = pending ?? (failed ? reason : settling > 0 ? "settle" : null);
    pending = null;
    if (next) later(next, failed ? RETRY_MS : next === "change" ? 100 : LIVE_INTERVAL_MS);
    else showIdle();
  };
  showIdle();
  return {
    schedule: () => later("change", 100),
    live: () => { settling = 0; if (!running && Date.now() - lastStart >= LIVE_INTERVAL_MS) refresh("live"); },
    settle: () => { settling = MAX_SETTLE_REDRAWS; later("settle", LIVE_INTERVAL_MS); },
  };
}

/** Follows the signal while the "live" box is ticked: the chart is redrawn at the band gains of
 *  the moment while the input meters show a signal, and until the gains rest after it. */
function followSignal(connection, refresher) {
  const toggle = $("#response-live");
  let playing = false;
  connection.on("/meters/input", (args) => {
    const signal = args.some((value, index) => index % 2 === 0 && value > SIGNAL_FLOOR_DB);
    if (toggle.checked && signal) refresher.live();
    else if (toggle.checked && playing) refresher.settle();
    playing = signal;
  });
  toggle.addEventListener("change", () => { if (!toggle.checked) { $("#response-state").textContent = ""; refresher.schedule(); } });
}

async function start() {
  const connection = new Connection();
  connection.onStatus = (status) => { $("#connection").textContent = status; };
  // Asked of every profile, so answered with an error when there is none yet: the profile
  // section says so.
  wireErrors(connection, new Set(["/profile/audiogram", "/personalization/gains"]));
  try {
    const parameters = await loadNamespace();
    const refresher = responseRefresher();
    buildControls($("#parameters"), parameters, connection, refresher.schedule);
    // A new profile, session or patch changes the chain too.
    for (const address of ["/profile/presets", "/session", "/patch/current", "#open"]) connection.on(address, refresher.schedule);
    followSignal(connection, refresher);
    refresher.schedule();
  } catch (error) {
    $("#connection").textContent = `cannot read the namespace: ${error.message}`;
  }
  buildMeters($("#meters"), connection);
  wirePatches(connection);
  wireSession(connection);
  wireDelivery(connection);
  wirePersistence(connection);
  wireHearing(connection);
  wireCalibration(connection);
  wireVerification();
  // Every first answer is in once SoundFit answers this /sync (its replies to one client keep
  // their order, and the queries above went first): `data-answered` tells a test so.
  connection.on("/synced", () => { document.body.dataset.answered = "true"; });
  connection.send("/sync", 1);
  document.body.dataset.ready = "true";
}

start();
