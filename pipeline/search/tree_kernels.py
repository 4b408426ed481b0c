"""The compiled inner loops of search: walking every tree to a leaf, making the new nodes and chance
outcomes the walks reach, giving new nodes their priors and backing values up.

They work on the flat arrays of a `Forest` for many trees in one call, so Python pays per batch, not
per node. Arithmetic is in a fixed order (float64; the priors' softmax float32, the network's precision,
shared with the reference search through `masked_softmax`) so results match the simple reference search.

Several walkers may share a tree (`search.parallel_leaves`): each edge a walker takes gets a virtual
loss at once (a visit, and the worst value, -1, for the mover), so the next walker of the same tree
is steered elsewhere; backup then takes the loss back and keeps the visit (AlphaGo's virtual loss).
"""

from __future__ import annotations

import math

import numpy as np

from pipeline.plumbing.kernel_cache import kernel

UNEXPANDED, EXPANDED, TERMINAL, CHANCE = 0, 1, 2, 3
MISSING, NEEDS_OUTCOME = -1, -2  # leaf_nodes codes: create the child / draw a chance outcome first
FINISHED, RESUMED = -1, -2  # walk_pending codes: the walk ended at a finished game / walks on from its leaf
SKIP = -2  # a root action that sits a simulation out (its tree's budget is spent)


@kernel
def _choose(node, priors, visits, value_sums, moves, move_count, player, c_puct, c_uct, ucb1, fpu_reduction):
    # Only legal moves are read, from the node's list of them in move order (`expand_nodes`): an illegal
    # move's visits and value sums stay 0, so the sums are the same (in the same order), and a node's rows
    # are long (Kingdomino: 329 moves, a handful legal).
    total, parent_q, visited_prior = 0, 0.0, 0.0
    best, best_prior = -1, -np.inf
    for k in range(move_count):
        a = moves[node, k]
        n = visits[node, a]
        total += n
        parent_q += value_sums[node, a, player]
        if n > 0:
            visited_prior += np.float64(priors[a])
        elif priors[a] > best_prior:
            best, best_prior = a, priors[a]
    if ucb1 and best >= 0:
        return best
    parent_q = parent_q / total if total > 0 else 0.0
    if fpu_reduction > 0:  # Lc0's first-play urgency: the more prior mass is explored, the less a new child is worth
        parent_q -= fpu_reduction * math.sqrt(visited_prior)
    root_total = math.sqrt(max(total, 1))
    log_total = math.log(total) if total > 0 else 0.0
    best, best_score = -1, -np.inf
    for k in range(move_count):
        a = moves[node, k]
        n = visits[node, a]
        if ucb1:
            score = value_sums[node, a, player] / n + c_uct * math.sqrt(log_total / n)
        else:
            q = value_sums[node, a, player] / n if n > 0 else parent_q
            score = q + c_puct * np.float64(priors[a]) * root_total / (1 + n)
        if score > best_score:
            best, best_score = a, score
    return best


@kernel
def _softmax_row(logits, legal, out):
    """The softmax of `logits` over the moves `legal` marks, 0 elsewhere, into `out`: float32, the sum in
    move order (a row is long, a handful of moves legal, so numpy's masked arrays cost more than this)."""
    top = np.float32(-np.inf)
    for a in range(logits.shape[0]):
        if legal[a] and logits[a] > top:
            top = logits[a]
    total = np.float32(0.0)
    for a in range(logits.shape[0]):
        out[a] = np.exp(logits[a] - top) if legal[a] else np.float32(0.0)
        total += out[a]
    for a in range(logits.shape[0]):
        if legal[a]:
            out[a] /= total


@kernel
def softmax_legal(logits, legal, out):
    """`_softmax_row` of each row of `logits` (float32) and `legal` into `out`."""
    for i in range(logits.shape[0]):
        _softmax_row(logits[i], legal[i], out[i])


@kernel
def expand_nodes(nodes, logits, values, legal, priors, status, players, raw_values, moves, move_counts):
    """Give each of `nodes` its priors, `_softmax_row` of its row of `logits` over its legal moves, and the
    list of those moves in order (`moves`, `move_counts`: what selection reads), mark it EXPANDED and keep
    its value `values[i]` (the mover's entry first) in absolute seats in `raw_values`, as `to_absolute`
    turns it (float64); returns whether every value is finite."""
    seats = values.shape[1]
    finite = True
    for i in range(nodes.shape[0]):
        node = nodes[i]
        _softmax_row(logits[i], legal[node], priors[node])
        count = 0
        for a in range(legal.shape[1]):
            if legal[node, a]:
                moves[node, count] = a
                count += 1
        move_counts[node] = count
        status[node] = EXPANDED
        for seat in range(seats):
            value = np.float64(values[i, (seat - players[node]) % seats])
            raw_values[node, seat] = value
            finite = finite and np.isfinite(value)
    return finite


@kernel
def clear_nodes(start, end, moves, move_counts, status, visits, value_sums):
    """Empty nodes `start`..`end` - 1 for a new tree: the visits and value sums of the moves each expanded
    one lists (the only edges a walk takes, so the only entries ever written: a tenth of Kingdomino's
    rows) and its status. A node left unexpanded had no edge written: its stale list is not read."""
    for node in range(start, end):
        if status[node] == EXPANDED:
            for k in range(move_counts[node]):
                a = moves[node, k]
                visits[node, a] = 0
                value_sums[node, a, :] = 0.0
        status[node] = UNEXPANDED


@kernel
def select_leaves(
    starts, active, forced_root, root_priors, visits, value_sums, priors, children, moves, move_counts, players,
    status, c_puct,
    c_uct, ucb1, fpu_reduction, virtual_loss, path_nodes, path_actions, path_lengths, leaf_parents, leaf_actions,
    leaf_nodes,
):  # fmt: skip
    """Descend each active tree from `starts[g]`, appending to its path, until the chosen edge has
    no child (leaf_nodes = MISSING: create it from leaf_parents / leaf_actions), leads to a chance
    node (NEEDS_OUTCOME: an outcome is drawn, then the walk resumes there) or to a leaf or terminal node.

    At the root (an empty path) tree g takes `forced_root[g]` when it is >= 0 (a root driver such as
    Gumbel's sequential halving decides there), else chooses by PUCT / UCB1 like every other node.
    With `virtual_loss`, rows are walkers in order and each one's new edges take a virtual loss before
    the next row walks."""
    for g in range(starts.shape[0]):
        if not active[g]:
            continue
        node = starts[g]
        depth = path_lengths[g]
        while True:
            if depth == 0 and forced_root[g] >= 0:
                action = forced_root[g]
            else:
                prior_row = root_priors[g] if depth == 0 else priors[node]
                action = _choose(
                    node, prior_row, visits, value_sums, moves, move_counts[node], players[node], c_puct, c_uct, ucb1,
                    fpu_reduction,
                )  # fmt: skip
            path_nodes[g, depth] = node
            path_actions[g, depth] = action
            depth += 1
            child = children[node, action]
            leaf_parents[g], leaf_actions[g] = node, action
            if child < 0:
                leaf_nodes[g] = MISSING
                break
            if status[child] == CHANCE:
                leaf_nodes[g] = NEEDS_OUTCOME
                break
            if status[child] != EXPANDED:
                leaf_nodes[g] = child
                break
            node = child
        if virtual_loss:
            for d in range(path_lengths[g], depth):
                edge_node, edge_action = path_nodes[g, d], path_actions[g, d]
                visits[edge_node, edge_action] += 1
                value_sums[edge_node, edge_action, players[edge_node]] -= 1.0
        path_lengths[g] = depth


@kernel
def backup(path_nodes, path_actions, path_lengths, values, visits, value_sums, players, virtual_loss):
    """Add each walk's leaf value vector (absolute seats) to every edge on its path; with
    `virtual_loss`, the walk already counted its visits and its loss is taken back first."""
    seats = values.shape[1]
    for g in range(path_lengths.shape[0]):
        for d in range(path_lengths[g]):
            node, action = path_nodes[g, d], path_actions[g, d]
            if virtual_loss:
                value_sums[node, action, players[node]] += 1.0
            else:
                visits[node, action] += 1
            for p in range(seats):
                value_sums[node, action, p] += values[g, p]


@kernel
def _allocate(slot, capacity, used):
    """The slot's next node (`Forest._allocate`, compiled)."""
    node = slot * capacity + used[slot]
    used[slot] += 1
    return node


@kernel
def reach_leaves(
    active, walk_slots, leaf_parents, leaf_actions, leaf_nodes, chance_moves, capacity, used, children, new_nodes,
    new_parents, new_actions, waiting,
):  # fmt: skip
    """For a game with compiled rules (`pipeline/games/compiled.py`): give every active walk that
    `select_leaves` stopped at a missing child that child's node, allocated in walk order as the plain
    search does, and list the new nodes with their parent and action for the game's `step`. An edge an
    earlier walker of the tree created in this step is followed, not created again; a walk whose move has
    a random result (`chance_moves[g]`, or a chance node met) is listed in `waiting` for its outcome
    (`take_outcomes`). Writes each walk's leaf to `leaf_nodes`; returns how many nodes are new and how many
    walks wait."""
    count, waits = 0, 0
    for g in range(active.shape[0]):
        if not active[g]:
            continue
        if leaf_nodes[g] == NEEDS_OUTCOME or (leaf_nodes[g] == MISSING and chance_moves[g]):
            leaf_nodes[g] = NEEDS_OUTCOME
            waiting[waits] = g
            waits += 1
            continue
        if leaf_nodes[g] != MISSING:
            continue
        parent, action = leaf_parents[g], leaf_actions[g]
        leaf = children[parent, action]
        if leaf < 0:
            leaf = children[parent, action] = _allocate(walk_slots[g], capacity, used)
            new_nodes[count], new_parents[count], new_actions[count] = leaf, parent, action
            count += 1
        leaf_nodes[g] = leaf
    return count, waits


@kernel
def take_outcomes(
    waiting, waits, walk_slots, leaf_parents, leaf_actions, draws, capacity, used, children, status,
    outcome_counts, outcome_nodes, outcome_visits, outcome_keys, fixed, leaf_nodes, new_nodes, new_parents,
    new_actions, new_keys, created,
):  # fmt: skip
    """Each waiting walk's chance outcome, `draws[i]` the key drawn for walk `waiting[i]`, as the plain
    search's `Forest.outcome` takes it: the chance node is made where the edge has none, the outcome's child
    found by its key among those kept and counted as visited once more. A new key beyond the node's room
    replaces the least visited outcome (the first of them in the order they came), or with `fixed` outcomes
    is not kept: the walk goes on from that outcome. Each new outcome's node is listed after the `created`
    new nodes, its key in `new_keys`, for the game's `outcome`; returns how many are new."""
    room = outcome_nodes.shape[1]
    drawn = 0
    for i in range(waits):
        g = waiting[i]
        parent, action, slot = leaf_parents[g], leaf_actions[g], walk_slots[g]
        chance = children[parent, action]
        if chance < 0:
            chance = _allocate(slot, capacity, used)
            children[chance, :] = -1
            status[chance] = CHANCE
            outcome_counts[chance] = 0
            children[parent, action] = chance
        kept, entry = outcome_counts[chance], -1
        for j in range(kept):
            if (outcome_keys[chance, j] == draws[i]).all():
                entry = j
                break
        if entry < 0 and kept >= room:
            least = 0
            for j in range(1, kept):
                if outcome_visits[chance, j] < outcome_visits[chance, least]:
                    least = j
            if fixed:
                entry = least
            else:
                kept -= 1
                for j in range(least, kept):
                    outcome_nodes[chance, j] = outcome_nodes[chance, j + 1]
                    outcome_visits[chance, j] = outcome_visits[chance, j + 1]
                    outcome_keys[chance, j] = outcome_keys[chance, j + 1]
        if entry < 0:
            entry, node = kept, _allocate(slot, capacity, used)
            outcome_nodes[chance, entry], outcome_visits[chance, entry] = node, 0
            outcome_keys[chance, entry] = draws[i]
            outcome_counts[chance] = kept + 1
            new_nodes[created + drawn], new_parents[created + drawn] = node, parent
            new_actions[created + drawn] = action
            new_keys[drawn] = draws[i]
            drawn += 1
        outcome_visits[chance, entry] += 1
        leaf_nodes[g] = outcome_nodes[chance, entry]
    return drawn


@kernel
def settle_leaves(
    new_nodes, movers, count, status, players, legal, children, active, leaf_nodes, pending, judged, walk_pending,
    new_ends,
):  # fmt: skip
    """After the game's `step`, `mover` and `legal` of the new nodes (and Python's chance outcomes): clear
    each new node's children and mark it finished or waiting for the evaluator, and list every active
    walk's leaf to judge once in `pending` after its first `judged` entries (walks of one tree may stop at
    the same new leaf), in the order the plain search judges them. `walk_pending[g]` is walk g's entry
    there, FINISHED for a finished game (the new ones listed in `new_ends`, for Python to value), RESUMED
    for a chance outcome searched before, which the walk goes on from.

    Returns the leaves to judge in all, the new finished games, and a node with no legal move though its
    game goes on (-1 where none: the game's fault)."""
    ended = 0
    for i in range(count):
        node = new_nodes[i]
        children[node, :] = MISSING  # a new node's children are cleared here (`Forest._allocate`)
        if movers[i] < 0:
            status[node] = TERMINAL
            new_ends[ended] = node
            ended += 1
            continue
        status[node] = UNEXPANDED
        players[node] = movers[i]
        if not legal[node].any():
            return judged, ended, node
    for g in range(active.shape[0]):
        if not active[g]:
            continue
        leaf = leaf_nodes[g]
        if status[leaf] == TERMINAL:
            walk_pending[g] = FINISHED
            continue
        if status[leaf] == EXPANDED:
            walk_pending[g] = RESUMED
            continue
        k = 0
        while k < judged and pending[k] != leaf:
            k += 1
        if k == judged:
            pending[judged] = leaf
            judged += 1
        walk_pending[g] = k
    return judged, ended, -1


@kernel
def start_walks(rows, roots, forced_root, walkers, remaining, starts, active, path_lengths):
    """A step's walks: each row from its tree's root with an empty path, active unless its tree sits the
    step out (`forced_root` SKIP) or it is a walker past the `remaining` simulations."""
    for g in range(rows.shape[0]):
        starts[g] = roots[rows[g]]
        active[g] = forced_root[g] != SKIP and g % walkers < remaining
        path_lengths[g] = 0


@kernel
def walk_on(active, walk_pending, leaf_nodes, terminal_values, values, starts):
    """After `settle_leaves` (and Python's values of the new finished games): a walk that ended at a finished
    game takes its value and stops, one at a chance outcome searched before goes on from it, one waiting for
    the evaluator stops; returns whether any walk goes on."""
    going = False
    for g in range(active.shape[0]):
        if not active[g]:
            continue
        if walk_pending[g] == FINISHED:
            values[g] = terminal_values[leaf_nodes[g]]
        if walk_pending[g] == RESUMED:
            starts[g] = leaf_nodes[g]
            going = True
        else:
            active[g] = False
    return going
