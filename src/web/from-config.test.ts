import pino from "pino";
import { describe, expect, it } from "vitest";
import { parseConfigText } from "../config/load.ts";
import { createApp } from "./app.ts";
import { webOptionsFromConfig } from "./from-config.ts";

const empty = { items: [], total: 0 };
const queue = {
  pendingCount: () => 3,
  listPending: () => empty,
  listHistory: () => empty,
  getItem: () => undefined,
  sources: () => [],
  retry: () => false,
  remove: () => false,
  retryFailed: () => 0,
};

function wire(keys: Record<string, unknown>) {
  const text = JSON.stringify({ SERVER_PASS: "0123456789abcdef", ...keys });
  const { config } = parseConfigText(text, "/config/config.json", {});
  const requests: unknown[] = [];
  const options = webOptionsFromConfig({
    config,
    log: pino({ level: "silent" }),
    sink: async (batch) => {
      requests.push(...batch);
      return { items: batch.map((r) => ({ folder: r.path, merged: false })) };
    },
    queue,
    health: () => ({ ready: true }),
  });
  return { options, app: createApp(options), requests };
}

describe("Config → web options", () => {
  it("maps the SERVER_* keys and leaves /triggers/manual off without both credentials", async () => {
    const { options, app } = wire({ SERVER_IGNORE_LIST: ["/.grab/"], SERVER_AUTH_USERNAME: "tdarr" });
    expect(options).toMatchObject({ serverPass: "0123456789abcdef", allowManualScan: false, ignoreList: ["/.grab/"], maxBodyBytes: 1_048_576 });
    expect(options.auth).toBeUndefined();
    expect((await app.request("/triggers/manual?dir=/x", { method: "POST" })).status).toBe(404);
  });

  it("maps paths through SERVER_PATH_MAPPINGS and turns the page and trigger on when asked", async () => {
    const { app, requests } = wire({
      SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"] },
      SERVER_ALLOW_MANUAL_SCAN: true,
      SERVER_AUTH_USERNAME: "tdarr",
      SERVER_AUTH_PASSWORD: "pw-123456",
      SERVER_MAX_REQUEST_BYTES: 2048,
    });
    expect((await app.request("/0123456789abcdef")).status).toBe(200);
    const auth = { authorization: `Basic ${Buffer.from("tdarr:pw-123456").toString("base64")}` };
    expect((await app.request("/triggers/manual?dir=/tv/Show", { method: "POST", headers: auth })).status).toBe(200);
    expect(requests).toMatchObject([{ path: "/data/TV/Show", kind: "folder" }]);
    const big = await app.request("/0123456789abcdef", { method: "POST", headers: { "content-type": "application/json" }, body: "x".repeat(4096) });
    expect(big.status).toBe(413);
  });
});
