import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { createPathMapper } from "../paths/mapping.ts";
import { parseWebhook, type WebhookOutcome } from "./webhook.ts";

/**
 * Table test over every *arr fixture: the shared ones (Cloudbox/autoscan's trimmed payloads, two full real captures)
 * and ours (every event type of every app, written from integrations.md §6). Expectations live in
 * fixtures/expected.json so that test/web-fixtures.test.ts checks the same table through the real app.
 */
const SHARED = "/work/shared/fixtures/arr-webhooks";
const OWN = join(import.meta.dirname, "fixtures");

interface ExpectedRequest {
  path: string;
  kind: string;
  deleted?: boolean;
  received?: string;
  /** Refresh in place asked (an upgrade's new file: `file`). */
  refresh?: string;
}
interface Expected {
  outcome: "scan" | "test" | "no-scan" | "unusable" | "manual" | "invalid" | "not-json";
  source?: string;
  event?: string;
  reason?: string;
  requests?: ExpectedRequest[];
}
const table = JSON.parse(readFileSync(join(OWN, "expected.json"), "utf8")) as {
  mappings: Record<string, string[]>;
  cases: Record<string, Expected>;
};
const mapper = createPathMapper({ mappings: table.mappings });

function jsonFiles(root: string, prefix: string): string[] {
  return readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".json") && name !== "expected.json")
    .map((name) => `${prefix}:${relative(root, join(root, name))}`)
    .sort();
}

function fixtureText(key: string): string {
  const [prefix, name] = key.split(/:(.*)/s) as [string, string];
  return readFileSync(join(prefix === "shared" ? SHARED : OWN, name), "utf8");
}

const files = [...jsonFiles(SHARED, "shared"), ...jsonFiles(OWN, "own")];

describe("webhook fixtures", () => {
  it("has an expectation for every fixture file, and a file for every expectation", () => {
    expect(files.length).toBeGreaterThan(60);
    expect([...files].sort()).toEqual(Object.keys(table.cases).sort());
  });

  it.each(files)("%s", (key) => {
    const expected = table.cases[key];
    if (!expected) throw new Error(`no expectation for ${key}`);
    const text = fixtureText(key);
    if (expected.outcome === "not-json") {
      expect(() => JSON.parse(text) as unknown).toThrow();
      return;
    }
    const outcome = parseWebhook(JSON.parse(text), { mapper });
    if (expected.outcome === "invalid") {
      expect(outcome.kind).toBe("invalid");
      expect(outcome.kind === "invalid" && outcome.reason).toContain(expected.reason);
      return;
    }
    expect(summarise(outcome, expected)).toEqual(expected);
  });
});

/** The outcome in the table's terms (no `app` object, optional fields only when set). */
function summarise(outcome: WebhookOutcome, expected: Expected): Expected {
  switch (outcome.kind) {
    case "scan":
      return {
        outcome: "scan",
        source: outcome.source,
        event: outcome.event,
        requests: outcome.requests.map((request, index) => {
          const entry: ExpectedRequest = { path: request.path, kind: request.kind };
          if (request.deleted) entry.deleted = true;
          if (request.refresh) entry.refresh = request.refresh;
          // `received` is checked where the table gives it (the Windows and UNC forms).
          if (expected.requests?.[index]?.received !== undefined) entry.received = request.receivedPath;
          return entry;
        }),
      };
    case "test":
      return { outcome: "test", source: outcome.source };
    case "no-scan":
      return { outcome: "no-scan", source: outcome.source, event: outcome.event };
    case "unusable":
      return { outcome: "unusable", source: outcome.source, event: outcome.event, reason: outcome.reason };
    case "manual":
      return { outcome: "manual" };
    case "invalid":
      return { outcome: "invalid", reason: outcome.reason };
  }
}
