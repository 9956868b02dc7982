import { readFileSync } from "node:fs";

/**
 * How autoscan runs as shipped: the Node options and the allocator setting that the Docker image gives it (the systemd
 * unit and `npm start` use the same), read from the Dockerfile so the benches measure what users run.
 * BENCH_NODE_OPTIONS replaces the Node options (e.g. empty, to compare); MALLOC_TRIM_THRESHOLD_ from the bench's
 * environment replaces the image's.
 */
const dockerfile = readFileSync(new URL("../Dockerfile", import.meta.url), "utf8");
const envValue = (name: string): string | undefined =>
  new RegExp(`${name}=("[^"]*"|\\S+)`).exec(dockerfile)?.[1]?.replace(/"/g, "");

export const shippedNodeOptions: readonly string[] = (process.env.BENCH_NODE_OPTIONS ?? envValue("NODE_OPTIONS") ?? "")
  .split(/\s+/)
  .filter(Boolean);

const trimThreshold = process.env.MALLOC_TRIM_THRESHOLD_ ?? envValue("MALLOC_TRIM_THRESHOLD_");
/** Only what is set: an empty MALLOC_TRIM_THRESHOLD_ would mean 0 to the C library. */
export const shippedEnv: Readonly<Record<string, string>> = trimThreshold ? { MALLOC_TRIM_THRESHOLD_: trimThreshold } : {};
