"Fast tests of chapter 05's first loop: targets, loss, the fresh network, and determinism (across CPU kinds too)."
import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest
import torch

from santorini_az.encoding import N_ACTIONS, action_from_index, legal_action_indices
from santorini_az.first_loop import (LoopConfig, game_examples, losses, network_evaluator, new_network, record_game,
                                     run_loop, self_play, train, concatenate)
from santorini_az.mcts import SearchConfig, run_search, uniform_evaluator
from santorini_az.game import Placement, initial_state, winner
from santorini_az.network import NetConfig, SantoriniNet
from santorini_az.trainer import policy_loss


def _uniform_policy(state):
    legal = legal_action_indices(state)
    policy = [0.0] * N_ACTIONS
    for a in legal: policy[a] = 1.0 / len(legal)
    return policy


def _hand_built_game():
    "Setup (P1 places twice, P2 twice), then moves until someone wins; always the first legal action."
    state, states = initial_state(), []
    while winner(state) is None:
        states.append(state)
        state = state.apply(action_from_index(state, legal_action_indices(state)[0]))
    return states, winner(state)


def _record(states, won):
    "The game as chapter 5 records it, with a uniform policy over the legal moves and the first legal move played."
    actions = [legal_action_indices(s)[0] for s in states]
    return record_game(states, [_uniform_policy(s) for s in states], actions, [0.0] * len(states), won)


def test_value_targets_follow_the_player_to_move_through_setup():
    states, won = _hand_built_game()
    assert [s.player for s in states[:5]] == [0, 0, 1, 1, 0]  # the setup phase: no strict alternation
    record = _record(states, won)
    assert record.states()[:-1] == states and record.states()[-1].winner() == won  # the moves replay the game
    examples = game_examples(record)
    expected = [1.0 if s.player == won else -1.0 for s in states]
    assert examples.value.tolist() == expected
    assert examples.value[0] == examples.value[1]  # the same player placed both workers
    assert examples.value[2] == examples.value[3] == -examples.value[0]
    # and the last position's player to move is the loser
    assert examples.value[-1] == (1.0 if states[-1].player == won else -1.0)


def test_policy_targets_sum_to_one_over_legal_moves_only():
    torch.manual_seed(0)
    games = self_play(SantoriniNet(NetConfig(8, 1)), LoopConfig(games=2, simulations=6), random.Random(1))
    examples = concatenate([game_examples(g) for g in games])
    np.testing.assert_allclose(examples.policy.sum(1), 1.0, atol=1e-5)
    assert (examples.policy[~examples.legal] == 0).all()
    for game in games:
        assert game.winner in (0, 1)
        assert isinstance(action_from_index(game.start, 0), Placement)
        assert game.states()[-1].winner() == game.winner and game.full_search.all()


def test_loss_matches_the_trainer_and_training_lowers_it():
    torch.manual_seed(0)
    states, won = _hand_built_game()
    examples = game_examples(_record(states, won))
    model = SantoriniNet(NetConfig(8, 1))
    p, v = losses(model, examples)
    logits, values = model(torch.from_numpy(examples.planes))
    torch.testing.assert_close(p, policy_loss(logits, torch.from_numpy(examples.policy), torch.from_numpy(examples.legal)))
    model.eval()
    with torch.no_grad(): before = sum(losses(model, examples)).item()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    train(model, optimizer, examples, 40, len(examples), random.Random(0))
    model.eval()
    with torch.no_grad(): after = sum(losses(model, examples)).item()
    assert after < before - 0.1, (before, after)


def test_the_loop_is_deterministic_for_a_seed():
    config = LoopConfig(channels=4, blocks=1, simulations=4, games=2, iterations=2, train_steps=3, batch_size=8, seed=3)
    a, b = run_loop(config), run_loop(config)
    for name, tensor in a.model.state_dict().items():
        assert torch.equal(tensor, b.model.state_dict()[name]), name
    assert a.losses == b.losses
    c = run_loop(LoopConfig(**{**config.__dict__, "seed": 4}))
    assert any(not torch.equal(t, c.model.state_dict()[n]) for n, t in a.model.state_dict().items())


def test_a_fresh_network_has_uniform_priors_and_computes_in_float64():
    "`new_network`: the policy head at zero (every logit 0, so the first searches are the uniform search), float64."
    torch.manual_seed(0)
    model = new_network(LoopConfig())
    logits, values = network_evaluator(model)([initial_state()] * 2)
    assert set(logits[0]) == {0.0} and len(logits[0]) == N_ACTIONS
    assert all(p.dtype == torch.float64 for p in model.parameters())
    assert run_search(initial_state(), lambda s: (logits[0], 0.0), SearchConfig(simulations=8)).visit_counts() == \
        run_search(initial_state(), uniform_evaluator, SearchConfig(simulations=8)).visit_counts()


_LOOP_NUMBERS = """
import json
from santorini_az.first_loop import LoopConfig, run_loop
r = run_loop(LoopConfig(iterations=2, games=4, simulations=8, train_steps=30))
print(json.dumps({"lengths": [[len(g) for g in it] for it in r.games],
                  "losses": [[round(x, 9) for step in it for x in step] for it in r.losses]}))
"""


@pytest.mark.slow
def test_the_loop_plays_the_same_games_with_avx2_and_with_the_best_kernels():
    "The chapter's numbers on a CPU with AVX2 only (emulated) are those of this CPU's best kernels: float64 at work."
    runs = []
    for env in ({}, {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}):
        done = subprocess.run([sys.executable, "-c", _LOOP_NUMBERS], env={**os.environ, **env}, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout))
    assert runs[0] == runs[1]
