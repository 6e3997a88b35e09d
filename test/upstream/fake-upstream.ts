// A scripted upstream on 127.0.0.1 (UDP and TCP on one port) for what a real server will not do on
// demand: answer with a wrong ID or question first, stay silent, hold replies, fail with an rcode.
// Every query it gets is recorded with its transport.

import dgram from "node:dgram";
import net from "node:net";
import type { Msg } from "../../src/dns/message.ts";
import { decode } from "../../src/dns/decode.ts";
import { encode } from "../../src/dns/encode.ts";

export type Responder = (q: Msg, proto: "udp" | "tcp") => Msg[] | Promise<Msg[]>;

export interface FakeUpstream {
  port: number;
  queries: { proto: "udp" | "tcp"; msg: Msg }[];
  /** Closes every TCP connection from its side, as a server's idle timeout does. */
  dropConnections(): void;
  close(): Promise<void>;
}

/** Starts it; `respond` returns the messages to send back, in order (none: stay silent). */
export async function startFakeUpstream(respond: Responder): Promise<FakeUpstream> {
  const queries: FakeUpstream["queries"] = [];
  let open = true;
  for (let attempt = 0; attempt < 10; attempt++) {
    const udp = dgram.createSocket("udp4");
    await new Promise<void>((r) => udp.bind(0, "127.0.0.1", r));
    const { port } = udp.address();
    const sockets = new Set<net.Socket>();
    const tcp = net.createServer((s) => {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => s.destroy());
      let buf = Buffer.alloc(0);
      s.on("data", (chunk) => {
        buf = Buffer.concat([buf, chunk]);
        while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
          const pkt = buf.subarray(2, 2 + buf.readUInt16BE(0));
          buf = buf.subarray(2 + pkt.length);
          void answer(pkt, "tcp", (out) => {
            const len = Buffer.alloc(2);
            len.writeUInt16BE(out.length);
            if (!s.destroyed) s.write(Buffer.concat([len, out]));
          });
        }
      });
    });
    udp.on("message", (pkt, rinfo) => {
      void answer(pkt, "udp", (out) => {
        if (open) udp.send(out, rinfo.port, rinfo.address);
      });
    });
    const ok = await new Promise<boolean>((r) => {
      tcp.once("error", () => r(false));
      tcp.listen(port, "127.0.0.1", () => r(true));
    });
    if (!ok) {
      udp.close();
      continue;
    }
    return {
      port,
      queries,
      dropConnections() {
        for (const s of sockets) s.destroy();
      },
      async close() {
        open = false;
        for (const s of sockets) s.destroy();
        await new Promise((r) => tcp.close(r));
        await new Promise<void>((r) => udp.close(() => r()));
      },
    };
  }
  throw new Error("no port free for both UDP and TCP");

  async function answer(pkt: Buffer, proto: "udp" | "tcp", send: (b: Buffer) => void): Promise<void> {
    const q = decode(pkt);
    queries.push({ proto, msg: q });
    for (const m of await respond(q, proto)) send(encode(m));
  }
}
