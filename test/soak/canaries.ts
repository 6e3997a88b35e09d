// The valid queries interleaved with the fuzz: names of every kind the target answers (a ClusterIP
// and a headless Service, SRV, PTR, NXDOMAIN, a forwarded name, a file zone, CH TXT). Each must be
// answered every time, and always the same: the first reply (at warm-up) is the expected one, and
// every later reply is compared to it by rcode and answer records (TTLs and order aside: cache counts
// TTLs down and loadbalance rotates).

import { decode } from "../../src/dns/decode.ts";
import { encode } from "../../src/dns/encode.ts";
import { newQuery, type Msg } from "../../src/dns/message.ts";
import { rdataToText } from "../../src/dns/text.ts";
import { Class, Type } from "../../src/dns/constants.ts";

const QUESTIONS: [string, number, number][] = [
  ["nginx.default.svc.cluster.local.", Type.A, Class.IN],
  ["nginx.web.svc.cluster.local.", Type.A, Class.IN],
  ["_http._tcp.nginx.default.svc.cluster.local.", Type.SRV, Class.IN],
  ["10.0.0.10.in-addr.arpa.", Type.PTR, Class.IN],
  ["nothere.default.svc.cluster.local.", Type.A, Class.IN],
  ["www.example.org.", Type.A, Class.IN],
  ["www.example.net.", Type.AAAA, Class.IN],
  ["version.bind.", Type.TXT, Class.CH],
];

/** What a reply says, TTLs and order aside. */
export function gist(m: Msg): string {
  const answer = m.answer.map((rr) => `${rr.name.toLowerCase()} ${rr.type} ${rdataToText(rr.data)}`).sort();
  return `rcode ${m.rcode} tc ${m.tc} | ${answer.join(" | ")}`;
}

export class Canaries {
  /** Canary n's query with this ID (EDNS 1232 for every other one). */
  query(n: number, id: number): Buffer {
    const [name, type, qclass] = QUESTIONS[n % QUESTIONS.length];
    const m = newQuery(name, type, qclass, id);
    if (n % 2 === 1) m.edns = { udpSize: 1232, version: 0, do: false, options: [] };
    return encode(m);
  }

  readonly #expected = new Map<number, string>();
  /** Replies that differed from the first reply to the same question. */
  readonly wrong: string[] = [];

  /** Checks the reply to canary n (the first reply to each question sets what is expected). The
   * answer must not be empty where a record exists (all but the NXDOMAIN name). */
  check(n: number, reply: Buffer): boolean {
    let m: Msg;
    try {
      m = decode(reply);
    } catch (err) {
      this.wrong.push(`canary ${n}: undecodable reply: ${(err as Error).message}`);
      return false;
    }
    const slot = n % QUESTIONS.length;
    const got = gist(m);
    const want = this.#expected.get(slot);
    if (want === undefined) {
      const nx = QUESTIONS[slot][0].startsWith("nothere.");
      if (nx ? m.rcode !== 3 : m.rcode !== 0 || m.answer.length === 0) {
        this.wrong.push(`canary ${n}: first reply is not an answer: ${got}`);
        return false;
      }
      this.#expected.set(slot, got);
      return true;
    }
    if (got !== want) {
      this.wrong.push(`canary ${n} (${QUESTIONS[slot][0]}): ${got}, expected ${want}`);
      return false;
    }
    return true;
  }
}
