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
# From the rules to a trained bot you can play against, top to bottom, with no edits:
#
# 1. the rules in five minutes
# 2. the AEC loop (PettingZoo)
# 3. reading the observation
# 4. writing a heuristic bot
# 5. the Gymnasium single-agent view
# 6. a small MaskablePPO run
# 7. exporting the trained policy as a bot file (ONNX)
# 8. evaluating it against the baselines, with confidence intervals
# 9. playing your bot in the terminal
#
# **Run it** from the repository root, after `pip install -e ".[train]"`:
#
# - as a script: `python docs/tutorial.py` (a few minutes on one core, most of it the PPO run
#   and the evaluation);
# - as a notebook: open `docs/tutorial.ipynb` in Jupyter or Colab. It is generated from this file
#   (a jupytext "percent" script: every `# %%` is a cell) by `jupytext --sync docs/tutorial.py`
#   after an edit here; `tests/docs/test_tutorial.py` checks the two are in sync and runs the
#   notebook. VS Code runs the `# %%` cells of the `.py` as they are.
#
# `RACKO_TUTORIAL_QUICK=1 python docs/tutorial.py` runs everything with tiny settings in seconds:
# that is how CI checks that this tutorial works (`tests/docs/test_tutorial.py`). Everything it writes
# goes to `runs/tutorial/` (or the folder in `RACKO_TUTORIAL_OUT`).
#
# **In Colab**, the next cell installs racko first: paste where pip gets this repository (its git
# URL, or a folder you uploaded) into `RACKO_SOURCE`, then run all. Anywhere else, where racko is
# already installed, the cell does nothing.

# %%
import importlib.util
import subprocess
import sys

RACKO_SOURCE = ""  # @param {type:"string"}
if "google.colab" in sys.modules and importlib.util.find_spec("racko_env") is None:
    if not RACKO_SOURCE:
        raise SystemExit("set RACKO_SOURCE to this repository's git URL (or an uploaded folder)")
    remote = "://" in RACKO_SOURCE
    spec = f"racko[train] @ git+{RACKO_SOURCE}" if remote else f"{RACKO_SOURCE}[train]"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", spec], check=True)

# %%
import os
from pathlib import Path

import numpy as np
import torch

if Path.cwd().name == "docs" and Path("../pyproject.toml").is_file():
    os.chdir("..")  # a notebook opened in docs/ starts there: work from the repository root
QUICK = os.environ.get("RACKO_TUTORIAL_QUICK", "") not in ("", "0")
OUT = Path(os.environ.get("RACKO_TUTORIAL_OUT", "runs/tutorial"))
OUT.mkdir(parents=True, exist_ok=True)
torch.set_num_threads(1)  # small networks train fastest on one thread

# The knobs that make the quick run quick (the full values in the second column).
PPO_STEPS = 512 if QUICK else 50_000  # env steps of PPO training
EVAL_DEALS = 5 if QUICK else 300  # duplicate deals per evaluation
EXPORT_CHECK = 50 if QUICK else 300  # observations on which the ONNX file must agree
print(f"quick={QUICK}, writing to {OUT}")

# %% [markdown]
# ## 1. The rules in five minutes
#
# (All of them, with worked examples: [`docs/rules.md`](rules.md).)
#
# - 2-4 players. The deck is 1-40 for 2 players, 1-50 for 3, 1-60 for 4. Each player has a rack of
#   10 slots, dealt face down from the back; cards are **never rearranged**.
# - On your turn, take the top of the **discard pile** (face up: it must go into your rack) or
#   the top of the **draw pile** (only you see it: keep it for your rack or discard it). A card
#   put into the rack replaces one card, which goes on the discard pile.
# - **Rack-O**: your 10 cards ascending from the front slot (slot 1, printed "5") to the back
#   (slot 10, "50"). It ends the round: 75 points. Everyone else scores 5 points per card
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
# In code, slots are numbered from 0: **slot index 0 is the front**, 9 the back. The actions are
# one `Discrete(14)` space:
#
# | id | meaning |
# |---|---|
# | 0-9 | put the held card into slot index i (the card there goes on the discard pile) |
# | 10 | draw the top card of the draw pile |
# | 11 | take the top card of the discard pile |
# | 12 | keep the drawn card (a slot decision follows) |
# | 13 | discard the drawn card (the turn ends) |
#
# So a turn is one to three decisions: `10, 13` (draw, discard), `10, 12, slot` (draw, keep,
# place), or `11, slot` (take the discard, place). The `action_mask` says which are legal now.

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
# Each seat sees a dict: `"observation"`, 270 floats in [0, 1] holding what that seat may know
# (layout version 2: every public fact at the table, each opponent slot's history included;
# `racko_v0` gives version 1, its first 177), and `"action_mask"`, 14 ints. Cards are stored as `card / N` (N = 40, 50 or 60).
# `agents.obs.decode` turns the vector back into cards; the full layout is in
# [`docs/env.md`](env.md).

# %%
from agents.obs import decode

env = racko_v1.env(num_players=2)
env.reset(seed=7)
agent = env.agent_selection
obs, *_ = env.last()
view = decode(obs)
print("on turn:", agent)
print("my rack, front to back:", view.rack)
print("discard top:", view.discard_top, "| draw pile:", view.draw_size, "cards")
print("decision:", view.phase.name, "| legal actions:", view.legal)
print("own rack as stored:", np.round(obs["observation"][:10], 3))
print("mask:", obs["action_mask"])

# %% [markdown]
# After drawing (action 10) the same seat holds a private card and must keep (12) or discard (13):

# %%
env.step(10)
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
from racko_env.actions import DISCARD, DRAW_PILE, KEEP, TAKE_DISCARD, Phase


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
# One round is luck. Section 8 measures bots properly.

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
# ## 6. A small MaskablePPO run
#
# `sb3_contrib.MaskablePPO` samples only legal actions (it reads `action_masks()`). This run is
# small on purpose (`PPO_STEPS` env steps, a minute or two; the quick setting takes seconds): it
# shows the workflow, not a strong bot. `python train/ppo.py --config configs/2p.yaml` is the full
# trainer (batched envs, self-play, shaping, checkpoints; `docs/training.md`), and
# `train/cleanrl_ppo.py` is a one-file PPO in plain PyTorch to read (`docs/cleanrl.md`).

# %%
from sb3_contrib import MaskablePPO

train_env = gymnasium.make("racko/Racko-v1", num_players=2, opponents=["heuristic"])
model = MaskablePPO(
    "MlpPolicy",
    train_env,
    n_steps=256 if QUICK else 2048,
    batch_size=64 if QUICK else 256,
    policy_kwargs={"net_arch": [64, 64]},
    seed=0,
    device="cpu",
    verbose=0,
)
print(f"training for {PPO_STEPS} env steps (the bar shows how far it is)", flush=True)
model.learn(total_timesteps=PPO_STEPS, progress_bar=True)
print("trained for", model.num_timesteps, "env steps")

# %% [markdown]
# ## 7. Export: a bot file that needs no torch
#
# `train.sb3.export.export_model` writes the policy network as `bot.onnx` with its manifest
# `bot.json` (player count, rules, observation version; format in
# [`docs/bot-format.md`](bot-format.md)), after checking that the ONNX graph picks the same action
# as the model on `check` observations of real play. The file plays with numpy + onnxruntime only.

# %%
from train.sb3.export import export_model

onnx_path, json_path = export_model(
    model, OUT, num_players=2, rules={}, training={"tutorial": True}, check=EXPORT_CHECK
)
print("wrote", onnx_path, "and", json_path)
my_bot = agents.load(str(onnx_path), num_players=2)
env = racko_v1.env(num_players=2)
env.reset(seed=1)
obs, *_ = env.last()
print("the exported bot plays", my_bot.act(obs), "where the legal actions are", decode(obs).legal)

# %% [markdown]
# ## 8. Evaluation against the baselines, with intervals
#
# A *duplicate* tournament: every deal is played in every seating, so each bot gets the same
# cards as the others and the luck of the deal cancels out. Win rates come with 95% Wilson
# intervals: two bots whose intervals overlap are not shown to differ. The same report comes from
# the command line: `python train/evaluate.py --players 2 --rounds 300 --bots runs/tutorial/bot.onnx
# heuristic expert --seed 0` (`docs/evaluation.md`).

# %%
from racko_eval import run_tournament
from racko_eval.evaluate import format_table

print(
    f"evaluating: {EVAL_DEALS} duplicate deals in every seating (the bar counts deals)", flush=True
)
report = run_tournament(
    [str(onnx_path), ZoneBot(), "random", "heuristic", "expert"],
    num_players=2,
    rounds=EVAL_DEALS,
    seed=0,
    progress=True,
)
print(format_table(report))
for bot in report["bots"]:
    low, high = bot["win_rate_ci95"]
    print(
        f"{bot['name']:>24}: {100 * bot['win_rate']:5.1f}% (95% CI {100 * low:.1f}-{100 * high:.1f})"
    )

# %% [markdown]
# `heuristic` beats `random` in every round and `expert` beats `heuristic` in about 84% of rounds
# (`docs/evaluation.md`). `zone` against `heuristic` comes out at exactly 50%: the two make the
# same decisions, and duplicate deals give both the same cards in both seats. A PPO policy trained
# for a minute does not beat `heuristic` yet. To go further: more steps, self-play and shaping
# with `train/ppo.py`, or the value-based trainer that made the shipped bots
# (`agents/pretrained/racko_2p.onnx`, as strong as `expert`).
#
# Exercises: make `ZoneBot` better than `heuristic` (ideas: prefer a discard that extends your
# ascending run from slot 1; near the end of a round, when an opponent is close, grab cards that
# fit anywhere ascending), then measure it with `run_tournament([ZoneBot(), "heuristic"], ...)`:
# better means a 95% interval above 50%.

# %% [markdown]
# ## 9. Playing your bot in the terminal
#
# The `racko` command seats any bot spec. In a terminal, play a game against your exported bot,
# with the expert's advice before each of your decisions:
#
# ```bash
# racko --bots runs/tutorial/bot.onnx --hint expert
# ```
#
# Your own class plays too, from a module on your Python path: put `ZoneBot` (with its imports)
# in `my_bots.py` and run `racko --bots my_bots:ZoneBot`. Here, where no one can type, we
# *watch* one round of the exported bot against `heuristic` instead (`--watch`, no delay):

# %%
import subprocess
import sys

command = [sys.executable, "-m", "racko_apps.play", "--watch", "--bots", str(onnx_path)]
command += ["heuristic", "--rounds", "1", "--delay", "0", "--seed", "0"]
print("$", " ".join(command[2:]).replace("racko_apps.play", "racko"))
shown = subprocess.run(
    command, capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL
)
print("\n".join(shown.stdout.splitlines()[-6:]))
