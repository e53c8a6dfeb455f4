# syntax=docker/dockerfile:1
#
# One image for both processes of docstore. Node.js 24 runs the TypeScript sources directly
# (type stripping), so there is no build step: the first stage installs the production
# dependencies with pnpm, the second copies them beside the sources.
#
#   docker build -t docstore .
#   docker run -p 8080:8080 -v docstore-data:/app/data docstore          # embedded mode, the API (default)
#   docker run ... docstore node packages/worker/src/main.ts              # distributed mode, a worker
#
# See deploy/README.md for docker compose and Kubernetes.

ARG NODE_IMAGE=node:24-bookworm-slim

# ---- deps: production node_modules of the workspace --------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
ENV CI=true
# Only the manifests, so this layer is rebuilt when dependencies change, not when code does.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
COPY patches ./patches
COPY packages/shared/package.json packages/shared/
COPY packages/worker/package.json packages/worker/
COPY packages/api/package.json packages/api/
COPY packages/client/package.json packages/client/
COPY packages/cli/package.json packages/cli/
# The pnpm release named by package.json's packageManager field (or --build-arg PNPM_VERSION),
# so the lockfile is read by the version that wrote it. better-sqlite3 ships prebuilt binaries
# (glibc and musl, x64 and arm64) and pnpm-workspace.yaml skips build scripts: nothing here
# needs a compiler. @lancedb/lancedb's binaries come in per-platform packages, and the lockfile
# records the linux-x64 ones (glibc and musl) only: build this image for linux/amd64.
ARG PNPM_VERSION=
RUN version="${PNPM_VERSION:-$(node -p 'require("./package.json").packageManager.split("@")[1].split("+")[0]')}" \
 && npm install --global --no-audit --no-fund --loglevel=error "pnpm@${version}"
RUN --mount=type=cache,id=docstore-pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --prod --store-dir /pnpm/store

# ---- runtime --------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/app/data \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=4194304 \
    NODE_OPTIONS=--max-semi-space-size=16
WORKDIR /app

# Dependencies (root node_modules holds pnpm's virtual store; each package's node_modules
# links into it and to its sibling workspace packages), then the sources, without tests
# (.dockerignore). Files stay owned by root: the service cannot rewrite its own code.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/packages ./packages
COPY package.json ./
COPY packages/shared/src ./packages/shared/src
COPY packages/worker/src ./packages/worker/src
COPY packages/api/src ./packages/api/src
# The command-line tool and its client, for batch jobs run from the image (`node packages/cli/bin/docstore.js`).
COPY packages/client/src ./packages/client/src
COPY packages/cli/src ./packages/cli/src
COPY packages/cli/bin ./packages/cli/bin

# DATA_DIR, the only writable place: embedded mode keeps everything here (mount a volume).
RUN mkdir -p /app/data && chown 1000:1000 /app/data

# The image's "node" user, numerically so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080

# Liveness of the API. The worker serves no HTTP: docker-compose.yml overrides this check for
# it, and Kubernetes ignores HEALTHCHECK (the manifests declare probes).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# node is PID 1 and handles SIGTERM itself (drains, then exits within SHUTDOWN_TIMEOUT_MS).
CMD ["node", "packages/api/src/main.ts"]
