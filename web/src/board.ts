// What a board view draws, whichever view it is (the 2D grid or the 3D scene).
export interface BoardScene {
  heights: number[]; // 25 levels, 4 = dome
  workers: number[][]; // workers[p][w] = cell
  targets: Set<number>; // cells a click may choose now (legal)
  selected: Set<number>; // cells chosen so far (worker, destination)
  overlay: number[]; // a share in [0, 1] per cell (search visits or network priors), 0 = nothing to draw
  overlayKind: "visits" | "priors" | "";
  hint: number[]; // the cells of a suggested move, in order (worker, destination, build) or (placement)
  last: Set<number>; // the cells the move that led here changed (where a worker left and arrived, what it built)
}

export interface BoardView {
  draw(scene: BoardScene): void;
  dispose(): void;
  screenPoint?(cell: number): { x: number; y: number }; // where a click on `cell` lands (the 3D view: for tests)
  resetView?(): void; // the 3D view: back to the starting camera
}

export const PLAYER_COLOURS = ["#d9534f", "#2c7be5"];
// each worker's number, as the god turns name it ("move 2 D3") and chapter 1's pictures draw it; the colour says whose
export const WORKER_MARKS = [["1", "2"], ["1", "2"]];
