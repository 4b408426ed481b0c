"""Kingdomino: the domino table, scoring, placement legality, the draft's turn order, chance draws,
whole games for every player count, the network view, symmetries, notation and player-greedy."""

import random

import numpy as np
import pytest

from alphazero_games.kingdomino.rules import DOMINO_CROWNS, DOMINO_TERRAINS, TERRAINS, KingdominoGame
from pipeline.games import IllegalMove, make_game
from pipeline.games.values import SCHEMES, terminal_value
from pipeline.search.tree_kernels import CHANCE

GAME = KingdominoGame(4)


def kingdom(game, picture):
    """A kingdom from a picture in `render`'s letters: `W1` a wheat square with a crown, `.` empty,
    `##` the castle, which lands on the grid's middle wherever it is in the picture."""
    rows = [line.split() for line in picture.strip().splitlines()]
    castle_row = next(i for i, row in enumerate(rows) if "##" in row)
    top, left = game.size - 1 - castle_row, game.size - 1 - rows[castle_row].index("##")
    terrain, crowns = np.zeros((game.grid, game.grid), int), np.zeros((game.grid, game.grid), int)
    for i, row in enumerate(rows):
        for j, square in enumerate(row):
            if square not in (".", "##"):
                terrain[top + i, left + j] = TERRAINS.index(square[0]) + 1
                crowns[top + i, left + j] = int(square[1:] or 0)
    return game.kingdom_from_grid(terrain, crowns)


def placing(game, kingdoms, number):
    """Seat 0 to place domino `number` in the last round."""
    kingdoms = tuple(kingdoms) + (kingdom(game, "##"),) * (game.num_players - len(kingdoms))
    return game.initial_state()._replace(
        kingdoms=kingdoms, row=(number,), order=(0,), next_row=(), next_owners=(), deck=(), placing=True
    )


def legal_moves(game, state):
    return {game.format_move(a) for a in game.legal_actions(state)}


def test_the_domino_table_matches_the_published_totals():
    squares = [int((DOMINO_TERRAINS[1:] == code).sum()) for code in range(1, 7)]
    crowns = [int(DOMINO_CROWNS[1:][DOMINO_TERRAINS[1:] == code].sum()) for code in range(1, 7)]
    assert squares == [26, 22, 18, 14, 10, 6]  # wheat, forest, lake, grassland, swamp, mine: 96 squares
    assert crowns == [5, 6, 6, 6, 6, 10] and DOMINO_CROWNS.sum() == 39
    assert DOMINO_CROWNS[48].tolist() == [0, 3] and TERRAINS[DOMINO_TERRAINS[48, 1] - 1] == "M"
    assert DOMINO_CROWNS[1:13].sum() == 0 and all(DOMINO_TERRAINS[n, 0] == DOMINO_TERRAINS[n, 1] for n in range(1, 13))


def test_properties_score_squares_times_crowns_and_the_castle_nothing():
    picture = """
        W1 W  F  F  L
        W  G2 F1 F  L1
        S  G  ## M2 M
        S  G1 .  .  L
        .  .  .  .  L2
    """
    # wheat 3x1, forest 4x1, lakes 2x1 and 2x2, grassland 3x3, swamp 2x0, mine 2x2: 26; the castle touches
    # grassland, forest and mine but joins none of them
    assert GAME.points(kingdom(GAME, picture)) == 26
    bonuses = KingdominoGame(4, middle=1, harmony=1)
    assert bonuses.points(kingdom(bonuses, picture)) == 26 + 10  # centred, not complete
    complete = picture.replace(".", "S")
    assert bonuses.points(kingdom(bonuses, complete)) == GAME.points(kingdom(GAME, complete)) + 15
    off_centre = "\n".join(["## " + "W " * 4] + ["W " * 5] * 4)
    assert bonuses.points(kingdom(bonuses, off_centre)) == 5  # complete, castle in a corner, no crowns


def test_ties_go_to_the_largest_property_then_the_most_crowns():
    pictures = [
        "W1 W ##",  # 2 points, largest 2, 1 crown
        "F2 ##\n. L\n. L",  # 2 points, largest 2, 2 crowns
        "W1 W ##\n. . G G G",  # 2 points, largest 3
        "L1 L ##",  # same as the first: shared
    ]
    state = GAME.initial_state()._replace(kingdoms=tuple(kingdom(GAME, p) for p in pictures), done=True)
    assert GAME.margins(state).tolist() == [2, 2, 2, 2]
    assert GAME.scores(state).tolist() == pytest.approx([-2 / 3, 1 / 3, 1, -2 / 3])
    for scheme in SCHEMES:
        assert np.argmax(terminal_value(GAME, state, scheme)) == 2


def test_a_placement_touches_the_castle_or_its_own_terrain():
    empty = placing(GAME, [], 1)  # W/W
    assert len(GAME.legal_actions(empty)) == 24  # 12 spots touching the castle, two ways round
    assert {"d5l", "c5r", "e4u", "e6d"} <= legal_moves(GAME, empty)
    assert not {"b5r", "e5r", "c4u"} & legal_moves(GAME, empty)
    wheat = kingdom(GAME, "W W ##")  # wheat on c5 and d5
    assert "b5l" in legal_moves(GAME, placing(GAME, [wheat], 13))  # W/F: the wheat half touches wheat
    assert "a5r" in legal_moves(GAME, placing(GAME, [wheat], 24))  # F1/W: the second half touches wheat
    assert not {"b5l", "c4u", "a5r"} & legal_moves(GAME, placing(GAME, [wheat], 17))  # F/L: nothing matches


def test_a_kingdom_stays_within_five_by_five_and_squares_never_overlap():
    wheat = kingdom(GAME, "W W ##")
    assert {"b5u", "c4u", "d4l"} <= legal_moves(GAME, placing(GAME, [wheat], 1))
    assert "d5u" not in legal_moves(GAME, placing(GAME, [wheat], 1))  # d5 is taken
    wide = kingdom(GAME, "W W ## F F")  # columns c to g already
    moves = legal_moves(GAME, placing(GAME, [wide], 1))
    assert "c4u" in moves and not {"b5u", "b5l", "a5r", "b4d"} & moves  # column b would make it 6 wide
    with pytest.raises(IllegalMove, match="b5u is not legal"):
        GAME.step(placing(GAME, [wide], 1), GAME.parse_move(placing(GAME, [wheat], 1), "b5u"))


def test_discarding_is_the_only_move_when_nothing_fits():
    holes = kingdom(GAME, "W W W W W\nW . W W W\nW W ## W W\nW W W . W\nW W W W W")
    stuck = placing(GAME, [holes], 1)
    assert GAME.legal_actions(stuck) == [GAME.discard]
    after, key = GAME.step(stuck, GAME.discard)
    assert after.kingdoms[0] == holes and key is None and GAME.is_terminal(after)
    with pytest.raises(IllegalMove, match="discard is not legal"):
        GAME.parse_move(placing(GAME, [], 1), "discard")


def test_the_king_on_the_lowest_domino_acts_first():
    state = GAME.initial_state(np.random.default_rng(0))
    assert len(state.next_row) == 4 and len(state.deck) == 44 and list(state.next_row) == sorted(state.next_row)
    for seat, move in enumerate(["p4", "p3", "p2", "p1"]):  # the first round picks in seat order
        assert GAME.to_play(state) == seat and not state.placing
        state, _ = GAME.step(state, GAME.parse_move(state, move), np.random.default_rng(seat))
    assert state.order == (3, 2, 1, 0) and GAME.to_play(state) == 3 and state.placing
    state, _ = GAME.step(state, GAME.legal_actions(state)[0])
    assert GAME.to_play(state) == 3 and not state.placing  # the same king now picks
    state, _ = GAME.step(state, GAME.legal_actions(state)[0])
    assert GAME.to_play(state) == 2 and state.placing


def test_two_players_have_two_kings_each_and_three_players_rows_of_three():
    duel = KingdominoGame(2)
    state = duel.initial_state(np.random.default_rng(1))
    assert len(state.deck) + len(state.next_row) == 24 and state.order == (0, 1, 0, 1)
    for seat, move in zip([0, 1, 0, 1], ["p2", "p1", "p4", "p3"]):
        assert duel.to_play(state) == seat
        state, _ = duel.step(state, duel.parse_move(state, move), np.random.default_rng(2))
    assert state.order == (1, 0, 1, 0)
    three = KingdominoGame(3)
    state = three.initial_state(np.random.default_rng(1))
    assert len(state.deck) + len(state.next_row) == 36 and len(state.next_row) == 3
    assert three.num_actions == three.first_pick + 3
    state = GAME.initial_state(np.random.default_rng(1))
    assert len(state.deck) + len(state.next_row) == 48


@pytest.mark.parametrize(
    ("players", "size", "rounds", "each"),
    [(4, 5, 12, 12), (3, 5, 12, 12), (2, 5, 6, 12), (2, 7, 12, 24)],
    ids=["4p", "3p", "2p", "duel7"],
)
def test_whole_games_end_after_the_last_placement(players, size, rounds, each):
    """Every seat places (or discards) `each` dominoes over `rounds` rows, one drawn per round after the first."""
    game = KingdominoGame(players, size)
    rng, choices = np.random.default_rng(players), random.Random(size)
    state, draws, placed = game.initial_state(rng), 0, [0] * players
    while not game.is_terminal(state):
        mover, was_placing, was_last_pick = game.to_play(state), state.placing, state.king + 1 == len(state.order)
        state, key = game.step(state, choices.choice(game.legal_actions(state)), rng)
        placed[mover] += was_placing
        if key is None:
            assert was_placing or not was_last_pick or not state.next_row
        else:
            assert not was_placing and was_last_pick and key == state.next_row == tuple(sorted(key))
            draws += 1
    assert draws + 1 == rounds and placed == [each] * players
    assert was_placing and game.legal_actions(state) == [] and state.ply == 2 * game.deck_size
    with pytest.raises(IllegalMove, match="over"):
        game.step(state, game.discard)


def test_the_same_seed_plays_the_same_game():
    def play(seed):
        rng, choices = np.random.default_rng(seed), random.Random(seed)
        state, keys = GAME.initial_state(rng), []
        while not GAME.is_terminal(state):
            state, key = GAME.step(state, choices.choice(GAME.legal_actions(state)), rng)
            keys.append(key)
        return state, keys

    assert play(5) == play(5) and play(5)[1] != play(6)[1]
    assert GAME.initial_state() == GAME.initial_state()  # no generator: the fixed default order


@pytest.mark.parametrize(
    "spec",
    [
        "kingdomino(players=2)",
        "kingdomino(players=3)",
        "kingdomino",
        "kingdomino(players=2,size=7)",
        "kingdomino(fit=1)",
    ],
)
def test_random_playouts_score_in_range_and_encode_the_declared_shape(spec):
    game = make_game(spec)
    state = game.initial_state(np.random.default_rng(0))
    for seed in range(3):
        scores = game.random_playout(state, random.Random(seed))
        assert (
            scores.shape == (game.num_players,)
            and np.all(np.abs(scores) <= 1)
            and scores.sum() == pytest.approx(0, abs=1e-6)
        )
    assert game.encode(state).shape == game.observation_shape
    assert game.encode_batch([state, state]).shape == (2, *game.observation_shape)


def test_the_network_sees_the_mover_first():
    state = placing(GAME, [kingdom(GAME, "W1 W ##"), kingdom(GAME, "## F F")], 48)._replace(order=(1,))
    planes = GAME.encode(state)
    wheat, forest = TERRAINS.index("W"), TERRAINS.index("F")
    assert planes[forest].sum() == 2 and planes[wheat].sum() == 0  # seat 1 moves: its forest comes first
    assert planes[3 * 9 + wheat].sum() == 2 and planes[3 * 9 + 6].max() == 1  # seat 0 last, its one crown
    assert planes[3 * 9 + 7].tolist() == planes[3 * 9 + wheat].tolist()  # its wheat property holds one crown
    assert planes[8].sum() == 9 * 7 - 3  # open to seat 1: rows 1-9, columns c-i, less the castle and forest
    assert np.all(planes[4 * 9 :, 0, 0] == planes[4 * 9 :, 8, 8])  # the draft's planes are constant


def test_the_network_reads_each_seats_points_off_its_property_crowns():
    """Plane 7 of a seat holds each square's property's crowns, so it sums to the seat's points."""
    lakes = kingdom(GAME, "L1 L L2 ##\nW . G1 G")  # a lake property of 3 crowns, 3 squares; grass 1 x 2
    planes = GAME.encode(placing(GAME, [lakes], 48))
    assert planes[7].sum() == GAME.points(lakes) == 3 * 3 + 1 * 2 and planes[7].max() == 3
    rng, choices = np.random.default_rng(5), random.Random(5)
    state = GAME.initial_state(rng)
    while not GAME.is_terminal(state):
        state, _ = GAME.step(state, choices.choice(GAME.legal_actions(state)), rng)
        planes, mover = GAME.encode(state), GAME.to_play(state)
        points = [GAME.points(state.kingdoms[(mover + k) % 4]) for k in range(4)]
        assert [planes[9 * k + 7].sum() for k in range(4)] == points


def test_fit_planes_hold_each_free_dominos_gain_per_seat_and_each_seats_pending_gain():
    """With fit=1 each free domino of the next row also holds its best placement's gain for each seat
    from the mover (greedy's own reckoning), and each seat the summed gain of the dominoes it holds and
    has still to place: constant over the board, so the network reads them as a vector."""
    game, plain = make_game("kingdomino(players=2,fit=1)"), make_game("kingdomino(players=2)")
    slot, seats = 14 + 2 * game.num_players, game.num_players
    first = seats * 9 + game.row_length * slot  # the next row's first slot
    pending = game.observation_shape[0] - seats  # the last planes: each seat's pending gain

    def free_gains(planes):
        return [[planes[first + s * slot + 16 + k, 0, 0] for k in range(seats)] for s in range(game.row_length)]

    wheat, forest = kingdom(game, "W W1 ##"), kingdom(game, "## F")  # 2 points, and 0
    picking = placing(game, [wheat, forest], 19)._replace(  # 19 is W1/F, placed already
        order=(1,), next_row=(1, 13, 48), next_owners=(0, -1, -1), placing=False
    )
    planes = game.encode(picking)
    # seat 1 moves, so its gains come first: W/F joins nothing that scores for it, 1 wheat more for
    # seat 0 (3 - 2); W/M3 the lone mine 3, and 3 wheat + the mine 6 - 2; W/W is seat 0's: no gains
    assert free_gains(planes) == [[0, 0], [0, 1], [3, 4], [0, 0]]
    assert planes[pending:, 0, 0].tolist() == [0, 4 - 2]  # seat 0 holds W/W: 4 wheat x 1 crown - 2
    to_place = picking._replace(order=(0,), placing=True)  # seat 0 has W1/F still to place
    assert game.encode(to_place)[pending:, 0, 0].tolist() == [(3 * 2 - 2) + (4 - 2), 0]
    rng = np.random.default_rng(2)
    state = game.initial_state(rng)
    while not game.is_terminal(state):
        with_fit, without, mover = game.encode(state), plain.encode(state), game.to_play(state)
        assert np.array_equal(with_fit[: seats * 9], without[: seats * 9])  # the kingdoms' planes are unchanged
        held = [0] * seats
        for i, (number, owner) in enumerate(zip(state.row, state.order)):
            if i > state.king or (i == state.king and state.placing):
                held[(owner - mover) % seats] += greedy_gain(game, state.kingdoms[owner], number)
        for s, (number, owner) in enumerate(zip(state.next_row, state.next_owners)):
            gains = [greedy_gain(game, state.kingdoms[(mover + k) % seats], number) for k in range(seats)]
            assert free_gains(with_fit)[s] == (gains if owner == -1 else [0] * seats)
            if owner != -1:
                held[(owner - mover) % seats] += gains[(owner - mover) % seats]
        assert with_fit[pending:, 0, 0].tolist() == held
        state, _ = game.step(state, game.greedy_action(state), rng)


def greedy_gain(game, seat, number):
    """The points the greedy player's placement of `number` adds to the kingdom `seat`."""
    alone = placing(game, [seat], number)
    return game.points(game.step(alone, game.greedy_action(alone))[0].kingdoms[0]) - game.points(seat)


def test_symmetries_keep_legality_and_scores():
    rng, choices = np.random.default_rng(3), random.Random(3)
    state = GAME.initial_state(rng)
    while state.ply < 40 or not state.placing:
        state, _ = GAME.step(state, choices.choice(GAME.legal_actions(state)), rng)
    symmetries = GAME.symmetries()
    assert len(symmetries) == 8
    for symmetry in symmetries:
        assert sorted(symmetry.action_perm.tolist()) == list(range(GAME.num_actions))
        turned = []
        for k in state.kingdoms:
            terrain, crowns = GAME.kingdom_grid(k)
            turned.append(GAME.kingdom_from_grid(symmetry.board(terrain), symmetry.board(crowns)))
        image = state._replace(kingdoms=tuple(turned))
        assert np.array_equal(GAME.legal_mask(image), GAME.legal_mask(state)[symmetry.action_perm])
        assert np.array_equal(GAME.encode(image), symmetry.board(GAME.encode(state)))
        assert GAME.margins(image).tolist() == GAME.margins(state).tolist()


def test_moves_are_typed_as_rendered():
    state = GAME.initial_state(np.random.default_rng(4))
    assert GAME.parse_move(state, "pick 2") == GAME.parse_move(state, "P2") == GAME.first_pick + 1
    for _ in range(4):
        state, _ = GAME.step(state, GAME.legal_actions(state)[-1], np.random.default_rng(0))
    for action in GAME.legal_actions(state):
        assert GAME.parse_move(state, GAME.format_move(action)) == action
    text = GAME.render(state)
    assert "##" in text and "seat 0: 0 points" in text and f"seat {GAME.to_play(state)} to place" in text
    for bad in ["z99q", "p9", "e4x", "hold"]:
        with pytest.raises(IllegalMove, match="expected a placement") as error:
            GAME.parse_move(state, bad)
        assert "\n" not in str(error.value)


def test_player_greedy_places_for_the_most_points_and_picks_the_best_domino():
    wheat = kingdom(GAME, "W W1 ##")
    state = placing(GAME, [wheat], 19)  # W1/F: joining the wheat makes 3 squares x 2 crowns
    after = [GAME.points(GAME.step(state, a)[0].kingdoms[0]) for a in GAME.legal_actions(state)]
    assert GAME.greedy_action(state) == GAME.legal_actions(state)[int(np.argmax(after))] and max(after) == 6
    picking = state._replace(next_row=(1, 13, 48), next_owners=(-1, -1, -1), placing=False)
    assert GAME.format_move(GAME.greedy_action(picking)) == "p3"  # 48 W/M3 makes 6, 1 W/W 4, 13 W/F 3
    tied = picking._replace(next_row=(19, 48, 13), next_owners=(-1, -1, -1))
    assert GAME.format_move(GAME.greedy_action(tied)) == "p1"  # 19 and 48 both make 6: the lower slot
    taken = tied._replace(next_owners=(1, -1, -1))
    assert GAME.format_move(GAME.greedy_action(taken)) == "p2"


BONUS_SPECS = [  # plain, both bonuses, the 7 x 7 Mighty Duel with Middle Kingdom
    "kingdomino(players=2)",
    "kingdomino(players=3,middle=1,harmony=1)",
    "kingdomino(players=2,size=7,middle=1)",
]


@pytest.mark.parametrize("spec", BONUS_SPECS)
def test_the_best_placement_is_the_best_of_every_placement_stepped(spec):
    """Greedy's placement and `fit`'s gain are scored from the properties a domino touches: they agree
    with playing each legal placement and scoring the kingdom, in games half random, half greedy."""
    game, checked = make_game(spec), 0
    for seed in range(3):
        rng, choices = np.random.default_rng(seed), random.Random(seed)
        state = game.initial_state(rng)
        while not game.is_terminal(state):
            if state.placing:
                seat, actions = state.order[state.king], game.legal_actions(state)
                after = [game.points(game.step(state, action)[0].kingdoms[seat]) for action in actions]
                before = game.points(state.kingdoms[seat])
                assert game.greedy_action(state) == actions[int(np.argmax(after))]
                assert game._fit(state.kingdoms[seat], state.row[state.king]) == max(after) - before
                checked += 1
            greedy = choices.random() < 0.5
            action = game.greedy_action(state) if greedy else choices.choice(game.legal_actions(state))
            state, _ = game.step(state, action, rng)
    assert checked >= 3 * game.deck_size // 2


def test_the_spec_round_trips_and_bad_options_are_one_line():
    game = make_game("kingdomino(players=2)")
    assert game.name == "kingdomino(players=2,size=5,middle=0,harmony=0)" and make_game(game.name).name == game.name
    assert make_game("kingdomino(players=2,size=7,middle=1)").num_actions == 4 * 13 * 13 + 1 + 4
    fit = make_game("kingdomino(players=2,fit=1)")  # fit=0 stays out of the name: older networks' game
    assert fit.name == "kingdomino(players=2,size=5,middle=0,harmony=0,fit=1)" and make_game(fit.name).name == fit.name
    for spec, complaint in [
        ("kingdomino(players=5)", "players must be 2 to 4"),
        ("kingdomino(size=6)", "size must be 5 or 7"),
        ("kingdomino(players=3,size=7)", "for 2 players"),
        ("kingdomino(harmony=2)", "must be 0 or 1"),
        ("kingdomino(fit=2)", "must be 0 or 1"),
        ("kingdomino(seats=2)", "unknown option"),
    ]:
        with pytest.raises(ValueError, match=complaint) as error:
            make_game(spec)
        assert "\n" not in str(error.value)


def test_the_anchors_players_play_kingdomino_through_match(capsys):
    """greedy and mce:N (Gedda et al. 2018) in the player grammar, against random and each other."""
    import json

    from pipeline.commands.match import main

    main(["greedy", "random", "--game", "kingdomino(players=2)", "--games-per-seating", "3", "--json"])
    greedy = json.loads(capsys.readouterr().out)
    assert greedy["games"] == 6 and greedy["score"] > 0.5
    main(["mce:6", "greedy", "--game", "kingdomino(players=3)", "--games-per-seating", "1", "--first-alone", "--json"])
    mce = json.loads(capsys.readouterr().out)
    assert mce["games"] == 3 and mce["wins"] + mce["ties"] + mce["losses"] == 3


def test_play_draws_kingdomino_to_its_end_with_the_anchors_players(capsys):
    from pipeline.commands.play import main

    main(["--game", "kingdomino(players=2)", "--seats", "greedy,mce:2", "--seed", "3"])
    out = capsys.readouterr().out
    assert out.count("seat 0 (greedy) plays ") == 24  # 12 picks and 12 placements (or discards)
    assert "game over" in out and out.splitlines()[-2].startswith("scores: seat 0 (greedy) ")


@pytest.mark.parametrize(
    ("kind", "max_chance_children", "outcomes"),
    [("uct", 8, "evict"), ("uct", 2, "evict"), ("puct", 8, "evict"), ("uct", 3, "fixed"), ("puct", 3, "fixed")],
)
def test_the_batched_engine_matches_the_reference_search_through_the_draws(kind, max_chance_children, outcomes):
    """A tiny Kingdomino: two players, eight dominoes left, the last king of the round to place and
    pick, so its pick draws the next row (70 outcomes) and the game ends two rounds later. The engine
    and the reference draw the same outcomes from the same seed and agree visit for visit."""
    from reference_search import reference_search

    from pipeline.search import BatchedSearch, Forest, RolloutEvaluator, SearchConfig, UniformEvaluator

    game = make_game("kingdomino(players=2)")
    rng = np.random.default_rng(0)
    state = game.initial_state(rng)
    while not (len(state.deck) == 8 and state.king == len(state.order) - 1 and state.placing):
        state, _ = game.step(state, game.greedy_action(state), rng)

    def evaluator_and_config():
        if kind == "uct":
            return RolloutEvaluator(game, seed=1), SearchConfig(selection="ucb1")
        return UniformEvaluator(game), SearchConfig()

    simulations = 300
    evaluator, config = evaluator_and_config()
    reference = reference_search(
        game, evaluator, state, simulations, config, np.random.default_rng(7), max_chance_children, outcomes == "fixed"
    )
    evaluator, config = evaluator_and_config()
    forest = Forest(game, 2 * simulations + 2, max_chance_children=max_chance_children, chance_outcomes=outcomes)
    slot = forest.new_tree(state, np.random.default_rng(7))
    BatchedSearch(game, evaluator, config).run(forest, [slot], simulations)
    assert forest.root_visits(slot).tolist() == reference.tolist()
    chance = [n for n in range(int(forest.used[slot])) if forest.status[n] == CHANCE]
    assert chance and max(len(forest.outcomes[n]) for n in chance) == max_chance_children, "draws were searched"
