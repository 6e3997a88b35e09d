// A ConfigMap value that should be JSON (kube-dns's stubDomains, upstreamNameservers, federations):
// parsed, or refused with one line that names the key, the line of the ConfigMap file where parsing
// stopped, and the likely cause. Values are often pasted from a document or a chat, which bring
// typographic quotes.

import { InputError, type ConfigMapData } from "../corefile/configmap.ts";

const TYPOGRAPHIC = /[\u201c\u201d\u201e\u201f\u2018\u2019\u00ab\u00bb]/;

const HINTS: { test: RegExp; hint: string }[] = [
  {
    test: TYPOGRAPHIC,
    hint: 'it holds typographic quotes (“ ” ‘ ’), as word processors and chat tools write them; JSON takes only plain double quotes (")',
  },
  { test: /'/, hint: 'JSON strings take double quotes ("), not single ones' },
  { test: /,\s*[\]}]/, hint: "JSON takes no comma before a closing ] or }" },
  { test: /[{,]\s*[\w.-]+\s*:/, hint: 'JSON keys are quoted: {"corp.example": ["10.150.0.1"]}' },
];

/** The value of `key`, parsed as JSON. */
export function jsonValue(cm: ConfigMapData, name: string, key: string): unknown {
  const text = cm.data.get(key)!;
  try {
    return JSON.parse(text);
  } catch (err) {
    const offset = stoppedAt(text, (err as Error).message);
    const hint =
      HINTS.find((h) => h.test.test(text))?.hint ?? 'write it as JSON, e.g. {"corp.example": ["10.150.0.1"]}';
    const col = offset === undefined ? "" : ` in column ${offset - text.lastIndexOf("\n", offset - 1)}`;
    const ch = offset === undefined || offset >= text.length ? "" : ` at '${text[offset]}'`;
    throw new InputError(
      `${name}:${lineOf(cm, key, text, offset)}: ${key} is not JSON (it stops${ch}${col}): ${hint}`,
    );
  }
}

/** Where in `text` JSON.parse gave up: the first typographic quote, else the position it names. */
function stoppedAt(text: string, message: string): number | undefined {
  const quote = text.search(TYPOGRAPHIC);
  if (quote >= 0) return quote;
  const at = /at position (\d+)/.exec(message);
  if (at) return Number(at[1]);
  const token = /^Unexpected token '(.)'/.exec(message);
  return token && text.includes(token[1]) ? text.indexOf(token[1]) : undefined;
}

/** The file's line of `offset` in the value: exact in a `|` block, else the key's line. */
function lineOf(cm: ConfigMapData, key: string, text: string, offset: number | undefined): number {
  const { firstLine, literal } = cm.placed(key);
  if (!literal || offset === undefined) return cm.lineOf(key);
  return firstLine + (text.slice(0, offset).match(/\n/g)?.length ?? 0);
}
