# The batched UDP engine (native/udp.c), built by `npm ci` through native/build.ts with node-gyp
# against the running Node's own headers. Linux only: recvmmsg and sendmmsg.
{
  "targets": [
    {
      "target_name": "clusterdns_udp",
      "sources": ["native/udp.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-std=gnu11"],
      "defines": ["_GNU_SOURCE"]
    }
  ]
}
