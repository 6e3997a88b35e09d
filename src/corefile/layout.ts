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
import type { ParseOptions } from "./parser.ts";

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
  parse: Pick<ParseOptions, "dir" | "mount">;
  /** A message with the temporary folder named as the pod has it (/etc/coredns). */
  shown(message: string): string;
  /** Removes the temporary folder. */
  close(): void;
}

export function layOut(inputs: Input[]): Layout {
  // A List (kubectl get cm coredns coredns-custom -o yaml) is its ConfigMaps, one by one.
  const read = inputs.flatMap((input): { input: Input; cm?: ConfigMapData }[] => {
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
  const { text, file } = cm ? corefileOf(input, cm) : { text: input.text, file: input.name };
  if (read.length === 1 && !cm) {
    const root = input.name === "stdin" ? process.cwd() : dirname(resolve(input.name));
    return { text, file, root, parse: {}, shown: (m) => m, close: () => {} };
  }
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-etc-coredns-"));
  mkdirSync(join(dir, CUSTOM));
  for (const r of read) {
    if (!r.cm) continue;
    for (const [key, value] of r.cm.data) {
      if (r === main[0] && key === "Corefile") continue;
      if (!/^[-._a-zA-Z0-9]+$/.test(key) || key === "." || key === "..")
        throw new InputError(`${r.input.name}:${r.cm.lineOf(key)}: '${key}' is not a ConfigMap key`);
      writeFileSync(join(dir, r === main[0] ? "" : CUSTOM, key), value);
    }
  }
  return {
    text,
    file,
    root: dir,
    parse: { dir, mount: { at: MOUNT, dir } },
    shown: (m) => m.replaceAll(dir, MOUNT),
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The Corefile of the coredns ConfigMap, with the file's line numbers where a `|` block allows. */
function corefileOf(input: Input, cm: ConfigMapData): { text: string; file: string } {
  const { firstLine, literal } = cm.placed("Corefile");
  const value = cm.data.get("Corefile")!;
  if (literal) return { text: "\n".repeat(firstLine - 1) + value, file: input.name };
  return { text: value, file: `${input.name} (data.Corefile)` };
}
