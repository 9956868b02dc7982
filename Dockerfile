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
# Node runs with its own defaults (no V8 or allocator tuning), as in the systemd unit and `npm start`; NODE_OPTIONS is
# left to the user.
# SERVER_IP and SERVER_PORT: in the image autoscan listens on 0.0.0.0:3467, the port EXPOSEd and published by
# docker-compose.yml, whatever config.json says (plex_autoscan's environment override wins over the file; a moved-over
# "127.0.0.1" or 3468 would leave the published port unanswered); the HEALTHCHECK asks the same port. The host's port is
# the compose file's AUTOSCAN_PORT (.env). A moved-over SERVER_PORT is named at start and by doctor, with the
# AUTOSCAN_PORT that keeps it (src/config/container-port.ts).
ENV NODE_ENV=production \
    AUTOSCAN_CONFIG=/config/config.json \
    AUTOSCAN_DATA_DIR=/config \
    SERVER_IP=0.0.0.0 \
    SERVER_PORT=3467
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
# OCI labels. The release workflow (.github/workflows/release.yml) passes VERSION, REVISION and SOURCE, and its own
# labels from docker/metadata-action win over these; a local build says "dev" and leaves the source empty.
ARG VERSION=dev
ARG REVISION=""
ARG SOURCE=""
LABEL org.opencontainers.image.title="autoscan" \
      org.opencontainers.image.description="Scan relay for Plex: *arr webhooks, manual requests and Google Drive changes become exact folder scans." \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
# Every builder must parse this line, and those of Docker Engines before 25 refuse --start-interval (the classic
# builder of Debian 12's docker.io, 20.10, builds the compose file's fallback there). The published image gets
# --start-interval=1s added (.github/healthcheck-start-interval.sh, run by the release workflow's BuildKit build), so
# that on Docker Engine 25+ a fresh container is probed every second during the start period and is healthy within
# seconds; older engines ignore the setting and probe after 30 s, as a local build does everywhere.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 CMD ["autoscan", "health", "--timeout", "5"]
ENTRYPOINT ["autoscan-entrypoint"]
CMD ["server"]
