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

const RACK_SIZE = 10;
const DECK_SIZES = { 1: 40, 2: 40, 3: 50, 4: 60 };
/** What plays a game of other sizes (racko_env.config.SMALL_GAME_BOTS). */
export const SMALL_GAME_BOTS = "expert, heuristic and random";

/** check_together of racko_env/config.py: the checks that read more than one option. */
function checkTogether(rules) {
  const k = rules.rack_size;
  if (rules.min_run > k) {
    throw new RulesError(`rules option 'min_run' must be at most rack_size=${k}, got ${rules.min_run}`);
  }
  const needed = rules.num_players * k + 2;
  const cards = rules.deck_size || DECK_SIZES[rules.num_players];
  if (cards < needed) {
    const given = rules.deck_size || `0 (the default ${cards})`;
    throw new RulesError(
      `rules option 'deck_size' must be at least num_players x rack_size + 2 = ${needed} ` +
        `(the deal leaves a discard top and a draw pile), got ${given}`,
    );
  }
}

/**
 * require_rule_book_sizes of racko_env/config.py: refuse, in one line naming the option, a game
 * of other sizes for a component that plays only the rule book's (this page's JS engine).
 */
export function requireRuleBookSizes(rules, what, supportedBy) {
  let option = null;
  if (rules.rack_size !== RACK_SIZE) option = `rack_size=${rules.rack_size}`;
  else if (![0, DECK_SIZES[rules.num_players]].includes(rules.deck_size)) {
    option = `deck_size=${rules.deck_size}`;
  } else if (rules.num_players === 1) option = "num_players=1";
  if (option !== null) {
    throw new RulesError(
      `${option}: ${what} supports the rule book's sizes only (rack_size=${RACK_SIZE}, the ` +
        `players' deck, 2-4 players); ${supportedBy} support it`,
    );
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
    checkTogether(this);
    Object.freeze(this);
  }

  /** The deck in play, cards 1..numCards: deck_size, or the players' default. */
  get numCards() {
    return this.deck_size || DECK_SIZES[this.num_players];
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
