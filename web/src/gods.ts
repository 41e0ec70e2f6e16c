// God powers on the page: the gods, one line on each power, and clicks to sub-actions. The legal sub-actions come
// from Python (chapter 02b's legal_sub_actions at the node of the turn in progress); this only filters that list.
import powerText from "./powers.json";
import type { SubAction } from "./protocol";

export const GODS = ["mortal", "apollo", "artemis", "athena", "atlas", "demeter", "hephaestus", "hermes", "minotaur",
  "pan", "prometheus"] as const;
export type God = (typeof GODS)[number];

/** Each power in one sentence: chapter 01b's `POWER_TEXT` (the terminal game's and the widgets' words), which
 * tests/test_gods.py checks this copy against. */
const POWER_TEXT: Record<God, string> = powerText;
const CLICK_HINTS: Partial<Record<God, string>> = { atlas: ' Tick "build a dome" to build one.' };  // how the page plays a power

/** One line on each power, named: "Artemis: Your worker may move ...", "Mortal: move one worker ...". */
const powerLine = (god: God) =>
  `${god[0].toUpperCase()}${god.slice(1)}: ${POWER_TEXT[god].replace(/^No power: /, "")}${CLICK_HINTS[god] ?? ""}`;
export const POWERS = Object.fromEntries(GODS.map((god) => [god, powerLine(god)])) as Record<God, string>;

export const END = 125; // the sub-action that ends a turn that could go on

/** The gods of `?gods=yours,engine's` (a missing or unknown name is a mortal), and any names not understood. */
export function parseGods(text: string | null): { gods: [God, God]; unknown: string[] } {
  const names = (text ?? "").split(",").map((s) => s.trim().toLowerCase());
  const unknown = names.filter((n) => n && !(GODS as readonly string[]).includes(n));
  const pick = (n: string | undefined): God => ((GODS as readonly string[]).includes(n ?? "") ? (n as God) : "mortal");
  return { gods: [pick(names[0]), pick(names[1])], unknown };
}

export interface GodSelection {
  from?: number; // the cell of the worker chosen to move
}

const cellsOf = (legal: SubAction[], kinds: string[]) =>
  new Set(legal.filter((a) => kinds.includes(a.kind)).map((a) => a.cell!));

/** The cells a click may choose next: placements; else the chosen worker's moves; else the workers that can move
 * and the cells that can be built on. */
export function godTargets(legal: SubAction[], selection: GodSelection): Set<number> {
  const places = cellsOf(legal, ["place"]);
  if (places.size) return places;
  if (selection.from !== undefined) {
    return new Set(legal.filter((a) => a.kind === "move" && a.from === selection.from).map((a) => a.cell!));
  }
  return new Set([...legal.filter((a) => a.kind === "move").map((a) => a.from!), ...cellsOf(legal, ["build", "dome"])]);
}

/** Can the turn end here (an optional step may be declined)? */
export const canEnd = (legal: SubAction[]) => legal.some((a) => a.kind === "end");
/** Is there a choice of block or dome on some cell (Atlas)? */
export const canDome = (legal: SubAction[]) => legal.some((a) => a.kind === "dome");

/** The line under the board: what a click can do now, for the player of `god`. `stepsTaken` counts the steps of the
 * turn already played: after one, a move that is still offered is an extra one (Artemis, Hermes), which the player may
 * skip by building. Before any move a build is Prometheus's (then the move) or Hermes's (instead of moving). */
export function godGuide(legal: SubAction[], selection: GodSelection, stepsTaken: number, dome: boolean, god: God = "mortal",
  athenaUp = false): string {
  if (!legal.length) return "";
  if (legal.some((a) => a.kind === "place")) return "Click a highlighted cell to place a worker there.";
  const movers = new Set(legal.filter((a) => a.kind === "move").map((a) => a.from));
  // the moves up are simply not highlighted: say why (the power of the opponent's Athena, for this turn)
  const athena = athenaUp && movers.size ? "Athena moved up last turn: your workers cannot move up this turn. " : "";
  return athena + stepGuide(legal, selection, stepsTaken, dome, god, movers);
}

function stepGuide(legal: SubAction[], selection: GodSelection, stepsTaken: number, dome: boolean, god: God,
  movers: Set<number | undefined>): string {
  if (selection.from !== undefined) {
    return `Click a highlighted cell to move there (${movers.size > 1 ? "or another of your workers" : "or the worker again to let it go"}).`;
  }
  const builds = legal.some((a) => a.kind === "build" || a.kind === "dome");
  const build = dome ? "a highlighted cell to build a dome on it" : "a highlighted cell to build";
  const again = god === "hermes" ? "a highlighted worker to move it on (you may skip that)" : "a highlighted worker to move it again (you may skip that)";
  const before = god === "hermes" ? `${build} without moving` : `${build} first`; // a build before any move
  const clicks = [
    movers.size && (builds && stepsTaken ? again : "a highlighted worker to move it"),
    builds && (movers.size && !stepsTaken ? before : build),
  ].filter((c): c is string => Boolean(c));
  const what = clicks.length ? `Click ${clicks.join(", or ")}` : "";
  return what + (canEnd(legal) ? (what ? ", or End turn to stop here." : "End turn to stop here.") : what ? "." : "");
}

/** The selection after a click on `cell`, and the sub-action it picks, if any. A click on a worker that can move
 * chooses it; then a click on one of its destinations moves it. Without a chosen worker, a click on a cell that can
 * be built on builds there: a dome if `dome` is asked for and allowed there, else a block (else a dome). So a worker
 * that may move again (Artemis) or build first (Prometheus) is clicked to move, and a cell is clicked to build. */
export function godClick(legal: SubAction[], selection: GodSelection, cell: number, dome = false):
  { selection: GodSelection; action?: number } {
  const place = legal.find((a) => a.kind === "place" && a.cell === cell);
  if (place) return { selection: {}, action: place.index };
  if (selection.from !== undefined) {
    const step = legal.find((a) => a.kind === "move" && a.from === selection.from && a.cell === cell);
    if (step) return { selection: {}, action: step.index };
    if (cell === selection.from) return { selection: {} }; // a second click on the chosen worker lets it go
    if (legal.some((a) => a.kind === "move" && a.from === cell)) return { selection: { from: cell } }; // another worker
    return { selection: {} }; // a cell the chosen worker cannot move to: let it go, and build nothing (not highlighted)
  }
  if (legal.some((a) => a.kind === "move" && a.from === cell)) return { selection: { from: cell } };
  const block = legal.find((a) => a.kind === "build" && a.cell === cell);
  const domed = legal.find((a) => a.kind === "dome" && a.cell === cell);
  const build = (dome ? domed ?? block : block ?? domed);
  return build ? { selection: {}, action: build.index } : { selection: {} };
}
