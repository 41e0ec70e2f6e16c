// The engine worker: the package's Python (rules, notation, encoding, search) under Pyodide, and the network on
// onnxruntime-web. Everything slow happens here, so the page's thread only draws.
import type { PyodideInterface } from "pyodide";
import type { NetReply, NetRequest } from "./net";
import type { Game, GodSearchResult, Reply, Request, SearchResult } from "./protocol";

type PyProxy = any; // eslint-disable-line @typescript-eslint/no-explicit-any

let pyodide: PyodideInterface;
let engine: PyProxy; // the browser_engine module
// Does the network worker hold a working model for each game, and which (its name, or "uniform" without one)?
const models: Record<Game, { loaded: boolean; name: string }> = {
  mortal: { loaded: false, name: "uniform" },
  gods: { loaded: false, name: "uniform" },
};
const IN_FLIGHT = 2; // batches out at once: the network works on one while Python selects the next
let currentSearch = 0; // the id of the search that may run; a newer search or a cancel stops an older one
let latestSearch = 0; // the newest search asked for, and the newest a cancel stopped (one waiting for its model too)
let cancelledUpTo = 0;
let resolveReady: () => void = () => undefined;
const ready = new Promise<void>((resolve) => (resolveReady = resolve));

const post = (reply: Reply) => (self as unknown as Worker).postMessage(reply);
const now = () => performance.now();
const pause = () => new Promise((resolve) => setTimeout(resolve, 0)); // let queued messages (cancel) in

async function init(base: string) {
  const start = now();
  const { loadPyodide } = await import(/* @vite-ignore */ `${base}pyodide/pyodide.mjs`);
  pyodide = (await loadPyodide({ indexURL: `${base}pyodide/` })) as PyodideInterface;
  const files: string[] = await (await fetch(`${base}py/files.json`)).json();
  pyodide.FS.mkdirTree("/home/pyodide/santorini_az");
  pyodide.FS.writeFile("/home/pyodide/santorini_az/__init__.py", "");
  for (const file of files) {
    const response = await fetch(`${base}py/${file}`);
    if (!response.ok) throw new Error(`cannot fetch ${file}: HTTP ${response.status}`);
    pyodide.FS.writeFile(`/home/pyodide/${file}`, await response.text());
  }
  engine = pyodide.pyimport("browser_engine");
  const python = pyodide.runPython("import sys; sys.version.split()[0]") as string;
  post({ type: "ready", python, milliseconds: now() - start });
  resolveReady();
}

// ---- the network worker, as promises ------------------------------------------------------------------------------
const net = new Worker(new URL("./net.ts", import.meta.url), { type: "module" });
const netWaiting = new Map<number, (reply: NetReply) => void>();
let netId = 1;
net.onmessage = (event: MessageEvent<NetReply>) => {
  netWaiting.get(event.data.id)?.(event.data);
  netWaiting.delete(event.data.id);
};
function askNet<T extends NetReply>(request: NetRequest, transfer: Transferable[] = []): Promise<T> {
  return new Promise((resolve) => {
    netWaiting.set(request.id, resolve as (reply: NetReply) => void);
    net.postMessage(request, transfer);
  });
}

async function loadModel(game: Game, url: string | null, name: string) {
  const previous = models[game]; // searches wait while this loads (modelReady), so they never see a half-made swap
  const uniform = "the engine plays a uniform-prior search (every move equally likely): a weaker player";
  let failure: string; // why the model asked for cannot be had
  if (!url) failure = name; // the manifest's reason
  else try {
    const response = await fetch(url, { cache: "no-store" });
    if (!response.ok) throw new Error(`HTTP ${response.status} for ${url}`);
    const model = await response.arrayBuffer();
    const reply = await askNet<Extract<NetReply, { type: "loaded" }>>({ type: "load", id: netId++, game, model }, [model]);
    if (reply.error) throw new Error(reply.error);
    models[game] = { loaded: true, name };
    post({ type: "model", game, status: { loaded: true, name, message: `loaded: ${name}` } });
    return;
  } catch (error) { failure = `the model ${name} failed to load (${(error as Error).message})`; }
  if (previous.loaded) { // a new model that cannot be had does not take the working one away (the network worker kept it)
    post({ type: "model", game, status: { loaded: true, name: previous.name, message: `loaded: ${previous.name}`, failure } });
    return;
  }
  models[game] = { loaded: false, name: "uniform" };
  post({ type: "model", game, status: { loaded: false, name, message: `${url ? failure : `no model (${name})`}: ${uniform}` } });
}

/** Evaluate float32 planes [n, 5, 5, 9] (or [n, 5, 5, 36] with gods) on the game's network: softmax policies and values. */
async function evaluatePlanes(game: Game, planes: Float32Array, n: number) {
  const buffer = planes.slice().buffer;
  const reply = await askNet<Extract<NetReply, { type: "result" }>>({ type: "run", id: netId++, game, planes: buffer, n }, [buffer]);
  if (reply.error) throw new Error(`the network failed: ${reply.error}`);
  return { policy: reply.policy, value: reply.value };
}

function bytesToFloats(proxy: PyProxy): Float32Array {
  const bytes: Uint8Array = proxy.toJs();
  proxy.destroy();
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
}

/** Run a Python search (`BatchedSearch`, or `GodTurnSearch` with gods) to the end: IN_FLIGHT batches at the game's
 * network while Python selects the next, progress every 50 ms, stopping when cancelled or replaced by a newer search.
 * The result's JSON with the timings, or null when stopped. An analysis (no simulations: the network's view of the
 * root alone) stops no search and is not stopped. */
async function runSearch(id: number, game: Game, search: PyProxy, total: number, temperature = 0): Promise<SearchResult | null> {
  const stoppable = total > 0;
  if (stoppable && id <= cancelledUpTo) { search.destroy(); return null; } // cancelled while it waited for a model
  if (stoppable) currentSearch = id;
  const useNet = models[game].loaded; // a model swap during a search takes effect at the next search
  const start = now();
  const inFlight: Promise<{ policy: Float32Array; value: Float32Array }>[] = [];
  let lastBreak = now();
  let networkMilliseconds = 0;
  try {
    while (!search.done()) {
      // Keep IN_FLIGHT batches at the network; Python selects the next while the network works.
      while (useNet && inFlight.length < IN_FLIGHT) {
        const planes = search.collect();
        if (planes === undefined || planes === null) break;
        inFlight.push(evaluatePlanes(game, bytesToFloats(planes), search.pending()));
      }
      if (useNet) {
        // Nothing out: every leaf selected ended the game and used up the simulations (a forced win, say).
        if (!inFlight.length) { if (search.done()) break; throw new Error("the search is stuck: nothing to evaluate and not done"); }
        const before = now();
        const { policy, value } = await inFlight.shift()!;
        networkMilliseconds += now() - before; // time spent waiting for the network, not overlapped
        search.resume(policy, value);
      } else {
        const planes = search.collect(); // the leaves to evaluate (their planes unused): a uniform prior, value 0
        if (planes === undefined || planes === null) { if (search.done()) break; throw new Error("the search is stuck: nothing to evaluate and not done"); }
        planes.destroy();
        search.resume_uniform();
      }
      if (now() - lastBreak > 50) {
        const decision = game === "gods" ? { decision: search.decisions_made() + 1 } : {};
        const done = game === "gods" ? search.decision_simulations() : search.simulations_done;
        post({ type: "progress", id, done, total, ...decision });
        await pause();
        lastBreak = now();
        if (stoppable && currentSearch !== id) { await Promise.allSettled(inFlight); return null; } // cancelled, or replaced
      }
    }
    // a mortal search draws its move at the difficulty's temperature here; a god turn was given it when made
    const result = JSON.parse(game === "mortal" ? search.result(temperature) : search.result()) as SearchResult;
    result.milliseconds = now() - start;
    result.backend = useNet ? "onnx" : "uniform";
    result.network_milliseconds = networkMilliseconds;
    return result;
  } finally {
    search.destroy();
  }
}

async function search(request: Extract<Request, { type: "search" }>) {
  const search = engine.BatchedSearch(request.position, request.simulations, request.batch, 1.25, request.seed);
  const result = await runSearch(request.id, "mortal", search, request.simulations, request.temperature);
  post(result ? { type: "search", id: request.id, result } : { type: "stopped", id: request.id });
}

/** The engine's god turn: chapter 03b's search for each decision, on the god network (chapter 10b). */
async function godSearch(request: Extract<Request, { type: "godSearch" }>) {
  const search = engine.GodTurnSearch(request.position, request.simulations, request.temperature, request.seed,
    JSON.stringify(request.steps), request.decisions, request.batch);
  const result = await runSearch(request.id, "gods", search, request.simulations);
  post(result ? { type: "godSearch", id: request.id, result: result as GodSearchResult } : { type: "stopped", id: request.id });
}

async function evaluate(request: Extract<Request, { type: "evaluate" }>) {
  const n = request.positions.length;
  const planes = bytesToFloats(engine.encode_position_texts(JSON.stringify(request.positions)));
  if (!models.mortal.loaded) {
    post({ type: "evaluate", id: request.id, policy: [], value: [], backend: "uniform" });
    return;
  }
  const { policy, value } = await evaluatePlanes("mortal", planes, n);
  const rows = Array.from({ length: n }, (_, i) => Array.from(policy.subarray(i * 153, (i + 1) * 153)));
  post({ type: "evaluate", id: request.id, policy: rows, value: Array.from(value), backend: models.mortal.name });
}

const modelReady: Record<Game, Promise<void>> = { mortal: Promise.resolve(), gods: Promise.resolve() }; // searches wait for a model that is loading

async function handle(request: Request) {
  if (request.type === "init") return init(request.base);
  if (request.type === "search" || request.type === "godSearch") latestSearch = Math.max(latestSearch, request.id);
  await ready;
  if (request.type === "search" || request.type === "evaluate") await modelReady.mortal;
  if (request.type === "godSearch") await modelReady.gods;
  switch (request.type) {
    case "model": return (modelReady[request.game] = loadModel(request.game, request.url, request.name));
    case "info": return post({ type: "info", id: request.id, info: JSON.parse(engine.position_info(request.position)) });
    case "play": return post({ type: "play", id: request.id, result: JSON.parse(engine.play(request.position, request.move)) });
    case "randomStart": return post({ type: "randomStart", id: request.id, position: engine.random_start(request.seed) });
    case "search": return search(request);
    case "godStart": return post({ type: "godStart", id: request.id,
      result: JSON.parse(engine.god_start_position(request.gods[0], request.gods[1], request.position ?? "")) });
    case "godInfo": return post({ type: "godInfo", id: request.id,
      info: JSON.parse(engine.god_info(request.position, JSON.stringify(request.steps))) });
    case "godPlay": return post({ type: "godPlay", id: request.id,
      result: JSON.parse(engine.god_play(request.position, JSON.stringify(request.steps), request.action)) });
    case "godSearch": return godSearch(request);
    case "cancel": currentSearch = 0; cancelledUpTo = latestSearch; return;
    case "evaluate": return evaluate(request);
  }
}

self.onmessage = (event: MessageEvent<Request>) => {
  handle(event.data).catch((error: Error) => {
    const id = "id" in event.data ? (event.data as { id: number }).id : undefined;
    post({ type: "error", id, message: error.message ?? String(error) });
  });
};
