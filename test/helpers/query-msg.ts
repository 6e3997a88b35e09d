// A query as a Msg: RD set, every other flag clear, one question, empty sections. Tests patch what
// they need (id, edns, opcode, flags, the question itself).

import { newQuery, type Msg } from "../../src/dns/message.ts";
import { Class } from "../../src/dns/constants.ts";

export type QueryPatch = Partial<Msg> & { qclass?: number };

export function queryMsg(name: string, type: number, { qclass = Class.IN, ...patch }: QueryPatch = {}): Msg {
  return { ...newQuery(name, type, qclass, 0x1234), ...patch };
}
