/**
 * Twin of racko_env/config.py: the rules options of a game, validated as Python validates them,
 * from the same declaration (web/js/rules_options.js is generated from RulesConfig).
 */

import { pyRepr, pyList } from "./pyrepr.js";
import { RULE_OPTIONS } from "./rules_options.js";

export const RULE_DEFAULTS = Object.freeze(
  Object.fromEntries(RULE_OPTIONS.map((o) => [o.name, o.default])),
);
const FIELDS = RULE_OPTIONS.map((o) => o.name);

/** Python's errors are TypeError/ValueError; a RulesError carries the same text. */
export class RulesError extends Error {}

/** Python's repr() of a tuple of strings: ('shuffle', 'flip'). */
function pyTuple(values) {
  return values.length === 1 ? `(${pyRepr(values[0])},)` : `(${values.map(pyRepr).join(", ")})`;
}

/** check_option of racko_env/config.py: type, range or choices, what the option needs. */
function checkOption(o, value, rules) {
  const name = pyRepr(o.name);
  if (o.type === "int" && (typeof value !== "number" || !Number.isInteger(value))) {
    throw new RulesError(`rules option ${name} must be an int, got ${pyRepr(value)}`);
  }
  if (o.type === "bool" && typeof value !== "boolean") {
    throw new RulesError(`rules option ${name} must be a bool, got ${pyRepr(value)}`);
  }
  if (o.choices !== null && !o.choices.includes(value)) {
    throw new RulesError(
      `rules option ${name} must be one of ${pyTuple(o.choices)}, got ${pyRepr(value)}`,
    );
  }
  const { minimum: low, maximum: high, off } = o;
  if (off !== null && value === off) {
    // allowed: the option is off
  } else if (low !== null && high !== null && !(value >= low && value <= high)) {
    const where = off === null ? `between ${low} and ${high}` : `${off} (${o.off_means}) or between ${low} and ${high}`;
    throw new RulesError(`rules option ${name} must be ${where}, got ${value}`);
  } else if (low !== null && high === null && value < low) {
    throw new RulesError(`rules option ${name} must be at least ${low}, got ${value}`);
  }
  if (o.needs !== null && value) {
    const [other, wanted, why] = o.needs;
    if (rules[other] !== wanted) {
      throw new RulesError(`rules option ${name} ${why}, got ${other}=${rules[other]}`);
    }
  }
}

/** Every rules option of docs/rules.md, checked in declaration order as RulesConfig does. */
export class RulesConfig {
  constructor(options = {}) {
    const unknown = Object.keys(options).filter((k) => !FIELDS.includes(k));
    if (unknown.length) {
      throw new RulesError(
        `unknown rules option(s) ${pyList(unknown)}; known options are ${pyList(FIELDS)}`,
      );
    }
    Object.assign(this, RULE_DEFAULTS, options);
    for (const o of RULE_OPTIONS) checkOption(o, this[o.name], this);
    Object.freeze(this);
  }

  toDict() {
    return Object.fromEntries(FIELDS.map((k) => [k, this[k]]));
  }

  /** Partners sit opposite: team 0 is seats 0 and 2, team 1 is seats 1 and 3. */
  teamOf(player) {
    return this.partners ? player % 2 : player;
  }

  get numTeams() {
    return this.partners ? 2 : this.num_players;
  }
}
