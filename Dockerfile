# The work-order service, one image for every role: the command is the role
# (`serve --no-worker`, `worker`, `migrate`, or `serve` for both in one process).
# See docs/deployment.md; this file was not built on the machine it was written on.

FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary can be fetched.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# docs/proofs.md is served beside the /verify page, which links to it.
COPY docs/proofs.md ./docs/proofs.md
# The build `npm start` runs (package.json), without the type check that needs the dev dependencies.
RUN npx tsc -p tsconfig.build.json --noCheck

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    WO_WORKER_PORT=8081 \
    WO_DATA_DIR=/var/lib/wo
COPY --from=build /app /app
# Owned by the unprivileged user, so a volume mounted on the keys directory starts out writable.
RUN mkdir -p /var/lib/wo/keys && chown -R node:node /var/lib/wo && chmod 700 /var/lib/wo /var/lib/wo/keys
USER node
EXPOSE 8080 8081
ENTRYPOINT ["node", "dist/main.js"]
CMD ["serve"]
