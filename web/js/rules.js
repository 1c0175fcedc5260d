/**
 * Twin of racko_env/rules.py: scoring and rack predicates of Rack-O, as pure functions.
 */

export const RACK_SIZE = 10;
export const MIN_PLAYERS = 2;
export const MAX_PLAYERS = 4;
export const CARD_POINTS = 5;
export const RACKO_BONUS = 25;
export const RACKO_SCORE = RACK_SIZE * CARD_POINTS + RACKO_BONUS; // 75
export const TARGET_SCORE = 500;
export const RUN_BONUS = Object.freeze({ 3: 50, 4: 100, 5: 200, 6: 400 });
const DECK_SIZES = { 2: 40, 3: 50, 4: 60 };

/** Cards in play: 2 players use 1-40, 3 use 1-50, 4 use 1-60. */
export function deckSize(numPlayers) {
  if (!Number.isInteger(numPlayers) || !(numPlayers in DECK_SIZES)) {
    throw new RangeError(
      `num_players must be between ${MIN_PLAYERS} and ${MAX_PLAYERS}, got ${numPlayers}`,
    );
  }
  return DECK_SIZES[numPlayers];
}

/** Number of cards in strictly ascending order from slot 0 up to the first break. */
export function ascendingPrefix(rack) {
  if (rack.length === 0) return 0;
  let n = 1;
  for (let i = 1; i < rack.length; i++) {
    if (rack[i] <= rack[i - 1]) break;
    n += 1;
  }
  return n;
}

/** Longest run of consecutive numbers (c, c+1, ...) in adjacent slots, front to back. */
export function longestRun(rack) {
  if (rack.length === 0) return 0;
  let best = 1;
  let cur = 1;
  for (let i = 1; i < rack.length; i++) {
    cur = rack[i] === rack[i - 1] + 1 ? cur + 1 : 1;
    if (cur > best) best = cur;
  }
  return best;
}

/** Bonus Rack-O points for a run of this length (only the longest run counts). */
export function runBonus(runLength) {
  if (runLength >= 6) return RUN_BONUS[6];
  return RUN_BONUS[runLength] ?? 0;
}

/** A full rack in strictly ascending order; with minRun it also needs a run that long. */
export function isRacko(rack, minRun = 0) {
  if (rack.length !== RACK_SIZE || ascendingPrefix(rack) !== RACK_SIZE) return false;
  return minRun <= 1 || longestRun(rack) >= minRun;
}

/** Round points for one rack: 75 (+ run bonus) for Rack-O, else 5 per ascending-prefix card. */
export function handScore(rack, wentRacko, bonus = false) {
  if (wentRacko) return RACKO_SCORE + (bonus ? runBonus(longestRun(rack)) : 0);
  return CARD_POINTS * ascendingPrefix(rack);
}
