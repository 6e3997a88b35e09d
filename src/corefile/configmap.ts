// What -validate and the migrate commands read: a file or stdin (`-`), holding a ConfigMap as
// `kubectl get cm -o yaml` (or `-o json`) prints it, or a Corefile as it is.

import { readFileSync } from "node:fs";
import { LineCounter, isMap, isScalar, isSeq, parseDocument, Scalar, type YAMLMap } from "yaml";

/** A mistake in what -validate or a migrate command was given (a file, a ConfigMap): one line, exit 1. */
export class InputError extends Error {
  readonly code = "CDNS_ERR_INPUT";
}

export interface Input {
  /** As messages name it: the path, or `stdin`. */
  name: string;
  text: string;
}

export function readInput(path: string): Input {
  const name = path === "-" ? "stdin" : path;
  try {
    return { name, text: readFileSync(path === "-" ? 0 : path, "utf8") };
  } catch (err) {
    throw new InputError(`cannot read ${name}: ${(err as Error).message}`);
  }
}

interface Place {
  /** The line of the key. */
  line: number;
  /** The first line of the value's content. */
  firstLine: number;
  /** A `|` block: the value's lines are the file's lines. */
  literal: boolean;
}

export interface ConfigMapData {
  /** data, key by key, in the file's order. */
  data: Map<string, string>;
  /** The line of a key under data, for messages. */
  lineOf(key: string): number;
  /** Where a value sits in the file, so a Corefile in it can be read with the file's numbering. */
  placed(key: string): { firstLine: number; literal: boolean };
}

/** The data of a ConfigMap, or undefined when the text is not one (for `migrate coredns`: a Corefile). */
export function configMapData(input: Input): ConfigMapData | undefined {
  const all = configMaps(input);
  return all.length === 1 && all[0].list === false ? all[0].cm : undefined;
}

/** The ConfigMaps of a file: one, or the items of the List that `kubectl get cm A B -o yaml` prints
 * (each with the file's line numbers); empty when the text is neither. */
export function configMaps(input: Input): { cm: ConfigMapData; list: boolean }[] {
  const counter = new LineCounter();
  const doc = parseDocument(input.text, { lineCounter: counter, uniqueKeys: false });
  const root = doc.contents;
  if (doc.errors.length > 0 || !isMap(root)) return [];
  const lineAt = (offset: number | undefined) => (offset === undefined ? 1 : counter.linePos(offset).line);
  const kind = (node: unknown) => (isMap(node) ? (node.get("kind") as unknown) : undefined);
  if (kind(root) === "ConfigMap") return [{ cm: fromNode(root, input.name, lineAt), list: false }];
  const items = root.get("items", true);
  if (kind(root) !== "List" || !isSeq(items) || !items.items.every((i) => kind(i) === "ConfigMap")) return [];
  return items.items.map((i) => ({ cm: fromNode(i as YAMLMap, input.name, lineAt), list: true }));
}

function fromNode(
  root: YAMLMap,
  name: string,
  lineAt: (offset: number | undefined) => number,
): ConfigMapData {
  const data = new Map<string, string>();
  const places = new Map<string, Place>();
  const node = root.get("data", true);
  if (node !== undefined && node !== null) {
    if (!isMap(node)) throw new InputError(`${name}: data is not a map of strings`);
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const line = lineAt(isScalar(pair.key) ? pair.key.range?.[0] : undefined);
      const value = pair.value;
      if (!isScalar(value) || typeof value.value !== "string")
        throw new InputError(`${name}:${line}: data.${key} is not a string`);
      data.set(key, value.value);
      const literal = value.type === Scalar.BLOCK_LITERAL;
      // A block scalar's content starts on the line after its `|` header.
      places.set(key, { line, firstLine: lineAt(value.range?.[0]) + (literal ? 1 : 0), literal });
    }
  }
  return {
    data,
    lineOf: (key) => places.get(key)?.line ?? 1,
    placed: (key) => places.get(key) ?? { firstLine: 1, literal: false },
  };
}
