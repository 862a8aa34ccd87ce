// The hearing profile: an audiogram entered by hand, or measured by the hearing test (a large
// "I heard it" button, also the space bar), its progress and result, and the audiogram chart.
import { float, string } from "./osc.js";
import { drawAudiogram } from "./charts.js";

const $ = (selector) => document.querySelector(selector);
/** The standard audiometric frequencies the form offers (those /profile/audiogram takes). */
const FREQUENCIES = [125, 250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000];

function buildForm() {
  const body = $("#audiogram-rows");
  for (const hz of FREQUENCIES) {
    const row = document.createElement("tr");
    const head = document.createElement("th");
    head.scope = "row";
    head.textContent = hz >= 1000 ? `${hz / 1000} kHz` : `${hz} Hz`;
    row.append(head);
    for (const ear of ["right", "left"]) {
      const cell = document.createElement("td");
      const input = document.createElement("input");
      Object.assign(input, { type: "number", min: -10, max: 120, step: 5, name: `${ear}-${hz}` });
      input.setAttribute("aria-label", `${ear} ear, ${hz} Hz, dB HL`);
      input.dataset.ear = ear; input.dataset.hz = hz;
      cell.append(input);
      row.append(cell);
    }
    body.append(row);
  }
}

/** The thresholds entered for `ear`, as `[hz, dB HL]` pairs. */
const entered = (ear) => [...document.querySelectorAll(`#audiogram-rows input[data-ear=${ear}]`)]
  .filter((input) => input.value !== "")
  .map((input) => [Number(input.dataset.hz), Number(input.value)]);

function fillForm(ear, points) {
  for (const [hz, db] of points) {
    const input = document.querySelector(`#audiogram-rows input[data-ear=${ear}][data-hz="${hz}"]`);
    if (input) input.value = String(db);
  }
}

export function wireHearing(connection) {
  buildForm();
  const chart = $("#audiogram-chart");
  let profile = { left: [], right: [] };
  drawAudiogram(chart, profile);

  // /profile/audiogram ,s ear ,f hz ,f db … ,s dB HL: one reply per ear.
  connection.on("/profile/audiogram", ([ear, ...rest]) => {
    const numbers = rest.filter((a) => typeof a === "number");
    const points = [];
    for (let i = 0; i + 1 < numbers.length; i += 2) points.push([numbers[i], numbers[i + 1]]);
    profile = { ...profile, [ear]: points };
    fillForm(ear, points);
    drawAudiogram(chart, profile);
  });
  connection.on("/error", ([address, reason]) => {
    if (address === "/profile/audiogram") $("#profile-state").textContent = reason;
  });
  connection.on("/profile/presets", (variants) => {
    $("#profile-state").textContent = `presets available: ${variants.join(", ") || "none"}`;
    profile = { left: [], right: [] };
    connection.send("/profile/audiogram");  // draw what SoundFit holds now
  });
  $("#audiogram-form").addEventListener("submit", (event) => {
    event.preventDefault();
    for (const ear of ["right", "left"]) {
      const points = entered(ear);
      if (points.length) connection.send("/profile/audiogram", string(ear), ...points.flat().map(float));
    }
  });

  // The hearing test.
  const heard = $("#heard");
  const press = () => { connection.send("/test/heard"); heard.classList.add("pressed"); setTimeout(() => heard.classList.remove("pressed"), 150); };
  heard.addEventListener("click", press);
  document.addEventListener("keydown", (event) => {
    const typing = ["INPUT", "SELECT", "TEXTAREA", "BUTTON"].includes(document.activeElement?.tagName) && document.activeElement !== heard;
    if (event.code === "Space" && !typing && $("#test-panel").dataset.state === "running") { event.preventDefault(); press(); }
  });
  $("#test-start").addEventListener("click", () => connection.send("/test/start", string($("#test-ear").value)));
  $("#test-pause").addEventListener("click", () => connection.send("/test/pause"));
  $("#test-resume").addEventListener("click", () => connection.send("/test/resume"));
  $("#test-cancel").addEventListener("click", () => connection.send("/test/cancel"));
  $("#test-submit").addEventListener("click", () => connection.send("/test/submit"));
  // The export link carries the page's token, as the WebSocket does.
  const token = new URLSearchParams(location.search).get("token");
  if (token) $("#test-export").href += `?token=${encodeURIComponent(token)}`;
  // The test's reports reach the page only between presentations (after a response window
  // closes, never with a level): the page shows nothing that would tell the listener when a
  // tone comes. It does not poll during a test: a reply to a poll would be output while a
  // presentation is under way.
  connection.on("/test/state", ([state, ...pairs]) => {
    const details = {};
    for (let i = 0; i + 1 < pairs.length; i += 2) details[pairs[i]] = pairs[i + 1];
    $("#test-panel").dataset.state = state;
    $("#test-state").textContent = state === "running"
      ? `running: ${details.ear} ear, ${details.hz} Hz` : `${state}${details.reason ? `: ${details.reason}` : ""}`;
    if (details.progress !== undefined) $("#test-progress").value = details.progress;
    heard.disabled = state !== "running";
    // A result the gate kept (unreliable, incomplete) is applied only by a person's decision.
    $("#test-submit").hidden = !(state === "done" && details.profile === "not_submitted");
    if (state === "done") connection.send("/profile/audiogram");
  });
  connection.on("/test/result", ([ear, reliability, ...numbers]) => {
    const points = [];
    for (let i = 0; i + 1 < numbers.length; i += 2) points.push(`${numbers[i]} Hz ${numbers[i + 1]} dB HL`);
    const item = document.createElement("li");
    item.textContent = `${ear} (${reliability}): ${points.join(", ")}`;
    $("#test-results").append(item);
  });
  connection.on("/test/no_response", ([ear, ...hz]) => {
    const item = document.createElement("li");
    item.textContent = `${ear}: no response at ${hz.join(", ")} Hz`;
    $("#test-results").append(item);
  });
  connection.send("/test/status");
  connection.send("/profile/audiogram");
}
