// chaos: answers the CH-class TXT names servers use to say who they are (version.bind., ...).
// Everything else, including other CH names, goes to the next handler.

import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg } from "../../dns/message.ts";
import { replyTo } from "../../dns/message.ts";
import { Class, Type } from "../../dns/constants.ts";

export interface ChaosOptions {
  version: string;
  authors: string[];
  hostname: string;
}

export function chaos(opts: ChaosOptions): (next: Handler) => Handler {
  const answers = new Map<string, string[]>([
    ["version.bind.", [opts.version]],
    ["version.server.", [opts.version]],
    ["authors.bind.", opts.authors],
    ["hostname.bind.", [opts.hostname]],
    ["id.server.", [opts.hostname]],
  ]);
  return (next) => ({
    name: "chaos",
    serve(req) {
      const texts = req.qclass === Class.CH && req.qtype === Type.TXT ? answers.get(req.qname) : undefined;
      return texts ? Promise.resolve(reply(req, texts)) : next.serve(req);
    },
  });
}

function reply(req: Request, texts: string[]): Msg {
  const m = replyTo(req.msg);
  m.answer = texts.map((t) => ({
    name: req.qname,
    type: Type.TXT,
    class: Class.CH,
    ttl: 0,
    data: { type: Type.TXT, strings: [t] },
  }));
  req.answeredBy = "chaos";
  return m;
}
