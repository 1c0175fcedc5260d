"""Train a Rack-O bot by approximate policy iteration on a learned rack value (``train/value/``).

Each iteration plays games with the current policy (the first with ``expert``), records every
start-of-turn rack with the number of own turns the player then needed to go Rack-O, fits
``RackValueNet`` to those counts, and makes the one-ply policy over the new value the next
iteration's player. Playing one ply greedily over the value of the previous policy is a policy
improvement step, so the bot starts where the expert is and moves past it.

``python train/value_iteration.py --config configs/2p_value.yaml`` writes to the run folder:
``config.yaml``, ``iterations/iter_K.pt`` (the value net after iteration K; ``--resume`` continues
after the newest), ``history.json`` (per iteration: rounds, mean turns, losses, win rates),
``value_net.pt`` and the bot file ``bot.onnx`` + ``bot.json`` (all written atomically, weights as
data-only state dicts), and ``train.log``: the run reports every stage from its first second
(collection, each fitting epoch, evaluation) with done/total, rate and ETA, on the terminal (with a
progress bar) and in the log alike. Every iteration is seeded from ``seed`` and its number, so a
resumed run ends with the same network as an uninterrupted one.
"""

from __future__ import annotations

from train.common import front_door

front_door.thread_defaults()  # before numpy and torch load: they read them once

from train.value.run import VALUE_RUN, train  # noqa: E402

VALUE_ITERATION = front_door.FrontDoor(
    VALUE_RUN, __doc__.split("\n")[0], lambda run: train(run.cfg, run.run_dir, run.args.resume)
)
main = VALUE_ITERATION.main

if __name__ == "__main__":
    raise SystemExit(main())
