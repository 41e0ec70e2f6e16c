"""The tiny preset at the sizes it had before it was made to show learning (chapter 24): for the tests of the loop's
mechanics (resume, kill, the gate, the time budget, Ray), which need a whole loop but not a network that improves.
The tests of the preset itself run it as it is. The reference players are the four cheapest of the preset's six:
α-β at depth 2 and 4 cost most of the reference and evaluate stages, and no test of the mechanics reads their scores
(an α-β player still goes through the pool and Ray)."""

QUICK = ["selfplay.games=8", "selfplay.simulations=12", "train.steps_per_iteration=20", "train.value_target_mix=0",
         "arena.openings=3", "arena.simulations=12", "arena.reference_openings=2", "arena.every=1",
         "arena.references=random,greedy,mcts,alphabeta1"]


def quick_args() -> list[str]:
    "QUICK as command-line overrides: --set key=value, once each."
    return [word for override in QUICK for word in ("--set", override)]
