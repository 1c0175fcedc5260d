/**
 * Python's repr() of JSON values, so that JS error messages read exactly as the Python twins'.
 */

export function pyRepr(value) {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") {
    if (Number.isInteger(value)) return String(value);
    const s = String(value);
    return s.includes(".") || s.includes("e") ? s : `${s}.0`;
  }
  if (typeof value === "string") {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    const body = value.replaceAll("\\", "\\\\").replaceAll("\n", "\\n");
    return quote + (quote === "'" ? body.replaceAll("'", "\\'") : body) + quote;
  }
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  return `{${Object.entries(value)
    .map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`)
    .join(", ")}}`;
}

/** Python's sorted() of strings, then list repr: ['a', 'b']. */
export function pyList(values) {
  return pyRepr([...values].sort());
}
