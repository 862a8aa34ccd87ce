// The command panels: patches (list, load, save, delete), the session and its interruptions,
// delivery settings, the errors SoundFit answered, and whether changes are persisted. Each sends the documented OSC commands
// over the page's connection and shows the replies (docs/OSC.md).
import { float, int, string } from "./osc.js";

const $ = (selector) => document.querySelector(selector);
const MAX_ERRORS = 50;

/** Every /error, newest first, at most 50 kept; `shownElsewhere` holds the addresses whose
 *  errors a panel shows next to its own controls (a query for a profile not made yet). */
export function wireErrors(connection, shownElsewhere = new Set()) {
  const list = $("#errors");
  connection.on("/error", ([address, reason]) => {
    if (shownElsewhere.has(address)) return;
    const item = document.createElement("li");
    item.textContent = `${address || "(packet)"}: ${reason}`;
    list.prepend(item);
    while (list.children.length > MAX_ERRORS) list.lastElementChild.remove();
    $("#errors-panel").open = true;
  });
}

export function wirePatches(connection) {
  const select = $("#patch-list");
  // One listing at a time (its pages arrive in order); a refresh asked for meanwhile runs when
  // it ends, so two listings' items never mix.
  let page = [], listing = false, again = false;
  const refresh = () => {
    if (listing) { again = true; return; }
    listing = true;
    page = [];
    connection.send("/patch/list");
  };
  connection.on("/patch/item", ([number, name]) => page.push({ number, name }));
  connection.on("/patch/end", ([count, next]) => {
    if (next > 0) return connection.send("/patch/list", int(next));  // the next page of 32
    const chosen = select.value;
    select.replaceChildren(...page.map(({ number, name }) => {
      const option = document.createElement("option");
      option.value = String(number);
      option.textContent = `${number < 0 ? "user" : "factory"} ${number}: ${name}`;
      return option;
    }));
    if (chosen) select.value = chosen;
    $("#patch-count").textContent = `${count} patches`;
    listing = false;
    if (again) { again = false; refresh(); }
  });
  connection.on("/patch/current", ([number, name, modified, pending]) => {
    $("#patch-current").textContent = `${name} (${number})${modified ? ", modified" : ""}${pending ? ", waiting for a session" : ""}`;
  });
  connection.on("/patch/saved", refresh);
  connection.on("/patch/deleted", refresh);
  // Another client saved or deleted a user patch: the server says the choices of /patch/load
  // changed (OSCQuery PATH_CHANGED).
  connection.on("#text", ([text]) => {
    let notice;
    try { notice = JSON.parse(text); } catch { return; }
    if (notice.COMMAND === "PATH_CHANGED" && notice.DATA === "/patch/load") refresh();
  });
  // Each (re)opened socket lists the patches afresh (a listing cut by the old socket is over);
  // a socket that opened before this panel was wired is listed now.
  connection.on("#open", () => { listing = false; again = false; refresh(); });
  if (connection.isOpen) refresh();
  $("#patch-load").addEventListener("click", () => select.value && connection.send("/patch/load", int(Number(select.value))));
  $("#patch-delete").addEventListener("click", () => select.value && connection.send("/patch/delete", int(Number(select.value))));
  $("#patch-save-form").addEventListener("submit", (event) => {
    event.preventDefault();
    connection.send("/patch/save", string($("#patch-name").value));
  });
  connection.send("/patch/current");
}

export function wireSession(connection) {
  connection.on("/session", ([state, mode, level]) => {
    $("#session-state").textContent = state === "active" ? `active, ${mode.replaceAll("_", " ")}, tech level ${level}` : state;
    $("#session-state").dataset.state = state;
  });
  connection.on("/session/interrupted", ([interrupted]) => {
    $("#interruption-state").textContent = interrupted ? "interrupted" : "not interrupted";
    $("#interruption-state").dataset.interrupted = String(interrupted);
  });
  $("#session-activate-form").addEventListener("submit", (event) => {
    event.preventDefault();
    connection.send("/session/activate", string($("#session-mode").value), int(Number($("#session-level").value)));
  });
  $("#session-deactivate").addEventListener("click", () => connection.send("/session/deactivate"));
  $("#interrupt").addEventListener("click", () => connection.send("/session/interrupt", string($("#interrupt-reason").value)));
  $("#resolve").addEventListener("click", () => connection.send("/session/resolve", string($("#interrupt-reason").value)));
  connection.send("/session");
}

export function wireDelivery(connection) {
  connection.on("/config/delivery", ([style, settle]) => {
    $("#delivery-style").value = style;
    $("#delivery-settle").value = settle.toFixed(3);
    $("#delivery-current").textContent = style === "discrete" ? `discrete, settles in ${settle.toFixed(3)} s` : "continuous";
  });
  connection.on("/config/timeout", ([seconds]) => {
    $("#delivery-timeout").value = seconds.toFixed(2);
    $("#timeout-current").textContent = `${seconds.toFixed(2)} s`;
  });
  $("#delivery-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const style = $("#delivery-style").value;
    if (style === "discrete") connection.send("/config/delivery", string(style), float(Number($("#delivery-settle").value)));
    else connection.send("/config/delivery", string(style));
    connection.send("/config/timeout", float(Number($("#delivery-timeout").value)));
  });
  connection.send("/config/delivery");
  connection.send("/config/timeout");
}

/** A banner while SoundFit cannot persist its state (`/status persisted 0`: a full or read-only
 *  disk): changes still apply but would be lost by a restart. Asks `/status` every 2 s and at
 *  once after a "not persisted" error; the banner goes when `persisted` is 1 again. */
export function wirePersistence(connection) {
  const banner = $("#persistence");
  let reason = "";
  connection.on("/status", (args) => {
    for (let index = 0; index + 1 < args.length; index += 2) {
      if (args[index] !== "persisted") continue;
      const persisted = args[index + 1] === 1;
      banner.hidden = persisted;
      banner.dataset.persisted = persisted ? "1" : "0";
      banner.textContent = persisted ? "" : `Not persisted: changes apply but are not saved${reason ? ` (${reason})` : ""}`;
      if (persisted) reason = "";
    }
  });
  connection.on("/error", ([, message]) => {
    if (typeof message !== "string" || !message.startsWith("not persisted: ")) return;
    reason = message.slice("not persisted: ".length);
    connection.send("/status");
  });
  connection.on("#open", () => connection.send("/status"));
  setInterval(() => { if (connection.isOpen) connection.send("/status"); }, 2000);
}
