import { describe, expect, it } from "vitest";
import { cellName, changedCells, click, forPlayerOne, howWon, lastTurnStart, missedClickText, moveList, nextClick, targets, wonByMoveText } from "./selection";
import type { LegalAction } from "./protocol";

const moves: LegalAction[] = [
  { text: "C3>C4^C5", from: 12, to: 7, build: 2 },
  { text: "C3>C4^D5", from: 12, to: 7, build: 3 },
  { text: "C3>B3^A3", from: 12, to: 11, build: 10 },
  { text: "D2>D1^E1", from: 18, to: 23, build: 24 },
];

describe("targets", () => {
  it("offers the workers first, then their destinations, then the builds", () => {
    expect([...targets(moves, {})].sort()).toEqual([12, 18]);
    expect([...targets(moves, { from: 12 })].sort()).toEqual([11, 7]);
    expect([...targets(moves, { from: 12, to: 7 })].sort()).toEqual([2, 3]);
  });
  it("offers every placement cell during setup", () => {
    expect([...targets([{ text: "A5", cell: 0 }, { text: "C3", cell: 12 }], {})]).toEqual([0, 12]);
  });
});

describe("click", () => {
  it("completes a move in three clicks", () => {
    let state = click(moves, {}, 12);
    expect(state.selection).toEqual({ from: 12 });
    state = click(moves, state.selection, 7);
    expect(state.selection).toEqual({ from: 12, to: 7 });
    state = click(moves, state.selection, 3);
    expect(state).toEqual({ selection: {}, move: "C3>C4^D5" });
  });
  it("switches worker or clears on a click that is not a target", () => {
    expect(click(moves, { from: 12 }, 18).selection).toEqual({ from: 18 });
    expect(click(moves, { from: 12 }, 0).selection).toEqual({});
    expect(click(moves, { from: 12, to: 7 }, 24).move).toBeUndefined();
  });
  it("completes a step onto level 3 at once: it wins, and no build follows", () => {
    const heights = Array(25).fill(0);
    heights[7] = 3;
    expect(click(moves, { from: 12 }, 7, heights)).toEqual({ selection: {}, move: "C3>C4^C5" });
    expect(click(moves, { from: 12 }, 11, heights).selection).toEqual({ from: 12, to: 11 }); // level 0: a build to pick
  });
  it("places a worker in one click", () => {
    expect(click([{ text: "B4", cell: 6 }], {}, 6).move).toBe("B4");
  });
});

describe("nextClick", () => {
  it("says what each click of a move does, as the selection grows", () => {
    expect(nextClick(moves, {})).toMatch(/your highlighted workers/);
    expect(nextClick(moves, { from: 12 })).toMatch(/move there/);
    expect(nextClick(moves, { from: 12, to: 7 })).toMatch(/build on it/);
  });
  it("asks for a placement during setup, and for nothing when there is no legal action", () => {
    expect(nextClick([{ text: "B4", cell: 6 }], {})).toMatch(/place a worker/);
    expect(nextClick([], {})).toBe("");
  });
});

describe("notation helpers", () => {
  it("names cells as the notation does", () => {
    expect([0, 4, 12, 20, 24].map(cellName)).toEqual(["A5", "E5", "C3", "A1", "E1"]);
  });
  it("numbers the move list in pairs", () => {
    expect(moveList(["C3", "D3", "B2"])).toEqual(["setup: C3 D3, B2"]);
    expect(moveList(["C3", "D3", "B2", "C4", "C3>B3^A3", "B2>A1^B1", "B3>A2^A3"]))
      .toEqual(["setup: C3 D3, B2 C4", "1. C3>B3^A3  B2>A1^B1", "2. B3>A2^A3"]);
    expect(moveList(["C3>B3^A3", "B2>A1^B1"])).toEqual(["1. C3>B3^A3  B2>A1^B1"]); // a game from a position
    expect(moveList(["C3", "D4", "B2", "D2", "^C5"])).toEqual(["setup: C3 D4, B2 D2", "1. ^C5"]); // Hermes stays put
  });
  it("says that a winning move's build is not made", () => {
    expect(wonByMoveText("D4>E5^D4")).toBe("D4>E5^D4 (the move wins: its build is not made)");
    expect(wonByMoveText("C4>D4>E4@D5")).toBe("C4>D4>E4@D5 (the move wins: its build is not made)");
    expect(wonByMoveText("B5>A5")).toBe("B5>A5"); // Apollo's swap into a corner: a move alone, nothing to say
  });
  it("turns a value into player 1's view", () => {
    expect(forPlayerOne(0.5, 1)).toEqual({ value: -0.5, score: 0.25 });
    expect(forPlayerOne(0.5, 0).score).toBe(0.75);
  });
});

describe("changedCells", () => {
  it("marks where a worker left and arrived and where it built", () => {
    // C3>C4^D5 from C3 (cell 12) to C4 (7), building on D5 (3)
    expect([...changedCells("0000000000000000000000000/1/C3,A1/E5,E4", "0001000000000000000000000/2/C4,A1/E5,E4")].sort((x, y) => x - y))
      .toEqual([3, 7, 12]);
  });
  it("marks a placement, and a god's swap of two workers", () => {
    expect([...changedCells("0000000000000000000000000/1//", "0000000000000000000000000/1/C3/")]).toEqual([12]);
    // Apollo on B4 (6) swaps with the opponent's worker on C4 (7), then builds on C5 (2)
    expect([...changedCells("0000000000000000000000000/1/apollo:B4,A1/mortal:C4,E1", "0010000000000000000000000/2/apollo:C4,A1/mortal:B4,E1")]
      .sort((x, y) => x - y)).toEqual([2, 6, 7]);
  });
  it("marks nothing between two equal boards", () => {
    expect(changedCells("0000000000000000000000000/2/C3,A1/E5,E4", "0000000000000000000000000/2/C3,A1/E5,E4").size).toBe(0);
  });
});

describe("lastTurnStart", () => {
  const setup = ["0000000000000000000000000/1//", "0000000000000000000000000/1/C3/", "0000000000000000000000000/2/C3,B2/",
    "0000000000000000000000000/2/C3,B2/D2", "0000000000000000000000000/1/C3,B2/D2,E1", "0001000000000000000000000/2/C4,B2/D2,E1"];
  it("goes back over both placements of a setup turn", () => {
    expect(lastTurnStart(setup, 2)).toBe(0);
    expect(lastTurnStart(setup, 4)).toBe(2);
    expect([...changedCells(setup[lastTurnStart(setup, 2)], setup[2])].sort((x, y) => x - y)).toEqual([12, 16]);
  });
  it("goes back one position for a first placement and for a move", () => {
    expect(lastTurnStart(setup, 1)).toBe(0);
    expect(lastTurnStart(setup, 3)).toBe(2);
    expect(lastTurnStart(setup, 5)).toBe(4);
  });
});

describe("howWon", () => {
  const heights = Array<number>(25).fill(0);
  heights[2] = 3; // C5 is a level-3 tower
  it("names the cell of a climb, for mortals and gods alike", () => {
    expect(howWon({ heights, workers: [[2, 20], [0, 1]], winner: 0, player: 1, stuck: false }))
      .toBe("player 1 climbed onto level 3 on C5");
    expect(howWon({ heights, workers: [[20, 21], [2, 1]], winner: 1, player: 0, stuck: false, gods: ["atlas", "apollo"] }))
      .toBe("player 2 climbed onto level 3 on C5");
  });
  it("says Pan's drop where no worker of the winner stands on level 3", () => {
    expect(howWon({ heights, workers: [[20, 21], [0, 1]], winner: 1, player: 0, stuck: false, gods: ["atlas", "pan"] }))
      .toBe("player 2's Pan moved down two or more levels");
  });
  it("says who was left without a move", () => {
    expect(howWon({ heights, workers: [[20, 21], [0, 1]], winner: 1, player: 0, stuck: true })).toBe("player 1 cannot move");
    expect(howWon({ heights, workers: [[20, 21], [0, 1]], winner: 1, player: 0, stuck: true, gods: ["pan", "atlas"] }))
      .toBe("player 1 has no legal turn");
  });
});

describe("missedClickText", () => {
  it("names a click that chose nothing, and says when it let the chosen worker go", () => {
    expect(missedClickText(0, {}, {}, false)).toBe("A5 is not highlighted. ");
    expect(missedClickText(24, { from: 12, to: 7 }, {}, false)).toBe("E1 is not highlighted: the worker is let go. ");
  });
  it("says nothing of a click that did something", () => {
    expect(missedClickText(7, { from: 12 }, {}, true)).toBe(""); // played
    expect(missedClickText(13, { from: 12 }, { from: 13 }, false)).toBe(""); // chose another worker
    expect(missedClickText(12, {}, { from: 12 }, false)).toBe(""); // chose a worker
    expect(missedClickText(12, { from: 12 }, {}, false)).toBe(""); // let the chosen worker go, as asked
  });
});
