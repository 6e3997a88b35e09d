// CoreDNS's DNS-over-gRPC message, DnsPacket { bytes msg = 1; } (its pb/dns.proto), in protobuf's wire
// format: the key 0x0a (field 1, length-delimited), a varint length, the DNS message. And gRPC's
// length-prefixed framing of one message. Shared by the grpc:// listener and the grpc plugin's upstreams.

export const MAX_MESSAGE = 65535;

/** gRPC status codes used here (grpc/doc/statuscodes.md). */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** The names of gRPC's status codes, by code (grpc/doc/statuscodes.md). */
const STATUS_NAMES = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
];

/** "14 UNAVAILABLE": a status code as a log line shows it. */
export function statusText(code: number): string {
  return `${code} ${STATUS_NAMES[code] ?? "(not a gRPC status)"}`;
}

/** The status a client takes for an HTTP status other than 200 (grpc/doc/http-grpc-status-mapping.md). */
export function statusOfHttp(http: number): number {
  if (http === 400) return GrpcStatus.INTERNAL;
  if (http === 401) return GrpcStatus.UNAUTHENTICATED;
  if (http === 403) return GrpcStatus.PERMISSION_DENIED;
  if (http === 404) return GrpcStatus.UNIMPLEMENTED;
  if (http === 429 || http === 502 || http === 503 || http === 504) return GrpcStatus.UNAVAILABLE;
  return GrpcStatus.UNKNOWN;
}

/** A DnsPacket holding `msg`. */
export function encodePacket(msg: Buffer): Buffer {
  const len: number[] = [];
  let n = msg.length;
  do {
    len.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>>= 7;
  } while (n > 0);
  return Buffer.concat([Buffer.from([0x0a, ...len]), msg]);
}

/** The DNS message of a DnsPacket, or why it is not one. Unknown fields are skipped, as protobuf
 * requires; a repeated field 1 keeps the last, as protobuf does for a scalar. An empty packet is an
 * empty message (proto3 leaves a default field out). */
export function decodePacket(b: Buffer): Buffer | string {
  let msg: Buffer = Buffer.alloc(0);
  let i = 0;
  const varint = (): number | undefined => {
    let v = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (i >= b.length) return undefined;
      const c = b[i++];
      v += (c & 0x7f) * 2 ** shift;
      if ((c & 0x80) === 0) return v;
    }
    return undefined;
  };
  while (i < b.length) {
    const key = varint();
    if (key === undefined) return "a bad protobuf key";
    const wire = key & 7;
    if (wire === 0) {
      if (varint() === undefined) return "a bad protobuf varint";
    } else if (wire === 1 || wire === 5) {
      i += wire === 1 ? 8 : 4;
    } else if (wire === 2) {
      const n = varint();
      if (n === undefined || i + n > b.length) return "a protobuf field runs past the packet";
      if (key >>> 3 === 1) msg = b.subarray(i, i + n);
      i += n;
    } else return `protobuf wire type ${wire} is not used by DnsPacket`;
    if (i > b.length) return "a protobuf field runs past the packet";
  }
  return msg;
}

/** One gRPC message: uncompressed flag, 4-octet length, the message. */
export function frame(message: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

/** The one message of a gRPC body, or why it is not one: a status and a reason. The body must be
 * exactly one length-prefixed message, not compressed (none is asked for, nor accepted). */
export function unframe(body: Buffer): Buffer | { status: number; why: string } {
  if (body.length < 5) return { status: GrpcStatus.INTERNAL, why: `a gRPC body of ${body.length} octets` };
  const n = body.readUInt32BE(1);
  if (n > body.length - 5)
    return {
      status: GrpcStatus.INTERNAL,
      why: `the gRPC message is cut short (${body.length - 5} of ${n} octets)`,
    };
  if (n < body.length - 5)
    return { status: GrpcStatus.INTERNAL, why: "the body holds more than one gRPC message" };
  if (body[0] !== 0) return { status: GrpcStatus.UNIMPLEMENTED, why: "compressed messages are not accepted" };
  return body.subarray(5);
}
