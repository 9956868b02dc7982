import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPathMapper } from "../src/paths/mapping.ts";
import { startWebServer, type WebServer } from "../src/web/server.ts";
import { TEST_PASS, buildWebApp } from "./support/web-builders.ts";

/**
 * Every *arr fixture (shared and ours) POSTed over real HTTP to a listening app, with the expectations of
 * src/intake/fixtures/expected.json: the status the sender sees and exactly what reached the sink.
 */
const SHARED = "/work/shared/fixtures/arr-webhooks";
const OWN = join(import.meta.dirname, "../src/intake/fixtures");
const table = JSON.parse(readFileSync(join(OWN, "expected.json"), "utf8")) as {
  mappings: Record<string, string[]>;
  cases: Record<string, { outcome: string; source?: string; event?: string; reason?: string; requests?: { path: string; kind: string; deleted?: boolean }[] }>;
};

const harness = buildWebApp({ mapper: createPathMapper({ mappings: table.mappings }) });
let server: WebServer;
beforeAll(async () => {
  server = await startWebServer({ app: harness.app, hostname: "127.0.0.1", port: 0 });
});
afterAll(() => server.close());

function filesUnder(root: string, prefix: string): string[] {
  return readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".json") && name !== "expected.json")
    .map((name) => `${prefix}:${relative(root, join(root, name))}`);
}
const keys = [...filesUnder(SHARED, "shared"), ...filesUnder(OWN, "own")].sort();

describe("every webhook fixture over HTTP", () => {
  it("covers all fixtures", () => {
    expect(keys).toEqual(Object.keys(table.cases).sort());
  });

  it.each(keys)("%s", async (key) => {
    const expected = table.cases[key];
    if (!expected) throw new Error(`no expectation for ${key}`);
    const [prefix, name] = key.split(/:(.*)/s) as [string, string];
    const body = readFileSync(join(prefix === "shared" ? SHARED : OWN, name));
    const before = harness.recorder.all().length;
    const res = await fetch(`${server.url}/${TEST_PASS}`, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "Fixture/1.0" },
      body,
    });
    const answer = await res.text();
    const received = harness.recorder.all().slice(before);
    switch (expected.outcome) {
      case "invalid":
      case "not-json":
        expect(res.status).toBe(400);
        expect(received).toEqual([]);
        break;
      case "manual":
        expect(res.status).toBe(200);
        expect(received).toHaveLength(1);
        break;
      case "unusable":
        // A well-formed event that names nothing to scan: 200 (the app keeps the connection), the reason said.
        expect(res.status).toBe(200);
        expect(answer).toBe(`OK, nothing to scan: ${String(expected.reason)}`);
        expect(received).toEqual([]);
        break;
      case "scan":
        expect(res.status).toBe(200);
        expect(answer).toBe("OK");
        expect(received.map((r) => ({ path: r.path, kind: r.kind, ...(r.deleted ? { deleted: true } : {}) }))).toEqual(
          (expected.requests ?? []).map(({ path, kind, deleted }) => ({ path, kind, ...(deleted ? { deleted } : {}) })),
        );
        expect(new Set(received.map((r) => `${r.source}/${r.event}`))).toEqual(new Set([`${expected.source}/${expected.event}`]));
        break;
      default:
        expect(res.status).toBe(200);
        expect(answer).toBe("OK");
        expect(received).toEqual([]);
    }
  });
});
