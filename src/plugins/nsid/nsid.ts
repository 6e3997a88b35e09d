// nsid: tells a client that asks which server answered (RFC 5001). A query whose EDNS record carries
// an empty NSID option gets the server's identifier in an NSID option of the reply's EDNS record;
// other queries are left alone. The answer cache files NSID requests apart (src/dns/scan.ts), so a
// reply with the identifier is never replayed to a client that did not ask, nor one without it to a
// client that did.

import type { Handler } from "../../chain/handler.ts";
import { setReplyOption } from "../../dns/message.ts";
import { EdnsOption } from "../../dns/constants.ts";

export function nsid(id: Uint8Array): (next: Handler) => Handler {
  return (next) => ({
    name: "nsid",
    async serve(req) {
      const reply = await next.serve(req);
      if (req.msg.edns?.options.some((o) => o.code === EdnsOption.NSID)) {
        setReplyOption(reply, EdnsOption.NSID, id);
      }
      return reply;
    },
  });
}
