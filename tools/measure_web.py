"""Measure the built web app in Debian's Chromium: load time, bytes downloaded, and the time of 800-simulation moves.

    .venv/bin/python tools/measure_web.py [--batch 16] [--simulations 800] [--moves 5]
    .venv/bin/python tools/measure_web.py --gods hermes,apollo [--moves 3]   # the god network's decisions instead

Serves web/dist on 127.0.0.1 (a free port) with the shipped model, prints figures, and shuts the server down."""
import argparse
import functools
import http.server
import json
import os
import threading
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

DIST = Path(__file__).resolve().parent.parent / "web" / "dist"
POSITIONS = ["0000000000000000000000000/1//", "0000000000000000000000000/1/C3,D3/B2,C4",
             "0000001000012100001000000/2/B4,D2/C4,C2", "0100001200012210001200000/1/B4,D2/C4,C2"]


class Quiet(http.server.SimpleHTTPRequestHandler):
    "Serves the site without a log line per request, and counts what it sends (the page's events miss what a worker's\n    own worker fetches, such as onnxruntime's wasm)."
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".mjs": "text/javascript", ".js": "text/javascript"}
    served: list[tuple[str, int]] = []

    def log_message(self, *args): pass

    def copyfile(self, source, outputfile):
        start = source.tell()
        super().copyfile(source, outputfile)
        Quiet.served.append((self.path, source.tell() - start))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--simulations", type=int, default=800)
    parser.add_argument("--moves", type=int, default=5, help="searches per position")
    parser.add_argument("--model", default=None, help="a model URL instead of the shipped one ('' for none)")
    parser.add_argument("--gods", default=None, help="time the engine's god turns for these gods (comma-separated), "
                        "against a mortal, from the four workers placed at C3,D3/B2,C4")
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(DIST)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/?view=2d&poll=0"
    if args.model is not None: url += f"&{'godmodel' if args.gods else 'model'}={args.model}"
    try:
        os.environ["PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD"] = "1"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            page = browser.new_page()
            start = time.perf_counter()
            page.goto(url)
            page.wait_for_function("window.santorini && window.santorini.game.info !== null", timeout=120_000)
            page.wait_for_function("document.querySelector('#model').textContent.length > 0")
            loaded = time.perf_counter() - start
            downloaded = list(Quiet.served)
            total = sum(size for _, size in downloaded)
            print(f"page ready (engine + model + first position) in {loaded:.1f} s; downloaded {total / 2**20:.1f} MiB in {len(downloaded)} requests")
            for path, size in sorted(downloaded, key=lambda x: -x[1])[:6]: print(f"  {size / 2**20:6.2f} MiB  {path}")
            print(page.inner_text("#model"))
            if args.gods: return measure_gods(page, args)
            times = []
            for position in POSITIONS:
                for move in range(args.moves):
                    r = page.evaluate("([p, s, b]) => window.santorini.search(p, s, b)", [position, args.simulations, args.batch])["result"]
                    times.append(r["milliseconds"])
                    print(f"{position:45s} {r['simulations']} sims in {r['milliseconds']:7.0f} ms (network {r['network_milliseconds']:5.0f} ms, "
                          f"{r['batches']} batches, {r['backend']}) -> {r['move']}")
            warm = sorted(times[1:])
            print(f"{args.simulations}-simulation move, batch {args.batch}: median {warm[len(warm) // 2]:.0f} ms, "
                  f"min {warm[0]:.0f}, max {warm[-1]:.0f} (first search {times[0]:.0f} ms, warm-up)")
    finally:
        server.shutdown(); server.server_close()


def god_positions(god: str, count: int) -> list[str]:
    "The start (workers on C3,D3 against B2,C4), then positions of seeded random games, `god` to move against a mortal."
    import random
    from santorini_az.gods import format_god_position, from_mortal, god_legal_turns, god_apply, god_winner
    from santorini_az.notation import parse_position
    positions, rng = [from_mortal(parse_position("0000000000000000000000000/1/C3,D3/B2,C4"), (god, "mortal"))], random.Random(0)
    while len(positions) < count:
        state = positions[0]
        for _ in range(2 * rng.randrange(1, 8)):  # an even number of random turns: `god` to move again
            if god_winner(state) is not None: break
            state = god_apply(state, rng.choice(god_legal_turns(state)))
        if god_winner(state) is None: positions.append(state)
    return [format_god_position(state) for state in positions]


def measure_gods(page, args) -> None:
    "Each god's first decision (a hint's search) and whole turn (the engine's move), on `args.moves` different positions."
    page.wait_for_function("window.santorini.game.godModel.message !== 'loading the god network ...'")
    print(page.evaluate("window.santorini.game.godModel.message"))
    warm_up = "0000000000000000000000000/1/apollo:C3,D3/mortal:B2,C4"  # the page's first god search pays for starting up
    page.evaluate("([p, s, b]) => window.santorini.godSearch(p, s, b, 1)", [warm_up, args.simulations, args.batch])
    for god in args.gods.split(","):
        firsts, turns = [], []
        for position in god_positions(god, args.moves):
            first = page.evaluate("([p, s, b]) => window.santorini.godSearch(p, s, b, 1)", [position, args.simulations, args.batch])["result"]
            turn = page.evaluate("([p, s, b]) => window.santorini.godSearch(p, s, b, 0)", [position, args.simulations, args.batch])["result"]
            firsts.append(first["milliseconds"]); turns.append(turn["milliseconds"] / max(1, len(turn["decisions"])))
            print(f"{god:10s} {position:55s} first decision {first['milliseconds']:6.0f} ms ({first['backend']}, network "
                  f"{first['network_milliseconds']:4.0f} ms, {first['batches']} batches); whole turn {turn['milliseconds']:6.0f} ms, "
                  f"{len(turn['decisions'])} decisions searched -> {turn['move']}")
        firsts.sort(); turns.sort()
        print(f"{god:10s} {args.simulations} simulations: a first decision (cold) median {firsts[len(firsts) // 2]:.0f} ms, "
              f"max {firsts[-1]:.0f} ms; a decision of a whole turn, median {turns[len(turns) // 2]:.0f} ms, max {turns[-1]:.0f} ms")


if __name__ == "__main__":
    main()
