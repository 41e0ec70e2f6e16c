"""Take the screenshots of web/README.md: the app mid-game with the shipped model, 3D and 2D, after a hint.

    .venv/bin/python tools/web_screenshots.py [--plies 6] [--human hint] [--seed 3] [--out web/screenshots]

Serves web/dist (build it first: `cd web && npm run build`) on 127.0.0.1, plays `--plies` moves for the human by
clicking the 2D board (the engine answers at difficulty hard, 800 simulations), asks for a hint, and saves
app-3d.png and app-2d.png. The human plays the page's own hints (`--human hint`, the default: a contested game, not
one already lost) or random legal moves (`--human random`). The page's seed makes the engine's moves, and so the
pictures, reproducible.

    .venv/bin/python tools/web_screenshots.py --gods artemis,demeter

instead plays Artemis against Demeter (the placements, then the first move of a turn: the turn in progress, its
targets and the god pickers with their lines) and saves app-gods.png."""
import argparse
import os
import random
import sys
import threading
import http.server
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.test_web import click_move, wait_for_my_turn_or_end  # noqa: E402  (the end-to-end tests' page helpers)
from tools.measure_web import Quiet  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plies", type=int, default=6, help="human moves to play before the pictures")
    parser.add_argument("--human", choices=("hint", "random"), default="hint",
                        help="the human's moves: the page's hints, or random legal moves")
    parser.add_argument("--seed", type=int, default=3, help="seed of the human's random moves and of the page's engine")
    parser.add_argument("--out", type=Path, default=ROOT / "web" / "screenshots")
    parser.add_argument("--gods", help="yours,engine's (e.g. artemis,demeter): the god picture instead")
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(Quiet, directory=str(ROOT / "web" / "dist")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        os.environ["PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD"] = "1"
        from playwright.sync_api import sync_playwright
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            page.set_default_timeout(180_000)
            url = f"http://127.0.0.1:{server.server_address[1]}/?view=2d&poll=0&seed={args.seed}"
            if args.gods:
                god_picture(page, url + f"&difficulty=easy&gods={args.gods}", args.out, random.Random(args.seed))
                browser.close()
                return
            page.goto(url)
            page.wait_for_function("window.santorini && window.santorini.game.info !== null")
            page.wait_for_function("document.querySelector('#model').textContent.includes('loaded')")
            rng = random.Random(args.seed)
            for _ in range(args.plies):
                game = wait_for_my_turn_or_end(page)
                if game["info"]["winner"] is not None: break
                legal = game["info"]["legal"]
                click_move(page, hinted_move(page, legal) if args.human == "hint" else rng.choice(legal))
                page.wait_for_function("(n) => window.santorini.game.moves.length > n", arg=len(game["moves"]))
            wait_for_my_turn_or_end(page)
            page.click("#hint")
            page.wait_for_function("document.querySelector('#hinttext').textContent.startsWith('hint')")
            args.out.mkdir(parents=True, exist_ok=True)
            page.select_option("#view", "3d")
            page.wait_for_timeout(1500)  # the 3D board's first frames
            page.screenshot(path=str(args.out / "app-3d.png"))
            page.select_option("#view", "2d")
            page.wait_for_timeout(300)
            page.screenshot(path=str(args.out / "app-2d.png"))
            browser.close()
            print(f"saved {args.out / 'app-3d.png'} and {args.out / 'app-2d.png'}")
    finally:
        server.shutdown(); server.server_close()


def hinted_move(page, legal: list[dict]) -> dict:
    "The legal action the page's Hint button names."
    page.evaluate("document.querySelector('#hinttext').textContent = ''")
    page.click("#hint")
    page.wait_for_function("document.querySelector('#hinttext').textContent.startsWith('hint')")
    text = page.inner_text("#hinttext").removeprefix("hint: ").strip()
    return next(action for action in legal if action["text"] == text)


def god_picture(page, url: str, out: Path, rng: random.Random) -> None:
    "Place the human's workers, start a turn with one move, and save the page as app-gods.png."
    page.goto(url)
    page.wait_for_function("window.santorini && window.santorini.game.info !== null")
    while True:
        game = wait_for_my_turn_or_end(page)
        if not game["info"]["setup"]: break
        page.click(f'.board2d button[data-cell="{rng.choice(game["info"]["legal"])["cell"]}"]')
        page.wait_for_function("(n) => window.santorini.game.moves.length > n", arg=len(game["moves"]))
    first = rng.choice([a for a in game["info"]["legal"] if a["kind"] == "move"])
    for cell in (first["from"], first["cell"]): page.click(f'.board2d button[data-cell="{cell}"]')
    page.wait_for_function("window.santorini.game.info.steps.length === 1")
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out / "app-gods.png"))
    print(f"saved {out / 'app-gods.png'}")


if __name__ == "__main__":
    main()
