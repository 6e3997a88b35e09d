// Quoted words of a Corefile reach plugins as CoreDNS's lexer gives them: inside double quotes only \"
// is an escape, every other backslash stays as written (coredns/caddy caddyfile/lexer.go).

import { test } from "node:test";
import assert from "node:assert/strict";
import { startServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";

test("a \\\\ inside double quotes stays two backslashes, as CoreDNS reads it", async (t) => {
  // The answer CoreDNS's template builds is `... TXT "a\\\\b" "c\\d"`: TXT strings a\\b and c\d.
  const s = await startServer(String.raw`example.org {
  template IN TXT example.org {
    answer "{{ .Name }} 60 IN TXT \"a\\\\b\" \"c\\d\""
  }
}
`);
  t.after(() => s.stop());
  const r = await dig(s.port, "x.example.org", "TXT");
  assert.equal(r.status, "NOERROR");
  assert.deepEqual(r.answer, [String.raw`x.example.org. 60 IN TXT "a\\\\b" "c\\d"`]);
});
