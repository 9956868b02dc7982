import { readFileSync, readdirSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { startWebServer } from "../src/web/server.ts";
import { TEST_PASS, buildWebApp } from "./support/web-builders.ts";
import { systemClock } from "../src/core/clock.ts";
import { createGuessBrake } from "../src/web/guess-brake.ts";

/** Thousands of wrong secrets from one client: answered at once here (the brake is guess-brake.test.ts's). */
const unbraked = () => createGuessBrake({ clock: systemClock, free: Number.POSITIVE_INFINITY });

/**
 * Throws generated requests at the real app: methods, paths (right and wrong secrets), query strings, headers and
 * bodies (random bytes, random text, random JSON, real *arr payloads with fields replaced by anything, forms with odd
 * paths, deep nesting). With a working sink, nothing may answer 5xx and nothing may throw.
 */
const RUNS = 10_000;
const OWN = join(import.meta.dirname, "../src/intake/fixtures");
const payloads = readdirSync(OWN, { recursive: true, encoding: "utf8" })
  .filter((name) => name.endsWith(".json") && name !== "expected.json")
  .map((name) => JSON.parse(readFileSync(join(OWN, name), "utf8")) as unknown)
  .filter((value): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value));

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((n) => String.fromCharCode(n)), maxLength: 80 });
const oddText = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.constantFrom("", "..", "../../etc/passwd", "/a/../b", "/tv/\u0000x", "C:\\Media\\TV\\x", "\\\\nas\\s\\x", "My Drive/Media/Movies/x", "%00", "%ZZ", "/" + "a".repeat(5000)),
);
const path = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(`/${TEST_PASS}`, `/${TEST_PASS}/sonarr`, `/api/${TEST_PASS}`, `/${TEST_PASS}/triggers/manual`, "/triggers/manual", "/health"),
  },
  fc.constantFrom(`/${TEST_PASS}/`, "/", "/api", "/api/wrong", "/wrong", `/${TEST_PASS}/a/b/c`, `/${TEST_PASS}/%ZZ`, `/${TEST_PASS}/%00`),
  fc.array(fc.stringMatching(/^[A-Za-z0-9%._~-]{0,12}$/), { maxLength: 4 }).map((segments) => `/${segments.join("/")}`),
);
const method = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("POST", "PUT", "GET") },
  fc.constantFrom("DELETE", "PATCH", "HEAD", "OPTIONS"),
);
const query = fc.array(
  fc.tuple(fc.constantFrom("dir", "path", "cmd", "id", "limit", "eventType", "x"), oddText),
  { maxLength: 4 },
).map((pairs) => pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&"));
const rawQuery = fc.stringMatching(/^[A-Za-z0-9%&=+;._~ -]{0,40}$/);

const mutatedPayload = fc
  .tuple(fc.constantFrom(...payloads), fc.dictionary(fc.constantFrom("eventType", "series", "movie", "artist", "author", "episodeFile", "episodeFiles", "movieFile", "trackFiles", "bookFiles", "deletedFiles", "renamedEpisodeFiles", "renamedMovieFiles", "isUpgrade", "filepath", "trackFile", "bookFile"), fc.anything({ maxDepth: 3 }), { maxKeys: 3 }))
  .map(([base, changes]) => JSON.stringify({ ...base, ...changes }));
const nested = fc.integer({ min: 1, max: 5000 }).map((depth) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`);
const formBody = fc
  .tuple(fc.constantFrom("Manual", "Test", "Grab", ""), oddText, fc.constantFrom("", "page"))
  .map(([eventType, filepath, source]) => new URLSearchParams({ eventType, filepath, source }).toString());
const body = fc.oneof(
  fc.constant(undefined),
  fc.uint8Array({ maxLength: 300 }),
  fc.string({ unit: "binary", maxLength: 300 }),
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value) ?? "null"),
  mutatedPayload,
  nested,
  formBody,
  fc.stringMatching(/^[A-Za-z0-9%&=+]{0,80}$/),
);
const contentType = fc.oneof(
  fc.constantFrom("application/json", "application/json; charset=utf-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "multipart/form-data", "text/plain", "application/vnd.api+json", "image/png", ""),
  printable,
);
const request = fc.record({
  method,
  path,
  query: fc.oneof(query, rawQuery),
  contentType,
  accept: fc.constantFrom("*/*", "text/html", "application/json", ""),
  authorization: fc.oneof(fc.constant(""), printable.map((p) => `Basic ${p}`), printable, fc.constant(`Basic ${Buffer.from("u:p").toString("base64")}`)),
  userAgent: fc.oneof(fc.constantFrom("Sonarr/4.0.9.2244 (ubuntu 22.04)", "Radarr/5.9", "curl/8.5.0", ""), printable),
  body,
});

describe("fuzzing the web app", () => {
  it(`answers ${RUNS} generated requests without a 5xx or a throw`, { timeout: 240_000 }, async () => {
    const { app, recorder } = buildWebApp({ auth: { username: "u", password: "p" }, maxBodyBytes: 16_384, guesses: unbraked() });
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const headers = new Headers();
        if (r.contentType) headers.set("content-type", r.contentType);
        if (r.accept) headers.set("accept", r.accept);
        if (r.authorization) headers.set("authorization", r.authorization);
        if (r.userAgent) headers.set("user-agent", r.userAgent);
        const withBody = r.body !== undefined && r.method !== "GET" && r.method !== "HEAD";
        const res = await app.request(`${r.path}${r.query ? `?${r.query}` : ""}`, {
          method: r.method,
          headers,
          ...(withBody ? { body: r.body } : {}),
        });
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        expect(res.status).toBeLessThan(500);
      }),
      { numRuns: RUNS },
    );
    // The generator must reach the interesting answers, not just 404s.
    for (const status of [200, 400, 404, 405, 413, 415]) expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(50);
    expect(recorder.all().length).toBeGreaterThan(0);
    console.log("fuzz status counts:", Object.fromEntries([...statuses].sort(([a], [b]) => a - b)));
  });
});

/** Sends raw bytes to a real socket and returns the status of the answer, if one came before the socket closed. */
function rawExchange(port: number, bytes: Uint8Array): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let head = "";
    const done = (status: number | undefined) => {
      socket.destroy();
      resolve(status);
    };
    socket.setTimeout(3000, () => done(undefined));
    socket.on("data", (chunk) => {
      head += chunk.toString("latin1");
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(head);
      if (match) done(Number(match[1]));
    });
    socket.on("error", () => done(undefined));
    socket.on("close", () => done(undefined));
    socket.end(bytes);
  });
}

describe("fuzzing the HTTP server with raw requests", () => {
  it("survives malformed requests on a real socket and keeps answering", { timeout: 120_000 }, async () => {
    const { app } = buildWebApp({ maxBodyBytes: 4096, guesses: unbraked() });
    const server = await startWebServer({ app, hostname: "127.0.0.1", port: 0, requestTimeoutMs: 2000 });
    const statuses: number[] = [];
    try {
      const raw = fc.record({
        line: fc.oneof(
          fc.constantFrom(`POST /${TEST_PASS} HTTP/1.1`, `PUT /${TEST_PASS}/x HTTP/1.1`, `GET /api/${TEST_PASS}?cmd=queue HTTP/1.1`),
          fc.string({ unit: "binary-ascii", maxLength: 60 }),
        ),
        headers: fc.array(fc.string({ unit: "binary-ascii", maxLength: 60 }), { maxLength: 5 }),
        length: fc.option(fc.integer({ min: -5, max: 100_000 })),
        body: fc.uint8Array({ maxLength: 2000 }),
      });
      await fc.assert(
        fc.asyncProperty(raw, async (r) => {
          const head = [r.line, "Host: 127.0.0.1", ...r.headers, ...(r.length === null ? [] : [`Content-Length: ${r.length}`])];
          const bytes = Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"), r.body]);
          const status = await rawExchange(server.port, bytes);
          if (status !== undefined) statuses.push(status);
          expect(status ?? 0).toBeLessThan(500);
        }),
        { numRuns: 500 },
      );
      const health = await fetch(`${server.url}/health`);
      expect(health.status).toBe(200);
      expect(statuses.length).toBeGreaterThan(100);
    } finally {
      await server.close();
    }
  });
});
