/**
 * Twin of racko_env/actions.py: the fixed action ids and the decision phases.
 */

export const NUM_ACTIONS = 14;
// 0..9: put the held card into slot i (0 = front, printed "5"; 9 = back, printed "50").
export const DRAW_PILE = 10;
export const TAKE_DISCARD = 11;
export const KEEP = 12;
export const DISCARD = 13;

export const Phase = Object.freeze({
  DRAW: 0,
  KEEP_OR_DISCARD: 1,
  PLACE: 2,
  ROUND_OVER: 3,
  GAME_OVER: 4,
});
export const PHASE_NAMES = ["DRAW", "KEEP_OR_DISCARD", "PLACE", "ROUND_OVER", "GAME_OVER"];

export const LEGAL_BY_PHASE = Object.freeze([
  Object.freeze([DRAW_PILE, TAKE_DISCARD]),
  Object.freeze([KEEP, DISCARD]),
  Object.freeze([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
  Object.freeze([]),
  Object.freeze([]),
]);

export const ACTION_NAMES = Object.freeze([
  ...Array.from({ length: 10 }, (_, i) => `slot_${i}`),
  "draw_pile",
  "take_discard",
  "keep",
  "discard",
]);

/** A readable name for an action id (for error messages). */
export function actionName(action) {
  return Number.isInteger(action) && action >= 0 && action < NUM_ACTIONS
    ? ACTION_NAMES[action]
    : "not an action id";
}
