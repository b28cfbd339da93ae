# syntax=docker/dockerfile:1
# One image for the worker, webhook receiver, codec server, search-attribute registration and
# sandbox (docker-compose.yml, deploy/k8s). Three stages: the build (all dependencies, tsc and the
# prebuilt workflow bundle), the production dependencies alone, and the runtime, which gets only
# those two results and runs as the unprivileged `node` user. No secret is baked in: every one comes
# from the environment at run time (docs/security.md); .dockerignore keeps .env out of the context.
#
# Multi-platform (docs/deployment.md): docker buildx build --platform linux/amd64,linux/arm64 -t payflow-app .
# The build stage runs on the builder's own platform (its output, dist/, is JavaScript); the
# production dependencies are installed for each target platform, which picks its own optional
# native packages from the lockfile (test/ship/install-anywhere.test.ts proves both resolve).
#
# The base image is pinned by digest (the multi-platform index of node:24-bookworm-slim) so a rebuild
# gets the same bytes; the tag says what it is. The digest was taken without registry access from
# here (docs/deployment.md): confirm or update it, and the tag with it, from
#   docker buildx imagetools inspect node:24-bookworm-slim   (the "Digest:" line)
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

FROM --platform=$BUILDPLATFORM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# `npm ci`: exactly the lockfile, refused if it is out of step with package.json. The npm cache is a
# BuildKit cache mount: reused across builds, never part of a layer.
# --ignore-scripts: no dependency's install script is needed to build (the package has none of its own).
RUN --mount=type=cache,target=/root/.npm,sharing=locked npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# tsc to dist/, then dist/workflow-bundle.js, -traced.js and the split layout's -split.js, -split-traced.js (bundleWorkflowCode with the failure converter).
RUN npm run build

FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm,sharing=locked npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Owned by root, read-only for the node user that runs them.
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# The production worker loads a prebuilt bundle (the traced one when tracing is on) and refuses to start without it: fail the build instead.
RUN test -s dist/workflow-bundle.js && test -s dist/workflow-bundle-traced.js
RUN test -s dist/workflow-bundle-split.js && test -s dist/workflow-bundle-split-traced.js
USER node
# SIGTERM: the worker finishes in-flight activities (75 s grace) before it exits.
STOPSIGNAL SIGTERM
# The preload turns off the SDK's per-promise stack capture in the workflow threads (WORKER_WORKFLOW_STACK_TRACES).
CMD ["node", "--require", "./dist/workers/workflow-stack-traces.js", "dist/workers/main.js"]
