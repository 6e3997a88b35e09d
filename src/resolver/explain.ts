// The server's own account of an answer: one query carrying the EDNS option the kubernetes plugin
// answers with TXT lines naming the objects behind the name (src/plugins/kubernetes/answers/explain.ts). It is
// sent after the walk, so the walk itself stays exactly what glibc sends. Another server ignores the
// option (RFC 6891) and there is nothing to print.

import { randomId } from "../client/reply-match.ts";
import { udpExchange } from "../client/udp-exchange.ts";
import { newQuery } from "../dns/message.ts";
import { EXPLAIN_OPTION, Type } from "../dns/constants.ts";
import type { Server } from "./send.ts";

const PREFIX = "clusterdns: ";

/** The explanation lines for `name` from `server`, or [] (no reply in `timeoutMs`, or none given). */
export async function explainFrom(server: Server, name: string, timeoutMs = 2000): Promise<string[]> {
  const q = newQuery(name.endsWith(".") ? name : `${name}.`, Type.A, 1, randomId());
  q.edns = {
    udpSize: 1232,
    version: 0,
    do: false,
    options: [{ code: EXPLAIN_OPTION, data: new Uint8Array() }],
  };
  const reply = await udpExchange(server.address, server.port, q, timeoutMs).catch(() => undefined);
  const lines: string[] = [];
  for (const rr of reply?.additional ?? []) {
    if (!("strings" in rr.data)) continue;
    const text = rr.data.strings.join("");
    if (text.startsWith(PREFIX)) lines.push(text.slice(PREFIX.length));
  }
  return lines;
}
