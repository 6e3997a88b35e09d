# The batched UDP engine (native/udp.c) and the TCP send-queue probe (native/tcp-queue.c), built by
# `npm ci` through native/build.ts with node-gyp against the running Node's own headers. Linux only:
# recvmmsg, sendmmsg and SIOCOUTQ.
{
  "targets": [
    {
      "target_name": "clusterdns_udp",
      "sources": ["native/udp.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-std=gnu11"],
      "defines": ["_GNU_SOURCE"]
    },
    {
      "target_name": "clusterdns_tcp",
      "sources": ["native/tcp-queue.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-std=gnu11"]
    }
  ]
}
