#!/usr/bin/env python3
"""DNS over gRPC with Debian's python3-grpcio, as CoreDNS's DnsService speaks it, for the tests.

client ADDR NAME TYPE [--ca FILE --host NAME] [--raw HEX] [--padding yes|no]
    One Query call. Prints "status CODE MESSAGE", then for a reply its rcode and answer records as
    "rcode N" and "answer NAME TYPE RDATA-HEX" lines. --raw sends HEX as the DnsPacket's bytes as is.
    --padding gives the query an OPT record, with an empty EDNS Padding option (yes) or without (no),
    and prints the reply's size first, as "size N".
server PORT --relay ADDR:PORT [--cert FILE --key FILE [--client-ca FILE]]
    An upstream for the grpc plugin on 127.0.0.1:PORT (0: any free port; unix:PATH for a unix socket,
    then "port 1" is printed), over TLS with --cert: relays
    each call's query to the DNS server at ADDR:PORT over TCP. Prints "port N" once listening, then
    "query NAME TYPE SECONDS-LEFT" for each call (the deadline its grpc-timeout gave). Each line on
    stdin sets how it answers ("mode LINE" is printed back): ok, "status NAME" (a gRPC status such as
    UNAVAILABLE or NOT_FOUND), "sleep SECONDS" (before relaying), wrong-id, wrong-question. It exits
    when stdin closes.
"""
import os
import struct
import sys
import time

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


def with_opt(q, padding):
    """The query with an OPT record (ARCOUNT 1), carrying an empty Padding option (RFC 7830) or none."""
    options = struct.pack(">HH", 12, 0) if padding else b""
    opt = b"\x00" + struct.pack(">HHIH", 41, 1232, 0, len(options)) + options
    return q[:10] + struct.pack(">H", 1) + q[12:] + opt


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
    msg = query(name, qtype)
    if "--padding" in opts:
        msg = with_opt(msg, opts["--padding"] == "yes")
    body = bytes.fromhex(opts["--raw"]) if "--raw" in opts else packet(msg)
    try:
        reply = call(body, timeout=10)
    except grpc.RpcError as e:
        print("status %s %s" % (e.code().value[0], e.details()))
        return
    print("status 0 OK")
    if "--padding" in opts:
        print("size %d" % len(unpacket(reply)))
    print_reply(unpacket(reply))


def relay(addr, m):
    """Asks the DNS server at ADDR:PORT over TCP (so nothing is truncated) and returns its reply."""
    import socket

    host, port = addr.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(struct.pack(">H", len(m)) + m)
        buf = b""
        while len(buf) < 2 or len(buf) < 2 + struct.unpack(">H", buf[:2])[0]:
            chunk = s.recv(65537)
            if not chunk:
                raise IOError("the DNS server closed the connection")
            buf += chunk
        return buf[2 : 2 + struct.unpack(">H", buf[:2])[0]]


def server(argv):
    """An upstream for the grpc plugin: relays each call's query to a real DNS server."""
    import threading
    from concurrent import futures

    port = argv[0]
    opts = dict(zip(argv[1::2], argv[2::2]))
    mode = ["ok"]

    def handle(body, context):
        m = unpacket(body)
        qname = read_name(m, 12)
        qend = skip_name(m, 12)
        qtype = struct.unpack(">H", m[qend : qend + 2])[0]
        left = context.time_remaining()
        print("query %s %d %s" % (qname, qtype, "-" if left is None else "%.3f" % left), flush=True)
        how = mode[0].split()
        if how[0] == "status":
            context.abort(grpc.StatusCode[how[1]], "told to fail")
        if how[0] == "sleep":
            time.sleep(float(how[1]))
        reply = relay(opts["--relay"], m)
        if how[0] == "wrong-id":
            reply = struct.pack(">H", (struct.unpack(">H", reply[:2])[0] + 1) & 0xFFFF) + reply[2:]
        if how[0] == "wrong-question":
            other = query("other.example", "A")
            reply = reply[:4] + struct.pack(">HHHH", 1, 0, 0, 0) + other[12:]
        return packet(reply)

    def commands():
        for line in sys.stdin:
            mode[0] = line.strip() or "ok"
            print("mode %s" % mode[0], flush=True)
        os._exit(0)

    handler = grpc.method_handlers_generic_handler(
        "coredns.dns.DnsService",
        {"Query": grpc.unary_unary_rpc_method_handler(handle, lambda b: b, lambda b: b)},
    )
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    srv.add_generic_rpc_handlers((handler,))
    where = port if port.startswith("unix:") else "127.0.0.1:%s" % port
    if "--cert" in opts:
        pair = (open(opts["--key"], "rb").read(), open(opts["--cert"], "rb").read())
        ca = open(opts["--client-ca"], "rb").read() if "--client-ca" in opts else None
        creds = grpc.ssl_server_credentials([pair], root_certificates=ca, require_client_auth=ca is not None)
        bound = srv.add_secure_port(where, creds)
    else:
        bound = srv.add_insecure_port(where)
    srv.start()
    print("port %d" % bound, flush=True)
    threading.Thread(target=commands, daemon=True).start()
    srv.wait_for_termination()


if __name__ == "__main__":
    {"client": client, "server": server}[sys.argv[1]](sys.argv[2:])
