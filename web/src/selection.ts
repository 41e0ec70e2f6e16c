// Turning clicks into a legal action. The legal actions come from Python (the package's rules); this only filters
// that list by what has been clicked so far: a placement is one click, a move is worker, destination, build.
import type { LegalAction } from "./protocol";

export interface Selection {
  from?: number; // the worker chosen
  to?: number; // where it moves
}

const unique = (cells: (number | undefined)[]) => new Set(cells.filter((c): c is number => c !== undefined));

/** The cells a click may choose next, given the legal actions and what is selected. */
export function targets(legal: LegalAction[], selection: Selection): Set<number> {
  if (legal.length && legal[0].cell !== undefined) return unique(legal.map((a) => a.cell));
  if (selection.from === undefined) return unique(legal.map((a) => a.from));
  if (selection.to === undefined) return unique(legal.filter((a) => a.from === selection.from).map((a) => a.to));
  return unique(legal.filter((a) => a.from === selection.from && a.to === selection.to).map((a) => a.build));
}

/** The new selection after a click on `cell`, and the action in notation when the click completes one. With the
 * board's `heights`, a step up onto level 3 completes the move at once: it wins, and nothing is built after it. */
export function click(legal: LegalAction[], selection: Selection, cell: number,
                      heights?: number[]): { selection: Selection; move?: string } {
  const placement = legal.find((a) => a.cell === cell);
  if (placement) return { selection: {}, move: placement.text };
  if (!targets(legal, selection).has(cell)) {
    // Clicking another of one's own workers starts again from it; anything else clears the selection.
    return { selection: legal.some((a) => a.from === cell) ? { from: cell } : {} };
  }
  if (selection.from === undefined) return { selection: { from: cell } };
  if (selection.to === undefined) {
    const win = heights?.[cell] === 3 ? legal.find((a) => a.from === selection.from && a.to === cell) : undefined;
    return win ? { selection: {}, move: win.text } : { selection: { from: selection.from, to: cell } };
  }
  const move = legal.find((a) => a.from === selection.from && a.to === selection.to && a.build === cell);
  return { selection: {}, move: move?.text };
}

/** What the next click does, in words, for the player to move: the page's guide line in a game without gods. */
export function nextClick(legal: LegalAction[], selection: Selection): string {
  if (!legal.length) return "";
  if (legal[0].cell !== undefined) return "Click a highlighted cell to place a worker there.";
  if (selection.from === undefined) return "Click one of your highlighted workers to move it.";
  if (selection.to === undefined) return "Click a highlighted cell to move there (or another of your workers).";
  return "Click a highlighted cell to build on it.";
}

/** The guide line's word on a click that chose nothing (a cell that is not highlighted), so that it does not pass
 * unseen: `before` and `after` are the selections around the click, `acted` whether it played (or went on with) a turn.
 * Empty for a click that did something: played, chose a worker, or let the chosen worker go by clicking it again. */
export function missedClickText(cell: number, before: Selection, after: Selection, acted: boolean): string {
  if (acted || after.from !== undefined || before.from === cell) return "";
  return `${cellName(cell)} is not highlighted${before.from !== undefined ? ": the worker is let go" : ""}. `;
}

/** The files and ranks of the board, as in notation: cell 0 is A5 (top left), cell 24 is E1. */
export function cellName(cell: number): string {
  return "ABCDE"[cell % 5] + String(5 - Math.floor(cell / 5));
}

/** The move list: the placements on one line ("setup: C3 D3, B2 C4": each player places two in a row), then the
 * turns as numbered pairs, player 1's and player 2's ("1. C3>C4^D5  B2>B3^A3"). A placement is a bare cell. */
export function moveList(moves: string[]): string[] {
  let placed = 0;
  while (placed < moves.length && /^[A-E][1-5]$/.test(moves[placed])) placed++;
  const placements = moves.slice(0, placed), turns = moves.slice(placed);
  const setup = [placements.slice(0, 2), placements.slice(2)].map((p) => p.join(" ")).filter(Boolean).join(", ");
  const lines = placed ? [`setup: ${setup}`] : [];
  for (let i = 0; i < turns.length; i += 2) lines.push(`${i / 2 + 1}. ${turns.slice(i, i + 2).join("  ")}`);
  return lines;
}

/** The move list's text of a turn that won by its move (a climb, or Pan's drop): the notation still names the build
 * that would have followed, which is never made, so the line says so. */
export function wonByMoveText(move: string): string {
  return />[A-E][1-5][\^@][A-E][1-5]$/.test(move) ? `${move} (the move wins: its build is not made)` : move;
}

/** The value for player 1 (in [-1, 1]) from a value for `player`, and as player 1's expected score in [0, 1]. */
export function forPlayerOne(value: number, player: number): { value: number; score: number } {
  const v = player === 0 ? value : -value;
  return { value: v, score: (v + 1) / 2 };
}

/** A position's board from its notation ("levels/player/[god:]cells/[god:]cells[/marks]"): 25 levels, and for each
 * cell the worker on it as "player:worker" ("" for none). */
function boardOf(position: string): { levels: string; occupants: string[] } {
  const [levels, , ...sides] = position.split("/");
  const occupants = Array<string>(25).fill("");
  sides.slice(0, 2).forEach((side, p) => {
    const cells = side.includes(":") ? side.split(":")[1] : side;
    cells.split(",").filter(Boolean).forEach((name, w) => {
      occupants[(5 - Number(name[1])) * 5 + "ABCDE".indexOf(name[0])] = `${p}:${w}`;
    });
  });
  return { levels, occupants };
}

/** The cells the last move changed, from the position before it to the one after: where a worker left or arrived,
 * and where a level was built (a placement, a move and its build, a god's swap, push or second build alike). */
export function changedCells(before: string, after: string): Set<number> {
  const a = boardOf(before), b = boardOf(after), changed = new Set<number>();
  for (let cell = 0; cell < 25; cell++)
    if (a.levels[cell] !== b.levels[cell] || a.occupants[cell] !== b.occupants[cell]) changed.add(cell);
  return changed;
}

/** The index of the position before the last turn of `positions[0..index]`: one move back, or two where one player
 * placed both workers in a row (a setup turn), so that the marks show where both went. */
export function lastTurnStart(positions: string[], index: number): number {
  const mover = (position: string) => position.split("/")[1];
  let start = index - 1;
  while (start > 0 && mover(positions[start - 1]) === mover(positions[index - 1])) start--;
  return start;
}

/** How a finished game was won, for the result line: the loser to move was left without a move (`stuck`), a worker of
 * the winner stands on level 3 (a climb), or else Pan's own way, a worker moved down two or more levels. */
export function howWon(info: { heights: number[]; workers: number[][]; winner: number; player: number; stuck: boolean;
                               gods?: string[] }): string {
  if (info.stuck) return `player ${info.player + 1} ${info.gods ? "has no legal turn" : "cannot move"}`;
  const top = info.workers[info.winner].find((cell) => info.heights[cell] === 3);
  if (top !== undefined) return `player ${info.winner + 1} climbed onto level 3 on ${cellName(top)}`;
  return info.gods?.[info.winner] === "pan" ? `player ${info.winner + 1}'s Pan moved down two or more levels` : "";
}
