/**
 * Twin of agents/random_bot.py and agents/heuristic.py (with the decode of agents/obs.py): the
 * built-in bots, reading only the seat's observation, as the Python bots do.
 */

import { DISCARD, DRAW_PILE, KEEP, Phase, TAKE_DISCARD } from "./actions.js";
import { LAYOUT } from "./layout.js";
import { PyRandom } from "./mt19937.js";
import { RACK_SIZE, deckSize } from "./rules.js";

const P = LAYOUT.pieces;

function sum(arr) {
  return arr.reduce((a, b) => a + b, 0);
}

/** Legal action ids from the mask, ascending (numpy's flatnonzero order). */
export function legalActions(mask) {
  const out = [];
  mask.forEach((m, a) => {
    if (m) out.push(a);
  });
  return out;
}

/** Decode one seat's observation vector into cards (agents/obs.py decode). */
export function decode(observation, mask) {
  const vec = observation;
  const present = vec.slice(P.opp_present[0], P.opp_present[1]);
  const numPlayers = 1 + Math.round(sum(present));
  const n = deckSize(numPlayers);
  const card = (x) => Math.round(x * n);
  const phaseHot = Array.from(vec.slice(P.phase[0], P.phase[1]));
  const maxHot = Math.max(...phaseHot);
  return {
    numPlayers,
    numCards: n,
    rack: Array.from(vec.slice(P.rack[0], P.rack[1]), card),
    held: card(vec[P.held[0]]) || null,
    discardTop: card(vec[P.discard_top[0]]) || null,
    phase: maxHot > 0.5 ? phaseHot.indexOf(maxHot) : null,
    legal: legalActions(mask),
  };
}

/** The slot a card belongs to if the deck 1..numCards is split into 10 equal zones. */
export function cardZone(card, numCards) {
  return Math.floor(((card - 1) * RACK_SIZE) / numCards);
}

/** `random`: uniform over the legal actions with Python's Mersenne Twister (same seed, same picks). */
export class RandomBot {
  constructor(seed = null) {
    this.name = "random";
    this.rng = new PyRandom(seed);
  }

  act(observation, mask) {
    const legal = legalActions(mask);
    if (!legal.length) throw new Error("no legal action: the seat is not on turn (all-zero action mask)");
    return this.rng.choice(legal);
  }
}

/** `heuristic`: fill each slot with a card of its zone, ignore everything else. */
export class HeuristicBot {
  constructor() {
    this.name = "heuristic";
  }

  #improves(view, card) {
    const slot = cardZone(card, view.numCards);
    return cardZone(view.rack[slot], view.numCards) !== slot;
  }

  act(observation, mask) {
    const view = decode(observation, mask);
    if (view.phase === null || !view.legal.length) {
      throw new Error("no legal action: the seat is not on turn (all-zero action mask)");
    }
    if (view.phase === Phase.DRAW) {
      const top = view.discardTop;
      if (top && view.legal.includes(TAKE_DISCARD) && this.#improves(view, top)) return TAKE_DISCARD;
      return DRAW_PILE;
    }
    const card = view.held;
    if (card === null) throw new Error("observation has no held card in a keep/place decision");
    if (view.phase === Phase.KEEP_OR_DISCARD) return this.#improves(view, card) ? KEEP : DISCARD;
    return cardZone(card, view.numCards);
  }
}
