// dnstap's `extra` field with metadata placeholders, as CoreDNS fills it: `{/LABEL}` becomes the
// label's value for the query the message is about (the client's query, or the one a forwarder try
// carries out), `-` when it has none or the block has no `metadata` (CoreDNS's empty value). Other
// placeholders are refused at start-up.

import { isLabel, type MetaLabel, type MetaQuery } from "../metadata/labels.ts";
import { envelopeHead } from "./protobuf.ts";

/** The envelope head (identity, version, extra) of a message about `q`. */
export type HeadFor = (q: MetaQuery) => Buffer;

/** The placeholders in `text`: every `{...}` without spaces or braces inside. */
export function placeholders(text: string): string[] {
  return text.match(/\{[^{}\s]*\}/g) ?? [];
}

/** The first placeholder of `text` that is no `{/LABEL}`, if any. */
export function unsupportedPlaceholder(text: string): string | undefined {
  return placeholders(text).find((p) => !p.startsWith("{/") || !isLabel(p.slice(2, -1)));
}

/** A head per message for an `extra` with `{/LABEL}` placeholders (checked before); `label` finds a
 * label of the block's metadata, undefined when the block has none. Each message pays for the labels
 * it reads and one small buffer; an `extra` without placeholders keeps the head made once. */
export function headFor(
  head: { identity: string; version: string; extra: string },
  label: ((name: string) => MetaLabel) | undefined,
): HeadFor {
  const parts: (string | MetaLabel | undefined)[] = [];
  let from = 0;
  for (const m of head.extra.matchAll(/\{[^{}\s]*\}/g)) {
    parts.push(head.extra.slice(from, m.index), label?.(m[0].slice(2, -1)));
    from = m.index + m[0].length;
  }
  parts.push(head.extra.slice(from));
  return (q) => {
    let text = "";
    for (const p of parts) text += typeof p === "string" ? p : (p?.value(q) ?? "-");
    return envelopeHead(head.identity, head.version, text);
  };
}
