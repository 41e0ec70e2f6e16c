// The engine worker: the package's Python (rules, notation, encoding, search) under Pyodide, and the network on
// onnxruntime-web. Everything slow happens here, so the page's thread only draws.
import * as ort from "onnxruntime-web/wasm";
import type { PyodideInterface } from "pyodide";
import type { Reply, Request, SearchResult } from "./protocol";

type PyProxy = any; // eslint-disable-line @typescript-eslint/no-explicit-any

let pyodide: PyodideInterface;
let engine: PyProxy; // the browser_engine module
let session: ort.InferenceSession | null = null;
let sessionName = "uniform";
let currentSearch = 0; // the id of the search that may run; a newer request or a cancel stops an older one
let resolveReady: () => void = () => undefined;
const ready = new Promise<void>((resolve) => (resolveReady = resolve));

const post = (reply: Reply) => (self as unknown as Worker).postMessage(reply);
const now = () => performance.now();
const pause = () => new Promise((resolve) => setTimeout(resolve, 0)); // let queued messages (cancel) in

async function init(base: string) {
  const start = now();
  ort.env.wasm.numThreads = 1; // no SharedArrayBuffer needed, and the page's thread keeps the other core
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

async function loadModel(url: string | null, name: string) {
  session = null;
  sessionName = "uniform";
  if (!url) {
    post({ type: "model", status: { loaded: false, name, message: `no model (${name}): playing the uniform-prior search` } });
    return;
  }
  try {
    const response = await fetch(url, { cache: "no-store" });
    if (!response.ok) throw new Error(`HTTP ${response.status} for ${url}`);
    const candidate = await ort.InferenceSession.create(new Uint8Array(await response.arrayBuffer()),
      { executionProviders: ["wasm"], graphOptimizationLevel: "all" });
    if (!candidate.inputNames.includes("input") || !["policy", "value"].every((n) => candidate.outputNames.includes(n)))
      throw new Error("the model does not have the input 'input' and the outputs 'policy' and 'value'");
    const probe = await candidate.run({ input: new ort.Tensor("float32", new Float32Array(225), [1, 5, 5, 9]) });
    if (probe.policy.dims[1] !== 153) throw new Error(`the policy has ${probe.policy.dims[1]} actions, not 153`);
    session = candidate;
    sessionName = name;
    post({ type: "model", status: { loaded: true, name, message: `model ${name} loaded` } });
  } catch (error) {
    post({ type: "model", status: { loaded: false, name,
      message: `the model ${name} failed to load (${(error as Error).message}): playing the uniform-prior search` } });
  }
}

let netQueue: Promise<unknown> = Promise.resolve(); // one network call at a time: a session runs one batch at once

/** Evaluate float32 planes [n, 5, 5, 9] on the network: softmax policies [n * 153] and values [n]. */
function evaluatePlanes(net: ort.InferenceSession, planes: Float32Array, n: number) {
  const run = netQueue.then(async () => {
    const outputs = await net.run({ input: new ort.Tensor("float32", planes, [n, 5, 5, 9]) });
    return { policy: outputs.policy.data as Float32Array, value: outputs.value.data as Float32Array };
  });
  netQueue = run.catch(() => undefined);
  return run;
}

function bytesToFloats(proxy: PyProxy): Float32Array {
  const bytes: Uint8Array = proxy.toJs();
  proxy.destroy();
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
}

async function search(request: Extract<Request, { type: "search" }>) {
  const id = request.id;
  currentSearch = id;
  const net = session; // a model swap during a search takes effect at the next search
  const start = now();
  const search: PyProxy = engine.BatchedSearch(request.position, request.simulations, request.batch, 1.25, request.seed);
  let lastBreak = now();
  try {
    for (;;) {
      const planesProxy = search.collect();
      if (planesProxy === undefined || planesProxy === null) break;
      const n: number = search.pending();
      if (net) {
        const { policy, value } = await evaluatePlanes(net, bytesToFloats(planesProxy), n);
        search.resume(policy, value);
      } else {
        planesProxy.destroy();
        search.resume_uniform();
      }
      if (now() - lastBreak > 50) {
        post({ type: "progress", id, done: search.simulations_done, total: request.simulations });
        await pause();
        lastBreak = now();
        if (currentSearch !== id) return; // cancelled, or replaced by a newer search
      }
    }
    const result = JSON.parse(search.result(request.temperature)) as SearchResult;
    result.milliseconds = now() - start;
    result.backend = net ? "onnx" : "uniform";
    post({ type: "search", id, result });
  } finally {
    search.destroy();
  }
}

async function evaluate(request: Extract<Request, { type: "evaluate" }>) {
  const n = request.positions.length;
  const planes = bytesToFloats(engine.encode_position_texts(JSON.stringify(request.positions)));
  if (!session) {
    post({ type: "evaluate", id: request.id, policy: [], value: [], backend: "uniform" });
    return;
  }
  const { policy, value } = await evaluatePlanes(session, planes, n);
  const rows = Array.from({ length: n }, (_, i) => Array.from(policy.subarray(i * 153, (i + 1) * 153)));
  post({ type: "evaluate", id: request.id, policy: rows, value: Array.from(value), backend: sessionName });
}

let modelReady: Promise<void> = Promise.resolve(); // searches wait for a model that is loading

async function handle(request: Request) {
  if (request.type === "init") return init(request.base);
  await ready;
  if (request.type === "search" || request.type === "evaluate") await modelReady;
  switch (request.type) {
    case "model": return (modelReady = loadModel(request.url, request.name));
    case "info": return post({ type: "info", id: request.id, info: JSON.parse(engine.position_info(request.position)) });
    case "play": return post({ type: "play", id: request.id, result: JSON.parse(engine.play(request.position, request.move)) });
    case "randomStart": return post({ type: "randomStart", id: request.id, position: engine.random_start(request.seed) });
    case "search": return search(request);
    case "cancel": currentSearch = 0; return;
    case "evaluate": return evaluate(request);
  }
}

self.onmessage = (event: MessageEvent<Request>) => {
  handle(event.data).catch((error: Error) => {
    const id = "id" in event.data ? (event.data as { id: number }).id : undefined;
    post({ type: "error", id, message: error.message ?? String(error) });
  });
};
