// A control for every parameter of the namespace: sliders on the model's fader taper, toggles
// for booleans, selects for choices, a read-out for read-only values. Each shows the update
// state of its latest change (/state reports) and follows changes made by other clients.
import { int, float, string } from "./osc.js";
import { formatted, position, valueAt } from "./namespace.js";

let nextRequestID = 1;

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "class") node.className = value; else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

/** One parameter's row: label, control, value, update state. */
class ParameterControl {
  constructor(parameter, connection, onChange) {
    this.parameter = parameter;
    this.connection = connection;
    this.onChange = onChange;
    this.latestRequest = 0;
    const id = `param-${parameter.path.slice(1).replaceAll("/", "-")}`;
    this.readout = element("output", { class: "value", for: id });
    this.state = element("span", { class: "update-state", "aria-live": "polite" });
    this.input = this.makeInput(id);
    this.input.dataset.path = parameter.path;
    this.input.title = parameter.description;
    this.row = element("div", { class: `parameter ${parameter.kind}` },
      element("label", { for: id }, parameter.label), this.input, this.readout, this.state);
    this.row.dataset.path = parameter.path;
    this.show(parameter.value);
  }

  makeInput(id) {
    const p = this.parameter;
    if (!p.writable) return element("span", { id, class: "readonly", "aria-label": "read-only" });
    if (p.kind === "bool") {
      const input = element("input", { id, type: "checkbox", role: "switch" });
      input.addEventListener("change", () => this.request(input.checked ? 1 : 0));
      return input;
    }
    if (p.kind === "choice") {
      const input = element("select", { id }, ...p.choices.map((choice) => element("option", { value: choice }, choice)));
      input.addEventListener("change", () => this.request(input.value));
      return input;
    }
    if (p.kind === "float" || p.kind === "int") {
      const input = element("input", { id, type: "range", min: 0, max: 1, step: 0.001 });
      input.addEventListener("input", () => this.request(valueAt(p, Number(input.value))));
      // Arrow keys move 1 % of the travel (Shift: 0.1 %), not the 0.1 % step clicks resolve.
      input.addEventListener("keydown", (event) => {
        const direction = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1 }[event.key];
        if (!direction) return;
        event.preventDefault();
        const next = Math.min(Math.max(Number(input.value) + direction * (event.shiftKey ? 0.001 : 0.01), 0), 1);
        input.value = String(next);
        this.request(valueAt(p, next));
      });
      input.addEventListener("pointerdown", () => { this.dragging = true; });
      input.addEventListener("pointerup", () => { this.dragging = false; });
      return input;
    }
    const input = element("input", { id, type: "text" });
    input.addEventListener("change", () => this.request(input.value));
    return input;
  }

  /** Shows `value` (a native value from SoundFit or the one just requested). */
  show(value) {
    const p = this.parameter;
    if (value === undefined || value === null) return;
    if (p.kind === "bool") value = value === true || value === 1;
    this.value = value;
    this.readout.textContent = formatted(p, value);
    this.input.dataset.value = String(value);
    if (!p.writable) return;  // the read-out says it
    if (p.kind === "bool") this.input.checked = value;
    else if (p.kind === "float" || p.kind === "int") {
      if (!this.dragging) this.input.value = String(position(p, value));
      this.input.setAttribute("aria-valuetext", formatted(p, value));
    } else this.input.value = value;
  }

  /** Sends a set with a request id; its /state reports come back tagged with it. */
  request(value) {
    const p = this.parameter;
    const argument = p.kind === "float" ? float(value) : p.kind === "string" || p.kind === "choice" ? string(value) : int(value);
    this.latestRequest = nextRequestID++;
    this.connection.send(p.path, argument, int(this.latestRequest));
    this.show(p.kind === "bool" ? value === 1 : value);
    this.showState("applying", "");
  }

  /** A /state report: `state`, the value, an error, and the request id when it was ours. */
  report(state, value, error, requestID) {
    if (requestID !== undefined && requestID !== this.latestRequest) {
      if (state === "failed") this.showState(state, error);  // an older change failed: say so
      return;
    }
    this.showState(state, error);
    if (state === "applied") { this.show(value); this.onChange(this.parameter.path); }
  }

  showState(state, error) {
    this.state.textContent = error ? `${state}: ${error}` : state;
    this.state.dataset.state = state;
    this.row.dataset.state = state;
  }
}

/** Builds the controls into `container`, grouped by the first part of the address. */
export function buildControls(container, parameters, connection, onChange) {
  const controls = new Map();
  const groups = new Map();
  for (const parameter of parameters) {
    const group = parameter.path.split("/")[1];
    if (!groups.has(group)) {
      const fieldset = element("fieldset", { class: "group" }, element("legend", {}, group[0].toUpperCase() + group.slice(1)));
      groups.set(group, fieldset);
      container.append(fieldset);
    }
    const control = new ParameterControl(parameter, connection, onChange);
    groups.get(group).append(control.row);
    controls.set(parameter.path, control);
    connection.listen(parameter.path);
    // Value changes (LISTEN, feedback, query answers) come on the parameter's own address.
    connection.on(parameter.path, (args) => { if (args.length === 1) { control.show(args[0]); onChange(parameter.path); } });
  }
  connection.on("/state", (args) => {
    const [address, state, value, ...rest] = args;
    const control = controls.get(address);
    if (!control) return;
    const error = rest.find((argument) => typeof argument === "string") ?? "";
    const last = rest[rest.length - 1];
    control.report(state, value, error, Number.isInteger(last) && typeof rest.at(-1) !== "string" ? last : undefined);
  });
  return controls;
}
