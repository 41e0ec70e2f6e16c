// The page: draws the board, takes clicks, keeps the game's history, and asks the engine worker for everything
// that involves the rules or the network. Nothing here blocks: the worker answers by messages.
import type { BoardScene, BoardView } from "./board";
import { Board2D } from "./board2d";
import { canDome, canEnd, END, type God, godClick, godGuide, GODS, godTargets, parseGods, POWERS } from "./gods";
import type { Game, GodInfo, GodSearchResult, LegalAction, ModelStatus, MoveStat, PositionInfo, Reply, Request, SearchResult,
  SubAction } from "./protocol";
import { changedCells, click, forPlayerOne, howWon, lastTurnStart, missedClickText, moveList, nextClick, type Selection, targets, wonByMoveText } from "./selection";
import "./style.css";

const START = "0000000000000000000000000/1//";
/** The reference system's difficulty names; the numbers are ours: simulations per move and move temperature. */
export const DIFFICULTIES: Record<string, { simulations: number; temperature: number }> = {
  easy: { simulations: 16, temperature: 1.0 },
  medium: { simulations: 100, temperature: 0.5 },
  hard: { simulations: 800, temperature: 0 },
  extreme: { simulations: 3200, temperature: 0 },
};

const params = new URLSearchParams(location.search);
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

// ---- the worker, as promises -------------------------------------------------------------------------------------
const worker = new Worker(new URL("./worker.ts", import.meta.url), { type: "module" });
let nextId = 1;
const waiting = new Map<number, (reply: Reply) => void>();
type WithId = Request extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;

function ask<T extends Reply>(request: WithId): Promise<T> {
  const id = nextId++;
  return new Promise((resolve) => {
    waiting.set(id, resolve as (reply: Reply) => void);
    worker.postMessage({ ...request, id } as Request);
  });
}

const engineReady = new Promise<void>((resolve) => {
  worker.onmessage = (event: MessageEvent<Reply>) => {
    const reply = event.data;
    if (reply.type === "ready") {
      setStatus(`engine ready: Python ${reply.python} under Pyodide (${(reply.milliseconds / 1000).toFixed(1)} s)`);
      resolve();
    } else if (reply.type === "model") onModel(reply.game, reply.status);
    else if (reply.type === "progress") onProgress(reply.id, reply.done, reply.total, reply.decision);
    else if (reply.type === "error" && reply.id === undefined) setStatus(`engine error: ${reply.message}`);
    else if ("id" in reply && reply.id !== undefined) {
      waiting.get(reply.id)?.(reply);
      waiting.delete(reply.id);
    }
  };
});
worker.postMessage({ type: "init", base: new URL(".", location.href).href } satisfies Request);

// ---- the game ----------------------------------------------------------------------------------------------------
const game = {
  positions: [START], // positions[i] is the position after moves[0..i)
  moves: [] as string[],
  index: 0, // the position shown: positions[index]
  human: 0, // the human's player (0 = player 1)
  selection: {} as Selection,
  missed: "", // the guide line's word on the last click, when it chose nothing (missedClickText)
  info: null as PositionInfo | GodInfo | null,
  steps: [] as number[], // with gods: the sub-actions of the human's turn in progress (chapter 02b's GodNode steps)
  thinking: 0, // the id of the engine search under way, 0 = none
  search: null as (SearchResult & { position: string }) | null, // the last search (the engine's move, or a hint)
  network: null as (SearchResult & { position: string; steps: number[] }) | null, // the network alone on the position shown (and the god turn's steps so far)
  evalFrom: "" as "" | "search" | "network", // which of the two the eval bar shows (the newer)
  hint: [] as number[],
  model: { loaded: false, name: "", message: "loading the model ..." } as ModelStatus,
  godModel: { loaded: false, name: "", message: "loading the god network ..." } as ModelStatus,
  modelIds: { mortal: null, gods: null } as Record<Game, string | null>, // the manifest ids of the models in the worker (null: none asked for yet)
  promoted: { mortal: null, gods: null } as Record<Game, string | null>, // a new champion the worker is loading: its name
};
let view: BoardView;

/** A god position names each player's god before its workers ("artemis:C3,D3"): the game is played by the gods rules. */
const isGodPosition = (position: string) => position.includes(":");
const godName = (god: string) => god.charAt(0).toUpperCase() + god.slice(1);
const isGodInfo = (info: PositionInfo | GodInfo): info is GodInfo => "gods" in info;

function difficulty() { return DIFFICULTIES[$<HTMLSelectElement>("difficulty").value] ?? DIFFICULTIES.hard; }
function setStatus(text: string) { $("status").textContent = text; }
/** A part of the page's address it could not use (?position=, ?gods=, ?difficulty=, ?side=), said where it stays
 * in sight: the status line is rewritten as the engine and the models load. */
function noteAddress(text: string) {
  const note = $("addressnote");
  note.textContent = note.textContent ? `${note.textContent} ${text}` : text;
  note.hidden = false;
}

async function positionInfo(position: string): Promise<PositionInfo> {
  const reply = await ask<Extract<Reply, { type: "info" }>>({ type: "info", position });
  if ("error" in reply.info) throw new Error(reply.info.error);
  return reply.info;
}

async function godInfo(position: string, steps: number[]): Promise<GodInfo> {
  const reply = await ask<Extract<Reply, { type: "godInfo" }>>({ type: "godInfo", position, steps });
  if ("error" in reply.info) throw new Error(reply.info.error);
  return reply.info;
}

/** The game in this browser's storage, so that a reload goes on with it (the page's own ?position= starts afresh). */
const SAVED = "santorini_az.game";
function saveGame() {
  try { localStorage.setItem(SAVED, JSON.stringify({ positions: game.positions, moves: game.moves, index: game.index, human: game.human, steps: game.steps })); }
  catch { /* storage may be off (a private window): the game simply is not kept */ }
}

/** The game saved by this page before a reload, if it is one this page can show; else null. */
type SavedGame = { positions: string[]; moves: string[]; index: number; human: number; steps?: number[] };
function savedGame(): SavedGame | null {
  try {
    const saved = JSON.parse(localStorage.getItem(SAVED) ?? "null");
    const fits = saved && Array.isArray(saved.positions) && Array.isArray(saved.moves) && saved.positions.length >= 1 &&
      saved.moves.length === saved.positions.length - 1 && Number.isInteger(saved.index) && saved.index >= 0 &&
      saved.index < saved.positions.length && (saved.human === 0 || saved.human === 1) &&
      (saved.steps === undefined || Array.isArray(saved.steps) && saved.steps.every(Number.isInteger));
    return fits ? saved : null;
  } catch { return null; }
}

async function show() {
  game.missed = ""; // a word on a click is about the position it was made in
  saveGame();
  committed = choices(); // what the game on the board was started with: a change the player takes back returns here
  const position = game.positions[game.index], steps = game.steps;
  const info = isGodPosition(position) ? await godInfo(position, steps) : await positionInfo(position);
  if (position !== game.positions[game.index] || steps !== game.steps) return; // the game moved on while we waited
  game.info = info;
  draw();
  if (info.winner !== null) {
    const who = info.winner === game.human ? "you win" : "the engine wins";
    const how = howWon({ ...info, winner: info.winner, gods: isGodInfo(info) ? info.gods : undefined });
    $("result").textContent = `Player ${info.winner + 1} has won${how ? ` (${how})` : ""}: ${who}.`;
  } else $("result").textContent = "";
  if (info.winner === null && info.player !== game.human && game.index === game.positions.length - 1) think();
  else if (info.winner === null) analyse(position, steps); // the network's view of what is on the board
}

function sceneOf(info: PositionInfo | GodInfo): BoardScene {
  const mine = info.player === game.human && !game.thinking && info.winner === null;
  const legal = mine ? info.legal : [];
  const shown = game.positions[game.index], before = game.positions[game.index - 1];
  const choice = $<HTMLSelectElement>("overlay").value;
  // Visits: a hint for this position, or the engine's search for the move that led here.
  const search = game.search && (game.search.position === shown || game.search.position === before) ? game.search : null;
  const network = networkShown();
  const midTurn = isGodInfo(info) && info.steps.length > 0; // the board shows the turn in progress: no old statistics
  const kind = choice === "visits" && search && !midTurn ? "visits" : choice === "priors" && network ? "priors" : "";
  // a mortal worker stands where it was sent while its build is chosen (a god's steps are positions of their own)
  const { from, to } = game.selection;
  const workers = !isGodInfo(info) && from !== undefined && to !== undefined
    ? info.workers.map((cells) => cells.map((cell) => (cell === from ? to : cell))) : info.workers;
  return {
    heights: info.heights, workers,
    targets: isGodInfo(info) ? godTargets(legal as SubAction[], game.selection) : targets(legal as LegalAction[], game.selection),
    selected: new Set([game.selection.from, game.selection.to].filter((c): c is number => c !== undefined)),
    overlay: kind === "visits" ? search!.cells.map((c) => c.share) : kind === "priors" ? network!.cells.map((c) => c.prior) : [],
    overlayKind: kind, hint: game.hint,
    last: before !== undefined && !midTurn ? changedCells(game.positions[lastTurnStart(game.positions, game.index)], shown) : new Set(),
  };
}

/** What the marks on the board mean, for the marks drawn now. */
function legend(scene: BoardScene): string {
  const flat = view instanceof Board2D, parts = [];
  if (scene.last.size) parts.push(`${flat ? "dashed squares" : "white rings"}: what the last turn changed`);
  if (scene.overlayKind === "visits") parts.push(`orange ${flat ? "percentages" : "discs"}: the last search's visits, by the cell each move goes to`);
  if (scene.overlayKind === "priors") parts.push(`purple ${flat ? "percentages" : "discs"}: the network's priors, by the cell each move goes to`);
  if (scene.hint.length) parts.push(`${flat ? "purple borders" : "purple rings"}: the hint`);
  return parts.length ? `On the board: ${parts.join("; ")}.` : "";
}

function draw() {
  const info = game.info;
  if (!info) return;
  const scene = sceneOf(info);
  view.draw(scene);
  $("legend").textContent = legend(scene);
  const god = isGodInfo(info) ? ` (${godName(info.gods[info.player])})` : "";
  $("turn").textContent = info.winner !== null ? "game over"
    : `player ${info.player + 1}${god} to ${info.setup ? "place a worker" : "move and build"}` +
      (info.player === game.human ? " (you)" : " (engine)");
  drawTurnGuide(info);
  $<HTMLInputElement>("position").value = info.position;
  const shown = game.moves.slice(0, game.index);
  if (info.winner !== null && !info.stuck && shown.length) shown.push(wonByMoveText(shown.pop()!)); // the winning turn
  $("moves").innerHTML = moveList(shown).map((line) => `<div>${line}</div>`).join("");
  $<HTMLButtonElement>("undo").disabled = previousTurn() < 0 && !game.steps.length;
  if (!game.hint.length) $("hinttext").textContent = ""; // a hint is for the position it was asked in
  $<HTMLButtonElement>("redo").disabled = game.index >= game.positions.length - 1;
  // a hint is for the human's turn: not once the game is over, nor while the engine thinks or is to move
  $<HTMLButtonElement>("hint").disabled = info.winner !== null || info.player !== game.human || game.thinking !== 0;
  drawInsight();
}

/** The guide line: what a click does now (with gods: also the turn so far, the End turn button and Atlas's dome box). */
function drawTurnGuide(info: PositionInfo | GodInfo) {
  const mine = info.player === game.human && !game.thinking && info.winner === null;
  const legal = mine && isGodInfo(info) ? info.legal : [];
  $<HTMLButtonElement>("endturn").hidden = !canEnd(legal);
  $("domebox").hidden = !canDome(legal);
  const steps = isGodInfo(info) ? info.steps : [];
  const dome = canDome(legal) && $<HTMLInputElement>("dome").checked;
  $("godturn").textContent = !mine ? "" : game.missed + (!isGodInfo(info) ? nextClick(info.legal, game.selection)
    : (steps.length ? `this turn so far: ${steps.join(", ")}. ` : "") +
      godGuide(legal, game.selection, steps.length, dome, info.gods[info.player] as God, info.athena_up));
}

function drawInsight() {
  const latest = game.evalFrom === "search" ? game.search : game.evalFrom === "network" ? game.network : null;
  const over = game.info !== null && game.info.winner !== null ? game.info.winner : null;
  const bar = (score: number, text: string, source: string) => {
    $("evalfill").style.height = `${(score * 100).toFixed(1)}%`;
    $("evaltext").textContent = text;
    $("evalsource").textContent = source;
  };
  if (over !== null) bar(over === 0 ? 1 : 0, over === 0 ? "+1.00" : "-1.00", `the game is over: player ${over + 1} won`);
  else if (latest) {
    const { value, score } = forPlayerOne(latest.value, latest.player);
    bar(score, `${value >= 0 ? "+" : ""}${value.toFixed(2)}`, latest.simulations > 0
      ? `player 1's view, from a search of ${latest.simulations} simulations` : "player 1's view, from the network alone");
  } else bar(0.5, "0.00", ""); // nothing measured on this position yet: no old number stays up
  const rows = (moves: MoveStat[], visits: boolean) => moves.slice(0, 6).map((m) =>
    `<tr><td>${m.text}</td><td>${(m.prior * 100).toFixed(1)}%</td>${visits ? `<td>${(m.share * 100).toFixed(1)}%</td>` : ""}</tr>`).join("");
  const network = networkShown();
  $("networkhead").hidden = !network; // no heading over an empty table
  $("searchhead").hidden = !game.search?.simulations;
  $("networkmoves").innerHTML = network ? `<tr><th>move</th><th>prior</th></tr>` + rows(network.top_priors ?? [], false) : "";
  const search = game.search;
  $("searchmoves").innerHTML = search?.simulations
    ? `<tr><th>move</th><th>prior</th><th>visits</th></tr>` + rows(search.top_visits ?? [], true) : "";
  $("speed").textContent = search?.simulations ? speedLine(search) : "";
}

/** What the last search did, beside its tables: a god turn may take several decisions, each searched, and the tables
 * are its first decision's. */
function speedLine(search: SearchResult) {
  const decisions = "decisions" in search ? (search as GodSearchResult).decisions : [];
  const inTurn = decisions.reduce((sum, d) => sum + d.simulations, 0);
  const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
  return `${search.move}: ${plural(search.simulations, "simulation")}` +
    (decisions.length > 1 ? ` for the first of its ${decisions.length} decisions (the tables), ${inTurn} in the turn,` : "") +
    ` in ${(search.milliseconds / 1000).toFixed(2)} s ` +
    `(${search.backend === "onnx" ? "network" : "uniform prior"}` +
    `, ${plural(search.evaluations, "position")} evaluated` +
    (search.batches ? `, ${plural(search.batches, "batch", "batches")}` : "") +
    (search.evaluations < Math.max(inTurn, search.simulations) / 2 ? "; a simulation that ends on a won game needs no network call" : "") +
    ")";
}

function onProgress(id: number, done: number, total: number, decision?: number) {
  if (id !== game.thinking) return;
  $("thinking").textContent = `thinking: ${decision ? `decision ${decision} of the turn, ` : ""}${done} / ${total} simulations`;
}

/** The engine's random seed for its next move: from `?seed=N` (the same game for the same clicks), else random. */
function searchSeed(): number {
  const given = params.get("seed");
  return given === null ? Math.floor(Math.random() * 2 ** 31) : (Number(given) + game.index) % 2 ** 31;
}

async function think() {
  const position = game.positions[game.index];
  const { simulations, temperature } = difficulty();
  const batch = Number(params.get("batch") ?? 16);
  if (isGodPosition(position)) { // a search per decision of the turn, on the god network
    const result = await engineSearch<GodSearchResult>(position, {
      type: "godSearch", position, steps: [], simulations, temperature, seed: searchSeed(), decisions: 0, batch });
    if (result?.position && result.move) await pushTurn(result.move, result.position, position);
    return;
  }
  const result = await engineSearch<SearchResult>(position, {
    type: "search", position, simulations, temperature, batch, seed: searchSeed() });
  if (result?.move) await playMove(result.move, position);
}

/** The engine thinks about `position` (the worker answers `request`), with the page's thinking state around it: the
 * search's result, or null when it failed, was stopped or is stale (undone or restarted meanwhile). */
async function engineSearch<R extends SearchResult>(position: string, request: WithId): Promise<R | null> {
  const id = nextId; // ask() takes this id
  game.thinking = id;
  game.hint = [];
  $("thinking").textContent = "thinking ...";
  draw();
  const started = performance.now();
  const reply = await ask<Extract<Reply, { type: "search" | "godSearch" | "stopped" | "error" }>>(request);
  hooks.thinking.push([started, performance.now()]);
  if (game.thinking !== id) return null;
  game.thinking = 0;
  $("thinking").textContent = "";
  if (reply.type === "stopped") return null;
  if (reply.type === "error") { setStatus(`engine error: ${reply.message}`); return null; }
  game.search = { ...reply.result, position };
  game.evalFrom = "search";
  hooks.searches.push(game.search);
  return reply.result as R; // the reply to `request`: a god search's result for a godSearch request
}

/** Add a whole turn (notation) that led from `from` to `to` to the game, and show the new position. */
async function pushTurn(move: string, to: string, from: string) {
  if (from !== game.positions[game.index]) return;
  game.positions = [...game.positions.slice(0, game.index + 1), to];
  game.moves = [...game.moves.slice(0, game.index), move];
  game.index++;
  game.selection = {};
  game.steps = [];
  game.hint = [];
  await show();
}

/** The human's sub-action `action` in the god turn in progress: the turn goes on, or is whole and played. */
async function playSubAction(action: number) {
  const position = game.positions[game.index], steps = game.steps;
  const reply = await ask<Extract<Reply, { type: "godPlay" }>>({ type: "godPlay", position, steps, action });
  if (position !== game.positions[game.index] || steps !== game.steps) return;
  const result = reply.result;
  if (result.error) { setStatus(`illegal step: ${result.error}`); return; }
  game.selection = {};
  game.hint = [];
  if (result.steps) { game.steps = result.steps; await show(); }
  else await pushTurn(result.turn!, result.position!, position);
}

/** The network's view of `position` (with gods: of the node its turn's `steps` so far reach): its priors and value,
 * from a search of no simulations. A god decision with one legal sub-action, or a turn already won, asks the network
 * nothing (no evaluations): its one move is shown, and the eval bar keeps what it had. */
async function analyse(position: string, steps: number[]) {
  const reply = await ask<Extract<Reply, { type: "search" | "godSearch" }>>(isGodPosition(position)
    ? { type: "godSearch", position, steps, simulations: 0, temperature: 0, seed: 0, decisions: 1, batch: 1 }
    : { type: "search", position, simulations: 0, temperature: 0, batch: 1, seed: 0 });
  if (position !== game.positions[game.index] || steps !== game.steps || game.thinking) return;
  if (reply.type !== "search" && reply.type !== "godSearch") return;
  game.network = { ...reply.result, position, steps };
  if (reply.result.evaluations && reply.result.backend === "onnx") game.evalFrom = "network"; // not the uniform stand-in
  else if (game.evalFrom === "network") game.evalFrom = "";
  draw();
}

/** The network's view, if it is of what the board shows now (the position, and with gods the turn's steps so far). */
function networkShown() {
  const network = game.network;
  return network?.position === game.positions[game.index] && network.steps === game.steps ? network : null;
}

async function playMove(move: string, from: string) {
  if (from !== game.positions[game.index]) return;
  const reply = await ask<Extract<Reply, { type: "play" }>>({ type: "play", position: from, move });
  if (from !== game.positions[game.index]) return; // played meanwhile (a double click): once is enough
  if (!reply.result.position) { setStatus(`illegal move ${move}: ${reply.result.error}`); return; }
  game.positions = [...game.positions.slice(0, game.index + 1), reply.result.position];
  game.moves = [...game.moves.slice(0, game.index), move];
  game.index++;
  game.selection = {};
  game.hint = [];
  await show();
}

function onCellClick(cell: number) {
  const info = game.info;
  if (!info || game.thinking || info.winner !== null || info.player !== game.human) return;
  if (isGodInfo(info)) {
    const domeBox = $<HTMLInputElement>("dome");
    const next = godClick(info.legal, game.selection, cell, domeBox.checked);
    game.missed = missedClickText(cell, game.selection, next.selection, next.action !== undefined);
    game.selection = next.selection;
    if (next.action !== undefined) {
      domeBox.checked = false; // Atlas's choice is for one build: the next one is a block again unless ticked again
      playSubAction(next.action);
    } else draw();
    return;
  }
  const next = click(info.legal, game.selection, cell, info.heights);
  game.missed = missedClickText(cell, game.selection, next.selection, next.move !== undefined);
  game.selection = next.selection;
  if (next.move) playMove(next.move, info.position);
  else draw();
}

function cancelThinking() {
  worker.postMessage({ type: "cancel" } satisfies Request); // the engine's move, or a hint (which does not set thinking)
  game.thinking = 0;
  $("thinking").textContent = "";
}

function undo() {
  cancelThinking();
  if (game.steps.length) { game.steps = []; resetInsight(); show(); return; } // back to the start of this turn
  // Back to the last position where it is the human's turn (the engine's reply and the human's move both go); none
  // when the engine opened the game and the human has not moved yet: then nothing changes (the engine goes on).
  const back = previousTurn();
  if (back >= 0) { game.index = back; resetInsight(); }
  show();
}

/** The index of the last position before this one where the human is to move, or -1. */
function previousTurn(): number {
  let i = game.index - 1;
  while (i >= 0 && whoMoves(game.positions[i]) !== game.human) i--;
  return i;
}

function redo() {
  cancelThinking();
  do game.index++; while (game.index < game.positions.length - 1 && whoMoves(game.positions[game.index]) !== game.human);
  game.index = Math.min(game.index, game.positions.length - 1);
  resetInsight();
  show();
}

const whoMoves = (position: string) => Number(position.split("/")[1]) - 1; // the notation's second field

function resetInsight() {
  game.selection = {}; game.steps = []; game.hint = []; $("hinttext").textContent = "";
  $<HTMLInputElement>("dome").checked = false;
}

/** Another game on the board: the last search (the engine's move or a hint) was of the one before, so it goes. */
function forgetLastSearch() {
  game.search = null;
  if (game.evalFrom === "search") game.evalFrom = "";
}

async function newGame(start: string) {
  cancelThinking();
  restored = false;
  game.human = Number($<HTMLSelectElement>("side").value);
  game.positions = [start];
  game.moves = [];
  game.index = 0;
  resetInsight();
  forgetLastSearch();
  setStatus(readyText(start));
  await show();
}

// ---- the gods: the two pickers, and the start of a game with them ---------------------------------------------------
/** What the engine plays god games with: the god network (chapter 10b) if it loaded, else the uniform prior. */
const godNote = () => game.godModel.loaded
  ? "The engine plays both gods with the god network (one network for every match-up), searching each step of a turn."
  : !game.godModel.name ? "loading the god network ..."
  : "No god network: the engine searches the gods with uniform priors, a weaker player.";

/** The status line once the engine is ready: which network the engine plays this game with (the models' names are
 * at the bottom of the side panel). */
function readyText(start: string): string {
  const gods = isGodPosition(start), model = gods ? game.godModel : game.model;
  const network = gods ? "god network" : "network";
  if (!model.name) return `loading the ${network} ...`;
  const ready = model.loaded ? `ready: the engine searches with the trained ${network}`
    : `ready, without a ${network}: the engine searches with uniform priors (see the bottom of the panel)`;
  return ready + (restored ? "; this is the game you were playing, where you left it (New game starts another)" : "");
}
let restored = false; // the game on the board came back from a reload (the status line says so until a new game)

/** The gods of the game, as (player 1's, player 2's), from the two pickers and the side the human plays. */
function chosenGods(): [God, God] {
  const yours = $<HTMLSelectElement>("yourgod").value as God, engines = $<HTMLSelectElement>("enginegod").value as God;
  return Number($<HTMLSelectElement>("side").value) === 0 ? [yours, engines] : [engines, yours];
}

function drawPowers() {
  const yours = $<HTMLSelectElement>("yourgod").value as God, engines = $<HTMLSelectElement>("enginegod").value as God;
  $("yourpower").textContent = POWERS[yours];
  $("enginepower").textContent = POWERS[engines];
  $("godnote").textContent = yours === "mortal" && engines === "mortal" ? "" : godNote();
}

/** The position to start from: `mortal` (notation; null = the empty board) with the chosen gods, if any. */
async function startingPosition(mortal: string | null): Promise<string> {
  const gods = chosenGods();
  if (gods[0] === "mortal" && gods[1] === "mortal") return mortal ?? START;
  const reply = await ask<Extract<Reply, { type: "godStart" }>>({ type: "godStart", gods, position: mortal });
  if (reply.result.error) throw new Error(reply.result.error);
  return reply.result.position!;
}

/** Set the pickers from a god position's gods (the human's side decides which is whose). */
function setPickers(gods: string[]) {
  const side = Number($<HTMLSelectElement>("side").value);
  $<HTMLSelectElement>("yourgod").value = gods[side];
  $<HTMLSelectElement>("enginegod").value = gods[1 - side];
  drawPowers();
}

async function hint() {
  const info = game.info;
  if (!info || game.thinking || info.winner !== null || info.player !== game.human) return;
  if (isGodInfo(info)) return godHint(info);
  const position = info.position;
  $("thinking").textContent = "looking for a hint ...";
  const reply = await ask<Extract<Reply, { type: "search" }>>({
    type: "search", position, simulations: Math.max(200, difficulty().simulations), temperature: 0, batch: 16, seed: 1 });
  $("thinking").textContent = "";
  if (reply.type !== "search" || position !== game.positions[game.index] || !reply.result.move) return;
  game.search = { ...reply.result, position };
  game.evalFrom = "search";
  const best = reply.result.top_visits[0];
  game.hint = best.cell !== undefined ? [best.cell] : [best.from!, best.to!, best.build!];
  $("hinttext").textContent = `hint: ${reply.result.move}`;
  draw();
}

/** With gods: the search's best next sub-action of the turn in progress (one decision). */
async function godHint(info: GodInfo) {
  const position = info.position, steps = game.steps;
  $("thinking").textContent = "looking for a hint ...";
  const reply = await ask<Extract<Reply, { type: "godSearch" }>>({ type: "godSearch", position, steps,
    simulations: Math.max(200, difficulty().simulations), temperature: 0, seed: 1, decisions: 1, batch: 16 });
  $("thinking").textContent = "";
  if (reply.type !== "godSearch" || position !== game.positions[game.index] || steps !== game.steps || !reply.result.move) return;
  game.search = { ...reply.result, position };
  game.evalFrom = "search";
  // by number (the search's sub-actions begin with the turn's steps so far): a placement is a whole turn, which the
  // search writes "B5" where the legal list has "place B5"
  const best = info.legal.find((a) => a.index === reply.result.sub_actions[steps.length]);
  game.hint = best?.from !== undefined ? [best.from, best.cell!] : best?.cell !== undefined ? [best.cell] : [];
  $("hinttext").textContent = `hint: ${reply.result.move}`;
  draw();
}

/** Start from the position in notation `text`: a god position sets the pickers; a mortal one takes the chosen gods. */
async function startFrom(text: string) {
  if (isGodPosition(text)) {
    const info = await godInfo(text, []);
    setPickers(info.gods);
    return newGame(info.position);
  }
  const info = await positionInfo(text);
  await newGame(await startingPosition(info.position));
}

/** Go on with a saved game: its positions, moves and side, at the position it showed. */
async function resume(saved: SavedGame) {
  const start = saved.positions[0];
  $<HTMLSelectElement>("side").value = String(saved.human);
  if (isGodPosition(start)) setPickers((await godInfo(start, [])).gods);
  else {
    await positionInfo(start); // a position this version cannot read fails here
    setPickers(["mortal", "mortal"]); // the address's ?gods=, if any, is not this game's (reloaded after the pickers changed)
  }
  Object.assign(game, { positions: saved.positions, moves: saved.moves, index: saved.index, human: saved.human });
  resetInsight();
  forgetLastSearch();
  game.steps = saved.steps ?? []; // a god turn in progress goes on where it was (after resetInsight, which clears it)
  restored = true;
  setStatus(readyText(start));
  await show();
}

async function loadPosition() {
  const text = $<HTMLInputElement>("position").value.trim();
  try {
    await startFrom(text);
    $("positionerror").textContent = "";
  } catch (error) {
    $("positionerror").textContent = (error as Error).message;
  }
}

// ---- the models: shipped, or the live champion of `santorini_az serve` ---------------------------------------------
/** One network the page may load: the mortal one, or the god network (the manifest's `god` entry). */
interface ModelEntry { id: string; name: string; url: string | null; reason?: string }
interface Manifest extends ModelEntry { god?: ModelEntry }

function onModel(which: Game, status: ModelStatus) {
  if (which === "gods") game.godModel = status;
  else game.model = status;
  const line = $(which === "gods" ? "godmodel" : "model");
  line.textContent = `${which === "gods" ? "God network" : "Network"}: ${status.message}`;
  line.className = `small ${status.loaded ? "ok" : "warning"}`;
  const promoted = game.promoted[which];
  if (promoted !== null) { // the banner says what came of a promotion once the worker has tried it
    game.promoted[which] = null;
    const champion = `A new ${which === "gods" ? "god " : ""}champion (${promoted})`;
    $("champion").textContent = status.failure === undefined
      ? `${champion} was promoted: the engine switched to it without a reload.`
      : `${champion} was named, but ${status.failure}: the engine keeps ${status.name}.`;
    $("champion").classList.toggle("failed", status.failure !== undefined);
    $("champion").hidden = false;
  }
  drawPowers();
  setStatus(readyText(game.positions[0]));
}

/** `entry` with its url made absolute (relative to models/), or the entry `?PARAMETER=URL` names instead. */
function modelEntry(entry: ModelEntry | undefined, parameter: string, what: string): ModelEntry {
  const override = params.get(parameter);
  if (override !== null) // relative to the page (the worker that fetches it would read it relative to its own script)
    return { id: override, name: override.split("/").pop() || "none given", url: override ? new URL(override, location.href).href : null };
  if (!entry) return { id: "none", name: "none", url: null, reason: `the manifest names no ${what}` };
  return { ...entry, url: entry.url ? new URL(entry.url, new URL("models/", location.href)).href : null };
}

async function fetchManifest(): Promise<Record<Game, ModelEntry>> {
  let manifest: Manifest | undefined, reason = "";
  try {
    const response = await fetch("models/manifest.json", { cache: "no-store" });
    if (response.ok) manifest = (await response.json()) as Manifest;
    else reason = `no models/manifest.json (HTTP ${response.status})`;
  } catch (error) { reason = (error as Error).message; }
  const missing = { id: "none", name: "none", url: null, reason };
  return { mortal: modelEntry(manifest ?? missing, "model", "model"), gods: modelEntry(manifest ? manifest.god : missing, "godmodel", "god network") };
}

async function watchModel() {
  const manifest = await fetchManifest();
  for (const which of ["mortal", "gods"] as Game[]) {
    const entry = manifest[which];
    if (entry.id === game.modelIds[which]) continue;
    const first = game.modelIds[which] === null;
    game.modelIds[which] = entry.id;
    if (!first) game.promoted[which] = entry.name; // onModel says what came of it
    worker.postMessage({ type: "model", game: which, url: entry.url, name: entry.reason ?? entry.name } satisfies Request);
  }
  const every = Number(params.get("poll") ?? 5000);
  if (params.get("model") === null && params.get("godmodel") === null && every > 0) setTimeout(watchModel, every);
}

// ---- wiring --------------------------------------------------------------------------------------------------------
let viewChoice = 0; // the latest chooseView: one still loading three.js when another is made gives way to it
async function chooseView(kind: string) {
  const choice = ++viewChoice;
  view?.dispose();
  const container = $("board");
  try {
    // three.js is loaded only for the 3D view, so the 2D page downloads less
    const Board = kind === "3d" ? (await import("./board3d")).Board3D : Board2D;
    if (choice !== viewChoice) return;
    view = new Board(container, onCellClick);
    $("resetview").hidden = !view.resetView;
  } catch (error) {
    if (choice !== viewChoice) return;
    setStatus(`3D view unavailable (${(error as Error).message}): using the 2D board`);
    view = new Board2D(container, onCellClick);
    $("resetview").hidden = true;
  }
  draw();
}
const urlView = params.get("view"), defaultView = window.innerWidth < 700 ? "2d" : "3d";
const startView = urlView === "2d" || urlView === "3d" ? urlView : defaultView;
$<HTMLSelectElement>("view").value = startView; // the picker shows the view drawn (it was blank for ?view=4d)
$<HTMLSelectElement>("view").onchange = (e) => chooseView((e.target as HTMLSelectElement).value);
/** May a new game start? Yes if none is under way, else if the player agrees to end it. */
function mayEndGameUnderWay(): boolean {
  const underWay = game.moves.length > 0 && game.info !== null && game.info.winner === null;
  return !underWay || confirm("Start a new game? The game under way ends (Undo cannot bring it back).");
}
$("newstandard").onclick = async () => { if (mayEndGameUnderWay()) newGame(await startingPosition(null)); };
// a new side is a new game at once, as a new god is (the engine opens it when you play second), once the player
// agrees to end a game under way
const CHOICES = ["side", "yourgod", "enginegod"];
const choices = () => CHOICES.map((id) => $<HTMLSelectElement>(id).value);
let committed = choices();
async function newGameFromChoices() {
  if (!mayEndGameUnderWay()) {
    CHOICES.forEach((id, i) => { $<HTMLSelectElement>(id).value = committed[i]; });
    drawPowers();
    return;
  }
  drawPowers();
  await newGame(await startingPosition(null));
}
$<HTMLSelectElement>("side").onchange = newGameFromChoices;
$("newrandom").onclick = async () => {
  if (!mayEndGameUnderWay()) return;
  const reply = await ask<Extract<Reply, { type: "randomStart" }>>({ type: "randomStart", seed: Math.floor(Math.random() * 2 ** 31) });
  newGame(await startingPosition(reply.position));
};
for (const id of ["yourgod", "enginegod"]) {
  const picker = $<HTMLSelectElement>(id);
  picker.innerHTML = GODS.map((god) => `<option value="${god}">${godName(god)}</option>`).join("");
  picker.onchange = newGameFromChoices;
}
$("endturn").onclick = () => {
  const info = game.info;
  if (info && isGodInfo(info) && !game.thinking && info.player === game.human && canEnd(info.legal)) playSubAction(END);
};
$<HTMLInputElement>("dome").onchange = () => { game.missed = ""; draw(); }; // a word on an earlier click is stale now
$("undo").onclick = undo;
$("resetview").onclick = () => view.resetView?.();
$("redo").onclick = redo;
$("hint").onclick = hint;
$("load").onclick = loadPosition;
$("copy").onclick = async () => {
  const text = $<HTMLInputElement>("position").value;
  try { await navigator.clipboard.writeText(text); $("positionerror").textContent = "copied"; }
  catch { $<HTMLInputElement>("position").select(); $("positionerror").textContent = "select and copy the text"; }
};
$<HTMLSelectElement>("overlay").onchange = draw;
const urlDifficulty = params.get("difficulty"), urlSide = params.get("side");
if (urlDifficulty !== null && Object.keys(DIFFICULTIES).includes(urlDifficulty)) $<HTMLSelectElement>("difficulty").value = urlDifficulty;
else if (urlDifficulty !== null) noteAddress(`?difficulty=${urlDifficulty} is not one of ${Object.keys(DIFFICULTIES).join(", ")}: playing at hard.`);
if (urlView !== null && urlView !== startView) noteAddress(`?view=${urlView} is not 2d or 3d: showing the ${startView.toUpperCase()} board.`);
if (urlSide === "1" || urlSide === "2") $<HTMLSelectElement>("side").value = String(Number(urlSide) - 1);
else if (urlSide !== null) noteAddress(`?side=${urlSide} is not 1 or 2: you play player 1.`);
const urlGods = parseGods(params.get("gods"));
if (urlGods.unknown.length) noteAddress(`unknown god ${urlGods.unknown.join(", ")} in ?gods= (the gods are ${GODS.join(", ")}): playing a mortal.`);
$<HTMLSelectElement>("yourgod").value = urlGods.gods[0];
$<HTMLSelectElement>("enginegod").value = urlGods.gods[1];
drawPowers();
chooseView(startView);

// Hooks for tests and curious readers (the browser console): the game, the searches, the network on positions.
const hooks = {
  game, searches: [] as SearchResult[], thinking: [] as [number, number][], // the engine's searches and when they ran
  evaluate: (positions: string[]) => ask({ type: "evaluate", positions }),
  search: (position: string, simulations: number, batch = 16, temperature = 0, seed = 0) =>
    ask({ type: "search", position, simulations, temperature, batch, seed }),
  // the engine's god turn from `position` (decisions = 1: its first decision only, as a hint is)
  godSearch: (position: string, simulations: number, batch = 16, decisions = 0, steps: number[] = []) =>
    ask({ type: "godSearch", position, steps, simulations, temperature: 0, batch, seed: 0, decisions }),
  ready: engineReady,
  cellPoint: (cell: number) => view.screenPoint?.(cell), // where a click on `cell` lands in the 3D view
};
(window as unknown as { santorini: typeof hooks }).santorini = hooks;

engineReady.then(async () => {
  await watchModel();
  // ?position=, ?gods= and ?side= start a new game when the address is opened; a reload of it, or Back or Forward to
  // it, goes on with the game (the pickers may have changed side or gods since: the saved game has them)
  const navigation = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming | undefined;
  const returned = navigation?.type === "reload" || navigation?.type === "back_forward";
  const opened = !returned && (params.has("position") || params.has("gods") || params.has("side"));
  const saved = opened ? null : savedGame();
  if (saved) {  // the game this browser was playing before a reload
    try { await resume(saved); return; }
    catch { localStorage.removeItem(SAVED); } // a game this version cannot show: a new one instead
  }
  try { await startFrom(params.get("position") ?? START); }
  catch (error) {
    noteAddress(`?position= or ?gods= not understood (${(error as Error).message}): a new game instead.`);
    await newGame(await startingPosition(null));
  }
});
