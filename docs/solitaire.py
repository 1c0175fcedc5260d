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
# # Week 1: solitaire Rack-O, solved exactly
#
# One player, a rack of 3 slots, the cards 1 to 8: the smallest Rack-O worth learning. It is
# small enough to solve exactly, so every number below is checked against the truth:
#
# 1. the env and its states
# 2. value iteration: the optimal expected turns
# 3. Q-learning on the tabular env
# 4. the gap to the optimum, by exact policy evaluation
# 5. the learning curve against the optimum
# 6. deep RL on the same game: the main job, graded exactly
#
# **Run it** as a script (`python docs/solitaire.py`) or as the notebook `docs/solitaire.ipynb`,
# generated from the script by `jupytext --sync docs/solitaire.py`.
# `RACKO_SOLITAIRE_QUICK=1` runs everything with tiny settings (what CI runs); the output folder is
# `runs/solitaire/` or `RACKO_SOLITAIRE_OUT`.

# %%
import os
from pathlib import Path

import gymnasium
import numpy as np

import racko_env  # noqa: F401  (registers racko/RackoSolitaire-v0)

QUICK = os.environ.get("RACKO_SOLITAIRE_QUICK") == "1"
OUT = Path(os.environ.get("RACKO_SOLITAIRE_OUT", "runs/solitaire"))
K, N = 3, 8
print(f"quick={QUICK}, rack_size={K}, deck_size={N}")

# %% [markdown]
# ## 1. The env and its states
#
# `racko/RackoSolitaire-v0` is the rules engine with one player. Each step is one decision of a
# turn (draw or take the discard top; keep or discard a drawn card; the slot for a held card),
# with the full game's action ids and masks. Each turn costs -1; the episode ends at Rack-O.
#
# With `tabular=True` the observation is a number: the state the player can tell apart (the
# rack, the discard top or the held card, and which cards are in the draw pile).
# `space.decode` turns the number back into that state.

# %%
env = gymnasium.make("racko/RackoSolitaire-v0", rack_size=K, deck_size=N, tabular=True)
obs, info = env.reset(seed=0)
space = env.unwrapped.space
print("tabular observations:", env.observation_space.n)
print("state", obs, "is", space.decode(obs))
print("legal actions:", np.flatnonzero(info["action_mask"]).tolist())

# %% [markdown]
# ## 2. Value iteration: the optimal expected turns
#
# `racko_env.solitaire.solve` sweeps the Bellman optimality equation over every state until no
# value moves, then checks its greedy policy by an exact linear solve. `values[s]` is the
# expected number of turns still to play from state `s` under optimal play (the optimal return
# is its negative).

# %%
from racko_env.solitaire import evaluate, solve

solution = solve(K, N)
print(f"optimal expected turns from the deal: {solution.expected_turns:.4f}")
print(f"value iteration converged in {solution.iterations} sweeps")
print(f"from state {obs}: {solution.values[obs]:.4f} turns, play {solution.policy[obs]}")

# %% [markdown]
# ## 3. Q-learning
#
# `train/reference/tabular_q_learning.py` is Q-learning in one file: a table of values per state and
# action, epsilon-greedy play of 1024 games side by side (the env's vector form), and the update
# towards the reward plus the best next value. Here it runs with its defaults (a short run in
# quick mode).

# %%
from train.common.tabular import parse_args
from train.reference import tabular_q_learning

flags = ["--out", str(OUT / "q_learning"), "--quiet"]
if QUICK:
    flags += ["--total-steps", "100000", "--num-envs", "256", "--eval-points", "2"]
args = parse_args(tabular_q_learning.NAME, "", flags)
result = tabular_q_learning.train(args)
print(f"trained for {result['steps']:,} steps")

# %% [markdown]
# ## 4. The gap to the optimum
#
# The learned policy is the table's greedy action in each state. `evaluate` gives its exact
# expected turns: a linear solve over every state the policy can reach, not a noisy average of
# played games.

# %%
print(
    f"greedy policy: {result['expected_turns']:.4f} expected turns, "
    f"optimum {result['optimum']:.4f}: gap {result['gap_percent']:+.2f}%"
)
uniform = space.legal[np.arange(space.num_observations) // space.num_states].astype(float)
random_turns = evaluate(uniform / uniform.sum(axis=1, keepdims=True), K, N, turn_limit=400)
print(f"random play, for scale: {random_turns:.2f} expected turns (rounds cut at 400 turns)")

# %% [markdown]
# ## 5. The learning curve
#
# Each point is an exact evaluation of the greedy policy during the run; the dashed line is the
# optimum. The run also saved this plot as `curve.png` in its folder.

# %%
import matplotlib.pyplot as plt

curve = result["curve"]
plt.plot(
    [p["steps"] for p in curve], [p["expected_turns"] for p in curve], "o-", label="Q-learning"
)
plt.axhline(result["optimum"], color="black", linestyle="--", label="optimum")
plt.xlabel("steps")
plt.ylabel("exact expected turns")
plt.legend()
plt.savefig(OUT / "q_learning_curve.png")
print(f"saved {OUT / 'q_learning_curve.png'}")

# %% [markdown]
# ## 6. Deep RL on the same game: the main job
#
# The toolkit's main job (`python train/ppo.py --config ...`: MaskablePPO on the structured
# policy, whose per-slot features say what a card does to the rack) trains solitaire as well:
# `num_players: 1` with `reward: turns` (-1 per turn, `gamma: 1.0`) is the very objective `solve`
# minimizes. `configs/solitaire_k4.yaml` is its config for racks of 4; here it runs on this
# notebook's size (shorter in quick mode), and its bot file is graded as exactly as the table
# above. Step 2 of the course runs it on full-size solitaire (`configs/solitaire.yaml`).

# %%
import yaml

import agents
from racko_eval.course_files import load_yaml
from train.sb3 import run as ppo

REPO = Path(racko_env.__file__).resolve().parent.parent
config = load_yaml((REPO / "configs" / "solitaire_k4.yaml").read_text())
config["rules"].update(rack_size=K, deck_size=N)
config.update(total_steps=262144, progress_bar=False)
if QUICK:
    config.update(total_steps=1024, n_envs=16)
    config["ppo"].update(n_steps=32, batch_size=256, n_epochs=1)
    config["pretrain"].update(decisions=2000, epochs=1, critic_steps=512, critic_epochs=1)
config["eval"].update(every_steps=config["total_steps"], rounds=200)
config["final_eval"].update(rounds=200)
OUT.mkdir(parents=True, exist_ok=True)
(OUT / "main_job.yaml").write_text(yaml.safe_dump(config))
run = OUT / "main_job"
ppo.main(["--config", str(OUT / "main_job.yaml"), "--out", str(run), "--no-progress"])
bot = agents.load(str(run / "bot.onnx"), num_players=1, rack_size=K, deck_size=N)
turns = evaluate(bot, K, N, turn_limit=400)
print(
    f"main job's bot: {turns:.4f} expected turns, optimum {solution.expected_turns:.4f}: "
    f"gap {100 * (turns / solution.expected_turns - 1):+.2f}%"
)

# %% [markdown]
# ## Next
#
# - Hand in an agent: `racko new-bot my_agent --solitaire`, save your greedy table as
#   `my_agent/policy.npy` and your values as `my_agent/values.npy`, then
#   `racko grade my_agent:Bot --rubric solitaire`.
# - SARSA and Monte Carlo control: `train/reference/tabular_sarsa.py`, `train/reference/tabular_mc.py`.
# - The course's next steps: the Coursework page *A course in steps*.
