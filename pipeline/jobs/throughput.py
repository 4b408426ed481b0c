"""What `python -m pipeline bench` measures (the command: `pipeline/commands/bench.py`): the network
alone, search with the network, self-play, training and the Connect-4 solver, each as figures a second.
The network and self-play run in the runtime `search.runtime: auto` picks and again in torch's; games
with a greedy player are measured again searching with greedy playouts at the leaves; one process's
search again with a network that answers for free (`*_ceiling_*`): what no accelerator can take a
core's search past."""

from __future__ import annotations

import multiprocessing
import os
import queue
import time
from contextlib import contextmanager

import numpy as np
import torch

from pipeline import champions
from pipeline.agents.recipes import selfplay_player
from pipeline.agents.search_agent import PlayConfig, SearchAgent
from pipeline.config import (
    TIMED_SIMULATIONS,
    NetworkParams,
    Params,
    TrainParams,
    parse_params,
)
from pipeline.games import game_names, make_game
from pipeline.games.base import PlaysGreedy, bench_of, offers
from pipeline.jobs.selfplay import run_selfplay
from pipeline.jobs.train import train_network
from pipeline.matches.arena import play_games
from pipeline.matches.workers import Workers, chunk_games, match_workers
from pipeline.nets.checkpoint import checkpoint_game, load_checkpoint
from pipeline.nets.module import alphazero_losses, make_optimizer
from pipeline.nets.network_evaluator import (
    NetworkEvaluator,
    inference_device,
    inference_network,
    inference_runtime,
)
from pipeline.nets.senet import NetworkShape, SENet
from pipeline.plumbing.threads import use_threads
from pipeline.search import CachingEvaluator, SearchConfig, UniformEvaluator
from pipeline.search.playouts import greedy_outcomes


def default_games() -> tuple[str, ...]:
    """The games `bench` measures unless told: each registered game that sizes its bench
    (`games/base.py`'s `SizesItsBench`), as the spec it is measured as, the lightest games first."""
    sized = [bench for name in game_names() if (bench := bench_of(make_game(name))) is not None]
    return tuple(spec for spec, *_ in sorted(sized, key=lambda bench: -bench[3]))


def bench_sizes(game_name: str) -> tuple[int, int, float]:
    """(blocks, channels, share of games) of a game's bench: the game's own (`SizesItsBench`), kept so
    figures compare across sessions; for any other game (a plugin's, another variant) the params'
    default network and the full share."""
    if (bench := bench_of(make_game(game_name))) is not None:
        return bench[1:]
    network = NetworkParams()
    return network.blocks, network.channels, 1.0


PLAYOUT_WEIGHT = 0.5  # games with a greedy player are measured again searching with greedy playouts, as
# examples/kingdomino.yaml self-plays


def bench_network(game_name: str, networks: str = "random") -> tuple:
    """The game and its bench network in eval mode: `random`, GAMES' blocks and channels with random
    weights seeded 0; `champions`, the shipped champion of that game where there is one. Trained
    weights can cost what random ones do not (denormal floats: pipeline/nets/denormals.py)."""
    game = make_game(game_name)
    if networks == "champions" and (champion := shipped_champion(game)) is not None:
        return game, champion.eval()
    blocks, channels, _ = bench_sizes(game_name)
    torch.manual_seed(0)
    return game, SENet(NetworkShape.for_game(game, blocks, channels, 4)).eval()


def shipped_champion(game) -> SENet | None:
    """The shipped champion trained for exactly this game, if any."""
    for name in champions.names():
        if checkpoint_game(champions.checkpoint_path(name)) == game.name:
            return load_checkpoint(champions.checkpoint_path(name), game)
    return None


def _random_positions(game, count: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    states = []
    while len(states) < count:
        state = game.initial_state()
        for _ in range(rng.integers(0, 10)):
            if game.is_terminal(state):
                break
            state, _ = game.step(state, int(rng.choice(game.legal_actions(state))))
        if not game.is_terminal(state):
            states.append(state)
    return states


def network_positions_per_s(
    game,
    model,
    batch: int,
    seconds: float,
    repeats: int = 3,
    precision: str = "float32",
    runtime: str = "auto",
    device: str = "auto",
) -> float:
    """Best of `repeats` timed loops of the network as search runs it (`inference_network`: ONNX
    Runtime or frozen TorchScript, numpy out): the ceiling against which search is compared."""
    network = inference_network(model, game, precision, runtime, device)
    planes = game.encode_batch(_random_positions(game, batch))
    network(planes)  # warm-up
    return _best_rate(network, planes, seconds, repeats)


def _best_rate(network, planes: np.ndarray, seconds: float, repeats: int) -> float:
    """Positions/s of the best of `repeats` loops calling `network` on `planes` for `seconds` in all."""
    best = 0.0
    for _ in range(repeats):
        calls, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds / repeats:
            network(planes)  # numpy out: waits for the call to finish, as search reads the results on the host
            calls += 1
        best = max(best, calls * len(planes) / (time.perf_counter() - started))
    return best


def workers_network_positions_per_s(
    game_name: str, networks: str, batch: int, seconds: float, workers: int, precision: str = "float32"
) -> float:
    """The network as a self-play pool runs it: `workers` processes of one thread each, timed together
    at `batch`, their positions/s summed. A busy core takes from it what it takes from the pool's search,
    whereas one process's network on every core loses more (`plumbing/threads.py`): the denominator a
    ratio under load is read against."""
    context = multiprocessing.get_context("spawn")
    ready, rates = context.Barrier(workers), context.Queue()
    job = (game_name, networks, batch, seconds, precision, ready, rates)
    processes = [context.Process(target=_network_worker, args=job, daemon=True) for _ in range(workers)]
    for process in processes:
        process.start()
    wait = 120 + 4 * seconds
    try:
        answers = [rates.get(timeout=wait) for _ in processes]
    except queue.Empty:
        raise RuntimeError(f"bench: a network worker gave no figure in {wait:.0f} s (killed?)") from None
    finally:
        for process in processes:
            process.kill()
            process.join()
    # the worker that failed first, not the others its broken barrier stopped
    errors = sorted((answer for answer in answers if isinstance(answer, str)), key=lambda e: "BrokenBarrier" in e)
    if errors:
        raise RuntimeError(f"bench: a network worker failed: {errors[0]}")
    return sum(answers)


def _network_worker(game_name, networks, batch, seconds, precision, ready, rates) -> None:
    """One of `workers_network_positions_per_s`' processes: one thread, as a pool's worker runs, on the
    CPU (where a pool's workers run their networks)."""
    try:
        game, model = bench_network(game_name, networks)
        use_threads(1)
        network = inference_network(model, game, precision, "auto", "cpu")
        planes = game.encode_batch(_random_positions(game, batch))
        network(planes)  # warm-up
        ready.wait()
        rates.put(_best_rate(network, planes, seconds, repeats=3))
    except Exception as error:  # the parent raises it: a worker's traceback would go unseen
        ready.abort()
        rates.put(f"{type(error).__name__}: {error}")


def network_flops_per_position(game, model) -> float:
    """Floating-point operations of one position through the network (a multiply-add counts two), as
    torch's flop counter sees the convolutions and matrix products."""
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter, torch.inference_mode():
        model(torch.zeros(1, *game.observation_shape))
    return float(counter.get_total_flops())


def core_peak_gflop_per_s(size: int = 2048, seconds: float = 1.0) -> float:
    """One core's float32 peak, as near as a library reaches it: a large matrix product on one thread."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a, b = torch.randn(size, size), torch.randn(size, size)
        torch.mm(a, b)  # warm-up
        best = 0.0
        for _ in range(3):  # the best of three: a shared machine's speed drifts
            products, started = 0, time.perf_counter()
            while time.perf_counter() - started < seconds / 3:
                torch.mm(a, b)
                products += 1
            best = max(best, 2 * size**3 * products / (time.perf_counter() - started) / 1e9)
        return best
    finally:
        torch.set_num_threads(threads)


def timed_move_simulations(
    game, model, runtime: str, seconds: float = 0.25, positions: int = 6, device: str = "auto"
) -> float:
    """Simulations a timed move searches (`match --move-time`, `play`, the equal-time tests): the mean
    over `positions` early positions, one tree at a time, as a timed player grows its trees."""
    evaluator = CachingEvaluator(NetworkEvaluator(game, model, runtime=runtime, device=device))
    play = PlayConfig(simulations=TIMED_SIMULATIONS, seconds=seconds)
    searched = 0
    for number, state in enumerate(_random_positions(game, positions, seed=1)):
        agent = SearchAgent(game, evaluator, SearchConfig(runtime=runtime, device=device), play, "timed")
        agent.begin(number, state, np.random.default_rng(number))
        agent.act([number])
        searched += agent.simulations
    return searched / positions


def greedy_playouts_per_s(game, seconds: float, batch: int = 64) -> float:
    """Greedy playouts to the end from random early positions, `batch` a call (as search asks for a
    batch of leaves), a second."""
    states = _random_positions(game, batch)
    rngs = [np.random.default_rng(i) for i in range(batch)]
    greedy_outcomes(game, states[:1], rngs[:1])  # warm-up (compiled kernels load)
    played, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        greedy_outcomes(game, states, rngs)
        played += batch
    return played / (time.perf_counter() - started)


def selfplay_params(
    game_name: str,
    games: int,
    batch: int,
    workers: int = 1,
    backend: str = "pool",
    precision: str = "float32",
    device: str = "auto",
    playout_weight: float = 0.0,
    inference_server: str = "auto",
    runtime: str = "auto",
) -> Params:
    """Self-play's params at their defaults but for these."""
    return parse_params(
        {
            "game": game_name,
            "workers": workers,
            "device": device,
            "backend": {"kind": backend, "inference_server": inference_server},
            "search": {"precision": precision, "greedy_playout_weight": playout_weight, "runtime": runtime},
            "generations": [{"gen": 1, "prev": 0}],
            "selfplay": {"games": games, "parallel_games": batch},
        }
    )


def selfplay_figures(game_name: str, model, games: int, batch: int, workers: int = 0, **where) -> dict:
    """Self-play as a stage plays it; `where` as `selfplay_params` takes it."""
    game = make_game(game_name)
    result = run_selfplay(game, model, selfplay_params(game_name, games, batch, workers, **where), 1, progress=False)
    # games/min as a stage sees it (workers' start-up included); simulations/s while games run
    speed = {"games_per_min": 60 * result.games / result.seconds, "sims_per_s": result.metrics["simulations_per_s"]}
    return speed | {name: value for name, value in result.served.items() if name.startswith("server_")}


class FreeNetwork(UniformEvaluator):
    """The network's answer at no cost (uniform priors, zero values), its leaves still encoded, as a
    served worker encodes them before it sends them off."""

    def evaluate(self, states: list) -> tuple[np.ndarray, np.ndarray]:
        self.game.encode_batch(states)
        return super().evaluate(states)

    def evaluate_encoded(self, keys: list[bytes], encode) -> tuple[np.ndarray, np.ndarray]:
        encode(None)
        return super().evaluate_encoded(keys, encode)


class _TimedNetwork:
    """A network call, its copies included, timed without a profiler."""

    def __init__(self, network):
        self.network, self.seconds = network, 0.0

    def __call__(self, planes):
        started = time.perf_counter()
        answer = self.network(planes)
        self.seconds += time.perf_counter() - started
        return answer


def network_share(game_name: str, model, games: int) -> float:
    """The share of one process's self-play time spent in the network call (its input and output copies
    included), the rest being the tree, the rules, encoding and the Python between batches: how much an
    accelerator could take off (`phases.py` splits the rest)."""
    game = make_game(game_name)
    agent = selfplay_player(model, selfplay_params(game_name, games, games)).build(game)
    networks = agent.search.evaluator.evaluator  # CachingEvaluator over NetworkEvaluator (`agents/spec.py`)
    networks.network = timed = _TimedNetwork(networks.network)
    _, stats = play_games(game, [[agent] * game.num_players] * games, seed=0, parallel=games)
    return timed.seconds / stats.seconds


def search_ceiling_sims_per_s(game_name: str, model, games: int, batch: int) -> float:
    """One process's self-play simulations/s with a `FreeNetwork`: no accelerator, served or not, can
    take a core's search past it (Amdahl's law). Uniform priors grow broader trees than a network's,
    so it is an estimate of the search's own cost a simulation, not an exact bound."""
    game = make_game(game_name)
    spec = selfplay_player(model, selfplay_params(game_name, games, batch))
    agent = SearchAgent(game, CachingEvaluator(FreeNetwork(game)), spec.search, spec.play, spec.name)
    _, stats = play_games(game, [[agent] * game.num_players] * games, seed=0, parallel=batch)
    return agent.simulations / stats.seconds


def training_figures(game_name: str, steps: int, repeats: int = 3, device: str = "auto") -> dict[str, float]:
    """Lightning's samples/s against a bare PyTorch loop over the same model, data and optimiser
    (best of `repeats` alternating runs each, since a shared machine's speed drifts), on `game_name`'s
    bench network."""
    game, _ = bench_network(game_name)
    rng = np.random.default_rng(0)
    n = 64 * steps
    samples = {
        "states": (rng.random((n, *game.observation_shape)) < 0.3).astype(np.uint8),
        "policies": rng.dirichlet(np.ones(game.num_actions), size=n).astype(np.float32),
        "values": rng.choice([-1.0, 0.0, 1.0], size=(n, game.num_players)).astype(np.float32),
        "generations": np.ones(n, dtype=np.int32),
        "scores": np.zeros((n, game.num_players), dtype=np.float32),
    }
    params = TrainParams(epochs=1, augment=False)
    tensors = [torch.from_numpy(samples[k].astype(np.float32)) for k in ("states", "policies", "values")]

    where = inference_device(device=device)
    tensors = [t.to(where) for t in tensors]

    def bare_loop() -> float:
        model = bench_network(game_name)[1].train().to(where)
        optimiser = make_optimizer(model, params.learning_rate, params.weight_decay)
        order = torch.randperm(n, generator=torch.Generator().manual_seed(0)).to(where)
        started = time.perf_counter()
        for i in range(steps):
            idx = order[i * 64 : (i + 1) * 64]
            losses = alphazero_losses(model, *(t[idx] for t in tensors))
            optimiser.zero_grad()
            (losses.policy + losses.value).backward()
            optimiser.step()
        if where.type == "cuda":
            torch.cuda.synchronize()
        return n / (time.perf_counter() - started)

    lightning, bare = 0.0, 0.0
    for _ in range(repeats):
        result = train_network(
            game, bench_network(game_name)[1], samples, params, seed=0, progress=False, device=device
        )
        lightning = max(lightning, result.samples_per_s)
        bare = max(bare, bare_loop())
    return {"train_samples_per_s": lightning, "bare_samples_per_s": bare}


def network_figures(game, model, batch: int, seconds: float, precision: str, device: str = "auto") -> dict[str, float]:
    """The network's positions/s at `batch` and at 1 in the default runtime and in torch's (`torch_*`),
    its FLOPs a position and the GFLOP/s both runtimes reach at `batch`. The default runtime at `batch`,
    which search is compared with, is timed last, so that `run` brackets self-play with it."""
    figures = {"network_mflop_per_position": network_flops_per_position(game, model) / 1e6}
    for prefix, runtime in (("torch_", "torch"), ("", "auto")):
        for suffix, size in (("_batch1", 1), ("", batch)):
            rate = network_positions_per_s(
                game, model, size, seconds, precision=precision, runtime=runtime, device=device
            )
            figures[f"{prefix}network_positions_per_s{suffix}"] = rate
        with_gflops(figures, prefix)
    return figures


def with_gflops(figures: dict[str, float], prefix: str = "") -> None:
    """`{prefix}network_gflop_per_s` from the positions/s at the batch and the FLOPs a position."""
    rate = figures[f"{prefix}network_positions_per_s"]
    figures[f"{prefix}network_gflop_per_s"] = rate * figures["network_mflop_per_position"] / 1e3


# seconds timing the network, batches of self-play games per game, training steps
QUICK = {"network_seconds": 2.0, "selfplay_batches": 2, "train_steps": 60}
FULL = {"network_seconds": 6.0, "selfplay_batches": 8, "train_steps": 300}


def run(
    network_seconds: float,
    selfplay_batches: int,
    train_steps: int,
    batch: int = 64,
    workers: int = 0,
    backend="pool",
    precision="float32",
    device="auto",
    games: tuple[str, ...] = (),
    inference_server: str = "auto",
    move_seconds: float = 0.25,
    networks: str = "random",
) -> dict:
    """Every figure once: per game of `games` under its name, training at the top level. `workers`,
    `backend`, `precision` (of the network and self-play figures) and `device` as in params.yaml (0: one
    per core; pool or a local Ray; float32 or bfloat16; auto, cpu or cuda), `inference_server` as
    `backend.inference_server` (with it, the server's batch fill and busy fraction); `move_seconds` a
    timed move's budget; `networks` random or champions (`bench_network`)."""
    figures: dict = {
        "threads": torch.get_num_threads(),
        "batch": batch,
        "cpu_count": os.cpu_count(),
        "device": str(inference_device(device=device)),
        "runtime": inference_runtime(precision, device=device),  # what search.runtime auto runs the network with
        "core_peak_gflop_per_s": core_peak_gflop_per_s(seconds=network_seconds / 2),
        "networks": networks,
    }
    games = games or default_games()
    for name in games:
        game, model = bench_network(name, networks)
        network = network_figures(game, model, batch, network_seconds, precision, device)
        # enough games to amortise the workers' start-up (about 2.5 s), which games/min includes
        count = max(1, int(selfplay_batches * batch * bench_sizes(name)[2]))
        where = {"workers": workers, "backend": backend, "precision": precision, "device": device}
        where["inference_server"] = inference_server
        play = selfplay_figures(name, model, count, batch, **where)
        pool_workers = Workers.from_params(selfplay_params(name, count, batch, **where))  # as self-play read them
        at_once = chunk_games(count, batch, match_workers(pool_workers, count))
        # the network just before and just after self-play, averaged: the ratio's two terms cover the same
        # minute on a host whose speed drifts by a fifth between minutes
        after = network_positions_per_s(game, model, batch, network_seconds, precision=precision, device=device)
        network["network_positions_per_s"] = (network["network_positions_per_s"] + after) / 2
        with_gflops(network)
        network["network_peak_fraction"] = network["network_gflop_per_s"] / (
            figures["core_peak_gflop_per_s"] * figures["threads"]
        )
        pool = workers or os.cpu_count() or 1  # self-play's pool: one process a core unless told
        pool_network = workers_network_positions_per_s(name, networks, batch, network_seconds, pool, precision)
        with_torch = selfplay_figures(name, model, count, batch, **where, runtime="torch")
        # one process searching, as `analyse`, `play` and `workers: 1` stages do
        half = max(1, batch // 2)
        alone = selfplay_figures(name, model, half, half, 1, precision=precision, device=device)
        ceiling = search_ceiling_sims_per_s(name, model, half, half)
        figures[name] = {
            **network,
            "search_sims_per_s": play["sims_per_s"],
            "torch_search_sims_per_s": with_torch["sims_per_s"],
            "search_to_network_ratio": play["sims_per_s"] / network["network_positions_per_s"],
            "workers_network_positions_per_s": pool_network,
            "search_to_workers_network_ratio": play["sims_per_s"] / pool_network,
            "timed_move_sims": timed_move_simulations(game, model, "auto", move_seconds, device=device),
            "torch_timed_move_sims": timed_move_simulations(game, model, "torch", move_seconds, device=device),
            "selfplay_games_per_min": play["games_per_min"],
            # the games each worker played side by side: its search's batch a step, which `batch` caps
            "selfplay_games_per_worker": at_once,
            "one_process_search_sims_per_s": alone["sims_per_s"],
            "one_process_search_ceiling_sims_per_s": ceiling,
            "ceiling_to_one_process": ceiling / alone["sims_per_s"],
            "network_share": network_share(name, model, half),
            **{key: value for key, value in play.items() if key.startswith("server_")},
        }
        if offers(game, PlaysGreedy):  # searched with greedy playouts at the leaves too
            mixed = selfplay_figures(name, model, count, batch, **where, playout_weight=PLAYOUT_WEIGHT)
            figures[name] |= {
                "greedy_playouts_per_s": greedy_playouts_per_s(game, seconds=network_seconds),
                "playouts_search_sims_per_s": mixed["sims_per_s"],
                "playouts_selfplay_games_per_min": mixed["games_per_min"],
                "playouts_to_plain_selfplay": mixed["games_per_min"] / play["games_per_min"],
            }
    train = training_figures(games[0], steps=train_steps, device=device)
    figures["train_samples_per_s"] = train["train_samples_per_s"]
    figures["bare_loop_samples_per_s"] = train["bare_samples_per_s"]
    figures["lightning_overhead"] = train["bare_samples_per_s"] / train["train_samples_per_s"] - 1
    return figures


def _spin() -> None:
    while True:
        pass


@contextmanager
def busy_process():
    """One process that keeps a core busy, as a browser or a second job does on a laptop."""
    process = multiprocessing.get_context("spawn").Process(target=_spin, daemon=True)
    process.start()
    try:
        yield
    finally:
        process.kill()
        process.join()


def with_load_figures(quiet: dict, loaded: dict) -> dict:
    """The quiet figures with each measured one's `*_under_load` twin beside it."""
    merged = {}
    for key, value in quiet.items():
        merged[key] = value
        if isinstance(value, dict):
            merged[key] = with_load_figures(value, loaded[key])
        elif isinstance(value, float):
            merged[f"{key}_under_load"] = loaded[key]
    return merged
