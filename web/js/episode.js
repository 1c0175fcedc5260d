/**
 * Twin of racko_env/racko_v1.py (raw_env): episodes of one round or a whole game, the rewards,
 * the episode ends and whose turn the env reports next.
 */

import { RACKO_SCORE } from "./rules.js";
import { RackoGame } from "./engine.js";
import { actionMask, encode } from "./observation.js";

export const EPISODE_MODES = ["round", "game"];
export const REWARD_MODES = ["win", "score"];

/** Zero-sum win/loss signal per seat given the winning teams. */
export function winRewards(teamOf, winners) {
  const nTeams = Math.max(...teamOf) + 1;
  const k = winners.size;
  if (k === 0 || k === nTeams) return teamOf.map(() => 0);
  let win;
  let lose;
  if (nTeams === 2) {
    win = 1;
    lose = -1;
  } else {
    win = (nTeams - k) / (k * (nTeams - 1));
    lose = -1 / (nTeams - 1);
  }
  return teamOf.map((t) => (winners.has(t) ? win : lose));
}

export class Episode {
  constructor({ rules, episode = "round", reward = "win", chance }) {
    if (!EPISODE_MODES.includes(episode)) throw new Error(`episode must be one of ${EPISODE_MODES}`);
    if (!REWARD_MODES.includes(reward)) throw new Error(`reward must be one of ${REWARD_MODES}`);
    this.game = new RackoGame(rules, chance);
    this.config = this.game.config;
    this.episode = episode;
    this.rewardMode = reward;
    this.n = this.config.num_players;
    this.teamOf = Array.from({ length: this.n }, (_, p) => this.config.teamOf(p));
  }

  reset() {
    this.game.newGame();
    this.rewards = new Array(this.n).fill(0);
    this.terminations = new Array(this.n).fill(false);
    this.truncations = new Array(this.n).fill(false);
    this.selection = this.game.current;
  }

  get done() {
    return this.terminations[0] || this.truncations[0];
  }

  observe(player) {
    return {
      observation: encode(this.game, player, this.episode === "game"),
      action_mask: actionMask(this.game, player),
    };
  }

  step(action) {
    if (this.done) throw new Error("the episode is over");
    const game = this.game;
    game.apply(action);
    this.rewards.fill(0);
    const ended = game.roundOver && this.#finishRound();
    this.selection = ended ? (game.current + 1) % this.n : game.current;
  }

  #finishRound() {
    const game = this.game;
    if (this.rewardMode === "score") {
      game.roundTeamPoints.forEach((pts, p) => {
        this.rewards[p] = pts / RACKO_SCORE;
      });
    }
    if (this.episode === "round") {
      if (this.rewardMode === "win") {
        let winners;
        if (game.rackoPlayer !== null) {
          winners = new Set([this.teamOf[game.rackoPlayer]]);
        } else {
          const points = game.roundTeamPoints;
          const best = Math.max(...points);
          winners = new Set(points.flatMap((pts, p) => (pts === best ? [this.teamOf[p]] : [])));
        }
        this.#setWinRewards(winners);
      }
      (game.truncated ? this.truncations : this.terminations).fill(true);
    } else if (game.gameOver) {
      if (this.rewardMode === "win") this.#setWinRewards(new Set([game.gameWinner]));
      this.terminations.fill(true);
    } else {
      game.startRound();
      return false;
    }
    return true;
  }

  #setWinRewards(winners) {
    winRewards(this.teamOf, winners).forEach((r, p) => {
      this.rewards[p] = r;
    });
  }
}
