import { describe, expect, it } from "vitest";
import { canDome, canEnd, END, GODS, godClick, godGuide, godTargets, parseGods, POWERS } from "./gods";
import type { SubAction } from "./protocol";

const move = (worker: number, from: number, cell: number): SubAction =>
  ({ index: 25 + 25 * worker + cell, text: `move ${worker + 1} ${cell}`, kind: "move", cell, worker, from });
const build = (cell: number): SubAction => ({ index: 75 + cell, text: `build ${cell}`, kind: "build", cell });
const dome = (cell: number): SubAction => ({ index: 100 + cell, text: `dome ${cell}`, kind: "dome", cell });
const end: SubAction = { index: END, text: "end", kind: "end" };

// The start of a turn: worker 1 on C3 (12), worker 2 on D3 (13).
const start = [move(0, 12, 7), move(0, 12, 11), move(1, 13, 8), move(1, 13, 18)];
// Artemis after a first move to C4 (7): the same worker may move on (to B4, 6) or build (on 6 or 8).
const artemisAfterMove = [move(0, 7, 6), build(6), build(8)];
// Demeter after a first build: a second build elsewhere, or end the turn.
const demeterAfterBuild = [build(6), build(8), end];
// Atlas, after moving: a block or a dome on 6, only a block on 2 (a level-3 block already is a dome).
const atlasBuild = [build(2), build(6), dome(6)];

describe("godTargets", () => {
  it("offers the workers that can move, then the chosen worker's destinations", () => {
    expect([...godTargets(start, {})].sort((a, b) => a - b)).toEqual([12, 13]);
    expect([...godTargets(start, { from: 13 })].sort((a, b) => a - b)).toEqual([8, 18]);
  });
  it("offers the worker that may move again and the cells to build on", () => {
    expect([...godTargets(artemisAfterMove, {})].sort((a, b) => a - b)).toEqual([6, 7, 8]);
    expect([...godTargets(artemisAfterMove, { from: 7 })]).toEqual([6]);
  });
  it("offers the placements during setup", () => {
    expect([...godTargets([{ index: 3, text: "place D5", kind: "place", cell: 3 }], {})]).toEqual([3]);
  });
});

describe("godGuide", () => {
  it("says what a click does at each step of a turn", () => {
    expect(godGuide([{ index: 3, text: "place D5", kind: "place", cell: 3 }], {}, 0, false))
      .toBe("Click a highlighted cell to place a worker there.");
    expect(godGuide(start, {}, 0, false)).toBe("Click a highlighted worker to move it.");
    expect(godGuide(start, { from: 12 }, 0, false)).toBe("Click a highlighted cell to move there (or another of your workers).");
  });
  it("says why no move goes up after the opponent's Athena moved up (those moves are simply not highlighted)", () => {
    expect(godGuide(start, {}, 0, false, "pan", true))
      .toBe("Athena moved up last turn: your workers cannot move up this turn. Click a highlighted worker to move it.");
    expect(godGuide(demeterAfterBuild, {}, 2, false, "demeter", true)).toBe("Click a highlighted cell to build, or End turn to stop here.");
  });
  it("calls Artemis's second move one she may skip, and lets her worker go by a second click", () => {
    expect(godGuide(artemisAfterMove, {}, 1, false))
      .toBe("Click a highlighted worker to move it again (you may skip that), or a highlighted cell to build.");
    expect(godGuide(artemisAfterMove, { from: 7 }, 1, false))
      .toBe("Click a highlighted cell to move there (or the worker again to let it go).");
  });
  it("offers Prometheus's build before the move, Hermes's instead of it, Demeter's End turn and Atlas's dome", () => {
    expect(godGuide([...start, build(6)], {}, 0, false, "prometheus"))
      .toBe("Click a highlighted worker to move it, or a highlighted cell to build first.");
    expect(godGuide([...start, build(6)], {}, 0, false, "hermes"))
      .toBe("Click a highlighted worker to move it, or a highlighted cell to build without moving.");
    expect(godGuide([...start, build(6)], {}, 1, false, "hermes"))
      .toBe("Click a highlighted worker to move it on (you may skip that), or a highlighted cell to build.");
    expect(godGuide(demeterAfterBuild, {}, 2, false)).toBe("Click a highlighted cell to build, or End turn to stop here.");
    expect(godGuide(atlasBuild, {}, 1, true)).toBe("Click a highlighted cell to build a dome on it.");
    expect(godGuide([end], {}, 2, false)).toBe("End turn to stop here.");
  });
});

describe("godClick", () => {
  it("moves a worker in two clicks: the worker, then where it goes", () => {
    const first = godClick(start, {}, 12);
    expect(first).toEqual({ selection: { from: 12 } });
    expect(godClick(start, first.selection, 11)).toEqual({ selection: {}, action: 25 + 11 });
    expect(godClick(start, { from: 12 }, 18)).toEqual({ selection: {} }); // worker 2's move: not from C3
    expect(godClick(start, { from: 12 }, 13)).toEqual({ selection: { from: 13 } }); // switch worker
    expect(godClick(start, { from: 12 }, 12)).toEqual({ selection: {} }); // let go
  });
  it("takes Artemis's extra move by clicking the worker, or declines it by building", () => {
    expect(godClick(artemisAfterMove, {}, 6)).toEqual({ selection: {}, action: 75 + 6 }); // a build, not the move
    const chosen = godClick(artemisAfterMove, {}, 7).selection;
    expect(godClick(artemisAfterMove, chosen, 6)).toEqual({ selection: {}, action: 25 + 6 }); // the second move
    // with the worker chosen only its moves are highlighted: a click on a cell it may build on but not move to (D4,
    // 8) lets it go and builds nothing (it built there, ending the turn)
    expect(godClick(artemisAfterMove, chosen, 8)).toEqual({ selection: {} });
  });
  it("builds Demeter's second block, or ends the turn", () => {
    expect(godClick(demeterAfterBuild, {}, 8).action).toBe(75 + 8);
    expect(canEnd(demeterAfterBuild)).toBe(true);
    expect(canEnd(artemisAfterMove)).toBe(false);
  });
  it("lets Atlas choose a dome or a block", () => {
    expect(canDome(atlasBuild)).toBe(true);
    expect(godClick(atlasBuild, {}, 6, false).action).toBe(75 + 6);
    expect(godClick(atlasBuild, {}, 6, true).action).toBe(100 + 6);
    expect(godClick(atlasBuild, {}, 2, true).action).toBe(75 + 2); // no dome there: the block
    expect(godClick(atlasBuild, {}, 20, true)).toEqual({ selection: {} });
  });
  it("places a worker in one click", () => {
    expect(godClick([{ index: 3, text: "place D5", kind: "place", cell: 3 }], {}, 3).action).toBe(3);
  });
});

describe("gods and powers", () => {
  it("reads ?gods= as yours, then the engine's", () => {
    expect(parseGods("Apollo,pan")).toEqual({ gods: ["apollo", "pan"], unknown: [] });
    expect(parseGods("zeus")).toEqual({ gods: ["mortal", "mortal"], unknown: ["zeus"] });
    expect(parseGods(null).gods).toEqual(["mortal", "mortal"]);
  });
  it("explains every god in one line that names it", () => {
    for (const god of GODS) expect(POWERS[god].toLowerCase().startsWith(god)).toBe(true);
    expect(POWERS.artemis).toBe("Artemis: Your worker may move one additional time, but not back to the square it started on.");
    expect(POWERS.mortal).toBe("Mortal: move one worker one square (up one level at most), then build next to it.");
    expect(POWERS.atlas).toBe('Atlas: Your worker may build a dome at any level. Tick "build a dome" to build one.');
  });
});
