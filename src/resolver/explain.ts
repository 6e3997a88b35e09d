// The server's own account of an answer: one query carrying the EDNS option the kubernetes plugin
// answers with TXT lines naming the objects behind the name (src/plugins/kubernetes/explain.ts). It is
// sent after the walk, so the walk itself stays exactly what glibc sends. Another server ignores the
// option (RFC 6891) and there is nothing to print.

import dgram from "node:dgram";
import { isIPv6 } from "node:net";
import { randomInt } from "node:crypto";
import { decode } from "../dns/decode.ts";
import { encode } from "../dns/encode.ts";
import { newQuery } from "../dns/message.ts";
import { EXPLAIN_OPTION, Type } from "../dns/constants.ts";
import type { Server } from "./send.ts";

const PREFIX = "clusterdns: ";

/** The explanation lines for `name` from `server`, or [] (no reply in `timeoutMs`, or none given). */
export function explainFrom(server: Server, name: string, timeoutMs = 2000): Promise<string[]> {
  const q = newQuery(name.endsWith(".") ? name : `${name}.`, Type.A, 1, randomInt(65536));
  q.edns = {
    udpSize: 1232,
    version: 0,
    do: false,
    options: [{ code: EXPLAIN_OPTION, data: new Uint8Array() }],
  };
  const socket = dgram.createSocket(isIPv6(server.address) ? "udp6" : "udp4");
  return new Promise((resolve) => {
    const done = (lines: string[]) => {
      clearTimeout(timer);
      socket.close();
      resolve(lines);
    };
    const timer = setTimeout(() => done([]), timeoutMs);
    socket.on("error", () => done([]));
    socket.on("message", (buf) => {
      let r;
      try {
        r = decode(buf);
      } catch {
        return;
      }
      if (r.id !== q.id) return;
      const lines: string[] = [];
      for (const rr of r.additional) {
        if (!("strings" in rr.data)) continue;
        const text = rr.data.strings.join("");
        if (text.startsWith(PREFIX)) lines.push(text.slice(PREFIX.length));
      }
      done(lines);
    });
    socket.send(encode(q), server.port, server.address);
  });
}
