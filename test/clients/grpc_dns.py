#!/usr/bin/env python3
"""DNS over gRPC with Debian's python3-grpcio, as CoreDNS's DnsService speaks it, for the tests.

client ADDR NAME TYPE [--ca FILE --host NAME] [--raw HEX]
    One Query call. Prints "status CODE MESSAGE", then for a reply its rcode and answer records as
    "rcode N" and "answer NAME TYPE RDATA-HEX" lines. --raw sends HEX as the DnsPacket's bytes as is.
server PORT
    Serves the "NAME ADDR" lines given on stdin as A records on 127.0.0.1:PORT (0: any free port),
    NXDOMAIN for other names; prints "port N" once listening. An upstream for forward's grpc://.
"""
import struct
import sys

import grpc

PATH = "/coredns.dns.DnsService/Query"


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def packet(msg):
    """DnsPacket { bytes msg = 1; } in protobuf's wire format."""
    return b"\x0a" + varint(len(msg)) + msg


def unpacket(b):
    """The msg field of a DnsPacket (only field 1 is expected here)."""
    if not b:
        return b""
    assert b[0] == 0x0A, "not field 1, length-delimited"
    i, n, shift = 1, 0, 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            break
    return b[i : i + n]


TYPES = {"A": 1, "NS": 2, "CNAME": 5, "SOA": 6, "PTR": 12, "MX": 15, "TXT": 16, "AAAA": 28, "SRV": 33}


def query(name, qtype, qid=0x1234):
    q = b"".join(bytes([len(l)]) + l.encode() for l in name.rstrip(".").split(".") if l) + b"\x00"
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + q + struct.pack(">HH", TYPES[qtype], 1)


def skip_name(m, i):
    while True:
        n = m[i]
        if n == 0:
            return i + 1
        if n & 0xC0 == 0xC0:
            return i + 2
        i += n + 1


def read_name(m, i):
    labels = []
    while True:
        n = m[i]
        if n == 0:
            break
        if n & 0xC0 == 0xC0:
            i = ((n & 0x3F) << 8) | m[i + 1]
            continue
        labels.append(m[i + 1 : i + 1 + n].decode())
        i += n + 1
    return ".".join(labels) + "."


def print_reply(m):
    qid, flags, qd, an = struct.unpack(">HHHH", m[:8])
    print("id %d" % qid)
    print("rcode %d" % (flags & 0xF))
    i = 12
    for _ in range(qd):
        i = skip_name(m, i) + 4
    for _ in range(an):
        name = read_name(m, i)
        i = skip_name(m, i)
        rtype, _cls, ttl, rdlen = struct.unpack(">HHIH", m[i : i + 10])
        i += 10
        rdata = m[i : i + rdlen]
        i += rdlen
        text = ".".join(str(x) for x in rdata) if rtype == 1 else rdata.hex()
        print("answer %s %d %d %s" % (name, rtype, ttl, text))


def client(argv):
    addr, name, qtype = argv[:3]
    opts = dict(zip(argv[3::2], argv[4::2]))
    if "--ca" in opts:
        creds = grpc.ssl_channel_credentials(open(opts["--ca"], "rb").read())
        chan = grpc.secure_channel(addr, creds, options=[("grpc.ssl_target_name_override", opts["--host"])])
    else:
        chan = grpc.insecure_channel(addr)
    call = chan.unary_unary(PATH, request_serializer=lambda b: b, response_deserializer=lambda b: b)
    body = bytes.fromhex(opts["--raw"]) if "--raw" in opts else packet(query(name, qtype))
    try:
        reply = call(body, timeout=10)
    except grpc.RpcError as e:
        print("status %s %s" % (e.code().value[0], e.details()))
        return
    print("status 0 OK")
    print_reply(unpacket(reply))


def server(argv):
    """Answers A queries from "NAME ADDR" lines on stdin; NXDOMAIN otherwise (an upstream for forward)."""
    from concurrent import futures

    records = {}
    for line in sys.stdin.read().splitlines():
        if line.strip():
            n, a = line.split()
            records[n.lower().rstrip(".") + "."] = a

    def handle(body, context):
        m = unpacket(body)
        qname = read_name(m, 12)
        qend = skip_name(m, 12)
        qtype = struct.unpack(">H", m[qend : qend + 2])[0]
        head = m[:2] + struct.pack(">H", 0x8180 | (0 if qname.lower() in records else 3))
        question = m[12 : qend + 4]
        if qname.lower() in records and qtype == 1:
            rr = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4)
            rr += bytes(int(x) for x in records[qname.lower()].split("."))
            return packet(head + struct.pack(">HHHH", 1, 1, 0, 0) + question + rr)
        return packet(head + struct.pack(">HHHH", 1, 0, 0, 0) + question)

    handler = grpc.method_handlers_generic_handler(
        "coredns.dns.DnsService",
        {"Query": grpc.unary_unary_rpc_method_handler(handle, lambda b: b, lambda b: b)},
    )
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    srv.add_generic_rpc_handlers((handler,))
    port = srv.add_insecure_port("127.0.0.1:%s" % argv[0])
    srv.start()
    print("port %d" % port, flush=True)
    srv.wait_for_termination()


if __name__ == "__main__":
    {"client": client, "server": server}[sys.argv[1]](sys.argv[2:])
