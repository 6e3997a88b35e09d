// Soak part "half-close": clients that send their queries and then shut their side (FIN), as a
// client does that has nothing more to ask. Each connection asks names that are forwarded upstream
// (each new, so each waits for Knot: in flight when the FIN arrives) and cluster names (answered at
// once from the answer cache). Every query read must be answered, then the server closes the
// connection (RFC 7766). Figures: replies delivered, per kind (target 100%), connections the server
// closed after its last reply (target all), and descriptors the server holds afterwards.
//   npm run soak -- half-close [--reduced]     (or node test/soak/half-close.ts [--reduced])

import net from "node:net";
import { runAlone, Report, tcpConnectionsOn, type SoakPart, type PartOptions } from "./part.ts";
import { startTarget } from "./target.ts";
import { FrameReader, tcpFrame } from "../../src/dns/tcp-frames.ts";
import { encode } from "../../src/dns/encode.ts";
import { newQuery } from "../../src/dns/message.ts";
import { Type } from "../../src/dns/constants.ts";

const CLUSTER = ["nginx.default.svc.cluster.local.", "kube-dns.kube-system.svc.cluster.local."];
/** Queries per connection: forwarded ones at even IDs, cluster names at odd ones. */
const PER_CONNECTION = 10;
/** How long a connection waits for the server's last reply and FIN. */
const WAIT_MS = 5000;

interface Outcome {
  /** IDs answered, NOERROR or NXDOMAIN. */
  answered: Set<number>;
  /** The server closed its side. */
  closed: boolean;
}

/** One connection: all its queries, then FIN; resolves once the server closed or after WAIT_MS. */
function halfClosed(port: number, n: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const out: Outcome = { answered: new Set(), closed: false };
    const sock = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    const frames = new FrameReader();
    const timer = setTimeout(() => finish(), WAIT_MS);
    const finish = () => {
      clearTimeout(timer);
      sock.destroy();
      resolve(out);
    };
    sock.on("data", (d: Buffer) =>
      frames.push(d, (m) => {
        const rcode = m[3] & 0x0f;
        if (rcode === 0 || rcode === 3) out.answered.add(m.readUInt16BE(0));
      }),
    );
    sock.on("end", () => {
      out.closed = true;
      finish();
    });
    sock.on("error", finish);
    const queries = Array.from({ length: PER_CONNECTION }, (_, id) => {
      const name = id % 2 === 0 ? `hc-${n}-${id}.example.org.` : CLUSTER[id % CLUSTER.length];
      return tcpFrame(encode(newQuery(name, Type.A, 1, id)));
    });
    sock.on("connect", () => sock.end(Buffer.concat(queries)));
  });
}

export const halfClose: SoakPart = {
  name: "half-close",
  what: "clients that send forwarded and cluster queries, then FIN: every reply delivered, then closed",
  async run(o: PartOptions): Promise<Report> {
    const report = new Report("half-close");
    const connections = o.reduced ? 40 : 1000;
    const atOnce = 50;
    const t = await startTarget("batched");
    try {
      const outcomes: Outcome[] = [];
      for (let at = 0; at < connections; at += atOnce) {
        const batch = Array.from({ length: Math.min(atOnce, connections - at) }, (_, i) =>
          halfClosed(t.port, at + i),
        );
        outcomes.push(...(await Promise.all(batch)));
      }
      o.log(`${connections} connections, ${PER_CONNECTION} queries each, then FIN`);
      const count = (odd: number) =>
        outcomes.reduce((sum, c) => sum + [...c.answered].filter((id) => id % 2 === odd).length, 0);
      const each = (connections * PER_CONNECTION) / 2;
      const forwarded = count(0);
      const cluster = count(1);
      report.check(
        "replies to forwarded queries (in flight at the FIN)",
        `${forwarded} of ${each}`,
        forwarded === each,
        "100%",
      );
      report.check(
        "replies to cluster names (answered at once)",
        `${cluster} of ${each}`,
        cluster === each,
        "100%",
      );
      const closed = outcomes.filter((c) => c.closed).length;
      report.check(
        "connections the server closed after its last reply",
        `${closed} of ${connections}`,
        closed === connections,
        "all",
      );
      await new Promise((r) => setTimeout(r, 500));
      const held = tcpConnectionsOn(t.port);
      report.check("connections the server still holds afterwards", held, held <= 0, "0");
      report.alive(t.srv.proc);
    } finally {
      await t.stop();
    }
    return report;
  },
};

if (import.meta.main) await runAlone(halfClose);
