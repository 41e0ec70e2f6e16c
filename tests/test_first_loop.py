"Fast tests of chapter 05's first loop: targets, loss, and determinism."
import random

import numpy as np
import torch

from santorini_az.encoding import N_ACTIONS, action_from_index, legal_action_indices
from santorini_az.first_loop import (GameRecord, LoopConfig, game_examples, losses, run_loop, self_play, train,
                                     concatenate)
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


def test_value_targets_follow_the_player_to_move_through_setup():
    states, won = _hand_built_game()
    assert [s.player for s in states[:5]] == [0, 0, 1, 1, 0]  # the setup phase: no strict alternation
    examples = game_examples(GameRecord(states, [_uniform_policy(s) for s in states], won))
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
        assert isinstance(action_from_index(game.states[0], 0), Placement)


def test_loss_matches_the_trainer_and_training_lowers_it():
    torch.manual_seed(0)
    states, won = _hand_built_game()
    examples = game_examples(GameRecord(states, [_uniform_policy(s) for s in states], won))
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
