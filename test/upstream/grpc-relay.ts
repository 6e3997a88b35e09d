// A real DNS-over-gRPC upstream for the grpc plugin's tests: Debian's python3-grpcio serving CoreDNS's
// DnsService (test/clients/grpc_dns.py server), relaying every call's query to a DNS server (Knot), in
// cleartext or over TLS. It prints each call it gets; a line written to it changes how it answers.
// It stops with the test process: it exits when its stdin closes.

import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type net from "node:net";
import { ROOT } from "../helpers/server.ts";

/** Debian's python, where python3-grpcio is (not a python3 earlier on PATH). */
const PYTHON = "/usr/bin/python3";
const SCRIPT = join(ROOT, "test", "clients", "grpc_dns.py");

export interface GrpcRelayOptions {
  /** The DNS server's port on 127.0.0.1. */
  relay: number;
  /** Listen on this port (to start it again where it was); a free one by default. */
  port?: number;
  /** Listen on this unix socket instead. */
  socket?: string;
  /** PEM files: serve TLS with this certificate, and ask for a client certificate this CA signed. */
  tls?: { cert: string; key: string; clientCa?: string };
}

export interface GrpcRelay {
  port: number;
  /** "NAME TYPE SECONDS-LEFT" of each call, in order ("-" when the call had no deadline). */
  calls: string[];
  /** The names it was asked for, in order. */
  names(): string[];
  /** How it answers from now on: "ok", "status UNAVAILABLE", "sleep 1", "wrong-id", "wrong-question". */
  mode(how: string): Promise<void>;
  /** Stops it and waits until it has exited. */
  stop(): Promise<void>;
}

export async function startGrpcRelay(o: GrpcRelayOptions): Promise<GrpcRelay> {
  const where = o.socket === undefined ? String(o.port ?? 0) : `unix:${o.socket}`;
  const args = [SCRIPT, "server", where, "--relay", `127.0.0.1:${o.relay}`];
  if (o.tls) args.push("--cert", o.tls.cert, "--key", o.tls.key);
  if (o.tls?.clientCa) args.push("--client-ca", o.tls.clientCa);
  const proc = spawn(PYTHON, args, { stdio: ["pipe", "pipe", "pipe"] });
  const calls: string[] = [];
  const output: string[] = [];
  let modeSet: ((line: string) => void) | undefined;
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  proc.stderr.on("data", (d: Buffer) => output.push(d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`grpc_dns.py did not start:\n${output.join("")}`)),
      15_000,
    );
    void exited.then(() => reject(new Error(`grpc_dns.py exited:\n${output.join("")}`)));
    createInterface({ input: proc.stdout }).on("line", (line) => {
      const [word, ...rest] = line.split(" ");
      if (word === "port") {
        clearTimeout(timer);
        resolve(Number(rest[0]));
      } else if (word === "query") calls.push(rest.join(" "));
      else if (word === "mode") modeSet?.(rest.join(" "));
    });
  });
  // Neither the child nor its pipes keep the test process alive; its exit closes stdin, which ends it.
  proc.unref();
  for (const s of [proc.stdin, proc.stdout, proc.stderr]) (s as unknown as net.Socket).unref();
  return {
    port,
    calls,
    names: () => calls.map((c) => c.split(" ")[0]),
    mode: (how) =>
      new Promise<void>((resolve) => {
        modeSet = (line) => {
          if (line === how) resolve();
        };
        proc.stdin.write(`${how}\n`);
      }),
    async stop() {
      proc.stdin.end();
      const timer = setTimeout(() => proc.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
