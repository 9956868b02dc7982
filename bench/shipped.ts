import { readFileSync } from "node:fs";

/**
 * How autoscan runs as shipped, so the benches measure what users run: the Node options of `npm start` (the same as the
 * image's `autoscan` command and the systemd unit's ExecStart: one option Node documents, `--max-semi-space-size`),
 * read from package.json. BENCH_NODE_OPTIONS replaces them (e.g. "" for Node's bare defaults, to compare); a MALLOC_*
 * variable in the bench's own environment is passed on to the server (the image sets none).
 */
const start = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { scripts: { start: string } }).scripts.start;
/** `node --a --b dist/cli/main.js server` → `--a --b`. */
const startOptions = start.split(/\s+/).slice(1).filter((word) => word.startsWith("--")).join(" ");

export const shippedNodeOptions: readonly string[] = (process.env.BENCH_NODE_OPTIONS ?? startOptions).split(/\s+/).filter(Boolean);

const allocatorNames = ["MALLOC_TRIM_THRESHOLD_", "MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_"] as const;
/** Only what is set in the bench's environment: an empty MALLOC_TRIM_THRESHOLD_ would mean 0 to the C library. */
export const shippedEnv: Readonly<Record<string, string>> = Object.fromEntries(
  allocatorNames.flatMap((name) => {
    const value = process.env[name];
    return value ? [[name, value]] : [];
  }),
);

/** `MALLOC_TRIM_THRESHOLD_=131072`, or "allocator unset", for the bench's first line. */
export const describeAllocator = (): string =>
  Object.entries(shippedEnv).map(([name, value]) => `${name}=${value}`).join(" ") || "allocator unset";
