// The shape of src/ as its imports draw it: no import cycles, no import back up the layers, and no
// file over 600 lines, so a newcomer can read any module without first reading the ones that use it.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { ROOT } from "./helpers/server.ts";

/** src/ files (tests excluded) -> the src/ files they import, type-only and dynamic imports included. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const files = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
    .map((f) => join("src", f));
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), "utf8"), true, true);
    const deps = importedFiles
      .map((i) => i.fileName)
      .filter((name) => name.startsWith("."))
      .map((name) => relative(ROOT, resolve(ROOT, dirname(file), name)));
    graph.set(file, deps);
  }
  return graph;
}

/** Every cycle's files, one strongly connected component each (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

test("the cycle finder finds a cycle", () => {
  const g = new Map([
    ["a", ["b"]],
    ["b", ["c"]],
    ["c", ["a"]],
    ["d", ["a"]],
  ]);
  assert.deepEqual(cycles(g), [["a", "b", "c"]]);
  assert.deepEqual(
    cycles(
      new Map([
        ["a", ["b"]],
        ["b", []],
      ]),
    ),
    [],
  );
});

test("src/ has no import cycles", () => {
  assert.deepEqual(cycles(importGraph()), []);
});

/** The layers of src/, bottom first. A file may import its own folder and the layers below its own;
 * folders on one layer do not import each other. Every unit is a folder or a file at the top of src/,
 * never one file of a folder: a file placed apart from its folder would let the folder import across
 * it, both ways, unseen. The plugin contract sits in two folders above the answer store: chain/ (what
 * a handler serves and returns) and setup/ (what a plugin's setup gets, and the registry), so the
 * server knows plugins only through them (main.ts hands it the registry). */
const LAYERS: string[][] = [
  [
    "src/dns/",
    "src/runtime/",
    "src/offheap/",
    "src/compat/",
    "src/version.ts",
    "src/log.ts",
    "src/cli-flags.ts",
    "src/default-corefile.ts",
  ],
  ["src/corefile/", "src/client/", "src/metrics/", "src/dnssec/"],
  ["src/answers/", "src/resolver/"],
  ["src/chain/"],
  ["src/setup/"],
  ["src/http/"],
  ["src/server/", "src/plugins/"],
  ["src/migrate/", "src/validate.ts"],
  ["src/main.ts", "src/worker.ts"],
];

/** [layer, unit] of a src/ path. */
function placeOf(file: string): [number, string] {
  for (const [i, units] of LAYERS.entries()) for (const u of units) if (file.startsWith(u)) return [i, u];
  assert.fail(`${file} is in no layer of test/imports.test.ts`);
}

/** The imports of `graph` that run back up the layers or across one, as "from -> to". */
function wrongWay(graph: Map<string, string[]>): string[] {
  const wrong: string[] = [];
  for (const [file, deps] of graph) {
    const [layer, unit] = placeOf(file);
    for (const dep of deps.filter((d) => d.startsWith("src/"))) {
      const [depLayer, depUnit] = placeOf(dep);
      if (depUnit !== unit && depLayer >= layer) wrong.push(`${file} -> ${dep}`);
    }
  }
  return wrong;
}

test("the layers are whole folders or files at the top of src/", () => {
  const apart = LAYERS.flat().filter((u) => !u.endsWith("/") && u.slice("src/".length).includes("/"));
  assert.deepEqual(apart, []);
});

test("the layer check finds an import back up the layers and one across a layer", () => {
  const g = new Map([
    ["src/answers/lane.ts", ["src/chain/handler.ts", "src/answers/policy.ts", "src/dns/message.ts"]],
    ["src/metrics/query-stats.ts", ["src/setup/context.ts"]],
    ["src/server/block.ts", ["src/plugins/cache/cache.ts", "src/setup/context.ts"]],
  ]);
  assert.deepEqual(wrongWay(g), [
    "src/answers/lane.ts -> src/chain/handler.ts",
    "src/metrics/query-stats.ts -> src/setup/context.ts",
    "src/server/block.ts -> src/plugins/cache/cache.ts",
  ]);
});

test("no import runs back up the layers or across one", () => {
  assert.deepEqual(wrongWay(importGraph()), []);
});

test("no file in src/ is over 600 lines", () => {
  const long: string[] = [];
  for (const file of importGraph().keys()) {
    const lines = readFileSync(join(ROOT, file), "utf8").split("\n").length;
    if (lines > 600) long.push(`${file}: ${lines} lines`);
  }
  assert.deepEqual(long, []);
});

/** The kubernetes plugin's rooms, each with the rooms it may import: the model (API objects, the
 * source contract, the slim shapes) and sync (the gates that wait for the first sync) import no other
 * room; names (the DNS names of Services and ServiceImports, zones) reads the model; the store (the
 * slim index) adds names and sync; the API client fills the store through the model's Sink, never the
 * store itself, and answers nothing; the answers read the store and never the API. The plugin's own
 * folder (setup, config, the plugin) puts the rooms together. */
const KUBERNETES = "src/plugins/kubernetes/";
const ROOMS: Record<string, readonly string[]> = {
  model: [],
  sync: [],
  names: ["model"],
  store: ["model", "names", "sync"],
  api: ["model", "sync"],
  answers: ["model", "names", "store", "sync"],
};

/** What answers/ may import of store/: the store's view, and the multi-cluster imports' own. */
const STORE_VIEWS = ["store-view.ts", "multicluster.ts"].map((f) => `${KUBERNETES}store/${f}`);

test("the answers read the store through its narrow view only", () => {
  const wrong: string[] = [];
  for (const [file, deps] of importGraph()) {
    if (!file.startsWith(`${KUBERNETES}answers/`)) continue;
    for (const dep of deps.filter((d) => d.startsWith(`${KUBERNETES}store/`))) {
      if (!STORE_VIEWS.includes(dep)) wrong.push(`${file} -> ${dep}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test("the kubernetes plugin's rooms import only the rooms below them", () => {
  const roomOf = (file: string) => {
    const rest = file.slice(KUBERNETES.length);
    return rest.includes("/") ? rest.slice(0, rest.indexOf("/")) : ".";
  };
  const wrong: string[] = [];
  const seen = new Set<string>();
  for (const [file, deps] of importGraph()) {
    if (!file.startsWith(KUBERNETES)) continue;
    const room = roomOf(file);
    seen.add(room);
    if (room === ".") continue;
    assert.ok(room in ROOMS, `${file}: a room test/imports.test.ts does not know`);
    for (const dep of deps.filter((d) => d.startsWith(KUBERNETES))) {
      const to = roomOf(dep);
      if (to !== room && !ROOMS[room].includes(to)) wrong.push(`${file} -> ${dep}`);
    }
  }
  assert.deepEqual([...seen].sort(), [".", ...Object.keys(ROOMS)].sort());
  assert.deepEqual(wrong, []);
});

test("node:http is loaded with require(), never imported as an ES module, so undici stays unloaded", async () => {
  // An ES import of node:http builds its namespace from every export, and three of them are getters
  // that load undici (Node's fetch): about 3 MB of JS heap for nothing (src/http/node-http.ts).
  const esImports: string[] = [];
  for (const file of importGraph().keys()) {
    const text = readFileSync(join(ROOT, file), "utf8");
    if (/^import (?!type\b)[^;]*from "(node:)?http";/m.test(text)) esImports.push(file);
  }
  assert.deepEqual(esImports, [], "import { http } from src/http/node-http.ts instead");
  // And the modules that serve or ask HTTP, loaded in a process of their own, leave undici unloaded.
  const modules = ["src/http/listener.ts", "src/server/doh.ts", "src/plugins/kubernetes/api/http-client.ts"];
  const script =
    modules.map((m) => `await import(${JSON.stringify(join(ROOT, m))});`).join("") +
    `process.stdout.write(String(process.moduleLoadList.some((m) => m.includes("undici"))));`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(out, "false");
});
