// Reads SoundFit's OSCQuery namespace (GET /) into the list of parameters the page draws
// controls for, and maps values onto slider positions with each parameter's fader taper.

const one = (attribute) => (Array.isArray(attribute) ? attribute[0] : attribute);

/** Every node with a TYPE (a value that cannot be read now has no VALUE), depth first in the
 *  namespace's order. */
function* valueNodes(node) {
  if (node.TYPE !== undefined) yield node;
  for (const child of Object.values(node.CONTENTS ?? {})) yield* valueNodes(child);
}

/** A unit as people write it: the OSCQuery proposal's names (`time.hz`, `gain.db`) become
 *  `Hz` and `dB`. */
function unitSymbol(unit) {
  const name = unit.includes(".") ? unit.split(".").pop() : unit;
  return { hz: "Hz", db: "dB", dbfs: "dBFS" }[name.toLowerCase()] ?? name;
}

/** One parameter as the page uses it. */
function parameter(node) {
  const type = node.TYPE;
  const range = one(node.RANGE) ?? {};
  const kind = type === "T" || type === "F" ? "bool"
    : range.VALS ? "choice"
    : type === "i" ? "int" : type === "f" ? "float" : "string";
  const access = node.ACCESS ?? 3;
  return {
    path: node.FULL_PATH,
    kind,
    min: range.MIN, max: range.MAX, choices: range.VALS ?? [],
    writable: (access & 2) !== 0,
    value: one(node.VALUE),
    unit: unitSymbol(one(node.UNIT) ?? ""),
    description: node.DESCRIPTION ?? "",
    taper: node.TAPER ?? (kind === "int" ? "integer" : "linear"),
    label: node.DISPLAY_NAME ?? node.FULL_PATH.split("/").filter(Boolean).join(" "),
  };
}

/** The namespace's parameters, in its order: command nodes (ACCESS 2, write-only, such as
 *  `/patch/load`) are left out (the page has its own patch panel), and so are the meter nodes
 *  (`/meters/…`: streams the page draws as meters). */
export async function loadNamespace() {
  const response = await fetch("/");
  if (!response.ok) throw new Error(`GET / answered ${response.status}: ${await response.text()}`);
  const root = await response.json();
  return [...valueNodes(root)]
    .filter((node) => node.ACCESS !== 2 && !node.FULL_PATH.startsWith("/meters/") && !node.FULL_PATH.endsWith("/normalized"))
    .map(parameter);
}

/** The slider position 0…1 of a native value, as the model's taper maps it. */
export function position(parameter, value) {
  const { min, max, taper } = parameter;
  const fraction = taper === "logarithmic" ? Math.log(value / min) / Math.log(max / min) : (value - min) / (max - min);
  return Number.isFinite(fraction) ? Math.min(Math.max(fraction, 0), 1) : 0;
}

/** The native value at a slider position; the ends are the range's bounds exactly. */
export function valueAt(parameter, position) {
  const { min, max, taper } = parameter;
  if (position <= 0) return min;
  if (position >= 1) return max;
  const value = taper === "logarithmic" ? min * Math.pow(max / min, position) : min + position * (max - min);
  const bounded = Math.min(Math.max(Math.fround(value), min), max);
  return parameter.kind === "int" ? Math.round(bounded) : bounded;
}

/** A value as a person reads it: 3 significant digits and the unit. */
export function formatted(parameter, value) {
  if (parameter.kind === "bool") return value ? "on" : "off";
  if (typeof value !== "number") return String(value);
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toFixed(parameter.kind === "int" ? 0 : digits)}${parameter.unit ? " " + parameter.unit : ""}`;
}
