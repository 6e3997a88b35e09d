// header {
//     [query|response] set|clear FLAG...
// }
// FLAG is aa, ra, rd, ad or cd; without a selector the line applies to replies, as in CoreDNS.

import type { Setup } from "../../setup/registry.ts";
import type { Directive } from "../../corefile/types.ts";
import type { Flag, HeaderRules } from "./header.ts";
import { header } from "./header.ts";
import { argCount, noBlock } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";

const FLAGS: readonly string[] = ["aa", "ra", "rd", "ad", "cd"] satisfies Flag[];

export const setup: Setup = (d, ctx) => {
  argCount(d, "header", 0, 0);
  if (!d.block || d.block.length === 0) {
    throw configError(
      d,
      "header",
      "needs a block with at least one line: [query|response] set|clear FLAG...",
    );
  }
  const rules: HeaderRules = { query: { set: [], clear: [] }, response: { set: [], clear: [] } };
  for (const line of d.block) parseLine(line, rules);
  // The server copies a query's RD and CD bits into its reply (RFC 1035 4.1.1, RFC 4035 3.2.2), after
  // every plugin: a reply's rd or cd cannot be changed here.
  const fixed = [...rules.response.set, ...rules.response.clear].filter((f) => f === "rd" || f === "cd");
  if (fixed.length > 0) {
    ctx
      .log("header")
      .warn(
        { at: `${d.file}:${d.line}`, flags: fixed },
        "a reply's rd and cd bits always echo the query's: changing them in replies has no effect",
      );
  }
  return header(rules);
};

function parseLine(line: Directive, rules: HeaderRules): void {
  noBlock(line, "header");
  const words = [line.name, ...line.args.map((t) => t.text)];
  const tokens = [line, ...line.args];
  let i = 0;
  let selector: "query" | "response" = "response";
  if (words[0] === "query" || words[0] === "response") {
    selector = words[0];
    i++;
  }
  const action = words[i];
  if (action !== "set" && action !== "clear") {
    throw configError(tokens[i] ?? line, "header", `unknown action '${action ?? ""}' (want set or clear)`);
  }
  const flags = words.slice(i + 1);
  if (flags.length === 0) throw configError(line, "header", `'${action}' needs at least one flag`);
  for (const [k, f] of flags.entries()) {
    if (!FLAGS.includes(f)) {
      throw configError(tokens[i + 1 + k], "header", `unknown flag '${f}' (want ${FLAGS.join(", ")})`);
    }
    rules[selector][action].push(f as Flag);
  }
}
