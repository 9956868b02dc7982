import { readFileSync } from "node:fs";

/**
 * How autoscan runs as shipped, read from the Dockerfile so the benches measure what users run: today Node's own
 * defaults (the image, the systemd unit and `npm start` set no Node option and no allocator variable), so both lists
 * below are empty unless the Dockerfile sets something again. BENCH_NODE_OPTIONS replaces the Node options (e.g.
 * "--max-semi-space-size=4", to compare); a MALLOC_* variable in the bench's environment is passed on.
 */
const dockerfile = readFileSync(new URL("../Dockerfile", import.meta.url), "utf8");
const envValue = (name: string): string | undefined =>
  new RegExp(`${name}=("[^"]*"|\\S+)`).exec(dockerfile)?.[1]?.replace(/"/g, "");

export const shippedNodeOptions: readonly string[] = (
  process.env.BENCH_NODE_OPTIONS ?? `${envValue("NODE_OPTIONS") ?? ""} ${envValue("AUTOSCAN_NODE_FLAGS") ?? ""}`
)
  .split(/\s+/)
  .filter(Boolean);

/** The C library's allocator settings the image sets (`MALLOC_*`); the bench's own environment replaces each. */
const allocatorNames = ["MALLOC_TRIM_THRESHOLD_", "MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_"] as const;
/** Only what is set: an empty MALLOC_TRIM_THRESHOLD_ would mean 0 to the C library. */
export const shippedEnv: Readonly<Record<string, string>> = Object.fromEntries(
  allocatorNames.flatMap((name) => {
    const value = process.env[name] ?? envValue(name);
    return value ? [[name, value]] : [];
  }),
);

/** `MALLOC_TRIM_THRESHOLD_=131072 MALLOC_ARENA_MAX=2`, for the bench's first line. */
export const describeAllocator = (): string =>
  Object.entries(shippedEnv).map(([name, value]) => `${name}=${value}`).join(" ") || "allocator unset";
