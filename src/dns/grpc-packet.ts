// CoreDNS's DNS-over-gRPC message, DnsPacket { bytes msg = 1; } (its pb/dns.proto), in protobuf's wire
// format: the key 0x0a (field 1, length-delimited), a varint length, the DNS message. And gRPC's
// length-prefixed framing of one message. Shared by the grpc:// listener and forward's grpc:// upstreams.

export const MAX_MESSAGE = 65535;

/** gRPC status codes used here (grpc/doc/statuscodes.md). */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
} as const;

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
