// The messages between the page and the engine worker, and the shapes of what Python sends back (as JSON).

/** One legal action: a placement (`cell`) or a move (`from` -> `to`, then `build`), with its notation. */
export interface LegalAction {
  text: string;
  cell?: number;
  from?: number;
  to?: number;
  build?: number;
}

/** A position as Python describes it (browser_engine.position_info). */
export interface PositionInfo {
  position: string;
  heights: number[]; // 25 levels, 4 = dome, row by row from A5
  workers: number[][]; // workers[p] = cells of player p's workers
  player: number; // 0 or 1, to move
  setup: boolean; // still placing workers
  winner: number | null;
  legal: LegalAction[];
}

/** One root edge of a search: the move, the network's prior, the search's visits and their share. */
export interface MoveStat extends LegalAction {
  prior: number;
  visits: number;
  share: number;
  q: number | null;
}

/** What a search found (browser_engine.BatchedSearch.result), plus the worker's timing. */
export interface SearchResult {
  move: string | null;
  player: number;
  simulations: number;
  evaluations: number;
  batches: number;
  value: number; // mean backed-up value, for the player to move at the root
  network_value: number; // the network's value of the root
  top_visits: MoveStat[];
  top_priors: MoveStat[];
  cells: { share: number; prior: number }[];
  milliseconds: number; // the whole search, in the worker
  network_milliseconds: number; // of which waiting for onnxruntime-web
  backend: string; // "onnx" or "uniform"
}

export interface ModelStatus {
  loaded: boolean;
  name: string;
  message: string;
}

export type Request =
  | { type: "init"; base: string }
  | { type: "model"; url: string | null; name: string }
  | { type: "info"; id: number; position: string }
  | { type: "play"; id: number; position: string; move: string }
  | { type: "randomStart"; id: number; seed: number }
  | { type: "search"; id: number; position: string; simulations: number; temperature: number; batch: number; seed: number }
  | { type: "cancel" }
  | { type: "evaluate"; id: number; positions: string[] };

export type Reply =
  | { type: "ready"; python: string; milliseconds: number }
  | { type: "model"; status: ModelStatus }
  | { type: "info"; id: number; info: PositionInfo | { error: string } }
  | { type: "play"; id: number; result: { position?: string; error?: string } }
  | { type: "randomStart"; id: number; position: string }
  | { type: "progress"; id: number; done: number; total: number }
  | { type: "search"; id: number; result: SearchResult }
  | { type: "evaluate"; id: number; policy: number[][]; value: number[]; backend: string }
  | { type: "error"; id?: number; message: string };
