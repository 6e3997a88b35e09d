# clusterdns image: Node 24 LTS on Debian 13 (trixie) slim, production dependencies only, non-root.
#   docker build -t clusterdns .
#   docker run --rm -p 1053:53/udp -p 1053:53/tcp clusterdns     # the built-in demo, port 53 inside
# In a cluster: deploy/ (args ["-conf", "/etc/clusterdns/Corefile"]).
#
# The runtime stage is plain debian:trixie-slim with only the node binary copied in: the node image's
# npm, yarn and headers never reach it, and node is not stored twice (giving it a file capability
# rewrites the whole binary into a new layer). Node's official trixie-slim image is debian:trixie-slim
# plus Node's release tarball and no other runtime package, so the libraries node links (libc,
# libstdc++, libgcc_s) are already there. Keep the two Debian codenames equal (the test checks).

# The base images, by tag. To pin them by digest (a reproducible build), look the digests up with
# `docker buildx imagetools inspect node:24-trixie-slim` (and debian:trixie-slim) and either build with
#   docker build --build-arg NODE_IMAGE=node:24-trixie-slim@sha256:<digest> \
#                --build-arg DEBIAN_IMAGE=debian:trixie-slim@sha256:<digest> -t clusterdns .
# or write the TAG@sha256:<digest> form into the two lines below (the test accepts both forms).
ARG NODE_IMAGE=node:24-trixie-slim
ARG DEBIAN_IMAGE=debian:trixie-slim

# Production dependencies, exactly as locked. No dependency has an install script (the test checks),
# so none is run; our own (the native UDP engine) runs in the build stage.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# The JavaScript build of src/ (npm run build): the image runs it, without Node's type stripper, which
# would cost about 27 MB of RSS and start-up time. TypeScript is a dev dependency, so it lives here only.
# Here too the batched UDP engine (native/udp.c) and the TCP send-queue probe (native/tcp-queue.c) are
# compiled, against this node's own headers (/usr/local/include/node); the compiler stays in this stage.
# The image must have them: the build checks they are there rather than letting clusterdns fall back.
FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends g++ make python3 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json binding.gyp ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY native ./native
RUN npm run build:native && test -f build/Release/clusterdns_udp.node && test -f build/Release/clusterdns_tcp.node
COPY src ./src
RUN npm run build

# Port 53 as a non-root user: node gets the file capability cap_net_bind_service. The kernel grants it
# only while NET_BIND_SERVICE is in the container's capability set (Kubernetes: capabilities drop ALL,
# add NET_BIND_SERVICE); with the capability dropped entirely, exec fails with EPERM. BuildKit (the
# default builder) keeps the capability through COPY --from, as CoreDNS's image relies on too.
FROM ${NODE_IMAGE} AS node
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcap2-bin \
 && setcap cap_net_bind_service=+ep /usr/local/bin/node \
 && getcap /usr/local/bin/node | grep -q cap_net_bind_service

FROM ${DEBIAN_IMAGE}
# MALLOC_ARENA_MAX=2: glibc gives each thread that mallocs an arena of its own, and V8's worker threads
# (compilers, concurrent marking) keep theirs populated. Two arenas: 5-7 MB less RSS at 10k services,
# synced and under load, with the same CPU per query (README, Benchmark).
ENV NODE_ENV=production MALLOC_ARENA_MAX=2
# Node-local mode (the nodelocal plugin, deploy/node-local/) sets the node up with the node's own tools:
# ip for the interface, nft or iptables (legacy and nf_tables) for the NOTRACK rules. About 10 MB; the
# kube-dns Deployment never runs them.
RUN apt-get update \
 && apt-get install -y --no-install-recommends iproute2 iptables nftables \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=deps /app/node_modules ./node_modules
# package.json: "type": "module" applies to the built files. Tests, docs and tooling are kept out of
# the build context by .dockerignore; the sources stay in the build stage (bin/clusterdns runs dist/).
COPY package.json ./
COPY bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/build/Release/clusterdns_udp.node /app/build/Release/clusterdns_tcp.node ./build/Release/
COPY zones ./zones
# Numeric, so Kubernetes' runAsNonRoot can verify it; the Deployment runs as the same id.
USER 65532:65532
EXPOSE 53/udp 53/tcp 8080 8181 9153
# node itself is the first exec, not bin/clusterdns's `#!/usr/bin/env node`: with
# allowPrivilegeEscalation: false (no_new_privs) an exec never gains more than its caller holds, and only
# the first exec's caller holds NET_BIND_SERVICE; through env, node would start without it.
# --max-semi-space-size=1 (MB): a small young generation. The query path allocates little, and the
# default lets V8 keep tens of MB of young space after the first LIST: measured at 10k services, RSS
# 174 -> 129 MB, with the same QPS (README, Benchmark).
ENTRYPOINT ["/usr/local/bin/node", "--max-semi-space-size=1", "/app/bin/clusterdns"]
