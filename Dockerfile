# One image for the worker, webhook receiver, codec server, search-attribute registration and
# sandbox (docker-compose.yml, deploy/k8s). Three stages: the build (all dependencies, tsc and the
# prebuilt workflow bundle), the production dependencies alone, and the runtime, which gets only
# those two results and runs as the unprivileged `node` user. No secret is baked in: every one comes
# from the environment at run time (docs/security.md); .dockerignore keeps .env out of the context.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# `npm install`, not `npm ci`: npm 11 lockfiles omit other platforms' optional packages and `npm ci`
# then refuses them as out of sync (.ci/run says the same); the locked versions are installed either way.
# --ignore-scripts: the postinstall fetches the Temporal development binaries, not needed to build.
RUN npm install --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# tsc to dist/, then dist/workflow-bundle.js and dist/workflow-bundle-traced.js (bundleWorkflowCode with the failure converter).
RUN npm run build

FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Owned by root, read-only for the node user that runs them.
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# The production worker loads a prebuilt bundle (the traced one when tracing is on) and refuses to start without it: fail the build instead.
RUN test -s dist/workflow-bundle.js && test -s dist/workflow-bundle-traced.js
USER node
# SIGTERM: the worker finishes in-flight activities (75 s grace) before it exits.
STOPSIGNAL SIGTERM
# The preload turns off the SDK's per-promise stack capture in the workflow threads (WORKER_WORKFLOW_STACK_TRACES).
CMD ["node", "--require", "./dist/workers/workflow-stack-traces.js", "dist/workers/main.js"]
