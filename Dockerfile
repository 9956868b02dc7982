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
# A larger young generation lets a webhook's short-lived objects die young instead of being promoted and marked
# later: about a quarter more webhooks per second on two cores, RSS unchanged (bench/webhook.ts runs the server with
# these options too).
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=32 \
    AUTOSCAN_CONFIG=/config/config.json \
    AUTOSCAN_DATA_DIR=/config
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=deps /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY config/config.example.json ./config/config.example.json
RUN chmod 0755 dist/cli/main.js \
 && ln -s /app/dist/cli/main.js /usr/local/bin/autoscan \
 && mkdir -p /config && chown node:node /config
# uid 1000 ('node'); docker-compose.yml runs it as PUID:PGID from .env.
USER node
VOLUME /config
EXPOSE 3467
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 CMD ["autoscan", "health", "--timeout", "5"]
ENTRYPOINT ["autoscan"]
CMD ["server"]
