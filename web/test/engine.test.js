/**
 * The JS twins replay Python's traces: every seat's observation (float32) and mask after every
 * step, rewards, whose turn it is, scores and episode ends; the ported bots pick Python's actions.
 */

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";

import { LAYOUT } from "../js/layout.js";
import { Episode } from "../js/episode.js";
import { RackoGame, RandomChance } from "../js/engine.js";
import { PyRandom } from "../js/mt19937.js";
import { HeuristicBot, RandomBot } from "../js/bots.js";
import { loadTraces } from "./support/python.js";

const { header, episodes } = loadTraces();

/** Chance outcomes read back from the trace instead of drawn. */
class ReplayChance {
  constructor(trace) {
    this.trace = trace;
    this.decks = [...trace.decks];
    this.refills = [...trace.refills];
  }

  firstDealer() {
    return { draw: this.trace.dealer_draw, dealer: this.trace.first_dealer };
  }

  deck() {
    assert.ok(this.decks.length, "the JS engine dealt more rounds than Python");
    return this.decks.shift();
  }

  shuffle() {
    assert.ok(this.refills.length, "the JS engine refilled the draw pile more often than Python");
    return this.refills.shift();
  }
}

function seatsDigest(ep) {
  const h = createHash("sha256");
  const rows = [];
  for (let p = 0; p < ep.n; p++) {
    const { observation, action_mask: mask } = ep.observe(p);
    h.update(new Uint8Array(observation.buffer));
    h.update(new Uint8Array(mask.buffer));
    rows.push(observation);
  }
  return { digest: h.digest("hex").slice(0, 16), rows };
}

function pieceOf(index) {
  for (const [name, [a, b]] of Object.entries(LAYOUT.pieces)) {
    if (name !== "card_scaled" && index >= a && index < b) return `${name}[${index - a}]`;
  }
  return "?";
}

function explainMismatch(rows, expected) {
  for (let p = 0; p < rows.length; p++) {
    for (let i = 0; i < rows[p].length; i++) {
      if (rows[p][i] !== Math.fround(expected[p][i])) {
        return `seat ${p} entry ${i} (${pieceOf(i)}): JS ${rows[p][i]}, Python ${expected[p][i]}`;
      }
    }
  }
  return "observations equal: the masks differ";
}

function checkStep(ep, trace, k, where) {
  const { digest, rows } = seatsDigest(ep);
  if (digest !== trace.digests[k]) {
    const why = trace.obs ? explainMismatch(rows, trace.obs[k]) : "(digest differs)";
    assert.fail(`${where}: observations or masks differ from Python's: ${why}`);
  }
}

test("the layout the traces were written with is web/js/layout.js", () => {
  assert.deepEqual(header.layout, JSON.parse(JSON.stringify(LAYOUT)));
});

test("the traces cover every rules option and both episode and reward modes", () => {
  const seen = new Set();
  for (const t of episodes) {
    const r = t.rules;
    seen.add(`players=${r.num_players}`).add(`pile=${r.empty_pile}`).add(`ep=${t.episode}`);
    seen.add(`reward=${t.reward}`).add(`trunc=${t.truncated}`).add(`term=${t.terminated}`);
    if (r.min_run) seen.add("min_run");
    if (r.bonus) seen.add("bonus");
    if (r.partners) seen.add("partners");
    if (r.target_score) seen.add("target_score");
    if (t.refills.length) seen.add("refill");
  }
  for (const key of ["players=2", "players=3", "players=4", "pile=shuffle", "pile=flip",
    "ep=round", "ep=game", "reward=win", "reward=score", "trunc=true", "term=true",
    "min_run", "bonus", "partners", "target_score", "refill"]) {
    assert.ok(seen.has(key), `no trace with ${key}`);
  }
});

test(`the JS engine replays ${episodes.length} Python episodes exactly`, () => {
  let steps = 0;
  episodes.forEach((trace, e) => {
    const chance = new ReplayChance(trace);
    const ep = new Episode({ rules: trace.rules, episode: trace.episode, reward: trace.reward, chance });
    const bots = trace.bots.map((spec) =>
      spec === "heuristic" ? new HeuristicBot() : new RandomBot(Number(spec.split(":")[1])),
    );
    ep.reset();
    assert.equal(ep.selection, trace.selection, `episode ${e}: first agent`);
    checkStep(ep, trace, 0, `episode ${e} after reset`);
    trace.steps.forEach((step, k) => {
      const where = `episode ${e} step ${k}`;
      assert.ok(!ep.done, `${where}: JS ended the episode early`);
      const seat = ep.selection;
      const { observation, action_mask: mask } = ep.observe(seat);
      const mine = bots[seat].act(observation, mask);
      assert.equal(mine, step.action, `${where}: JS ${trace.bots[seat]} bot chose ${mine}`);
      ep.step(step.action);
      checkStep(ep, trace, k + 1, where);
      assert.equal(ep.selection, step.selection, `${where}: next agent`);
      assert.deepEqual(ep.rewards, step.rewards ?? ep.rewards.map(() => 0), `${where}: rewards`);
      steps += 1;
    });
    assert.ok(ep.done, `episode ${e}: Python ended the episode, JS did not`);
    assert.equal(ep.terminations[0], trace.terminated, `episode ${e}: terminated`);
    assert.equal(ep.truncations[0], trace.truncated, `episode ${e}: truncated`);
    assert.deepEqual(ep.game.scores, trace.scores, `episode ${e}: scores`);
    assert.deepEqual(ep.game.totals, trace.totals, `episode ${e}: totals`);
    assert.deepEqual(ep.game.lastRoundPoints, trace.last_round_points, `episode ${e}: points`);
    assert.equal(ep.game.roundNumber, trace.rounds, `episode ${e}: rounds`);
    assert.equal(chance.decks.length + chance.refills.length, 0, `episode ${e}: unused chance`);
  });
  assert.ok(steps > 1000, `only ${steps} steps replayed`);
});

test("the page's Mersenne Twister shuffles and draws bits as Python's random.Random", () => {
  const rng = new PyRandom(header.mt.seed);
  const deck = Array.from({ length: 60 }, (_, i) => i + 1);
  assert.deepEqual(rng.shuffle(deck), header.mt.shuffle);
  assert.deepEqual(Array.from({ length: 5 }, () => rng.getrandbits(32)), header.mt.bits);
});

test("the same seed deals the same game, another seed another", () => {
  const deal = (seed) => {
    const game = new RackoGame({ num_players: 3 }, new RandomChance(seed));
    game.newGame();
    return JSON.stringify([game.dealer, game.racks, game.discard, game.draw]);
  };
  assert.equal(deal(7), deal(7));
  assert.notEqual(deal(7), deal(8));
});
