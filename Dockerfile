# clusterdns image: Node 24 LTS, production dependencies only, runs as a non-root user.
#   docker build -t clusterdns .
#   docker run --rm -p 1053:53/udp -p 1053:53/tcp clusterdns
# Port 53 as non-root: the node binary carries the file capability cap_net_bind_service, so the
# process may bind ports below 1024 when the container keeps NET_BIND_SERVICE in its bounding set
# (Kubernetes: securityContext.capabilities drop ALL, add NET_BIND_SERVICE).

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:24-bookworm-slim AS caps
RUN apt-get update && apt-get install -y --no-install-recommends libcap2-bin \
 && cp /usr/local/bin/node /node \
 && setcap cap_net_bind_service=+ep /node

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=caps /node /usr/local/bin/node
COPY --from=deps /app/node_modules ./node_modules
COPY package.json Corefile.example ./
COPY bin ./bin
COPY src ./src
COPY zones ./zones
# No test files in the image.
RUN find src -name '*.test.ts' -delete && find src -type d -name testdata -prune -exec rm -rf {} +
USER node
EXPOSE 53/udp 53/tcp 8080 8181 9153
# With no flags: the built-in demo. In a cluster: args ["-conf", "/etc/coredns/Corefile"].
ENTRYPOINT ["node", "/app/bin/clusterdns"]
