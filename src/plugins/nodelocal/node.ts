// The node's set-up, one per process whatever the number of blocks or reloads: the interface holding
// the node-local addresses, the NOTRACK rules, a check that puts back what someone removed, and the
// teardown at exit unless another clusterdns has taken the addresses over (a restart). A stop with no
// successor takes the queries' NOTRACK rules away first, while the sockets still answer: from then on a
// query to an address kube-proxy also serves (the kube-dns Service IP of the transparent variant) is
// DNATed to kube-dns, and none meets a closed port between the sockets' close and the teardown.

import type { Logger } from "pino";
import { NodeSetupError, runCommand, type Run } from "./command.ts";
import { ensureInterface, removeInterface } from "./interface.ts";
import { detectFirewall, foreignNotrack, iptablesBackend, type Firewall } from "./detect.ts";
import { MARK, type Endpoint, type RuleWriter } from "./rules.ts";
import { iptablesWriter } from "./rules-iptables.ts";
import { nftablesWriter } from "./rules-nftables.ts";
import { allServedByOthers, othersServing, procReader, type Reader } from "./sockets.ts";

export interface NodeConfig {
  interface: string;
  addresses: string[];
  /** auto: detectFirewall; off: no rules. */
  rules: Firewall | "auto" | "off";
  /** How often the interface and rules are checked and put back; 0: never. */
  checkMs: number;
  /** At stop, how long to wait for another clusterdns to serve the addresses before leaving. */
  handoverMs: number;
  /** Leave interface and rules on the node at exit (node-cache's -skipteardown). */
  keep: boolean;
}

export interface NodeDeps {
  run: Run;
  reader: Reader;
  log: Logger;
  /** The process shares its ports (-reuseport): the only way to take over from a running clusterdns. */
  reusePort: boolean;
}

export class NodeLocal {
  readonly config: NodeConfig;
  readonly #deps: NodeDeps;
  #writer: RuleWriter | undefined;
  /** The firewall #writer writes to: for plain iptables, the backend `iptables -V` names. */
  #backend: string | undefined;
  #endpoints: Endpoint[] = [];
  /** The DNS port the rules are for, once set (0 before). */
  port = 0;
  /** The DNS port the block serves, as configured: where another clusterdns would serve. */
  #served = 53;
  /** The queries' rules were taken away at a stop with no successor (withdraw). */
  #withdrawn = false;
  #timer: NodeJS.Timeout | undefined;
  #checking: Promise<void> | undefined;
  /** Set-up errors a check met since the last good one, and how many checks put something back. */
  failures = 0;
  repairs = 0;

  constructor(config: NodeConfig, deps: Partial<NodeDeps> & { log: Logger }) {
    this.config = config;
    this.#deps = { run: runCommand, reader: procReader, reusePort: false, ...deps };
  }

  /** Before the listeners open on `port`: refuse a node another DNS server holds, then the interface. */
  async setUpInterface(port: number): Promise<void> {
    const { run, reader, log, reusePort } = this.#deps;
    const { addresses } = this.config;
    this.#served = port;
    this.#writer ??= await this.#pickWriter();
    const others = [...othersServing(addresses, port, reader)].filter(([, n]) => n > 0).map(([a]) => a);
    if (others.length > 0) {
      const ours = await this.#oursAnywhere();
      if (!ours) {
        const rule = await foreignNotrack(run, addresses, MARK);
        const who = rule ? `node-local-dns (NodeLocal DNSCache; its rule ${rule})` : "another DNS server";
        throw new NodeSetupError(
          `${others.join(", ")} is already served on this node by ${who}: remove it first (kubectl -n kube-system delete daemonset node-local-dns), or bind other addresses`,
        );
      }
      if (!reusePort) {
        throw new NodeSetupError(
          `${others.join(", ")} is served by another clusterdns on this node: start with -reuseport to take over from it without a gap`,
        );
      }
      log.info(
        { addresses: others },
        "another clusterdns serves these addresses: sharing them until it stops (a restart)",
      );
    } else {
      const rule = await foreignNotrack(run, addresses, MARK);
      if (rule)
        log.warn(
          { rule },
          "NOTRACK rules of another DNS server (node-local-dns?) are on this node; nothing serves them: adding ours beside them",
        );
    }
    const state = await ensureInterface(run, this.config.interface, addresses);
    log.info(
      { interface: this.config.interface, kind: state.kind, addresses, changed: state.changed },
      "interface ready",
    );
  }

  /** Once the listeners are open on `port`: the rules, then the periodic check. */
  async setUpRules(port: number): Promise<void> {
    this.port = port;
    this.#served = port;
    this.#endpoints = this.config.addresses.map((address) => ({ address, port }));
    if (this.#writer) {
      // Swept first: with `rules iptables` on a backend iptables -V does not name, the others
      // include this writer's own.
      await this.#sweepElsewhere();
      const changes = await this.#writer.ensure(this.#endpoints);
      this.#deps.log.info(
        { rules: this.#writer.name, endpoints: this.#endpoints.length, changes },
        "NOTRACK rules ready",
      );
    }
    if (this.config.checkMs > 0 && this.#timer === undefined) {
      this.#timer = setInterval(() => void this.check(), this.config.checkMs);
      this.#timer.unref();
    }
  }

  /** Puts back an interface, address or rule that went missing; logs what it did, never throws. */
  check(): Promise<void> {
    this.#checking ??= this.#check().finally(() => (this.#checking = undefined));
    return this.#checking;
  }

  async #check(): Promise<void> {
    const { run, log } = this.#deps;
    try {
      const state = await ensureInterface(run, this.config.interface, this.config.addresses);
      const rules =
        this.#writer && this.#endpoints.length > 0 ? await this.#writer.ensure(this.#endpoints) : 0;
      if (state.changed.length > 0 || rules > 0) {
        this.repairs++;
        log.warn({ interface: state.changed, rules }, "the node's set-up had changed: put back");
      }
      this.failures = 0;
    } catch (err) {
      this.failures++;
      log.error(
        { err: (err as Error).message },
        "checking the node's set-up failed: trying again at the next check",
      );
    }
  }

  /** At stop, before lameduck: waits (up to handover) for another process to serve every address;
   * with none, withdraws the queries' rules. */
  async awaitSuccessor(): Promise<void> {
    let served = this.#allServedByOthers();
    if (this.config.handoverMs > 0) {
      const deadline = Date.now() + this.config.handoverMs;
      while (!served && Date.now() < deadline) {
        await sleep(100);
        served = this.#allServedByOthers();
      }
      this.#deps.log.info(
        { served },
        served
          ? "another clusterdns serves the node-local addresses: leaving"
          : "no other clusterdns took over in time: leaving",
      );
    }
    if (!served && !this.config.keep) await this.#withdraw();
  }

  /** Removes the NOTRACK rules of queries and keeps those of replies, before the sockets close: a query
   * now passes connection tracking, so kube-proxy DNATs one for the Service IP to kube-dns, and one for
   * the link-local address still reaches this process; what the sockets hold is answered untracked.
   * The addresses stay until the sockets close: the kernel refuses a send from an address the node no
   * longer has, so removing them first would drop the replies still to come. */
  async #withdraw(): Promise<void> {
    this.stopChecks();
    await this.#checking;
    if (!this.#writer || this.#endpoints.length === 0) return;
    try {
      await this.#sweepElsewhere();
      await this.#writer.ensure(this.#endpoints, { queries: false });
      this.#withdrawn = true;
      this.#deps.log.info(
        { rules: this.#writer.name },
        "no successor: the queries' NOTRACK rules are gone, so kube-proxy's DNAT takes the Service IP back",
      );
    } catch (err) {
      this.#deps.log.error({ err: (err as Error).message }, "removing the queries' NOTRACK rules failed");
    }
  }

  /** Takes the node back from a reload's set-up that failed, while this one's listeners serve on: puts
   * back what that set-up changed, then checks on as before. Logs a failure, never throws. */
  async resume(): Promise<void> {
    await this.check();
    if (this.port === 0) return;
    try {
      await this.setUpRules(this.port);
    } catch (err) {
      this.#deps.log.error({ err: (err as Error).message }, "taking the node's set-up back failed");
    }
  }

  /** Stops the periodic check (a reload handed the node to a new set-up). */
  stopChecks(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** After the listeners closed: removes rules and interface, unless another process serves them. */
  async tearDown(): Promise<void> {
    this.stopChecks();
    await this.#checking;
    const { run, log } = this.#deps;
    if (this.config.keep) {
      log.info("keep: the interface and rules stay on the node");
      return;
    }
    const others = othersServing(this.config.addresses, this.#served, this.#deps.reader);
    if ([...others.values()].some((n) => n > 0)) {
      // A successor came after the stop withdrew the queries' rules: they are its again.
      if (this.#withdrawn && this.#writer) await this.#writer.ensure(this.#endpoints);
      log.info("another clusterdns serves the node-local addresses: leaving the interface and rules to it");
      return;
    }
    let rules = this.#writer ? await this.#writer.remove() : 0;
    for (const w of this.#elsewhere()) rules += await w.remove();
    const removed = await removeInterface(run, this.config.interface);
    log.info({ rules, interface: removed ? this.config.interface : undefined }, "node set-up removed");
  }

  #allServedByOthers(): boolean {
    return allServedByOthers(this.config.addresses, this.#served, this.#deps.reader);
  }

  /** The firewalls this process does not write to, where an earlier clusterdns of the node may have
   * written rules of ours: `rules` changed, or `auto` decided otherwise (before kube-proxy had written
   * its rules, after a reboot). None with `rules off`: then no firewall is touched. */
  #elsewhere(): RuleWriter[] {
    if (!this.#writer) return [];
    return FIREWALLS.filter((f) => f !== this.#backend).map((f) => writerFor(this.#deps.run, f));
  }

  /** Rules of ours in any firewall: a running clusterdns may write to another one than this. */
  async #oursAnywhere(): Promise<boolean> {
    for (const w of [this.#writer, ...this.#elsewhere()]) if (await w?.present()) return true;
    return false;
  }

  /** Removes rules of ours from the other firewalls: a process that crashed there would otherwise
   * leave them for good (a teardown removes what its own writer wrote), NOTRACKing addresses that
   * may no longer be served. */
  async #sweepElsewhere(): Promise<void> {
    for (const w of this.#elsewhere()) {
      const n = await w.remove();
      if (n > 0) this.#deps.log.warn({ rules: w.name }, "rules of ours in another firewall: removed");
    }
  }

  async #pickWriter(): Promise<RuleWriter | undefined> {
    const { run, log } = this.#deps;
    let firewall = this.config.rules;
    if (firewall === "off") return undefined;
    if (firewall === "auto") {
      const d = await detectFirewall(run);
      log.info({ rules: d.firewall, why: d.why }, "firewall detected");
      firewall = d.firewall;
    }
    this.#backend = firewall === "iptables" ? await iptablesBackend(run) : firewall;
    return writerFor(run, firewall);
  }
}

/** Every firewall a writer of ours may write to (plain `iptables` is one of the two backends). */
const FIREWALLS = ["nftables", "iptables-legacy", "iptables-nft"] as const;

function writerFor(run: Run, firewall: Firewall): RuleWriter {
  return firewall === "nftables" ? nftablesWriter(run) : iptablesWriter(run, firewall);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
