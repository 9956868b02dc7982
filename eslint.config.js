// Lint rules, including the architecture's dependency rule (docs: ../shared/design/ARCHITECTURE.md):
// core imports nothing; config, paths, logging, docker import only core; intake/queue/plex/drive/rclone import core
// and paths (plex may import docker); web imports core and intake; only cli wires everything together.
import tseslint from "typescript-eslint";
import importX from "eslint-plugin-import-x";

const all = ["core", "config", "paths", "logging", "intake", "queue", "plex", "docker", "drive", "rclone", "web", "cli"];
const allowed = {
  core: [],
  config: ["core"],
  paths: ["core"],
  logging: ["core"],
  docker: ["core"],
  intake: ["core", "paths"],
  queue: ["core", "paths"],
  plex: ["core", "paths", "docker"],
  drive: ["core", "paths"],
  rclone: ["core", "paths"],
  web: ["core", "intake", "paths"],
};
const zones = Object.entries(allowed).flatMap(([mod, deps]) =>
  all
    .filter((other) => other !== mod && !deps.includes(other))
    .map((other) => ({
      target: `./src/${mod}`,
      from: `./src/${other}`,
      message: `src/${mod} may not import src/${other} (see the dependency rule in README "Architecture").`,
    })),
);

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "coverage/", "test/artifacts/"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    plugins: { "import-x": importX },
    rules: {
      "import-x/no-restricted-paths": ["error", { zones }],
      "no-restricted-properties": [
        "error",
        { object: "process", property: "env", message: "Read the environment only in src/config/." },
      ],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": "error",
    },
  },
  {
    files: ["src/config/**/*.ts", "test/**/*.ts", "bench/**/*.ts", "**/*.test.ts", "vitest.config.ts"],
    rules: { "no-restricted-properties": "off", "no-console": "off" },
  },
);
