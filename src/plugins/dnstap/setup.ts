// dnstap SOCKET [full] [WRITEBUFFER] [QUEUE] {
//     identity IDENTITY
//     version VERSION
//     extra EXTRA
//     skipverify
//     message_types TYPE...
// }
// SOCKET: a path, unix://PATH, tcp://HOST:PORT or tls://HOST:PORT. Several dnstap lines in a block
// each send everything to their own receiver, as in CoreDNS.

import { hostname } from "node:os";
import { resolve } from "node:path";
import type { Setup } from "../../setup/registry.ts";
import type { Directive, Token } from "../../corefile/types.ts";
import type { Endpoint } from "./frame-stream.ts";
import { FrameStream } from "./frame-stream.ts";
import { Tap } from "./tap.ts";
import { envelopeHead } from "./protobuf.ts";
import { headFor, placeholders, unsupportedPlaceholder } from "./extra.ts";
import { metadataOf } from "../metadata/labels.ts";
import { retire, streams } from "./metrics.ts";
import { FORWARD_TAPS } from "../forward/tap.ts";
import { offer, offered } from "../offers.ts";
import { argCount, ignoredOption, parseIntArg } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { VERSION } from "../../version.ts";

export const NAME = "dnstap";

/** CoreDNS's units: WRITEBUFFER in MiB, QUEUE in 10,000s of messages. */
const MIB = 1024 * 1024;
const QUEUE_UNIT = 10_000;
/** Octets of frames that may wait for the socket, besides what it holds itself. */
const WAITING_OCTETS = 8 * MIB;

/** Message.Type names (dnstap.proto), for message_types. */
const TYPE_NAMES = [
  "AUTH_QUERY",
  "AUTH_RESPONSE",
  "RESOLVER_QUERY",
  "RESOLVER_RESPONSE",
  "CLIENT_QUERY",
  "CLIENT_RESPONSE",
  "FORWARDER_QUERY",
  "FORWARDER_RESPONSE",
  "STUB_QUERY",
  "STUB_RESPONSE",
  "TOOL_QUERY",
  "TOOL_RESPONSE",
  "UPDATE_QUERY",
  "UPDATE_RESPONSE",
];

export interface DnstapConfig {
  endpoint: Endpoint;
  full: boolean;
  identity: string;
  version: string;
  extra: string | undefined;
  /** Bit 1 << Message.Type for each type sent. */
  types: number;
  writeBufferOctets: number;
  queueFrames: number;
}

export const setup: Setup = (d, ctx) => {
  const log = ctx.log(NAME);
  const c = parseDnstap(d, ctx.root, (opt, why) => ignoredOption(opt, log, why));
  const stream = new FrameStream({
    endpoint: c.endpoint,
    maxFrames: c.queueFrames,
    maxOctets: WAITING_OCTETS,
    socketOctets: c.writeBufferOctets,
    log,
  });
  const metadata = metadataOf(ctx.block.shared);
  const labelled = c.extra !== undefined && placeholders(c.extra).length > 0;
  if (labelled && metadata === undefined) {
    log.warn(
      { extra: c.extra },
      "the block has no metadata directive: every {/LABEL} in extra is sent as '-'",
    );
  }
  const tap = new Tap(stream, {
    head: envelopeHead(c.identity, c.version, c.extra),
    headFor: labelled
      ? headFor(
          { identity: c.identity, version: c.version, extra: c.extra! },
          metadata && ((l) => metadata.label(l)),
        )
      : undefined,
    full: c.full,
    types: c.types,
  });
  ctx.onStartup(() => {
    streams.add(stream);
    stream.start();
  });
  ctx.onShutdown(async () => {
    await stream.close();
    retire(stream);
  });
  ctx.onQueryDone((q) => tap.client(q));
  const taps = offered(ctx.block.shared, FORWARD_TAPS);
  if (taps === undefined) offer(ctx.block.shared, FORWARD_TAPS, [tap]);
  else taps.push(tap);
  return undefined;
};

/** The directive's settings, checked; every mistake is a ConfigError at its file:line. `ignored`
 * says why an accepted option does nothing. */
export function parseDnstap(
  d: Directive,
  root: string,
  ignored: (opt: Directive, why: string) => void = () => {},
): DnstapConfig {
  argCount(d, NAME, 1, 4);
  const [socket, full, writeBuffer, queue] = d.args;
  if (full !== undefined && full.text !== "full")
    throw configError(full, NAME, `unexpected '${full.text}' (want 'full', then WRITEBUFFER and QUEUE)`);
  const c: DnstapConfig = {
    endpoint: endpoint(socket, root),
    full: full !== undefined,
    identity: hostname(),
    version: `clusterdns-${VERSION}`,
    extra: undefined,
    types: ~0,
    writeBufferOctets: (writeBuffer === undefined ? 1 : parseIntArg(writeBuffer, NAME, 1, 1024)) * MIB,
    queueFrames: (queue === undefined ? 1 : parseIntArg(queue, NAME, 1, 100)) * QUEUE_UNIT,
  };
  let skipVerify: Directive | undefined;
  for (const opt of d.block ?? []) {
    if (opt.block) throw configError(opt, NAME, `'${opt.name}' takes no block`);
    switch (opt.name) {
      case "identity":
        c.identity = oneArg(opt);
        break;
      case "version":
        c.version = oneArg(opt);
        break;
      case "extra":
        c.extra = extra(opt);
        break;
      case "skipverify":
        argCount(opt, NAME, 0, 0);
        skipVerify = opt;
        break;
      case "message_types":
        c.types = messageTypes(opt);
        break;
      default:
        throw configError(opt, NAME, `unknown property '${opt.name}'`);
    }
  }
  if (skipVerify !== undefined) {
    if (c.endpoint.kind === "tls") c.endpoint.skipVerify = true;
    else ignored(skipVerify, "only a tls:// endpoint has a certificate to verify");
  }
  return c;
}

/** SOCKET: tcp:// and tls:// need HOST:PORT; anything else is a unix socket's path (unix:// or none),
 * relative to the Corefile's folder. */
function endpoint(t: Token, root: string): Endpoint {
  const text = t.text;
  const scheme = /^([a-z]+):\/\//.exec(text)?.[1];
  if (scheme === undefined || scheme === "unix") {
    const path = scheme === undefined ? text : text.slice("unix://".length);
    if (path === "") throw configError(t, NAME, "the socket's path is empty");
    return { kind: "unix", path: resolve(root, path) };
  }
  if (scheme !== "tcp" && scheme !== "tls")
    throw configError(t, NAME, `unknown scheme '${scheme}://' (want a path, unix://, tcp:// or tls://)`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw configError(t, NAME, `'${text}' is not ${scheme}://HOST:PORT`);
  }
  if (url.hostname === "" || url.port === "" || (url.pathname !== "" && url.pathname !== "/"))
    throw configError(t, NAME, `'${text}' is not ${scheme}://HOST:PORT`);
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  return { kind: scheme, host, port: Number(url.port), skipVerify: false };
}

function oneArg(opt: Directive): string {
  argCount(opt, NAME, 1, 1);
  return opt.args[0].text;
}

/** extra TEXT: sent as it is, its `{/LABEL}` placeholders filled from metadata per message (extra.ts);
 * any other placeholder fails here rather than sending the braces. */
function extra(opt: Directive): string {
  const text = oneArg(opt);
  const p = unsupportedPlaceholder(text);
  if (p !== undefined) {
    throw configError(opt.args[0], NAME, `extra: placeholder ${p} is not supported (only {/LABEL} metadata)`);
  }
  return text;
}

function messageTypes(opt: Directive): number {
  argCount(opt, NAME, 1, Infinity);
  let bits = 0;
  for (const t of opt.args) {
    const i = TYPE_NAMES.indexOf(t.text);
    if (i < 0) throw configError(t, NAME, `message_types: unknown type '${t.text}' (want e.g. CLIENT_QUERY)`);
    bits |= 1 << (i + 1);
  }
  return bits;
}
