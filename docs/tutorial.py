# ---
# jupyter:
#   jupytext:
#     formats: py:percent,ipynb
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Rack-O for reinforcement learning: the tutorial
#
# From the rules to a trained bot you can play against, top to bottom, with no edits: the rules,
# the AEC loop, the observation, a heuristic bot, the Gymnasium view, training with the main job,
# the exported bot file, a duplicate evaluation and a game in the terminal.
#
# Run it from a clone, after `pip install -e ".[train]"`: `python docs/tutorial.py` (a few
# minutes on two cores), or `docs/tutorial.ipynb` in Jupyter or Colab (generated from this file by
# `jupytext --sync docs/tutorial.py`). `RACKO_TUTORIAL_QUICK=1` runs it with tiny settings in
# seconds, as CI does. It writes to `runs/tutorial/` (or `RACKO_TUTORIAL_OUT`).
#
# **In Colab**, paste this repository's git URL (or an uploaded folder) into `RACKO_SOURCE` in the
# next cell, then run all: it clones and installs racko (the tutorial trains with the repository's
# `configs/2p.yaml`). Anywhere racko is installed, the cell does nothing.

# %%
import importlib.util
import subprocess
import sys
from pathlib import Path

RACKO_SOURCE = ""  # @param {type:"string"}
if "google.colab" in sys.modules and importlib.util.find_spec("racko_env") is None:
    if not RACKO_SOURCE:
        raise SystemExit("set RACKO_SOURCE to this repository's git URL (or an uploaded folder)")
    source = RACKO_SOURCE
    if "://" in source:
        subprocess.run(["git", "clone", "-q", source, "racko"], check=True)
        source = "racko"
    pip = [sys.executable, "-m", "pip", "install", "-q", "-e", f"{source}[train]"]
    subprocess.run(pip, check=True)
    sys.path.insert(0, str(Path(source).resolve()))  # an editable install, in this kernel too

# %%
import os

import numpy as np

import train

if Path.cwd().name == "docs" and Path("../pyproject.toml").is_file():
    os.chdir("..")  # a notebook opened in docs/ starts there: work from the repository root
QUICK = os.environ.get("RACKO_TUTORIAL_QUICK", "") not in ("", "0")
OUT = Path(os.environ.get("RACKO_TUTORIAL_OUT", "runs/tutorial"))
OUT.mkdir(parents=True, exist_ok=True)
REPO = Path(train.__file__).resolve().parent.parent  # the clone: its configs/ folder

# The knobs that make the quick run quick (the full values in the second column).
CONFIG = REPO / "configs" / ("smoke_structured.yaml" if QUICK else "2p.yaml")  # the main job's
PPO_STEPS = 1024 if QUICK else 196_608  # env steps of training (12 PPO updates of the main job)
TOURNAMENT_DEALS = 5 if QUICK else 100  # duplicate deals of the tournament in the AEC env
MATCH_DEALS = 5 if QUICK else 1000  # duplicate deals of each match of your trained bot
if not CONFIG.is_file():
    raise SystemExit(f"{CONFIG} not found: run the tutorial from a clone (pip install -e .)")
print(f"quick={QUICK}, writing to {OUT}")

# %% [markdown]
# ## 1. The rules in five minutes
#
# (All of them, with worked examples: [`docs/rules.md`](rules.md).)
#
# - 2-4 players. The deck is 1-40 for 2 players, 1-50 for 3, 1-60 for 4. Each player has a rack of
#   ten slots, dealt face down from the back; cards are **never rearranged**.
# - On your turn, take the top of the **discard pile** (face up: it must go into your rack) or
#   the top of the **draw pile** (only you see it: keep it for your rack or discard it). A card
#   put into the rack replaces one card, which goes on the discard pile.
# - **Rack-O**: your cards ascending from the front slot (slot 1, printed "5") to the back
#   (the last slot, "50"). It ends the round: 75 points. Everyone else scores 5 points per card
#   ascending from slot 1 up to the first break.
# - The game goes on round after round until someone reaches 500 points.
#
# The scoring functions are plain Python in `racko_env.rules`:

# %%
from racko_env.rules import ascending_prefix, hand_score, is_racko

rack = [3, 8, 12, 20, 17, 25, 30, 33, 36, 39]  # slot 1 (front) ... slot 10 (back)
print("ascending prefix:", ascending_prefix(rack), "cards ->", hand_score(rack, went_racko=False))
print("is Rack-O?", is_racko(rack))
racko = [2, 5, 9, 13, 18, 22, 27, 31, 35, 40]
print("Rack-O?", is_racko(racko), "->", hand_score(racko, went_racko=True), "points")

# %% [markdown]
# In code, slots are numbered from 0: **slot index 0 is the front**. The actions are one
# `Discrete` space, named in `racko_env.actions`: `slot_i` puts the held card into slot index i
# (the card there goes on the discard pile), `draw_pile` draws the top card of the draw pile,
# `take_discard` takes the top card of the discard pile, `keep` keeps the drawn card (a slot
# decision follows) and `discard` discards it (the turn ends):

# %%
from racko_env.actions import ACTION_NAMES, DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD

print(f"Discrete({len(ACTION_NAMES)}):", ", ".join(f"{i} {n}" for i, n in enumerate(ACTION_NAMES)))
print("draw, discard:", (DRAW_PILE, DISCARD), "| draw, keep, place:", (DRAW_PILE, KEEP, "slot"))
print("take the discard, place:", (TAKE_DISCARD, "slot"))

# %% [markdown]
# So a turn is one to three decisions; the `action_mask` says which are legal now.

# %% [markdown]
# ## 2. The AEC loop
#
# `racko_v1` is a PettingZoo AEC environment, used like PettingZoo's classic games: agents take
# turns; `env.last()` gives the agent on turn its observation, the reward since its last move, and
# whether it is done. Here every agent plays a random legal action.

# %%
from racko_env import racko_v1

env = racko_v1.env(num_players=2, render_mode="ansi")
env.reset(seed=42)
steps = 0
for agent in env.agent_iter():
    obs, reward, termination, truncation, info = env.last()
    if termination or truncation:
        action = None  # a finished agent steps with None; this is where it sees its reward
        print(f"{agent}: reward {reward:+.1f}, round points {info.get('round_points')}")
    else:
        action = env.action_space(agent).sample(obs["action_mask"])  # a random legal action
    env.step(action)
    steps += 1
print(env.render())
print(f"{steps} steps; scores {env.unwrapped.scores}")

# %% [markdown]
# Random play rarely goes Rack-O: the round usually runs to the turn limit (400 turns) and is
# *truncated*; the best ascending prefix wins. `reward="win"` (the default) is zero-sum: +1 for the
# winner, -1 for the other player (with more players: -1/(n-1) each).

# %% [markdown]
# ## 3. Reading the observation
#
# Each seat sees a dict: `"observation"`, floats in [0, 1] holding what that seat may know (every
# public fact at the table, each opponent slot's history included), and `"action_mask"`, one int
# per action. Cards are stored as `card / N` (N = 40, 50 or 60). `agents.obs.decode` turns the
# vector back into cards; the full layout is in
# [the observation's page](environment/observation.md).

# %%
from agents.obs import decode

env = racko_v1.env(num_players=2)
env.reset(seed=7)
agent = env.agent_selection
obs, *_ = env.last()
view = decode(obs)
print(
    "on turn:", agent, "| observation", obs["observation"].shape, "| mask", obs["action_mask"].shape
)
print("my rack, front to back:", view.rack)
print("discard top:", view.discard_top, "| draw pile:", view.draw_size, "cards")
print("decision:", view.phase.name, "| legal actions:", view.legal)
print("own rack as stored:", np.round(obs["observation"][:10], 3))
print("mask:", obs["action_mask"])

# %% [markdown]
# After drawing (`DRAW_PILE`) the same seat holds a private card and must keep (12) or discard (13):

# %%
env.step(DRAW_PILE)
obs, *_ = env.last()
view = decode(obs)
print("held:", view.held, "| decision:", view.phase.name, "| legal:", view.legal)

# %% [markdown]
# ## 4. Writing a heuristic bot
#
# A bot is an object with `act(observation) -> action` (and `reset()` at each new round);
# subclassing `agents.Bot` gives `reset`, `seed` and `explain` for free. This one uses the
# classic *zone* idea: with N cards, card c belongs around slot `(c - 1) * 10 // N`. It takes a
# discard or keeps a drawn card only if the card's zone slot holds a card from another zone. This
# is the idea of the built-in `heuristic` bot, written from scratch: the two should tie, and the
# evaluation in section 8 shows whether they do.

# %%
from agents import Bot
from racko_env.actions import Phase


class ZoneBot(Bot):
    name = "zone"

    def __init__(self, num_players: int = 2):
        self.num_players = num_players

    def wanted_slot(self, view, card):
        """The card's zone slot, if the card there is out of its zone (else None)."""
        slot = view.zone(card)
        return slot if view.zone(view.rack[slot]) != slot else None

    def act(self, observation):
        view = decode(observation)
        if view.phase == Phase.DRAW:
            top = view.discard_top
            return TAKE_DISCARD if top and self.wanted_slot(view, top) is not None else DRAW_PILE
        if view.phase == Phase.KEEP_OR_DISCARD:
            return KEEP if self.wanted_slot(view, view.held) is not None else DISCARD
        slot = self.wanted_slot(view, view.held)  # Phase.PLACE
        return slot if slot is not None else view.zone(view.held)


# %% [markdown]
# Play one round of it against the built-in `heuristic` bot. `agents.load` gives a bot from a name
# (`"random"`, `"heuristic"`, `"expert"`), a `"module:Class"` path, or an exported `.onnx` file.

# %%
import agents

bots = {"player_0": ZoneBot(), "player_1": agents.load("heuristic", num_players=2)}
env = racko_v1.env(num_players=2)
env.reset(seed=3)
for agent in env.agent_iter():
    obs, reward, termination, truncation, info = env.last()
    if termination or truncation:
        print(f"{agent} ({bots[agent].name}): reward {reward:+.0f}, points {info['round_points']}")
        action = None
    else:
        action = bots[agent].act(obs)
    env.step(action)

# %% [markdown]
# ## 5. The Gymnasium single-agent view
#
# Most RL libraries want one agent. `gymnasium.make("racko/Racko-v1", ...)` seats the learner in
# one seat (rotating from episode to episode) and plays the others with bots inside `step`. The
# legal actions are in `env.action_masks()` (the method MaskablePPO looks for) and in
# `info["action_mask"]`. The reward arrives on the step that ends the round, also when an
# opponent's move ended it.

# %%
import gymnasium

import racko_env  # noqa: F401  (registers racko/Racko-v1)

genv = gymnasium.make("racko/Racko-v1", num_players=2, opponents=["heuristic"])
obs, info = genv.reset(seed=0)
rng = np.random.default_rng(0)
done, length, total = False, 0, 0.0
while not done:
    mask = genv.unwrapped.action_masks()
    action = int(rng.choice(np.flatnonzero(mask)))  # random legal action
    obs, reward, terminated, truncated, info = genv.step(action)
    done, length, total = terminated or truncated, length + 1, total + reward
print(f"obs {obs.shape}, {length} learner steps, return {total:+.0f}")


# %% [markdown]
# ## 6. Training a bot with the main job
#
# The main job, `racko train --config configs/2p.yaml`, trains MaskablePPO (which samples only
# legal actions) with the *structured policy*: one small network, shared by all the slots, scores
# putting the held card into each slot, and a trunk over all the slots decides draw, take, keep
# and discard. It plays `heuristic`, `expert` and frozen snapshots of itself, on the batched engine.
#
# Here it runs in this process, shortened to `PPO_STEPS` env steps: long enough to beat `random`
# and `heuristic`. At full length it reaches `expert`'s level ([results](results/training.md));
# [the main job's page](training/main-job.md) tells what the run folder holds and how to resume.

# %%
import shutil

from train.sb3.run import main as train_main

RUN = OUT / "run"
shutil.rmtree(RUN, ignore_errors=True)  # a rerun of the tutorial trains afresh
print(f"training {CONFIG.name} for {PPO_STEPS} env steps (the log shows how far it is)", flush=True)
status = train_main(["--config", str(CONFIG), "--out", str(RUN), "--total-steps", str(PPO_STEPS)])
if status != 0:
    raise SystemExit("the training failed: its error is printed above")

# %% [markdown]
# ## 7. The bot file
#
# The run ends by exporting the policy as `bot.onnx` with its manifest `bot.json`
# ([the bot file format](bot-format.md)), checked to pick the trained model's actions. It plays
# with numpy and onnxruntime only, and `agents.load` takes it like any other bot.

# %%
import json

import agents

onnx_path = RUN / "bot.onnx"
manifest = json.loads(onnx_path.with_suffix(".json").read_text())
training = manifest["training"]
print(f"trained for {training['timesteps']} env steps, {training['policy']} policy")
print("export check:", manifest["export_check"])
my_bot = agents.load(str(onnx_path), num_players=2)
env = racko_v1.env(num_players=2)
env.reset(seed=1)
obs, *_ = env.last()
print("the exported bot plays", my_bot.act(obs), "where the legal actions are", decode(obs).legal)

# %% [markdown]
# ## 8. Evaluation against the baselines, with intervals
#
# A *duplicate* tournament plays every deal in every seating, so the luck of the deal cancels out;
# win rates come with 95% Wilson intervals. First the `zone` bot against the built-in ones, in the
# AEC env, as `racko evaluate --bots my_bots:ZoneBot random heuristic` plays it
# ([Evaluation](evaluation/evaluate.md)):

# %%
from racko_eval import run_tournament
from racko_eval.evaluate import format_table

print(
    f"evaluating: {TOURNAMENT_DEALS} duplicate deals in every seating (the bar counts deals)",
    flush=True,
)
report = run_tournament(
    [ZoneBot(), "random", "heuristic"],
    num_players=2,
    rounds=TOURNAMENT_DEALS,
    seed=0,
    progress=True,
)
print(format_table(report))

# %% [markdown]
# `zone` against `heuristic` comes out at exactly 50%: the two make the same decisions, and
# duplicate deals give both the same cards in both seats.
#
# Now your trained bot against each built-in bot. A strength claim needs many deals, so these
# matches run on the batched engine (`racko_eval.play_duplicate`, the main job's own evaluation),
# every game of a batch at once.

# %%
from agents.batched import load_batch
from racko_eval import play_duplicate

print(f"matches: {MATCH_DEALS} duplicate deals against each bot", flush=True)
mine = load_batch(str(onnx_path), 2)
head_to_head = {}
for name in ["random", "heuristic", "expert"]:
    bots = [mine, load_batch(name, 2, seed=0)]
    match = play_duplicate(bots, ["yours", name], 2, {}, MATCH_DEALS, seed=0, tables=[(0, 1)])
    yours = match["bots"]["yours"]
    rate, (low, high) = yours["win_rate"], yours["ci95"]
    head_to_head[name] = {"win_rate": rate, "ci95": [low, high], "games": yours["seats"]}
    print(f"your bot vs {name:>9}: {100 * rate:5.1f}% (95% CI {100 * low:.1f}-{100 * high:.1f})")
(OUT / "tournament.json").write_text(json.dumps({"head_to_head": head_to_head}, indent=1))

# %% [markdown]
# Your bot beats a bot when its interval lies above 50%: after the full run, `random` and
# `heuristic`. `expert` takes the main job at full length, as the shipped `racko_2p` did.
#
# Exercise: make `ZoneBot` better than `heuristic` (prefer a discard that extends your ascending
# run from slot 1; late in a round, grab cards that fit anywhere), and measure it with
# `run_tournament([ZoneBot(), "heuristic"], ...)`: better means a 95% interval above 50%.

# %% [markdown]
# ## 9. Playing your bot in the terminal
#
# `racko play` seats any bot spec. In a terminal, play your exported bot, with the expert's advice
# before each of your decisions:
#
# ```bash
# racko play --bots runs/tutorial/run/bot.onnx --hint expert
# ```
#
# Your own class plays too (`racko play --bots my_bots:ZoneBot`). Here, where no one can type, we
# *watch* one round of the exported bot against `heuristic`:

# %%
command = [sys.executable, "-m", "racko_apps.cli", "play", "--watch", "--bots", str(onnx_path)]
command += ["heuristic", "--rounds", "1", "--delay", "0", "--seed", "0"]
print("$ racko", " ".join(command[3:]))
shown = subprocess.run(
    command, capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL
)
print("\n".join(shown.stdout.splitlines()[-3:]))
