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

/** Fetches GET /response and redraws it; a change while a fetch runs asks for one more. */
function responseRefresher() {
  let running = false, again = false, timer;
  const refresh = async () => {
    if (running) { again = true; return; }
    running = true;
    try {
      const requested = Date.now();
      const response = await fetch(`/response?points=${RESPONSE_POINTS}`);
      if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
      drawResponse($("#response-chart"), await response.json(), requested);
      $("#response-state").textContent = "";
    } catch (error) {
      $("#response-state").textContent = `response unavailable: ${error.message}`;
    } finally {
      running = false;
      if (again) { again = false; schedule(); }
    }
  };
  const schedule = () => { clearTimeout(timer); timer = setTimeout(refresh, 100); };
  return schedule;
}

async function start() {
  const connection = new Connection();
  connection.onStatus = (status) => { $("#connection").textContent = status; };
  wireErrors(connection, new Set(["/profile/audiogram"]));
  try {
    const parameters = await loadNamespace();
    const refreshResponse = responseRefresher();
    buildControls($("#parameters"), parameters, connection, refreshResponse);
    // A new profile, session or patch changes the chain too.
    for (const address of ["/profile/presets", "/session", "/patch/current", "#open"]) connection.on(address, refreshResponse);
    refreshResponse();
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
  document.body.dataset.ready = "true";
}

start();
