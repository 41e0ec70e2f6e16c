// The messages between the page and the engine worker, and the shapes of what Python sends back (as JSON).

/** Which network: the mortal game's (chapter 04) or the god network (chapter 10b). */
export type Game = "mortal" | "gods";

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
  stuck: boolean; // the winner won by leaving the player to move no legal move
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

/** One legal sub-action of a god turn (browser_engine.sub_action_info): 0-24 place, 25 + 25w + c move worker w
 * (from `from`) to c, 75 + c build, 100 + c dome, 125 end. */
export interface SubAction {
  index: number;
  text: string; // "place C3", "move 1 C4", "build D5", "dome D5", "end"
  kind: "place" | "move" | "build" | "dome" | "end";
  cell?: number;
  worker?: number;
  from?: number;
}

/** A node of a god turn as Python describes it (browser_engine.god_info): the board as the steps so far left it. */
export interface GodInfo {
  position: string; // the god position at the start of the turn
  gods: string[]; // gods[p] = player p's god
  heights: number[];
  workers: number[][];
  player: number;
  setup: boolean;
  winner: number | null;
  stuck: boolean; // the winner won by leaving the player to move no legal turn
  athena_up: boolean;
  steps: string[]; // the sub-actions played so far this turn, as text
  legal: SubAction[];
}

/** The engine's god turn (browser_engine.GodTurnSearch.result): the turn, the position after it, and per decision
 * what was chosen; the visit statistics are those of the turn's first decision. */
export interface GodSearchResult extends SearchResult {
  position: string | null;
  sub_actions: number[];
  decisions: { chosen: string; simulations: number; value: number }[];
}

export interface ModelStatus {
  loaded: boolean;
  name: string;
  message: string;
  failure?: string; // a newer model asked for could not be had, and this (loaded before) plays on: why
}

export type Request =
  | { type: "init"; base: string }
  | { type: "model"; game: Game; url: string | null; name: string }
  | { type: "info"; id: number; position: string }
  | { type: "play"; id: number; position: string; move: string }
  | { type: "randomStart"; id: number; seed: number }
  | { type: "search"; id: number; position: string; simulations: number; temperature: number; batch: number; seed: number }
  | { type: "godStart"; id: number; gods: string[]; position: string | null }
  | { type: "godInfo"; id: number; position: string; steps: number[] }
  | { type: "godPlay"; id: number; position: string; steps: number[]; action: number }
  | { type: "godSearch"; id: number; position: string; steps: number[]; simulations: number; temperature: number;
      seed: number; decisions: number; batch: number }
  | { type: "cancel" }
  | { type: "evaluate"; id: number; positions: string[] };

export type Reply =
  | { type: "ready"; python: string; milliseconds: number }
  | { type: "model"; game: Game; status: ModelStatus }
  | { type: "info"; id: number; info: PositionInfo | { error: string } }
  | { type: "play"; id: number; result: { position?: string; error?: string } }
  | { type: "randomStart"; id: number; position: string }
  | { type: "progress"; id: number; done: number; total: number; decision?: number }
  | { type: "search"; id: number; result: SearchResult }
  | { type: "godStart"; id: number; result: { position?: string; error?: string } }
  | { type: "godInfo"; id: number; info: GodInfo | { error: string } }
  | { type: "godPlay"; id: number; result: { steps?: number[]; position?: string; turn?: string; error?: string } }
  | { type: "godSearch"; id: number; result: GodSearchResult }
  | { type: "stopped"; id: number } // a search cancelled or replaced by a newer one: every request gets an answer
  | { type: "evaluate"; id: number; policy: number[][]; value: number[]; backend: string }
  | { type: "error"; id?: number; message: string };
