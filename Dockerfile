# autoscan: scan relay for Plex. Multi-stage: build with dev dependencies, ship production dependencies only.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Production dependencies only, without what never runs: type declarations, source maps, sql.js's other builds,
# and TypeScript (an optional peer of valibot, used only for its types).
FROM ${NODE_IMAGE} AS deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.md' \) -delete \
 && find node_modules/sql.js/dist -type f ! -name 'sql-wasm.js' ! -name 'sql-wasm.wasm' -delete \
 && rm -rf node_modules/@types node_modules/typescript

FROM ${NODE_IMAGE}
# Memory (bench/service.ts runs the server with these settings too): a young generation of at most 8 MB per half
# lets a webhook's short-lived objects die young without holding 64 MB as the larger one did; the C library hands
# freed memory back instead of keeping what V8's compiler threads used at start (16 MB); --expose-gc lets autoscan
# give back, once idle, the heap a burst left behind (see the README's "Memory").
ENV NODE_ENV=production \
    NODE_OPTIONS="--max-semi-space-size=8 --expose-gc" \
    MALLOC_TRIM_THRESHOLD_=131072 \
    AUTOSCAN_CONFIG=/config/config.json \
    AUTOSCAN_DATA_DIR=/config
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=deps /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY config/config.example.json ./config/config.example.json
COPY docker/autoscan.sh /usr/local/bin/autoscan
COPY docker/entrypoint.sh /usr/local/bin/autoscan-entrypoint
RUN chmod 0755 dist/cli/main.js /usr/local/bin/autoscan /usr/local/bin/autoscan-entrypoint \
 && mkdir -p /config && chown node:node /config
# The entrypoint starts as root only to give /config to PUID:PGID (default 1000:1000, as `-e PUID=… -e PGID=…`),
# then runs autoscan as that user; `docker run --user uid:gid` works too (then nothing runs as root). The `autoscan`
# command drops to PUID:PGID as well when run as root (`docker exec autoscan autoscan …`, the HEALTHCHECK).
# TZ needs no tzdata: Node's ICU carries its own time zone data.
VOLUME /config
EXPOSE 3467
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 CMD ["autoscan", "health", "--timeout", "5"]
ENTRYPOINT ["autoscan-entrypoint"]
CMD ["server"]
