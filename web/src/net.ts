// The network worker: onnxruntime-web (wasm) and nothing else. The engine worker starts it and sends it batches, so
// that the network evaluates one batch while Python selects the next (two cores busy instead of one).
import * as ort from "onnxruntime-web/wasm";

export type NetRequest =
  | { type: "load"; id: number; model: ArrayBuffer }
  | { type: "run"; id: number; planes: ArrayBuffer; n: number };
export type NetReply =
  | { type: "loaded"; id: number; error?: string }
  | { type: "result"; id: number; policy: Float32Array; value: Float32Array; error?: string };

ort.env.wasm.numThreads = 1; // no SharedArrayBuffer needed
let session: ort.InferenceSession | null = null;
let queue: Promise<unknown> = Promise.resolve(); // one call at a time: a session runs one batch at once
const post = (reply: NetReply, transfer: Transferable[] = []) => (self as unknown as Worker).postMessage(reply, transfer);

async function load(id: number, model: ArrayBuffer) {
  try {
    const candidate = await ort.InferenceSession.create(new Uint8Array(model), { executionProviders: ["wasm"], graphOptimizationLevel: "all" });
    if (!candidate.inputNames.includes("input") || !["policy", "value"].every((n) => candidate.outputNames.includes(n)))
      throw new Error("the model does not have the input 'input' and the outputs 'policy' and 'value'");
    const probe = await candidate.run({ input: new ort.Tensor("float32", new Float32Array(225), [1, 5, 5, 9]) });
    if (probe.policy.dims[1] !== 153) throw new Error(`the policy has ${probe.policy.dims[1]} actions, not 153`);
    session = candidate;
    post({ type: "loaded", id });
  } catch (error) {
    session = null;
    post({ type: "loaded", id, error: (error as Error).message });
  }
}

async function run(id: number, planes: ArrayBuffer, n: number) {
  if (!session) return post({ type: "result", id, policy: new Float32Array(), value: new Float32Array(), error: "no model" });
  const outputs = await session.run({ input: new ort.Tensor("float32", new Float32Array(planes), [n, 5, 5, 9]) });
  // Copies: the outputs may be views into onnxruntime's memory, which must not be transferred away.
  const policy = new Float32Array(outputs.policy.data as Float32Array), value = new Float32Array(outputs.value.data as Float32Array);
  post({ type: "result", id, policy, value }, [policy.buffer, value.buffer]);
}

self.onmessage = (event: MessageEvent<NetRequest>) => {
  const m = event.data;
  const next = queue.then(() => (m.type === "load" ? load(m.id, m.model) : run(m.id, m.planes, m.n)));
  queue = next.catch((error: Error) => post({ type: "result", id: m.id, policy: new Float32Array(), value: new Float32Array(), error: error.message }));
};
