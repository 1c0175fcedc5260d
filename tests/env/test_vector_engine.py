"""The batched engine against the reference: same deals, same shuffles, same moves -> same everything.

Each game of a ``VectorRacko`` batch runs in lockstep with its own ``racko_v1.raw_env``. A recording
chance source hands the batched engine its deals and refill shuffles and queues the same events for
the reference, whose ``game.rng`` replays them (``ScriptedRandom``). After every step we compare,
for every game and every seat: the observation (bit for bit), the action mask, the reward, the
termination and truncation flags, and who is on turn.
"""

from __future__ import annotations

import random
from collections import deque

import numpy as np
import pytest

from racko_env import racko_v1
from racko_env.actions import DRAW_PILE, KEEP, TAKE_DISCARD
from racko_env.engine import RackoGame
from racko_env.observation import OBS_SIZE
from racko_env.vector import NumpyChance, VectorGame, VectorRacko
from racko_env.vector.engine import LEGAL


class RecordingChance:
    """NumpyChance that also queues every event per game, for the reference engines to replay."""

    def __init__(self, num_games: int, seed: int) -> None:
        self.inner = NumpyChance(seed)
        self.queues: list[deque] = [deque() for _ in range(num_games)]

    def first_dealers(self, games, num_players, num_cards=0):
        d = self.inner.first_dealers(games, num_players, num_cards)
        for g, x in zip(games, d, strict=True):
            self.queues[g].append(("dealer", int(x)))
        return d

    def deck_orders(self, games, num_cards):
        decks = self.inner.deck_orders(games, num_cards)
        for g, row in zip(games, decks, strict=True):
            self.queues[g].append(("perm", (row - 1).tolist()))
        return decks

    def refill_orders(self, games, lengths, width):
        perms = self.inner.refill_orders(games, lengths, width)
        for g, row, m in zip(games, perms, lengths, strict=True):
            self.queues[g].append(("perm", row[:m].tolist()))
        return perms


class ScriptedRandom(random.Random):
    """A ``random.Random`` whose dealer draw and shuffles replay a queue of recorded events."""

    def __init__(self, queue: deque) -> None:
        super().__init__(0)
        self.queue = queue

    def sample(self, population, k, **kwargs):  # the dealer draw: make the recorded dealer highest
        kind, dealer = self.queue.popleft()
        assert kind == "dealer"
        draw = list(range(1, k + 1))
        draw[dealer], draw[k - 1] = draw[k - 1], draw[dealer]
        return draw

    def shuffle(self, x):
        kind, perm = self.queue.popleft()
        assert kind == "perm" and len(perm) == len(x)
        x[:] = [x[i] for i in perm]


CONFIGS = [
    dict(num_players=2),
    dict(num_players=2, empty_pile="flip", turn_limit=120),
    dict(num_players=2, min_run=3, turn_limit=90),
    dict(num_players=2, min_run=3, bonus=True, empty_pile="flip", turn_limit=150),
    dict(num_players=2, bonus=True, reward="score", turn_limit=60),
    dict(num_players=2, episode="game", target_score=150, turn_limit=80),
    dict(num_players=2, episode="game", reward="score", target_score=120, bonus=True),
    dict(num_players=3, turn_limit=70),
    dict(num_players=3, empty_pile="flip", bonus=True, reward="score"),
    dict(num_players=3, episode="game", target_score=100, turn_limit=60),
    dict(num_players=4, turn_limit=80),
    dict(num_players=4, partners=True, bonus=True, turn_limit=100),
    dict(num_players=4, partners=True, reward="score", empty_pile="flip"),
    dict(num_players=4, partners=True, episode="game", target_score=160, turn_limit=70),
    dict(num_players=4, episode="game", reward="score", target_score=90, empty_pile="flip"),
    dict(num_players=2, reward="turns", turn_limit=90),
    dict(num_players=3, episode="game", reward="turns", target_score=100, turn_limit=60),
]


def _ids(cfg: dict) -> str:
    return "-".join(f"{k}={v}" for k, v in cfg.items())


# The quick subset (pytest -m "not slow") runs two of the configs: the 2-player one with the most
# rules options and a 3-player game paid by turns; the full suite runs them all.
QUICK = (CONFIGS[3], CONFIGS[16])


def choose(obs: np.ndarray, masks: np.ndarray, num_cards: int, rng: np.random.Generator):
    """A mix of zone play (reaches Rack-O) and random legal moves (reaches everything else)."""
    k = len(obs)
    held = np.rint(obs[:, 40] * num_cards).astype(int)
    top = np.rint(obs[:, 41] * num_cards).astype(int)
    rack = np.rint(obs[:, :10] * num_cards).astype(int)
    zone = lambda c: np.clip((c - 1) * 10 // num_cards, 0, 9)  # noqa: E731
    smart = np.empty(k, dtype=int)
    fits = rack[np.arange(k), zone(top)] != top  # rack card is not already that card
    good_top = (zone(top) * num_cards // 10 < top) & fits
    smart[:] = np.where(good_top & (rng.random(k) < 0.5), TAKE_DISCARD, DRAW_PILE)
    draw_phase = masks[:, DRAW_PILE]
    kod = masks[:, KEEP]
    place = masks[:, 0]
    smart[kod] = KEEP
    smart[place] = zone(held[place])
    rand = (rng.random((k, 14)) * masks).argmax(axis=1)
    pick = np.where(rng.random(k) < 0.75, smart, rand)
    assert (masks[np.arange(k), pick]).all()
    assert (draw_phase | kod | place).all()
    return pick


def run_lockstep(cfg: dict, num_games: int, steps: int, seed: int) -> dict:
    cfg = dict(cfg)
    episode = cfg.pop("episode", "round")
    reward = cfg.pop("reward", "win")
    chance = RecordingChance(num_games, seed)
    vec = VectorRacko(num_games, episode=episode, reward=reward, chance=chance, **cfg)
    n = vec.num_players
    refs = []
    for b in range(num_games):
        env = racko_v1.raw_env(episode=episode, reward=reward, **cfg)
        env.game.rng = ScriptedRandom(chance.queues[b])
        env.reset(seed=b)
        refs.append(env)
    rng = np.random.default_rng(seed)
    games = np.arange(num_games)
    stats = dict(episodes=0, racko=0, truncated=0, refills=0, rounds=0)

    def compare() -> None:
        for p in range(n):
            seats = np.full(num_games, p)
            obs = vec.observe(games, seats)
            masks = vec.action_masks(games, seats)
            for b, env in enumerate(refs):
                ref = env.observe(env.possible_agents[p])
                assert np.array_equal(obs[b].view(np.uint32), ref["observation"].view(np.uint32)), (
                    f"game {b} seat {p}: observation differs at "
                    f"{np.flatnonzero(obs[b] != ref['observation']).tolist()}"
                )
                assert np.array_equal(masks[b], ref["action_mask"].astype(bool)), (b, p)

    compare()
    for _ in range(steps):
        cur = vec.game.current.copy()
        obs = vec.observe(games, cur)
        masks = vec.action_masks(games, cur)
        assert masks.any(axis=1).all()
        actions = choose(obs, masks, vec.game.num_cards, rng)
        rounds_before = vec.game.round_number.copy()
        result = vec.step(actions)
        for b, env in enumerate(refs):
            agent = env.agent_selection
            assert env.agent_name_mapping[agent] == cur[b]
            env.step(int(actions[b]))
            for p, a in enumerate(env.possible_agents):
                assert env.rewards[a] == result.rewards[b, p], (
                    b,
                    p,
                    env.rewards,
                    result.rewards[b],
                )
                assert env.terminations[a] == result.terminated[b]
                assert env.truncations[a] == result.truncated[b]
            assert env.game.reshuffles == vec.game.reshuffles[b] or result.done[b]
        stats["refills"] += int((vec.game.reshuffles > 0).sum())
        stats["rounds"] += int((vec.game.round_number != rounds_before).sum())
        done = np.flatnonzero(result.done)
        if done.size:
            stats["episodes"] += done.size
            stats["racko"] += int((vec.game.racko_player[done] >= 0).sum())
            stats["truncated"] += int(result.truncated[done].sum())
            vec.reset(done)  # queues the new deals for the reference
            for b in done:
                refs[b].reset()
        not_done = ~result.done
        for b in np.flatnonzero(not_done):
            assert refs[b].agent_name_mapping[refs[b].agent_selection] == vec.game.current[b]
        compare()
    return stats


@pytest.mark.parametrize(
    "cfg",
    [pytest.param(c, marks=() if c in QUICK else pytest.mark.slow) for c in CONFIGS],
    ids=_ids,
)
def test_differential_against_reference(cfg: dict) -> None:
    # 80 games x 500 steps per config: about 2,500 episodes over all configs.
    stats = run_lockstep(cfg, num_games=80, steps=500, seed=len(_ids(cfg)))
    assert stats["episodes"] >= (4 if cfg.get("episode") == "game" else 16)
    assert stats["refills"] > 0
    assert stats["racko"] > 0
    if cfg.get("episode", "round") == "game":
        assert stats["rounds"] > 0


@pytest.mark.slow
def test_differential_reaches_truncation_and_refills() -> None:
    stats = run_lockstep(dict(num_players=2, turn_limit=45), num_games=64, steps=150, seed=7)
    assert stats["truncated"] > 0 and stats["refills"] > 0 and stats["racko"] > 0


# ----------------------------------------------------------------- direct engine tests


def test_deal_matches_reference_for_fixed_decks() -> None:
    rng = np.random.default_rng(3)
    for n in (2, 3, 4):
        vg = VectorGame(5, num_players=n)
        decks = np.stack([rng.permutation(vg.num_cards) + 1 for _ in range(5)])
        dealers = np.arange(5) % n
        vg.new_game(first_dealer=dealers, deck_orders=decks)
        for b in range(5):
            ref = RackoGame(num_players=n)
            ref.new_game(first_dealer=int(dealers[b]), deck_order=decks[b].tolist())
            assert vg.racks[b].tolist() == ref.racks
            assert vg.draw_pile(b) == ref.draw and vg.discard_pile(b) == ref.discard
            assert vg.current[b] == ref.current


def test_flip_refill_reverses_the_discard_pile() -> None:
    vg = VectorGame(1, num_players=2, empty_pile="flip")
    vg.new_game(first_dealer=0, deck_orders=np.arange(1, 41)[None])
    while vg.reshuffles[0] == 0:
        vg.step(np.array([DRAW_PILE]))
        under, held = vg.discard_pile(0), int(vg.held[0])
        vg.step(np.array([13]))
    # The last discard stays on top; the rest, turned over, is the draw pile (bottom discard on top).
    assert vg.discard_pile(0) == [held]
    assert vg.draw_pile(0) == under[::-1] and vg.draw_known[0]


def test_illegal_actions_are_rejected_before_any_change() -> None:
    vg = VectorGame(3, num_players=2, seed=1)
    before = vg.racks.copy(), vg.phase.copy()
    with pytest.raises(ValueError, match=r"illegal action 12 \(keep\) in game 1 .*draw_pile"):
        vg.step(np.array([DRAW_PILE, KEEP, DRAW_PILE]))
    with pytest.raises(ValueError, match="not an action id"):
        vg.step(np.array([DRAW_PILE, 99, DRAW_PILE]))
    with pytest.raises(ValueError, match="one action per game"):
        vg.step(np.array([DRAW_PILE]))
    assert np.array_equal(vg.racks, before[0]) and np.array_equal(vg.phase, before[1])


def test_bad_arguments_name_the_problem() -> None:
    with pytest.raises(ValueError, match="num_games"):
        VectorGame(0)
    with pytest.raises(ValueError, match="num_players"):
        VectorGame(2, num_players=5)
    with pytest.raises(ValueError, match="unknown rules option"):
        VectorGame(2, colour="red")
    with pytest.raises(ValueError, match="episode"):
        VectorRacko(2, episode="match")
    vg = VectorGame(2)
    with pytest.raises(ValueError, match="permutation"):
        vg.new_game(deck_orders=np.ones((2, 40), dtype=int))
    with pytest.raises(ValueError, match="first_dealer"):
        vg.new_game(first_dealer=2)
    with pytest.raises(IndexError, match="game indices"):
        vg.step(np.array([DRAW_PILE]), games=[5])
    with pytest.raises(RuntimeError, match="still being played"):
        vg.start_round()


def test_same_seed_same_games() -> None:
    def play(seed: int) -> np.ndarray:
        v = VectorRacko(16, num_players=3, seed=seed, empty_pile="shuffle", turn_limit=60)
        rng = np.random.default_rng(0)
        total = np.zeros((16, 3))
        for _ in range(300):
            a = (rng.random((16, 14)) * LEGAL[v.game.phase]).argmax(axis=1)
            r = v.step(a)
            total += r.rewards
            if r.done.any():
                v.reset(np.flatnonzero(r.done))
        return np.concatenate([total.ravel(), v.game.racks.ravel()])

    assert np.array_equal(play(5), play(5))
    assert not np.array_equal(play(5), play(6))


def test_observe_writes_into_a_given_buffer() -> None:
    v = VectorRacko(4, num_players=2, seed=0)
    buf = np.full((4, OBS_SIZE), 7.0, dtype=np.float32)
    out = v.observe(np.arange(4), v.game.current, out=buf)
    assert out is buf and buf.max() <= 1.0
    with pytest.raises(ValueError, match="float32"):
        v.observe(np.arange(4), v.game.current, out=np.zeros((3, OBS_SIZE), np.float32))


@pytest.mark.parametrize("lead", [0, 1, -1], ids=["tie", "seat0-ahead", "seat1-ahead"])
def test_game_end_and_the_tie_rule_match_the_reference(lead: int) -> None:
    """Both reach the target in the same round: highest total wins; equal totals play on."""
    deck = np.random.default_rng(0).permutation(40) + 1
    probe = VectorGame(1, num_players=2, turn_limit=1, target_score=100)
    probe.new_game(first_dealer=0, deck_orders=deck[None])
    probe.step(np.array([DRAW_PILE]))
    probe.step(np.array([13]))
    points = probe.last_round_points[0]
    start = [100 - int(points[0]) + max(lead, 0), 100 - int(points[1]) + max(-lead, 0)]
    vg = VectorGame(1, num_players=2, turn_limit=1, target_score=100)
    vg.new_game(first_dealer=0, deck_orders=deck[None])
    vg.totals[0] = start
    ref = RackoGame(num_players=2, turn_limit=1, target_score=100)
    ref.new_game(first_dealer=0, deck_order=deck.tolist())
    ref.totals = list(start)
    for action in (DRAW_PILE, 13):
        vg.step(np.array([action]))
        ref.apply(action)
    assert vg.totals[0].tolist() == ref.totals
    assert bool(vg.game_over[0]) == ref.game_over == (lead != 0)
    assert vg.game_winner[0] == (-1 if ref.game_winner is None else ref.game_winner)
    assert vg.phase[0] == ref.phase


def _cards_in_play(vg: VectorGame, game: int) -> list[int]:
    """Every card of one game wherever it is (racks, piles, hand), sorted."""
    cards = vg.racks[game].ravel().tolist() + vg.draw_pile(game) + vg.discard_pile(game)
    if vg.held[game]:
        cards.append(int(vg.held[game]))
    return sorted(cards)


@pytest.mark.parametrize("games", [[0, 0], [1, 0, 1], np.array([2, 2])])
def test_repeated_game_indices_are_refused_before_any_change(games) -> None:
    vg = VectorGame(3, num_players=2, seed=4)
    before = vg.racks.copy(), vg.draw.copy(), vg.phase.copy()
    actions = np.full(len(games), DRAW_PILE)
    with pytest.raises(ValueError, match=r"distinct.*repeated: \[\d\]"):
        vg.step(actions, games=games)
    with pytest.raises(ValueError, match="distinct"):
        vg.new_game(games=games)
    with pytest.raises(ValueError, match="distinct"):
        VectorRacko(3, num_players=2, seed=4).step(actions, games=games)
    assert np.array_equal(vg.racks, before[0]) and np.array_equal(vg.draw, before[1])
    assert np.array_equal(vg.phase, before[2])
    for g in range(3):
        assert _cards_in_play(vg, g) == list(range(1, 41))
    # Reading is fine with repeats: the same game's mask twice.
    assert vg.legal_mask(games=[0, 0]).shape == (2, 14)


def test_game_indices_must_be_integers_in_range() -> None:
    vg = VectorGame(3, num_players=2, seed=4)
    with pytest.raises(TypeError, match="not a mask"):
        vg.step(np.array([DRAW_PILE, DRAW_PILE]), games=np.array([True, False, True]))
    with pytest.raises(TypeError, match="integers"):
        vg.step(np.array([DRAW_PILE]), games=[0.7])
    with pytest.raises(IndexError, match="0..2"):
        vg.step(np.array([DRAW_PILE]), games=[-1])
    # Unordered but distinct indices are fine.
    vg.step(np.array([DRAW_PILE, DRAW_PILE]), games=[2, 0])
    assert vg.held[[2, 0]].all() and not vg.held[1]
