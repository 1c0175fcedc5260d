/**
 * Twin of racko_env/observation.py: what one seat may know, as a flat float32 vector, and the mask.
 *
 * Offsets come from layout.js, which is generated from racko_env.observation (a test keeps them
 * equal), so no size or offset is written twice.
 */

import { LEGAL_BY_PHASE, NUM_ACTIONS, Phase } from "./actions.js";
import { LAYOUT } from "./layout.js";
import { RACK_SIZE } from "./rules.js";

const P = LAYOUT.pieces;
const SEEN = 2;

/** float32(c / N), correctly rounded, as Python's CARD_VALUES table. */
function cardValue(c, numCards) {
  return Math.fround(c / numCards);
}

/** The observation vector of `player` (Float32Array of LAYOUT.obs_size). */
export function encode(game, player, includeScores = false) {
  const cfg = game.config;
  const n = game.numPlayers;
  const nCards = game.numCards;
  const rack = game.racks[player];
  const onTurn = game.current === player && game.phase <= Phase.PLACE;

  const cards = [...rack];
  // where[c]: 0 = unseen by this player, 1 = in the discard pile, 2 = seen elsewhere / not in play
  const where = new Uint8Array(LAYOUT.max_cards + 1);
  where.fill(SEEN, nCards + 1);
  for (const c of rack) where[c] = SEEN;
  for (let k = 1; k < n; k++) {
    const pub = game.publicSlots[(player + k) % n];
    cards.push(...pub);
    for (const c of pub) where[c] = SEEN;
  }
  const oppWidth = P.opp_slots[1] - P.opp_slots[0];
  while (cards.length < P.rack[1] + oppWidth) cards.push(0);
  cards.push(onTurn && game.held !== null ? game.held : 0);
  cards.push(game.discardTop);
  cards.push(game.drawKnown && game.draw.length ? game.draw[game.draw.length - 1] : 0);
  cards.push(game.draw.length);
  for (const c of game.discard) where[c] = 1;
  if (game.held !== null && (onTurn || game.heldFromDiscard)) where[game.held] = SEEN;
  where[0] = SEEN;

  const obs = new Float32Array(LAYOUT.obs_size);
  const [cs] = P.card_scaled;
  cards.forEach((c, i) => {
    obs[cs + i] = cardValue(c, nCards);
  });
  if (onTurn) {
    obs[P.phase[0] + game.phase] = 1;
    if (game.heldFromDiscard) obs[P.held_from_discard[0]] = 1;
  }
  obs[P.turn[0]] = game.turn / cfg.turn_limit;
  if (includeScores) {
    const invT = 1.0 / cfg.target_score;
    obs[P.own_score[0]] = Math.min(game.totals[cfg.teamOf(player)] * invT, 1.0);
    for (let k = 1; k < n; k++) {
      obs[P.opp_scores[0] + k - 1] = Math.min(game.totals[cfg.teamOf((player + k) % n)] * invT, 1.0);
    }
  }
  for (let k = 0; k < n - 1; k++) obs[P.opp_present[0] + k] = 1;
  if (cfg.partners) obs[P.partners[0]] = 1;
  for (let c = 1; c <= LAYOUT.max_cards; c++) {
    if (where[c] === 1) obs[P.in_discard[0] + c - 1] = 1;
    if (where[c] === 0) obs[P.unseen[0] + c - 1] = 1;
  }
  // Version 2: each opponent slot's public history, and the discard each opponent passed over.
  for (let k = 1; k < n; k++) {
    const q = (player + k) % n;
    const at = (k - 1) * RACK_SIZE;
    for (let s = 0; s < RACK_SIZE; s++) {
      obs[P.opp_slot_drawn[0] + at + s] = game.slotDrawn[q][s];
      obs[P.opp_slot_changed[0] + at + s] = game.slotChanged[q][s] / cfg.turn_limit;
      obs[P.opp_slot_out[0] + at + s] = cardValue(game.slotOut[q][s], nCards);
    }
    obs[P.opp_declined[0] + k - 1] = cardValue(game.declined[q], nCards);
  }
  return obs;
}

/** Int8 mask over the actions: the legal ones for `player` now (all 0 off turn). */
export function actionMask(game, player) {
  const mask = new Int8Array(NUM_ACTIONS);
  if (game.current === player) for (const a of LEGAL_BY_PHASE[game.phase]) mask[a] = 1;
  return mask;
}
