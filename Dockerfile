# autoscan: scan relay for Plex. Multi-stage: build with dev dependencies, ship production dependencies only.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -rf node_modules/.cache node_modules/googleapis/build/src/apis/*/v1beta* 2>/dev/null || true

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    AUTOSCAN_CONFIG=/config/config.json \
    AUTOSCAN_DATA_DIR=/config
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
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
