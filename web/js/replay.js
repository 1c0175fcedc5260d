/**
 * Twin of racko_eval/records.py's replay: a game record (racko-record/1, docs/records.md) played
 * back through the JS engine, one state per move, every rack face up.
 *
 * The record holds the chance outcomes (first dealer, each round's deck, each reshuffled draw
 * pile), so the replay needs no random stream to agree with Python's. `replayStates` returns the
 * same dicts as Python's `replay_states` (snake_case keys), which the differential test compares
 * (tests/apps/test_record_replay.py).
 */

import { NUM_ACTIONS, PHASE_NAMES } from "./actions.js";
import { RulesConfig } from "./config.js";
import { RackoGame } from "./engine.js";

export const RECORD_FORMAT = "racko-record/1";

/** A file that is not a record, or does not replay: one line saying why. */
export class RecordError extends Error {}

/** Chance read back from the record instead of drawn. */
class RecordedChance {
  constructor(chance) {
    this.chance = chance;
    this.decks = chance.decks.map((d) => [...d]);
    this.refills = chance.refills.map((r) => [...r]);
  }

  firstDealer() {
    return { draw: [...this.chance.dealer_draw], dealer: this.chance.first_dealer };
  }

  deck() {
    if (!this.decks.length) throw new RecordError("a round starts with no recorded deck for it");
    return this.decks.shift();
  }

  shuffle() {
    if (!this.refills.length) {
      throw new RecordError("the draw pile ran out more often than the record reshuffled it");
    }
    return this.refills.shift();
  }
}

const isInt = (x) => Number.isInteger(x);
const intList = (x) => Array.isArray(x) && x.every(isInt);

/** Parse and check the shape of a record (the full check is replaying it). */
export function parseRecord(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new RecordError(`not JSON (${err.message.replace(/\s+/g, " ")})`);
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new RecordError(`not a game record (a JSON object with "format": "${RECORD_FORMAT}")`);
  }
  if (data.format !== RECORD_FORMAT) {
    throw new RecordError(
      `format ${JSON.stringify(data.format ?? null)} is not "${RECORD_FORMAT}", the only record format this page reads`,
    );
  }
  for (const key of ["episode", "rules", "seats", "chance", "moves", "result"]) {
    if (!(key in data)) throw new RecordError(`${key}: Field required`);
  }
  if (!["round", "game"].includes(data.episode)) throw new RecordError(`episode: must be "round" or "game"`);
  const c = data.chance;
  if (!c || !isInt(c.first_dealer) || !Array.isArray(c.decks) || !c.decks.length || !c.decks.every(intList)
      || !Array.isArray(c.refills) || !c.refills.every(intList) || !intList(c.dealer_draw)) {
    throw new RecordError("chance: needs first_dealer, dealer_draw, decks (at least one) and refills");
  }
  if (!Array.isArray(data.moves) || !data.moves.every(
    (m) => m && isInt(m.seat) && isInt(m.action) && m.action >= 0 && m.action < NUM_ACTIONS,
  )) {
    throw new RecordError("moves: every move needs an integer seat and an action id 0..13");
  }
  if (!Array.isArray(data.seats) || !data.seats.every((s) => s && typeof s.bot === "string")) {
    throw new RecordError("seats: every seat needs a bot label");
  }
  try {
    new RulesConfig(data.rules);
  } catch (err) {
    throw new RecordError(`rules: ${err.message}`);
  }
  if (c.first_dealer >= data.rules.num_players) {
    throw new RecordError(`chance.first_dealer: ${c.first_dealer} is not a seat of ${data.rules.num_players} players`);
  }
  if (data.seats.length !== data.rules.num_players) {
    throw new RecordError(`${data.seats.length} seat(s) for ${data.rules.num_players} players`);
  }
  return data;
}

/** Everything on the table after `step` moves (the dict of Python's records.snapshot). */
export function snapshot(game, step) {
  return {
    step,
    round: game.roundNumber,
    turn: game.turn,
    dealer: game.dealer,
    current: game.current,
    phase: PHASE_NAMES[game.phase],
    racks: game.racks.map((r) => [...r]),
    discard: [...game.discard],
    draw: [...game.draw],
    held: game.held,
    held_from_discard: game.heldFromDiscard,
    totals: game.scores,
    round_points: [...game.lastRoundPoints],
    round_over: game.roundOver,
    game_over: game.gameOver,
    racko_player: game.rackoPlayer,
  };
}

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Every state of a recorded game: index 0 the first deal, index k after move k. The next round
 * is dealt before its first move, so a round's last state shows its racks. Throws RecordError
 * when a move is not the recorded seat's or not legal, or the end differs from the record's.
 */
export function replayStates(record) {
  const chance = new RecordedChance(record.chance);
  const game = new RackoGame(new RulesConfig(record.rules), chance);
  try {
    game.newGame();
  } catch (err) {
    throw new RecordError(`the first deal does not fit the rules: ${err.message}`);
  }
  const states = [snapshot(game, 0)];
  const roundPoints = [];
  record.moves.forEach((move, i) => {
    const k = i + 1;
    if (game.roundOver) {
      if (record.episode !== "game" || game.gameOver) {
        throw new RecordError(`move ${k} comes after the ${record.episode} ended`);
      }
      try {
        game.startRound();
      } catch (err) {
        throw new RecordError(`move ${k}: ${err.message}`);
      }
    }
    if (move.seat !== game.current) {
      throw new RecordError(`move ${k} is by seat ${move.seat}, but seat ${game.current} is on turn`);
    }
    try {
      game.apply(move.action);
    } catch (err) {
      throw new RecordError(`move ${k}: ${err.message}`);
    }
    if (game.roundOver) roundPoints.push([...game.lastRoundPoints]);
    states.push(snapshot(game, k));
  });
  const result = record.result;
  if (!same(roundPoints, result.round_points)) {
    throw new RecordError(
      `the replay scores rounds ${JSON.stringify(roundPoints)}, the record says ${JSON.stringify(result.round_points)}`,
    );
  }
  if (!same(game.scores, result.totals)) {
    throw new RecordError(`the replay ends at totals ${JSON.stringify(game.scores)}, the record says ${JSON.stringify(result.totals)}`);
  }
  if (game.gameOver !== result.game_over || game.gameWinner !== result.winner) {
    throw new RecordError("the replay's end of game differs from the record's");
  }
  if (chance.decks.length) {
    throw new RecordError(`the record holds ${record.chance.decks.length} deck(s); the replay dealt ${record.chance.decks.length - chance.decks.length}`);
  }
  return states;
}

/** Parse, check and replay a record's text: `{ record, states }` or a RecordError. */
export function openRecord(text) {
  const record = parseRecord(text);
  return { record, states: replayStates(record) };
}
