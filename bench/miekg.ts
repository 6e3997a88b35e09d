// Builds and starts the miekg/dns anchor (bench/miekg/main.go) in GOPATH mode, from Debian's golang-go
// and golang-github-miekg-dns-dev: no module download, nothing fetched.

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startPinned, type Started } from "./processes.ts";

const SOURCE = resolve(import.meta.dirname, "miekg", "main.go");
const GOPATH = "/usr/share/gocode";

/** Builds the server into a folder of the temp dir; one clear line when the toolchain is missing. */
export function buildMiekg(): string {
  if (!existsSync(join(GOPATH, "src", "github.com", "miekg", "dns"))) {
    throw new Error(
      "the miekg/dns anchor needs Debian's golang-go and golang-github-miekg-dns-dev: apt-get install golang-go golang-github-miekg-dns-dev",
    );
  }
  const dir = join(tmpdir(), "clusterdns-miekg");
  mkdirSync(dir, { recursive: true });
  const bin = join(dir, "miekg-server");
  execFileSync("go", ["build", "-o", bin, SOURCE], {
    cwd: dir,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, GO111MODULE: "off", GOPATH, GOCACHE: join(dir, "cache"), GOFLAGS: "" },
  });
  return bin;
}

/** Starts the server with `sockets` SO_REUSEPORT sockets and GOMAXPROCS as many (CoreDNS's
 * multisocket on N cores); with 1, one socket on one core. */
export function startMiekg(bin: string, answersFile: string, sockets = 1): Promise<Started> {
  return startPinned(bin, ["0", answersFile, String(sockets)], /miekg listening/, {
    GOMAXPROCS: String(sockets),
  });
}
