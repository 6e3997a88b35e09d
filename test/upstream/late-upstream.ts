// An upstream that answers late, as a recursive resolver with a cold cache does: a query that finds
// no recursion under way starts one that takes DELAY_MS, and every query that comes meanwhile is
// answered when it completes. It knows one A record for one name and echoes the question as it was
// received (0x20 case kept, as BIND, Knot and Unbound do); any other question gets NXDOMAIN, just as
// late. The delay leaves a forger the time to flood (tc's netem is not in every kernel). UDP only.
// Run as a script, usually inside a network namespace:
//
//   node test/upstream/late-upstream.ts ADDRESS PORT DELAY_MS NAME IPV4
//
// stdout: {"ready":PORT} once listening.

import { createSocket } from "node:dgram";
import { isIPv6 } from "node:net";
import { decode } from "../../src/dns/decode.ts";
import { encode } from "../../src/dns/encode.ts";
import { replyTo } from "../../src/dns/message.ts";
import { Rcode, Type } from "../../src/dns/constants.ts";

const [address, port, delay, name, ipv4] = process.argv.slice(2);
const sock = createSocket(isIPv6(address) ? "udp6" : "udp4");
/** When the recursion under way completes. */
let readyAt = 0;
sock.on("message", (pkt, rinfo) => {
  let q;
  try {
    q = decode(pkt);
  } catch {
    return;
  }
  const asked = q.question[0];
  const hit = asked?.type === Type.A && asked.name.toLowerCase() === name.toLowerCase();
  const reply = replyTo(q, hit ? Rcode.NOERROR : Rcode.NXDOMAIN);
  if (hit) {
    reply.answer = [
      { name: asked.name, type: Type.A, class: 1, ttl: 300, data: { type: Type.A, address: ipv4 } },
    ];
  }
  const now = Date.now();
  if (now >= readyAt) readyAt = now + Number(delay);
  setTimeout(() => sock.send(encode(reply), rinfo.port, rinfo.address), readyAt - now);
});
sock.bind(Number(port), address, () => console.log(JSON.stringify({ ready: sock.address().port })));
