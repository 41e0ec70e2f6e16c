// Copy what the page needs at run time into public/, so that the site serves everything itself (no CDN):
// Pyodide's runtime and standard library, and the package's pure-Python modules.
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const web = join(dirname(fileURLToPath(import.meta.url)), "..");
const modules = join(web, "node_modules");
const pub = join(web, "public");

function copy(from, to, files) {
  rmSync(to, { recursive: true, force: true });
  mkdirSync(to, { recursive: true });
  for (const file of files) copyFileSync(join(from, file), join(to, file));
}

copy(join(modules, "pyodide"), join(pub, "pyodide"),
  ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"]);
// onnxruntime-web's wasm needs no copy: Vite bundles it (the worker imports it by URL) into dist/assets.
rmSync(join(pub, "ort"), { recursive: true, force: true });
// The rules, notation, encoding and search are the package's own files (chapters 1-3, and 01b-03b for the gods),
// not a port.
const packageModules = ["game.py", "notation.py", "encoding.py", "mcts.py", "gods.py", "god_encoding.py", "god_search.py"];
copy(join(web, "..", "santorini_az"), join(pub, "py", "santorini_az"), packageModules);
copyFileSync(join(web, "py", "browser_engine.py"), join(pub, "py", "browser_engine.py"));
writeFileSync(join(pub, "py", "files.json"),
  JSON.stringify([...packageModules.map((m) => `santorini_az/${m}`), "browser_engine.py"]));
console.log("copied Pyodide and the package's Python modules into public/");
