// The Corefile that -validate and `migrate coredns` check, from what they were given: a Corefile, or
// the coredns ConfigMap as kubectl prints it, with more ConfigMaps beside it (AKS's and k3s's
// coredns-custom). A ConfigMap's keys are written to a temporary folder laid out as the pod mounts
// them: the coredns ConfigMap's keys at /etc/coredns/KEY (k3s's `hosts /etc/coredns/NodeHosts`), every
// other ConfigMap's at /etc/coredns/custom/KEY (`import custom/*.override`). The Corefile is not
// rewritten: the parser reads paths under /etc/coredns from that folder (ParseOptions.mount).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { configMaps, InputError, type ConfigMapData, type Input } from "./configmap.ts";
import type { ConfigWarning } from "./errors.ts";
import type { ParseOptions } from "./parser.ts";
import type { Directive, ServerBlock } from "./types.ts";

/** Where the coredns ConfigMap is mounted in CoreDNS's pod, and coredns-custom below it. */
export const MOUNT = "/etc/coredns";
const CUSTOM = "custom";
/** The keys of kube-dns's own ConfigMap. */
const KUBE_DNS_KEYS = ["stubDomains", "upstreamNameservers", "federations"];

export interface Layout {
  /** The Corefile's text; a ConfigMap's `|` block is padded so its lines are the file's. */
  text: string;
  /** As messages name the Corefile. */
  file: string;
  /** Folder relative paths resolve against. */
  root: string;
  parse: Pick<ParseOptions, "dir" | "mount" | "imported">;
  /** A message as a person can follow it where the check runs: a line of a ConfigMap key
   * (`DIR/custom/KEY:3`) named at its line of the ConfigMap's file, as the Corefile key's lines are, and
   * other paths in the temporary folder named as the pod has them (/etc/coredns). */
  shown(message: string): string;
  /** Where a line of a file is in what was given: a ConfigMap key's line, at its line of the file. */
  placed(file: string, line: number): { file: string; line: number };
  /** A ConfigMap key the parsed Corefile neither imports nor names as a path (a k3s NodeHost, an AKS
   * custom key that ends in neither .override nor .server): one warning each, at the key's line. CoreDNS
   * ignores such a key too, without a word. */
  unread(blocks: ServerBlock[]): ConfigWarning[];
  /** Removes the temporary folder. */
  close(): void;
}

export function layOut(inputs: Input[]): Layout {
  // A List (kubectl get cm coredns coredns-custom -o yaml) is its ConfigMaps, one by one.
  const read = inputs.flatMap((input): Read[] => {
    const found = configMaps(input);
    return found.length > 0 ? found.map(({ cm }) => ({ input, cm })) : [{ input, cm: undefined }];
  });
  const main = read.filter((r) => !r.cm || r.cm.data.has("Corefile"));
  // kube-dns's ConfigMap holds no Corefile, only the values kubeadm turns into one.
  const kubeDns = read.find((r) => r.cm && KUBE_DNS_KEYS.some((k) => r.cm!.data.has(k)));
  if (main.length === 0 && kubeDns)
    throw new InputError(
      `${kubeDns.input.name} is kube-dns's ConfigMap (stubDomains, upstreamNameservers), not a Corefile: make one with clusterdns migrate kube-dns ${kubeDns.input.name}, then validate that`,
    );
  if (main.length !== 1)
    throw new InputError(
      `${main.length === 0 ? "no Corefile among" : "more than one Corefile in"} ${inputs.map((i) => i.name).join(", ")}: give one Corefile (a file, or the coredns ConfigMap) and, beside it, ConfigMaps such as coredns-custom`,
    );
  const [{ input, cm }] = main;
  if (read.length === 1 && !cm) {
    const root = input.name === "stdin" ? process.cwd() : dirname(resolve(input.name));
    return plainLayout(input.text, input.name, root);
  }
  const corefile = keyPlace(input.name, cm!, "Corefile");
  const text = "\n".repeat(corefile.firstLine - 1) + cm!.data.get("Corefile")!;
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-etc-coredns-"));
  mkdirSync(join(dir, CUSTOM));
  const { keys, named } = writeKeys(read, main[0], dir);
  const seen = new Set<string>(); // the keys' files an import read
  const placed = (file: string, line: number) => {
    const at = keys.get(file);
    return at
      ? { file: at.file, line: at.firstLine + line - 1 }
      : { file: file.replaceAll(dir, MOUNT), line };
  };
  const fileLine = new RegExp(`${dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/[-._a-zA-Z0-9/]+:(\\d+)`, "g");
  return {
    text,
    file: corefile.file,
    root: dir,
    parse: { dir, mount: { at: MOUNT, dir }, imported: (file) => seen.add(file) },
    shown: (m) =>
      m
        .replace(fileLine, (found: string, line: string) => {
          const at = placed(found.slice(0, -line.length - 1), Number(line));
          return `${at.file}:${at.line}`;
        })
        .replaceAll(dir, MOUNT),
    placed,
    unread: (blocks) => {
      const used = new Set([...seen, ...argumentPaths(blocks, dir)]);
      return [...named]
        .filter(([path]) => !used.has(path))
        .map(([path, k]) => ({
          file: k.file,
          line: k.line,
          message: `data.${k.key} is read by nothing: no import or path of the Corefile names ${path.replace(dir, MOUNT)} (CoreDNS ignores it too)`,
        }));
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

type Read = { input: Input; cm?: ConfigMapData };

/** Writes each key but `main`'s Corefile to its file in `dir`: where the file's lines are in what was
 * given (keys), and where its key is (named). */
function writeKeys(read: Read[], main: Read, dir: string) {
  const keys = new Map<string, KeyPlace>();
  const named = new Map<string, { file: string; line: number; key: string }>();
  for (const r of read) {
    if (!r.cm) continue;
    for (const [key, value] of r.cm.data) {
      if (r === main && key === "Corefile") continue;
      if (!/^[-._a-zA-Z0-9]+$/.test(key) || key === "." || key === "..")
        throw new InputError(`${r.input.name}:${r.cm.lineOf(key)}: '${key}' is not a ConfigMap key`);
      const path = join(dir, r === main ? "" : CUSTOM, key);
      writeFileSync(path, value);
      keys.set(path, keyPlace(r.input.name, r.cm, key));
      named.set(path, { file: r.input.name, line: r.cm.lineOf(key), key });
    }
  }
  return { keys, named };
}

/** A Corefile given as it is: messages name its own lines. */
export function plainLayout(text: string, file: string, root: string): Layout {
  return {
    text,
    file,
    root,
    parse: {},
    shown: (m) => m,
    placed: (f, line) => ({ file: f, line }),
    unread: () => [],
    close: () => {},
  };
}

/** Every argument of every line, as a path from `root` (hosts FILE, file FILE, ...). */
function argumentPaths(blocks: ServerBlock[], root: string): string[] {
  const walk = (lines: Directive[]): string[] =>
    lines.flatMap((d) => [...d.args.map((a) => resolve(root, a.text)), ...walk(d.block ?? [])]);
  return blocks.flatMap((b) => walk(b.directives));
}

/** Where a ConfigMap key's lines are: `file` names them, and its line `firstLine` is the value's first. */
interface KeyPlace {
  file: string;
  firstLine: number;
}

/** A `|` block's lines are the file's; any other value's are its own, named after its key. */
function keyPlace(name: string, cm: ConfigMapData, key: string): KeyPlace {
  const { firstLine, literal } = cm.placed(key);
  return literal ? { file: name, firstLine } : { file: `${name} (data.${key})`, firstLine: 1 };
}
