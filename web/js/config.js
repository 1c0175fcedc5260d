/**
 * Twin of racko_env/config.py: the rules options of a game, validated as Python validates them.
 */

import { pyRepr, pyList } from "./pyrepr.js";
import { MAX_PLAYERS, MIN_PLAYERS, RACK_SIZE, TARGET_SCORE } from "./rules.js";

export const EMPTY_PILE_MODES = ["shuffle", "flip"];
export const DEFAULT_TURN_LIMIT = 400;
export const RULE_DEFAULTS = Object.freeze({
  num_players: 2,
  empty_pile: "shuffle",
  turn_limit: DEFAULT_TURN_LIMIT,
  min_run: 0,
  bonus: false,
  partners: false,
  target_score: TARGET_SCORE,
});
const FIELDS = Object.keys(RULE_DEFAULTS);

/** Python's errors are TypeError/ValueError; a RulesError carries the same text. */
export class RulesError extends Error {}

function needInt(name, value) {
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw new RulesError(`rules option ${pyRepr(name)} must be an int, got ${pyRepr(value)}`);
  }
}

function needBool(name, value) {
  if (typeof value !== "boolean") {
    throw new RulesError(`rules option ${pyRepr(name)} must be a bool, got ${pyRepr(value)}`);
  }
}

/** Every rules option of docs/rules.md, checked in the order RulesConfig.__post_init__ does. */
export class RulesConfig {
  constructor(options = {}) {
    const unknown = Object.keys(options).filter((k) => !FIELDS.includes(k));
    if (unknown.length) {
      throw new RulesError(
        `unknown rules option(s) ${pyList(unknown)}; known options are ${pyList(FIELDS)}`,
      );
    }
    Object.assign(this, RULE_DEFAULTS, options);
    this.#validate();
    Object.freeze(this);
  }

  #validate() {
    needInt("num_players", this.num_players);
    if (this.num_players < MIN_PLAYERS || this.num_players > MAX_PLAYERS) {
      throw new RulesError(
        `rules option 'num_players' must be between ${MIN_PLAYERS} and ${MAX_PLAYERS}, ` +
          `got ${this.num_players}`,
      );
    }
    if (!EMPTY_PILE_MODES.includes(this.empty_pile)) {
      throw new RulesError(
        `rules option 'empty_pile' must be one of ('shuffle', 'flip'), got ${pyRepr(this.empty_pile)}`,
      );
    }
    needInt("turn_limit", this.turn_limit);
    if (this.turn_limit < 1) {
      throw new RulesError(`rules option 'turn_limit' must be at least 1, got ${this.turn_limit}`);
    }
    needInt("min_run", this.min_run);
    if (this.min_run !== 0 && !(this.min_run >= 3 && this.min_run <= RACK_SIZE)) {
      throw new RulesError(
        `rules option 'min_run' must be 0 (off) or between 3 and ${RACK_SIZE}, got ${this.min_run}`,
      );
    }
    if (this.min_run && this.num_players !== 2) {
      throw new RulesError(
        "rules option 'min_run' (the run variant) is for 2 players only, " +
          `got num_players=${this.num_players}`,
      );
    }
    needBool("bonus", this.bonus);
    needBool("partners", this.partners);
    if (this.partners && this.num_players !== 4) {
      throw new RulesError(
        `rules option 'partners' needs exactly 4 players, got num_players=${this.num_players}`,
      );
    }
    needInt("target_score", this.target_score);
    if (this.target_score < 1) {
      throw new RulesError(
        `rules option 'target_score' must be at least 1, got ${this.target_score}`,
      );
    }
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
