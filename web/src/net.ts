// The network worker: onnxruntime-web (wasm) and nothing else. The engine worker starts it and sends it batches, so
// that the network evaluates one batch while Python selects the next (two cores busy instead of one). It holds two
// networks: the mortal one (9 planes in, 153 actions out) and the god one (36 planes in, 126 sub-actions out).
import * as ort from "onnxruntime-web/wasm";
import type { Game } from "./protocol";

/** What each game's network reads and answers: planes per cell (chapters 02 and 02b) and policy length. */
const SHAPES: Record<Game, { planes: number; actions: number }> = {
  mortal: { planes: 9, actions: 153 },
  gods: { planes: 36, actions: 126 },
};

export type NetRequest =
  | { type: "load"; id: number; game: Game; model: ArrayBuffer }
  | { type: "run"; id: number; game: Game; planes: ArrayBuffer; n: number };
export type NetReply =
  | { type: "loaded"; id: number; error?: string }
  | { type: "result"; id: number; policy: Float32Array; value: Float32Array; error?: string };

ort.env.wasm.numThreads = 1; // no SharedArrayBuffer needed
const sessions: Record<Game, ort.InferenceSession | null> = { mortal: null, gods: null };
let queue: Promise<unknown> = Promise.resolve(); // one call at a time: a session runs one batch at once
const post = (reply: NetReply, transfer: Transferable[] = []) => (self as unknown as Worker).postMessage(reply, transfer);

async function load(id: number, game: Game, model: ArrayBuffer) {
  const { planes, actions } = SHAPES[game];
  let candidate: ort.InferenceSession | null = null, failure: string | undefined;
  try {
    candidate = await ort.InferenceSession.create(new Uint8Array(model), { executionProviders: ["wasm"], graphOptimizationLevel: "all" });
    if (!candidate.inputNames.includes("input") || !["policy", "value"].every((n) => candidate!.outputNames.includes(n)))
      throw new Error("the model does not have the input 'input' and the outputs 'policy' and 'value'");
    const probe = await candidate.run({ input: new ort.Tensor("float32", new Float32Array(25 * planes), [1, 5, 5, planes]) });
    if (probe.policy.dims[1] !== actions) throw new Error(`the policy has ${probe.policy.dims[1]} entries, not ${actions}`);
  } catch (error) {
    failure = (error as Error).message;
    await candidate?.release();
    candidate = null;
  }
  if (candidate) { // the session it replaces gives its wasm memory back: a page left open loads every new champion
    await sessions[game]?.release();
    sessions[game] = candidate;
  } // a model that failed leaves the one loaded before in place
  post(failure === undefined ? { type: "loaded", id } : { type: "loaded", id, error: failure });
}

async function run(id: number, game: Game, planes: ArrayBuffer, n: number) {
  const session = sessions[game];
  if (!session) return post({ type: "result", id, policy: new Float32Array(), value: new Float32Array(), error: "no model" });
  const outputs = await session.run({ input: new ort.Tensor("float32", new Float32Array(planes), [n, 5, 5, SHAPES[game].planes]) });
  // Copies: the outputs may be views into onnxruntime's memory, which must not be transferred away.
  const policy = new Float32Array(outputs.policy.data as Float32Array), value = new Float32Array(outputs.value.data as Float32Array);
  post({ type: "result", id, policy, value }, [policy.buffer, value.buffer]);
}

self.onmessage = (event: MessageEvent<NetRequest>) => {
  const m = event.data;
  const next = queue.then(() => (m.type === "load" ? load(m.id, m.game, m.model) : run(m.id, m.game, m.planes, m.n)));
  queue = next.catch((error: Error) => post({ type: "result", id: m.id, policy: new Float32Array(), value: new Float32Array(), error: error.message }));
};
