// Lint rules, including the architecture's dependency rule (docs: ../shared/design/ARCHITECTURE.md):
// core imports nothing; config, paths, logging, docker, http (the one outbound HTTP call) import only core;
// intake/queue/drive/rclone import core and paths; targets (Plex, Jellyfin, Emby, another autoscan) import core,
// paths, http and docker (Plex's scanner runs in its container); backfill imports core, paths, intake (a history record becomes its webhook's
// requests), http and arr (the *arr client); arr (the *arr apps' API and connection facts) imports core and http;
// landed (the landed check) imports core and queue; cluster (the Drive poller's and backfill
// reader's roles across instances on PostgreSQL) imports core, queue, drive and backfill; web imports core, intake
// and arr (the connect panel); only cli wires everything together, with one part of it in each room: a room's from-config.ts
// (or <what>-from-config.ts) maps the parsed Config onto that room's options and joins the peers it is wired to, so
// it may import what cli may; nothing else in src/ imports a from-config file but cli, ops and another from-config.
import tseslint from "typescript-eslint";

const all = ["core", "config", "paths", "logging", "http", "intake", "queue", "targets", "arr", "backfill", "landed", "docker", "drive", "rclone", "cluster", "web", "cli"];
const allowed = {
  core: [],
  config: ["core"],
  paths: ["core"],
  logging: ["core"],
  docker: ["core"],
  http: ["core"],
  intake: ["core", "paths"],
  queue: ["core", "paths"],
  targets: ["core", "paths", "docker", "http"],
  arr: ["core", "http"],
  backfill: ["core", "paths", "intake", "http", "arr"],
  landed: ["core", "queue"],
  drive: ["core", "paths"],
  rclone: ["core", "paths"],
  cluster: ["core", "queue", "drive", "backfill"],
  web: ["core", "intake", "paths", "arr"],
};
// One override per module: files under src/<mod>/ may not import src/<other>/ unless the rule allows it.
const boundaries = Object.entries(allowed).map(([mod, deps]) => ({
  files: [`src/${mod}/**/*.ts`],
  ignores: ["**/*.test.ts", "**/from-config.ts", "**/*-from-config.ts"],
  rules: {
    "no-restricted-imports": [
      "error",
      {
        patterns: [
          ...all
            .filter((other) => other !== mod && !deps.includes(other))
            .map((other) => ({
              group: [`**/${other}/**`, `../${other}/*`, `../../${other}/*`],
              message: `src/${mod} may not import src/${other} (the dependency rule, README "Architecture").`,
            })),
          { group: ["**/from-config.ts", "**/*-from-config.ts"], message: "Only the composition root (cli) builds a room from the config." },
        ],
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "coverage/", "test/artifacts/", ".scratch/"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      "no-restricted-properties": [
        "error",
        { object: "process", property: "env", message: "Read the environment only in src/config/." },
      ],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": "error",
    },
  },
  ...boundaries,
  // ops (doctor, metrics) looks through every room as the service builds it, but never into the composition root.
  {
    files: ["src/ops/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ group: ["**/cli/**", "../cli/*", "../../cli/*"], message: "src/ops may not import src/cli: what both need lives in core/ or config/." }] },
      ],
    },
  },
  {
    files: ["src/config/**/*.ts", "test/**/*.ts", "bench/**/*.ts", "**/*.test.ts", "vitest.config.ts"],
    rules: { "no-restricted-properties": "off", "no-console": "off" },
  },
);
