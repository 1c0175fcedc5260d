"""The structured policy's features as an observation: a Gymnasium and a PettingZoo wrapper.

On the raw observation (``racko_env.observation``, ``OBS_SIZE`` floats) a generic learner has to discover
for itself what decides a Rack-O move: where a card fits between its neighbours, and how much
closer it brings the rack to an ascending one given the cards that may still come. The features
of ``agents.features`` compute exactly that (per slot: the card, its neighbours, the planner's
cost of the rack with the card in question put there, ...; globally: the decision, the rack's
plan cost, the expected gain of a blind draw, ...). These wrappers hand them to any learner as a
flat ``Box`` of ``FEATURE_SIZE`` float32 columns, with the bounds of every column::

    import gymnasium, racko_env
    from agents.feature_obs import FeatureObservation

    env = FeatureObservation(gymnasium.make("racko/Racko-v1", opponents=["heuristic"]))
    obs, info = env.reset(seed=0)        # obs: (FEATURE_SIZE,) float32; info["action_mask"]

    from racko_env import racko_v1
    from agents.feature_obs import feature_observation_v0

    aec = feature_observation_v0(racko_v1.env())   # observe(agent)["observation"]: the features

    from agents.feature_obs import FeatureObservationVector

    envs = FeatureObservationVector(gymnasium.make_vec(
        "racko/Racko-v1", num_envs=64, vectorization_mode="vector_entry_point",
        opponents=["heuristic"]))                  # many games at once on the batched engine

Layout: ``RACK_SIZE`` blocks of ``SLOT_FEATURES`` columns, one per slot (slot s starts at column
``s * SLOT_FEATURES``; every block has the same columns, so one set of weights can score every
slot), then ``GLOBAL_FEATURES`` global columns. ``columns(num_cards)`` lists every column with its
name, bounds and meaning; ``markdown_table()`` is the table the docs show. "The decision card" is
the held card while keeping or placing, and the discard pile's top while drawing.

Solitaire (``racko/RackoSolitaire-v0`` with 10-card racks, ``num_players=1``) has features too:
its observation is read as the 2-4 player layout's with no opponent, and the columns about
opponents (which would be constants) are left out: ``SOLITAIRE_FEATURE_SIZE`` columns, listed by
``columns(num_cards, solitaire=True)``, the per-slot relational features and planner costs of
the own rack and the global ones::

    env = FeatureObservation(gymnasium.make("racko/RackoSolitaire-v0"))   # racks of 10, cards 1-40

The features need the current observation layout (``observation_version`` 2, ``racko/Racko-v1``)
or solitaire's, and 10-card racks; anything else is refused in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers.base import BaseWrapper

from agents.features import (
    _GLOBAL_OBS,
    GLOBAL_EXTRAS,
    GLOBAL_FEATURES,
    NO_PLAN,
    RACK_SIZE,
    SAVING_SCALE,
    SLOT_FEATURES,
    SLOT_STATS,
    TAKE_DEALT,
    TAKE_REFILLED,
    flat_features,
    rack_features,
)
from racko_env.actions import NUM_ACTIONS
from racko_env.config import RulesConfig
from racko_env.observation import DEFAULT, LAYOUT, MAX_CARDS, OBS_SIZE, layout_for
from racko_env.rules import SOLITAIRE, deck_size

FEATURE_SIZE = RACK_SIZE * SLOT_FEATURES + GLOBAL_FEATURES
LOG_COST = float(np.log1p(NO_PLAN))  # the largest log(1 + plan cost): NO_PLAN caps a cost

__all__ = [
    "FEATURE_SIZE",
    "SOLITAIRE_FEATURE_SIZE",
    "Column",
    "FeatureObservation",
    "FeatureObservationAEC",
    "FeatureObservationVector",
    "columns",
    "feature_observation_v0",
    "feature_space",
    "features_of",
    "markdown_table",
    "num_cards_of",
    "solitaire_lift",
]

# Each statistic's bounds, (low, high) with "N" for the deck size's terms, and its meaning.
# ``tests/agents/test_feature_obs.py`` checks that every name of agents.features has an entry.
_CLIP = f"clipped to +-{SAVING_SCALE:g}, / {SAVING_SCALE:g}"  # how a linear saving is scaled
SLOT_MEANINGS: dict[str, tuple[str, str, str]] = {
    "card": ("0", "1", "the slot's card / N"),
    "may_come_below": ("0", "N/10", "cards below the slot's card that may still come (unseen or in the discard pile) / 10"),
    "unseen_below": ("0", "N/10", "unseen cards below the slot's card / 10"),
    "prev": ("0", "1", "the card of the slot before / N (0 for slot 0)"),
    "next": ("0", "(N+1)/N", "the card of the slot after / N ((N + 1) / N for slot 9)"),
    "prev_below": ("0", "1", "1 if the card before is lower (always for slot 0)"),
    "next_above": ("0", "1", "1 if the card after is higher (always for slot 9)"),
    "card_minus_slot": ("-1", "1", "(decision card - slot's card) / N; 0 without a decision card"),
    "card_fits": ("0", "1", "1 if the decision card lies between the slot's neighbours"),
    "has_card": ("0", "1", "1 if there is a decision card (same in every slot)"),
    "cost": ("0", "L", "log(1 + plan cost) of the rack with the decision card put here; the plan cost is `expert`'s planner's cost of the cheapest ascending completion, capped at " + f"{NO_PLAN:g} (no completion)"),
    "saving_log": ("-L", "L", "signed log(1 + |saving|), saving = plan cost of the rack as it is minus plan cost with the decision card here"),
    "saving_lin": ("-1", "1", f"the same saving, {_CLIP}"),
    "is_best": ("0", "1", "1 if no other slot gives a lower plan cost for the decision card"),
    "no_plan": ("0", "1", "1 if the rack with the decision card here has no ascending completion"),
    "home": ("-1", "1", "(home slot of the slot's card - slot) / 10; card c's home slot is (c - 1) * 10 / N"),
}  # fmt: skip
GLOBAL_MEANINGS: dict[str, tuple[str, str, str]] = {
    "card": ("0", "1", "the decision card / N (0: none)"),
    "held": ("0", "1", "the held card / N (0: none)"),
    "top": ("0", "1", "the discard pile's top / N"),
    "known": ("0", "1", "the draw pile's top / N when its order is public, else 0"),
    "has_card": ("0", "1", "1 if there is a decision card"),
    "cost": ("0", "L", "log(1 + plan cost) of the rack as it is"),
    "no_plan": ("0", "1", "1 if the rack as it is has no ascending completion"),
    "best_cost": ("0", "L", "log(1 + plan cost) with the decision card in its best slot (0 without a card)"),
    "best_saving_log": ("-L", "L", "signed log(1 + |saving|) of the decision card in its best slot"),
    "best_saving_lin": ("-1", "1", f"that saving, {_CLIP}"),
    "draw_gain_log": ("0", "L", "log(1 + expected saving) of a blind draw put in its best slot (drawing only, else 0)"),
    "draw_gain_lin": ("0", "1", f"that expected saving, {_CLIP}"),
    "take_adv_log": ("-L", "L", "signed log(1 + |advantage|) of taking the discard top over a blind draw: its best saving minus the draw's expected saving (drawing only, else 0)"),
    "take_adv_lin": ("-1", "1", f"that advantage, {_CLIP}"),
    "may_come": ("0", "1", "cards that may still come (unseen or in the discard pile) / N"),
    "unseen": ("0", "1", "unseen cards / N"),
    "ascending_pairs": ("0", "1", "neighbouring slots in ascending order / 9"),
}  # fmt: skip
_OF = "the next opponent's slot for {card} (its home slot there)"
OPP_MEANINGS: dict[str, tuple[str, str, str]] = {
    "opp_dealt": ("0", "1", f"1 if {_OF} still holds its dealt card"),
    "opp_drawn": ("0", "1", f"1 if {_OF} holds a card from the draw pile"),
    "opp_known": ("0", "1", f"1 if {_OF} holds a card known from the discard pile"),
    "opp_known_gap": ("-1", "1", "(that known card - {card}) / N, else 0"),
    "opp_left": ("-1", "1", "the opponent's known card left of that slot: +1 below {card} (room), -1 above, 0 unknown"),
    "opp_right": ("-1", "1", "the opponent's known card right of that slot: +1 above {card} (room), -1 below, 0 unknown"),
    "opp_age": ("0", "1", "turns since that slot last changed, x 10 / turn limit, capped at 1"),
    "opp_out_gap": ("-1", "1", "(the card that last came out of that slot - {card}) / N, else 0"),
    "opp_take": ("0", f"{max(TAKE_DEALT, TAKE_REFILLED):g}", f"chance the opponent takes {{card}} if discarded: {TAKE_DEALT:g} for a dealt slot, {TAKE_REFILLED:g} for a refilled one, 0 where a known neighbour leaves no room"),
}  # fmt: skip


@dataclass(frozen=True)
class Column:
    """One column of the feature vector: its index, name, bounds (``low``/``high`` for the
    deck size asked for; ``bounds`` written with N, L = ln(1 + NO_PLAN)) and meaning."""

    index: int
    name: str
    low: float
    high: float
    bounds: str
    meaning: str


def _bound(text: str, n: int) -> float:
    """A bound as ``SLOT_MEANINGS`` writes it, for deck size ``n``, as a float32 rounds it."""
    value = {"N/10": n / 10, "(N+1)/N": (n + 1) / n, "L": LOG_COST, "-L": -LOG_COST}.get(text)
    return float(np.float32(float(text) if value is None else value))


def _obs_name(index: int) -> tuple[str, str]:
    """The observation field holding entry ``index``, as a column name and meaning."""
    for f in LAYOUT:
        if f.start <= index < f.stop:
            name = f.name if f.size == 1 else f"{f.name}[{index - f.start}]"
            return name, f"observation entry {index}: {f.meaning}"
    raise ValueError(f"observation entry {index} is outside the layout")


def num_cards_of(options: dict[str, Any]) -> int:
    """The deck size N of a game's rules options (``RulesConfig.to_dict()``), after checking the
    features support them: 10-card racks and at most ``MAX_CARDS`` cards."""
    rack = options.get("rack_size", RACK_SIZE)
    if rack != RACK_SIZE:
        raise ValueError(
            f"rack_size={rack}: the feature observation needs {RACK_SIZE}-card racks; "
            "use the raw observation for smaller racks"
        )
    n = options.get("deck_size") or deck_size(int(options["num_players"]))
    if not 0 < n <= MAX_CARDS:
        raise ValueError(f"deck_size={n}: the feature observation supports up to {MAX_CARDS}")
    return int(n)


def _block_specs() -> tuple[list[tuple[str, str, str, str]], list[tuple[str, str, str, str]]]:
    """(name, low, high, meaning) of a slot block's columns and of the global columns."""
    opp = OPP_MEANINGS.items()
    slot = [(k, *SLOT_MEANINGS[k]) for k in SLOT_STATS]
    slot += [(f"is_slot_{i}", "0", "1", f"1 in slot {i}'s block") for i in range(RACK_SIZE)]
    slot += [(k, lo, hi, m.format(card="the slot's card")) for k, (lo, hi, m) in opp]
    glob = [(*_obs_name(i)[:1], "0", "1", _obs_name(i)[1]) for i in _GLOBAL_OBS.tolist()]
    glob += [(k, *GLOBAL_MEANINGS[k]) for k in GLOBAL_EXTRAS]
    glob += [(k, lo, hi, m.format(card="the decision card")) for k, (lo, hi, m) in opp]
    if len(slot) != SLOT_FEATURES or len(glob) != GLOBAL_FEATURES:
        raise ValueError("agents.features changed its columns: update agents/feature_obs.py")
    return slot, glob


def _about_opponents(name: str) -> bool:
    """A column that describes opponents or partners: constant in solitaire, so left out."""
    name = name.rsplit(".", 1)[-1]
    return name.startswith("opp_") or name == "partners"


def columns(num_cards: int = 40, solitaire: bool = False) -> list[Column]:
    """Every column of the feature vector for deck size ``num_cards`` (its bounds depend on it);
    ``solitaire``: the solitaire vector's, without the columns about opponents."""
    slot, glob = _block_specs()
    named = [(f"slot{s}.{name}", *rest) for s in range(RACK_SIZE) for name, *rest in slot]
    out = []
    for name, lo, hi, meaning in named + glob:
        if solitaire and _about_opponents(name):
            continue
        low, high = _bound(lo, num_cards), _bound(hi, num_cards)
        out.append(Column(len(out), name, low, high, f"{lo} .. {hi}", meaning))
    return out


# Where solitaire's columns sit in the full feature vector.
SOLITAIRE_COLUMNS = np.array(
    [i for i, c in enumerate(columns()) if not _about_opponents(c.name)], dtype=np.int64
)
SOLITAIRE_FEATURE_SIZE = len(SOLITAIRE_COLUMNS)


def solitaire_lift(num_cards: int) -> np.ndarray:
    """The 0/1 matrix (solitaire width, ``OBS_SIZE``) that puts a solitaire observation of
    10-card racks and the cards 1..``num_cards`` where the 2-4 player layout keeps each field
    (``obs @ lift``): every opponent entry 0, the card sets in their first ``num_cards``
    entries. The features read the lifted vector; the exported graph multiplies by it."""
    lay = layout_for(RulesConfig(num_players=SOLITAIRE, rack_size=RACK_SIZE, deck_size=num_cards))
    lift = np.zeros((lay.size, OBS_SIZE), dtype=np.float32)
    for f in lay.fields:
        start = DEFAULT.by_name[f.name].start
        lift[np.arange(f.start, f.stop), np.arange(start, start + f.size)] = 1.0
    return lift


def feature_space(num_cards: int, solitaire: bool = False) -> spaces.Box:
    """The ``Box`` of the features for deck size ``num_cards``, each column with its own bounds
    (``solitaire``: the solitaire vector's)."""
    cols = columns(num_cards, solitaire)
    low = np.array([c.low for c in cols], dtype=np.float32)
    high = np.array([c.high for c in cols], dtype=np.float32)
    return spaces.Box(low, high, dtype=np.float32)


def features_of(obs: np.ndarray, num_cards: int) -> np.ndarray:
    """Observations (``OBS_SIZE``,) or (B, ``OBS_SIZE``) -> features (``FEATURE_SIZE``,) or
    (B, ``FEATURE_SIZE``), float32: ``agents.features.rack_features`` flattened. Solitaire's
    observations (10-card racks, the cards 1..``num_cards``) give ``SOLITAIRE_FEATURE_SIZE``."""
    obs = np.asarray(obs, dtype=np.float32)
    lift = _solitaire_lift(num_cards) if obs.shape[-1:] != (OBS_SIZE,) else None
    if obs.ndim not in (1, 2) or (lift is not None and obs.shape[-1] != lift.shape[0]):
        raise ValueError(
            f"observation of shape {obs.shape}: the features need layout version 2 "
            f"({OBS_SIZE} entries, racko/Racko-v1 or racko_v1) or solitaire's with 10-card "
            f"racks ({_solitaire_lift(num_cards).shape[0]} entries for the cards 1-{num_cards})"
        )
    rows = obs.reshape(-1, obs.shape[-1])
    if lift is not None:
        rows = rows @ lift
    flat = flat_features(*rack_features(rows, num_cards))
    if lift is not None:
        flat = flat[:, SOLITAIRE_COLUMNS]
    return flat[0] if obs.ndim == 1 else flat


_LIFTS: dict[int, np.ndarray] = {}


def _solitaire_lift(num_cards: int) -> np.ndarray:
    """``solitaire_lift``, cached per deck size."""
    if num_cards not in _LIFTS:
        _LIFTS[num_cards] = solitaire_lift(num_cards)
    return _LIFTS[num_cards]


def _row(*cells: str) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def markdown_table() -> str:
    """The columns as the docs show them: a slot block's columns once (slot s's block starts at
    column s * SLOT_FEATURES), then the global ones; bounds with N the deck size, L = ln(1 + NO_PLAN)."""
    rows = ["| column | name | range | meaning |", "|---|---|---|---|"]
    cols = columns()
    for c in cols[:SLOT_FEATURES]:
        name = c.name.removeprefix("slot0.")
        if name.startswith("is_slot_") and name != "is_slot_0":
            continue  # the one-hot is one row
        where = f"s*{SLOT_FEATURES}+{c.index}"
        if name == "is_slot_0":
            where += f"..{c.index + RACK_SIZE - 1}"
            name = f"is_slot_0 .. is_slot_{RACK_SIZE - 1}"
            meaning = "one-hot: 1 in the column of the block's own slot"
        else:
            meaning = c.meaning
        rows.append(_row(where, f"`slot<s>.{name}`", c.bounds, meaning))
    for c in cols[RACK_SIZE * SLOT_FEATURES :]:
        rows.append(_row(str(c.index), f"`{c.name}`", c.bounds, c.meaning))
    return "\n".join(rows)


# ----------------------------------------------------------------------------- Gymnasium


class FeatureObservation(gymnasium.ObservationWrapper, gymnasium.utils.RecordConstructorArgs):
    """The racko Gymnasium env (``racko/Racko-v1``, or ``racko/RackoSolitaire-v0`` with 10-card
    racks) observing the features (module docstring).

    ``observation_space`` is ``feature_space(N)`` (solitaire: ``feature_space(N, True)``); the
    action mask stays where the env keeps it: ``info["action_mask"]`` and ``action_masks()``.
    Rewards, episodes and actions are the env's.
    """

    def __init__(self, env: gymnasium.Env) -> None:
        gymnasium.utils.RecordConstructorArgs.__init__(self)  # so make() can rebuild the stack
        gymnasium.ObservationWrapper.__init__(self, env)
        base = env.unwrapped
        width = getattr(base, "observation_space", spaces.Box(0, 1, (0,))).shape
        rules = getattr(base, "rules", None)
        solitaire = isinstance(rules, RulesConfig) and rules.num_players == SOLITAIRE
        if solitaire:
            self.num_cards = num_cards_of(rules.to_dict())
            wanted = (_solitaire_lift(self.num_cards).shape[0],)
        else:
            wanted = (OBS_SIZE,)
        if width != wanted:
            raise ValueError(
                f"FeatureObservation needs observation layout version 2 ({OBS_SIZE} entries, "
                f"racko/Racko-v1) or solitaire's vector (racko/RackoSolitaire-v0, not tabular), "
                f"got an observation of shape {width}"
            )
        if not solitaire:
            self.num_cards = num_cards_of(dict(base.rules_options))
        self.observation_space = feature_space(self.num_cards, solitaire)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return features_of(observation, self.num_cards)

    def action_masks(self) -> np.ndarray:
        """The legal actions now (bool, 14), as the wrapped env gives them."""
        return self.env.get_wrapper_attr("action_masks")()


class FeatureObservationVector(gymnasium.vector.VectorObservationWrapper):
    """The racko vector env (``gymnasium.make_vec("racko/Racko-v1", num_envs=...,
    vectorization_mode="vector_entry_point")``, autoreset ``NEXT_STEP``) observing the features:
    every game's row, computed for all games in one call of the kernel. Masks stay in
    ``info["action_mask"]``."""

    def __init__(self, env: gymnasium.vector.VectorEnv) -> None:
        super().__init__(env)
        base = env.unwrapped
        if base.single_observation_space.shape != (OBS_SIZE,):
            raise ValueError(
                f"FeatureObservationVector needs observation layout version 2 ({OBS_SIZE} "
                f"entries, racko/Racko-v1, features=False), got rows of shape "
                f"{base.single_observation_space.shape}"
            )
        self.num_cards = num_cards_of(base.games.config.to_dict())
        self.single_observation_space = feature_space(self.num_cards)
        self.observation_space = gymnasium.vector.utils.batch_space(
            self.single_observation_space, self.num_envs
        )

    def observations(self, observations: np.ndarray) -> np.ndarray:
        return features_of(observations, self.num_cards)

    def action_masks(self) -> np.ndarray:
        """The legal actions of every game now (bool, ``[num_envs, 14]``)."""
        return self.env.unwrapped.action_masks()


# ----------------------------------------------------------------------------- PettingZoo


class FeatureObservationAEC(BaseWrapper):
    """A racko AEC env (``racko_v1``) whose observations are ``{"observation": features,
    "action_mask": mask}``: the features of the agent's raw observation (module docstring), and
    the env's own action mask, unchanged."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        raw = env.unwrapped
        agent = raw.possible_agents[0]
        width = raw.observation_space(agent)["observation"].shape
        if width != (OBS_SIZE,):
            raise ValueError(
                f"feature_observation_v0 needs observation layout version 2 ({OBS_SIZE} entries, "
                f"racko_v1), got an observation of shape {width}"
            )
        self.num_cards = num_cards_of(raw.config.to_dict())
        space = spaces.Dict(
            {
                "observation": feature_space(self.num_cards),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
            }
        )
        self._spaces = dict.fromkeys(raw.possible_agents, space)

    def observation_space(self, agent: Any) -> spaces.Space:
        return self._spaces[agent]

    def observe(self, agent: Any) -> dict[str, np.ndarray] | None:
        raw = self.env.observe(agent)
        if raw is None:
            return None
        return {
            "observation": features_of(raw["observation"], self.num_cards),
            "action_mask": raw["action_mask"],
        }


def feature_observation_v0(env: Any) -> FeatureObservationAEC:
    """Wrap a racko AEC env so it observes the features (PettingZoo's wrapper naming)."""
    return FeatureObservationAEC(env)
