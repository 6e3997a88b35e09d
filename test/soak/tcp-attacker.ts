// The clients of the soak's TCP abuse part, as a process of its own so that its thousands of sockets
// count against its own open-file limit, raised where it is spawned (tcpAttack below), not the test's.
//
//   node test/soak/tcp-attacker.ts PORT MODE COUNT
//
// Opens COUNT connections to 127.0.0.1:PORT, a few at a time, each doing MODE:
//   idle       connect and send nothing
//   slowloris  send a query's frame one octet a second
//   prefix     send a length prefix of 65535, then 60,000 octets of it, then nothing
//   pipeline   send 10,000 queries and never read a reply
// It prints one JSON line per event ({"open":i,"ms":t}, {"closed":i,"ms":t,"sent":octets}) and a last
// {"done":true} once every connection has closed or its stdin closes (then it exits at once).

import net from "node:net";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { encode } from "../../src/dns/encode.ts";
import { newQuery } from "../../src/dns/message.ts";
import { tcpFrame } from "../../src/dns/tcp-frames.ts";

export type AttackMode = "idle" | "slowloris" | "prefix" | "pipeline";

export interface AttackEvent {
  open?: number;
  closed?: number;
  /** Octets this connection had written when it closed. */
  sent?: number;
  /** The connection could not be made (refused, reset, out of sockets). */
  failed?: number;
  error?: string;
  ms: number;
  done?: true;
}

const query = (id: number) => tcpFrame(encode(newQuery("nginx.default.svc.cluster.local.", 1, 1, id)));

function attack(port: number, mode: AttackMode, count: number): void {
  const started = performance.now();
  const emit = (e: Omit<AttackEvent, "ms">) =>
    process.stdout.write(JSON.stringify({ ...e, ms: Math.round(performance.now() - started) }) + "\n");
  let left = count;
  const one = (i: number) => {
    const s = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    s.setNoDelay(true);
    let opened = false;
    let timer: NodeJS.Timeout | undefined;
    s.on("error", (err: NodeJS.ErrnoException) => {
      if (!opened) emit({ failed: i, error: err.code ?? err.message });
    });
    s.on("close", () => {
      clearInterval(timer);
      if (opened) emit({ closed: i, sent: s.bytesWritten });
      if (--left === 0) emit({ done: true });
    });
    s.on("end", () => s.destroy());
    s.on("connect", () => {
      opened = true;
      emit({ open: i });
      if (mode === "slowloris") {
        const frame = query(i);
        let at = 0;
        timer = setInterval(() => at < frame.length && s.write(frame.subarray(at, ++at)), 1000);
      } else if (mode === "prefix") {
        s.write(Buffer.concat([Buffer.from([0xff, 0xff]), Buffer.alloc(60_000, 0x41)]));
      } else if (mode === "pipeline") {
        s.pause();
        s.write(Buffer.concat(Array.from({ length: 10_000 }, (_, q) => query(q))));
      }
    });
  };
  // A few connections per turn: the listen backlog (511) is not the limit being tested.
  let next = 0;
  const opener = setInterval(() => {
    for (let k = 0; k < 100 && next < count; k++) one(next++);
    if (next >= count) clearInterval(opener);
  }, 10);
}

/** What the part calls: spawns the attacker with the open-file limit raised for its sockets. */
export function tcpAttack(port: number, mode: AttackMode, count: number, onEvent: (e: AttackEvent) => void) {
  const nofile = count + 256;
  const child = spawn(
    "sh",
    [
      "-c",
      `ulimit -n ${nofile} && exec "$@"`,
      "sh",
      process.execPath,
      import.meta.filename,
      String(port),
      mode,
      String(count),
    ],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const done = new Promise<void>((resolve) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      const e = JSON.parse(line) as AttackEvent;
      onEvent(e);
      if (e.done) resolve();
    });
    child.on("exit", () => resolve());
  });
  return {
    done,
    /** Closes every connection still open and waits for the process to exit. */
    stop: async () => {
      child.stdin.end();
      await new Promise<void>((r) => (child.exitCode !== null ? r() : child.once("exit", () => r())));
    },
  };
}

if (import.meta.main) {
  const [port, mode, count] = process.argv.slice(2);
  // The part ends the attack by closing stdin: every socket goes with the process.
  process.stdin.on("end", () => process.exit(0)).resume();
  attack(Number(port), mode as AttackMode, Number(count));
}
