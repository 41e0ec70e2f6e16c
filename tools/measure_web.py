"""Measure the built web app in Debian's Chromium: load time, bytes downloaded, and the time of 800-simulation moves.

    .venv/bin/python tools/measure_web.py [--batch 16] [--simulations 800] [--moves 5]

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
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(DIST)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/?view=2d&poll=0"
    if args.model is not None: url += f"&model={args.model}"
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
            browser.close()
    finally:
        server.shutdown(); server.server_close()


if __name__ == "__main__":
    main()
