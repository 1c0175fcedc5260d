/**
 * Words for the table: slot names, moves seen from one seat, and the score of a revealed rack.
 */

import { DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD } from "./actions.js";
import { CARD_POINTS, RACKO_BONUS, RACK_SIZE, ascendingPrefix, longestRun, runBonus } from "./rules.js";

/** The printed name of slot i: 5, 10, ..., 50. */
export function slotName(slot) {
  return String((slot + 1) * 5);
}

export function describeAction(action, card = null) {
  const the = card ? `the ${card}` : "the card";
  if (action === DRAW_PILE) return "draw from the draw pile";
  if (action === TAKE_DISCARD) return card ? `take ${the} from the discard pile` : "take the discard";
  if (action === KEEP) return `keep ${the}`;
  if (action === DISCARD) return `discard ${the}`;
  return `put ${the} into slot ${slotName(action)}`;
}

/** One finished turn as the viewer saw it (a card drawn from the draw pile stays hidden). */
export function describeTurn(record, who, viewerIsMover) {
  const { source, taken, slot, discarded } = record;
  if (source === TAKE_DISCARD) {
    return `${who} took the ${taken} from the discard pile into slot ${slotName(slot)} and discarded the ${discarded}`;
  }
  if (slot === null) return `${who} drew from the draw pile and discarded it: the ${discarded}`;
  const card = viewerIsMover ? "a card" : "the drawn card";
  return `${who} drew from the draw pile, put ${card} into slot ${slotName(slot)} and discarded the ${discarded}`;
}

/** How a revealed rack scored this round, in words, and how many cards counted. */
export function explainScore(rack, wentRacko, bonus, points) {
  if (wentRacko) {
    let text = `Rack-O: ${RACK_SIZE} cards × ${CARD_POINTS} + ${RACKO_BONUS} = ${RACK_SIZE * CARD_POINTS + RACKO_BONUS}`;
    if (bonus) {
      const run = longestRun(rack);
      const extra = runBonus(run);
      text += extra
        ? `, plus ${extra} Bonus Rack-O for a run of ${run} consecutive cards`
        : `, no Bonus Rack-O (longest run ${run}, needs 3)`;
    }
    return { counted: RACK_SIZE, text: `${text}: ${points} points` };
  }
  const k = ascendingPrefix(rack);
  const brk = k < RACK_SIZE ? ` (slot ${slotName(k)} holds the ${rack[k]}, not above the ${rack[k - 1]})` : "";
  return {
    counted: k,
    text: `ascending from slot 5 for ${k} card${k === 1 ? "" : "s"}${brk}: ${k} × ${CARD_POINTS} = ${points} points`,
  };
}
