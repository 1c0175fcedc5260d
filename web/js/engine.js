/**
 * Twin of racko_env/engine.py: dealing, turns, the piles, Rack-O, scoring and the game to 500.
 *
 * Chance is injected: `chance.firstDealer(n, numCards)`, `chance.deck(numCards)` (index 0 = top
 * card) and `chance.shuffle(cards)` (a refilled draw pile). The page uses RandomChance; the
 * differential test replays the deals and refills Python recorded, so no RNG has to agree.
 */

import { DRAW_PILE, KEEP, LEGAL_BY_PHASE, NUM_ACTIONS, PHASE_NAMES, Phase, TAKE_DISCARD, actionName } from "./actions.js";
import { RulesConfig } from "./config.js";
import { PyRandom } from "./mt19937.js";
import { RACK_SIZE, deckSize, handScore, isRacko } from "./rules.js";

/** Chance from a seeded Mersenne Twister (a seed of null draws one from crypto). */
export class RandomChance {
  constructor(seed = null) {
    this.rng = new PyRandom(seed);
  }

  firstDealer(n, numCards) {
    const cards = this.rng.shuffle(Array.from({ length: numCards }, (_, i) => i + 1)).slice(0, n);
    let dealer = 0;
    for (let p = 1; p < n; p++) if (cards[p] > cards[dealer]) dealer = p;
    return { draw: cards, dealer };
  }

  deck(numCards) {
    return this.rng.shuffle(Array.from({ length: numCards }, (_, i) => i + 1));
  }

  shuffle(cards) {
    return this.rng.shuffle([...cards]);
  }
}

export class IllegalActionError extends Error {}

/** One game of Rack-O: rounds until a player (or team) wins. */
export class RackoGame {
  constructor(config, chance) {
    this.config = config instanceof RulesConfig ? config : new RulesConfig(config ?? {});
    this.numPlayers = this.config.num_players;
    this.numCards = deckSize(this.numPlayers);
    this.chance = chance ?? new RandomChance();
  }

  newGame() {
    const n = this.numPlayers;
    this.totals = new Array(this.config.numTeams).fill(0);
    this.roundNumber = 0;
    this.gameOver = false;
    this.gameWinner = null; // a team index (= seat without partners)
    this.lastRoundPoints = new Array(n).fill(0);
    const { draw, dealer } = this.chance.firstDealer(n, this.numCards);
    this.dealerDraw = draw;
    this.dealer = dealer;
    this.#deal();
  }

  /** Deal the next round of a game in progress; the deal passes to the left. */
  startRound() {
    if (this.gameOver) throw new Error("the game is over; start a new game to play again");
    if (!this.roundOver) throw new Error("the current round is still being played");
    this.dealer = (this.dealer + 1) % this.numPlayers;
    this.#deal();
  }

  #deal() {
    const n = this.numPlayers;
    const deck = this.chance.deck(this.numCards).map(Number);
    const sorted = [...deck].sort((a, b) => a - b);
    if (sorted.length !== this.numCards || sorted.some((c, i) => c !== i + 1)) {
      throw new Error(`deck order must be a permutation of the cards 1..${this.numCards}`);
    }
    this.roundNumber += 1;
    // One card at a time from the dealer's left, ending with the dealer; each player's first card
    // goes to the back slot and the tenth to the front.
    this.racks = Array.from({ length: n }, () => new Array(RACK_SIZE).fill(0));
    for (let k = 0; k < RACK_SIZE * n; k++) {
      const player = (this.dealer + 1 + k) % n;
      this.racks[player][RACK_SIZE - 1 - Math.floor(k / n)] = deck[k];
    }
    const rest = deck.slice(RACK_SIZE * n);
    this.discard = [rest[0]]; // the top of the rest is turned face up
    this.draw = rest.slice(1).reverse(); // array end = top of the draw pile
    this.publicSlots = Array.from({ length: n }, () => new Array(RACK_SIZE).fill(0));
    // Each slot's public history this round (0 = still dealt), as racko_env/engine.py keeps it:
    // card from the draw pile, the turn (the first is 1) it last changed, the card that came out;
    // and per seat the discard top it last passed over by drawing from the draw pile.
    const slots = () => Array.from({ length: n }, () => new Array(RACK_SIZE).fill(0));
    this.slotDrawn = slots();
    this.slotChanged = slots();
    this.slotOut = slots();
    this.declined = new Array(n).fill(0);
    this.current = (this.dealer + 1) % n;
    this.phase = Phase.DRAW;
    this.held = null;
    this.heldFromDiscard = false;
    this.turn = 0;
    this.roundOver = false;
    this.truncated = false;
    this.rackoPlayer = null;
    this.reshuffles = 0;
    this.drawKnown = false; // true once a flipped discard pile made the draw order public
    this.log = [];
  }

  legalActions() {
    return LEGAL_BY_PHASE[this.phase];
  }

  isLegal(action) {
    return LEGAL_BY_PHASE[this.phase].includes(action);
  }

  /** Play one decision of the player on turn; an illegal action throws IllegalActionError. */
  apply(action) {
    const phase = this.phase;
    const legal = LEGAL_BY_PHASE[phase];
    if (!Number.isInteger(action)) {
      throw new IllegalActionError(`action must be an integer action id, got ${action}`);
    }
    if (!legal.includes(action)) {
      const name = actionName(action);
      if (legal.length === 0) {
        const what = this.gameOver ? "game" : "round";
        throw new IllegalActionError(
          `illegal action ${action} (${name}): the ${what} is over and no action is legal`,
        );
      }
      throw new IllegalActionError(
        `illegal action ${action} (${name}) for player ${this.current} in phase ` +
          `${PHASE_NAMES[phase]}; legal actions are [${legal.join(", ")}] ` +
          `(${legal.map(actionName).join(", ")})`,
      );
    }
    if (phase === Phase.DRAW) {
      if (action === DRAW_PILE) {
        this.declined[this.current] = this.discardTop;
        this.held = this.draw.pop();
        this.heldFromDiscard = false;
        this.phase = Phase.KEEP_OR_DISCARD;
      } else {
        this.held = this.discard.pop();
        this.heldFromDiscard = true;
        this.phase = Phase.PLACE;
      }
    } else if (phase === Phase.KEEP_OR_DISCARD) {
      if (action === KEEP) {
        this.phase = Phase.PLACE;
      } else {
        const card = this.held;
        this.discard.push(card);
        this.#endTurn({ player: this.current, source: DRAW_PILE, taken: 0, slot: null, discarded: card });
      }
    } else {
      const rack = this.racks[this.current];
      const old = rack[action];
      rack[action] = this.held;
      this.publicSlots[this.current][action] = this.heldFromDiscard ? this.held : 0;
      this.slotDrawn[this.current][action] = this.heldFromDiscard ? 0 : 1;
      this.slotChanged[this.current][action] = this.turn + 1; // the turn that ends now
      this.slotOut[this.current][action] = old;
      this.discard.push(old);
      this.#endTurn({
        player: this.current,
        source: this.heldFromDiscard ? TAKE_DISCARD : DRAW_PILE,
        taken: this.heldFromDiscard ? this.held : 0,
        slot: action,
        discarded: old,
      });
    }
  }

  #endTurn(record) {
    this.log.push(record);
    this.held = null;
    this.heldFromDiscard = false;
    this.turn += 1;
    const player = this.current;
    if (isRacko(this.racks[player], this.config.min_run)) {
      this.rackoPlayer = player;
      this.#scoreRound();
      return;
    }
    if (this.turn >= this.config.turn_limit) {
      this.truncated = true;
      this.#scoreRound();
      return;
    }
    if (this.draw.length === 0) this.#refillDrawPile();
    this.current = (player + 1) % this.numPlayers;
    this.phase = Phase.DRAW;
  }

  /** The discard pile except its top becomes the draw pile: shuffled, or turned over. */
  #refillDrawPile() {
    const under = this.discard.slice(0, -1);
    this.discard = this.discard.slice(-1);
    if (this.config.empty_pile === "shuffle") {
      const shuffled = this.chance.shuffle(under).map(Number);
      const a = [...shuffled].sort((x, y) => x - y);
      const b = [...under].sort((x, y) => x - y);
      if (a.length !== b.length || a.some((c, i) => c !== b[i])) {
        throw new Error("a refilled draw pile must hold the cards that were under the discard top");
      }
      this.draw = shuffled;
    } else {
      this.draw = under.reverse(); // flip: the bottom discard becomes the top of the draw pile
      this.drawKnown = true;
    }
    this.reshuffles += 1;
  }

  #scoreRound() {
    const cfg = this.config;
    const points = this.racks.map((rack, p) => handScore(rack, p === this.rackoPlayer, cfg.bonus));
    this.lastRoundPoints = points;
    points.forEach((pts, p) => {
      this.totals[cfg.teamOf(p)] += pts;
    });
    this.roundOver = true;
    this.phase = Phase.ROUND_OVER;
    const best = Math.max(...this.totals);
    if (best >= cfg.target_score) {
      const leaders = this.totals.flatMap((t, i) => (t === best ? [i] : []));
      if (leaders.length === 1) {
        // equal highest totals play another round
        this.gameOver = true;
        this.gameWinner = leaders[0];
        this.phase = Phase.GAME_OVER;
      }
    }
  }

  /** The face-up card, or 0 while the pile is empty (its only card was just taken). */
  get discardTop() {
    return this.discard.length ? this.discard[this.discard.length - 1] : 0;
  }

  /** Game totals per seat (with partners, each seat shows its team's total). */
  get scores() {
    return Array.from({ length: this.numPlayers }, (_, p) => this.totals[this.config.teamOf(p)]);
  }

  /** Last round's points per seat; with partners, each seat shows its team's sum. */
  get roundTeamPoints() {
    if (!this.config.partners) return [...this.lastRoundPoints];
    const team = [0, 0];
    this.lastRoundPoints.forEach((pts, p) => {
      team[p % 2] += pts;
    });
    return Array.from({ length: this.numPlayers }, (_, p) => team[p % 2]);
  }
}

export { NUM_ACTIONS };
