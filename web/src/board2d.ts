// The 2D board: a grid of buttons, for small screens and for tests (each cell is a button with data-cell).
import { type BoardScene, type BoardView, WORKER_MARKS } from "./board";
import { cellName } from "./selection";

export class Board2D implements BoardView {
  private root: HTMLDivElement;
  private cells: HTMLButtonElement[] = [];

  constructor(container: HTMLElement, onClick: (cell: number) => void) {
    this.root = document.createElement("div");
    this.root.className = "board2d";
    for (let cell = 0; cell < 25; cell++) {
      const button = document.createElement("button");
      button.dataset.cell = String(cell);
      button.title = cellName(cell);
      button.addEventListener("click", () => onClick(cell));
      this.cells.push(button);
      this.root.appendChild(button);
    }
    container.appendChild(this.root);
  }

  draw(scene: BoardScene) {
    const occupant = new Map<number, [number, number]>();
    scene.workers.forEach((cells, p) => cells.forEach((c, w) => occupant.set(c, [p, w])));
    this.cells.forEach((button, cell) => {
      const level = scene.heights[cell];
      const worker = occupant.get(cell);
      button.className = [`level-${level}`, scene.targets.has(cell) ? "target" : "", scene.selected.has(cell) ? "selected" : "",
        scene.hint.includes(cell) ? "hint" : "", scene.last.has(cell) ? "last" : "", worker ? `player-${worker[0]}` : ""].join(" ").trim();
      button.dataset.level = String(level);
      button.dataset.worker = worker ? WORKER_MARKS[worker[0]][worker[1]] : "";
      const share = scene.overlay[cell] ?? 0;
      button.innerHTML = `<span class="level">${level === 4 ? "◉" : level || ""}</span>` +
        (worker ? `<span class="worker">${WORKER_MARKS[worker[0]][worker[1]]}</span>` : "") +
        (share >= 0.01 ? `<span class="share ${scene.overlayKind}">${Math.round(share * 100)}%</span>` : "") +
        `<span class="name">${cellName(cell)}</span>`;
    });
  }

  dispose() { this.root.remove(); }
}
