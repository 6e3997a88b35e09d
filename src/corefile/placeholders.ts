// Corefiles that distributions ship as templates: k3s fills `%{CLUSTER_DOMAIN}%` in, Helm charts
// `{{ .Values.x }}`, shell scripts `${VAR}`, node-local-dns's binary `__PILLAR__UPSTREAM__SERVERS__`. Copied out before being rendered, such a Corefile reads
// as nonsense (a zone named `%{CLUSTER_DOMAIN}%`), so each placeholder is named for what it is, at
// its line. CoreDNS's own `{$VAR}` (and `{%VAR%}`) is not one: the parser fills it from the
// environment.

import { ConfigError } from "./errors.ts";
import type { Lexeme } from "./lexer.ts";

const KINDS: { test: RegExp; who: string }[] = [
  { test: /%\{[^{}]*\}%/, who: "k3s" },
  { test: /\{\{|\}\}/, who: "Helm or Go templates" },
  { test: /\$\{[^{}]*\}/, who: "a shell or envsubst" },
  // NodeLocal DNSCache's ConfigMap: its binary fills these in at start-up (the node's resolv.conf, the
  // kube-dns Service's address); clusterdns's node-local mode takes the values written out.
  { test: /__PILLAR__[A-Z0-9_]+__/, who: "k8s-dns-node-cache fills it in at start-up" },
];

/** Lines of the template plugin whose words are Go templates of its own (`answer "{{ .Name }} ..."`). */
const GO_TEMPLATE_LINES = new Set(["answer", "additional", "authority"]);

/** One error per line that holds a placeholder, naming the first. */
export function placeholderErrors(words: readonly Lexeme[]): ConfigError[] {
  const out: ConfigError[] = [];
  let first = "";
  let reported = -1;
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (w.lineStart) first = w.text;
    if (w.line === reported || GO_TEMPLATE_LINES.has(first)) continue;
    const kind = KINDS.find((k) => k.test.test(w.text));
    if (!kind) continue;
    let shown = w.text;
    // `{{ .Values.domain }}` is three words: name all of it.
    for (let j = i + 1; shown.startsWith("{{") && !shown.includes("}}") && j < words.length; j++) {
      if (words[j].line !== w.line) break;
      shown += ` ${words[j].text}`;
    }
    reported = w.line;
    out.push(
      new ConfigError(
        w.file,
        w.line,
        `'${shown}' is a template placeholder (${kind.who}) that was never filled in: render the template first, then use the Corefile it makes`,
      ),
    );
  }
  return out;
}
