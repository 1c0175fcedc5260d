/**
 * The hint's confidence: JS twin of racko_apps/play/hint.py (legal_probabilities, ranked, percent).
 *
 * The softmax of the policy's masked logits over the legal moves, in doubles, summed in action
 * order like the reference; tests/apps/test_hint.py runs both on the same cases.
 */

/** {action: probability} over the actions the mask allows (ascending), summing to 1. */
export function hintProbabilities(logits, mask) {
  const legal = [];
  for (let a = 0; a < mask.length; a += 1) if (mask[a]) legal.push(a);
  if (legal.length === 0) throw new Error("no legal action to give a probability to");
  const values = legal.map((a) => Number(logits[a]));
  const top = Math.max(...values);
  const weights = values.map((v) => Math.exp(v - top));
  let total = 0;
  for (const w of weights) total += w;
  const out = new Map();
  legal.forEach((a, i) => out.set(a, weights[i] / total));
  return out;
}

/** The `top` likeliest moves, likeliest first (ties: the lower action id first). */
export function rankedMoves(probabilities, top = 3) {
  return [...probabilities.entries()].sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, top);
}

/** A probability as a person reads it: whole percent, never 0% or 100% unless exact. */
export function percent(p) {
  if (p > 0 && p < 0.005) return "<1%";
  if (p > 0.995 && p < 1) return ">99%";
  return `${pyRound(100 * p)}%`;
}

/** Python's round() to an integer: halves go to the even neighbour. */
function pyRound(x) {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}
