import { getEventListeners } from "node:events";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { queueAdminFromScanQueue } from "../src/web/from-config.ts";
import type { createApp } from "../src/web/app.ts";
import { consoleToken } from "../src/web/console/csrf.ts";
import { startWebServer, type WebServer } from "../src/web/server.ts";
import { createFakeTarget, type FakeTarget } from "./support/fake-target.ts";
import { createQueueHarness, fileRequest, SCAN_DELAY_MS, type QueueHarness } from "./support/queue-harness.ts";
import { TEST_PASS, buildWebApp } from "./support/web-builders.ts";

/**
 * The console over HTTP, on the real queue (sql.js, a real file) and the real dispatcher with a scripted target:
 * the Queue and History pages, their filters and paging, the actions and their cross-site checks, the event stream,
 * and the API's paging, filters and ISO times.
 */
let h: QueueHarness;
let target: FakeTarget;
let app: ReturnType<typeof createApp>;
let log: ReturnType<typeof buildWebApp>["capture"];
const token = consoleToken(TEST_PASS);
const base = `/${TEST_PASS}`;

beforeEach(async () => {
  target = createFakeTarget();
  h = await createQueueHarness({ targets: [target] });
  const built = buildWebApp({
    queue: queueAdminFromScanQueue(h.queue),
    sink: h.queue.enqueue,
    console: { changes: { subscribe: (listener) => h.queue.onChange(listener) }, targets: () => ["plex"] },
  });
  app = built.app;
  log = built.capture;
});

afterEach(async () => {
  await h.close();
});

async function finish(path: string, source = "Sonarr"): Promise<void> {
  await h.touch(path);
  await h.enqueue(fileRequest(path, source));
  await h.advance(SCAN_DELAY_MS);
}

function action(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return app.request(path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", host: "localhost", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

describe("the Queue and History pages", () => {
  it("show waiting and finished folders with their requests, targets and actions, escaped", async () => {
    await finish("/tv/Done Show/S01/e1.mkv");
    await h.enqueue(fileRequest('/tv/<b>bold</b> & "quoted" 🎬 שלום/S01/e1.mkv', "Radarr (4k)"));
    const queue = await (await app.request(`${base}/queue`)).text();
    expect(queue).toContain("1 folder waiting");
    expect(queue).toContain("&lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot; 🎬 שלום");
    expect(queue).not.toContain("<b>bold</b>");
    expect(queue).toContain("Radarr (4k)");
    expect(queue).toMatch(/action="\/[0-9a-f]+\/items\/\d+\/scan"/);
    const history = await (await app.request(`${base}/history`)).text();
    expect(history).toContain("/tv/Done Show/S01");
    expect(history).toContain('<span class="badge ok">scanned</span>');
  });

  it("say while plex_autoscan's queue is being imported, and how far it got", async () => {
    let progress: { done: number; total: number } | undefined = { done: 8_000, total: 20_000 };
    const { app: importing } = buildWebApp({ queue: { ...queueAdminFromScanQueue(h.queue), importing: () => progress } });
    const during = await (await importing.request(`${base}/queue`)).text();
    expect(during).toContain("<h2>Importing plex_autoscan's queue</h2><p>8,000 of 20,000 rows done.");
    progress = undefined;
    expect(await (await importing.request(`${base}/queue`)).text()).not.toContain("Importing plex_autoscan");
  });

  it("filter the history by result, source and path, and page through it", async () => {
    for (let i = 0; i < 55; i++) await finish(`/tv/Show ${i}/S01/e.mkv`, i % 2 ? "Sonarr" : "Radarr");
    target.respond = () => {
      throw Object.assign(new Error("Plex said 401"), { kind: "rejected" });
    };
    const page = async (query: string) => (await app.request(`${base}/history?${query}`)).text();
    expect(await page("")).toContain("55 folders");
    expect(await page("q=Show%2042")).toContain("1 folder match");
    expect(await page("q=show%2042")).toContain("/tv/Show 42/S01");
    expect(await page("source=Radarr")).toContain("28 folders match");
    expect(await page("state=failed")).toContain("No folder matches these filters.");
    // LIKE's wildcards are text in a search.
    expect(await page("q=%25")).toContain("No folder matches these filters.");
    const second = await page("offset=50");
    expect(second).toContain("51–55 of 55 folders");
    expect(second).toContain('rel="prev"');
  });
});

describe("actions", () => {
  it("scan now, retry and delete answer JSON to the script and are logged with the item id", async () => {
    await h.enqueue(fileRequest("/tv/Waiting/S01/e.mkv"));
    const [item] = await h.queue.listPending();
    const json = { accept: "application/json", origin: "http://localhost" };
    const scan = await action(`${base}/items/${item!.id}/scan`, { token }, json);
    expect(scan.status).toBe(200);
    expect(await scan.json()).toMatchObject({ ok: true, title: "Scanning now" });
    expect((await h.queue.getItem(item!.id))!.dueAt).toBeLessThanOrEqual(h.clock.now());
    expect(log.lines.find((line) => line.action === "scan")).toMatchObject({ id: item!.id, msg: expect.stringContaining("Console: scan now of") });
    const gone = await action(`${base}/items/${item!.id}/delete`, { token }, json);
    expect(await gone.json()).toMatchObject({ ok: true, title: "Deleted" });
    expect(await h.queue.listPending()).toEqual([]);
    const again = await action(`${base}/items/${item!.id}/delete`, { token }, json);
    expect(again.status).toBe(404);
    expect(await again.json()).toMatchObject({ ok: false, title: "Not found" });
  });

  it("without the script, redirect back to the page with a notice it prints", async () => {
    await h.enqueue(fileRequest("/tv/Waiting/S01/e.mkv"));
    const [item] = await h.queue.listPending();
    const res = await action(`${base}/items/${item!.id}/scan`, { token, back: `${base}/queue?offset=0` });
    expect(res.status).toBe(303);
    const location = res.headers.get("location")!;
    expect(location).toBe(`${base}/queue?offset=0&notice=scan&item=${item!.id}`);
    const page = await (await app.request(location)).text();
    expect(page).toContain("Scanning now");
    expect(page).toContain("/tv/Waiting/S01 is due now");
    // A `back` outside the console goes to the queue page instead.
    const elsewhere = await action(`${base}/items/${item!.id}/scan`, { token, back: "//evil.example/x" });
    expect(elsewhere.headers.get("location")).toMatch(new RegExp(`^${base}/queue\\?notice=scan`));
  });

  it("refuse cross-site requests and a missing or wrong token, and change nothing", async () => {
    await h.enqueue(fileRequest("/tv/Waiting/S01/e.mkv"));
    const [item] = await h.queue.listPending();
    const path = `${base}/items/${item!.id}/delete`;
    const cases = [
      await action(path, { token }, { origin: "https://evil.example" }),
      await action(path, { token }, { "sec-fetch-site": "cross-site" }),
      await action(path, {}, {}),
      await action(path, { token: "x".repeat(token.length) }, {}),
    ];
    for (const res of cases) expect(res.status).toBe(403);
    expect(await h.queue.listPending()).toHaveLength(1);
    expect(log.lines.filter((line) => String(line.msg).startsWith("Console: refused"))).toHaveLength(4);
  });

  it("retry every failed folder at once", async () => {
    target.respond = () => ({ status: "scanned" });
    for (const name of ["A", "B"]) {
      await h.enqueue(fileRequest(`/tv/${name}/S01/e.mkv`));
    }
    await h.advance(SCAN_DELAY_MS);
    // The files never appear: ten file checks, then the folders fail.
    for (let i = 0; i < 12; i++) await h.advance(60_000);
    expect(await h.queue.historyCount({ state: "failed" })).toBe(2);
    const res = await action(`${base}/history/retry-failed`, { token }, { accept: "application/json" });
    expect(await res.json()).toMatchObject({ ok: true, message: "2 failed folders wait for their scan again." });
    expect(await h.queue.listPending()).toHaveLength(2);
  });
});

describe("the event stream", () => {
  let server: WebServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("says `change` after a request is stored, and subscribes only while open", async () => {
    let subscribers = 0;
    const closing = new AbortController();
    const built = buildWebApp({
      queue: queueAdminFromScanQueue(h.queue),
      sink: h.queue.enqueue,
      console: {
        closing: closing.signal,
        changes: {
          subscribe(listener) {
            subscribers++;
            const off = h.queue.onChange(listener);
            return () => {
              subscribers--;
              off();
            };
          },
        },
      },
    });
    server = await startWebServer({ app: built.app, hostname: "127.0.0.1", port: 0 });
    expect(subscribers).toBe(0);
    const stop = new AbortController();
    const res = await fetch(`${server.url}${base}/events`, { signal: stop.signal });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const until = async (needle: string) => {
      while (!text.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before '${needle}': ${text}`);
        text += value;
      }
    };
    await until("event: hello");
    expect(subscribers).toBe(1);
    await h.queue.enqueue([fileRequest("/tv/Live/S01/e.mkv")]);
    await until("event: change");
    stop.abort();
    await expect.poll(() => subscribers).toBe(0);
    // The stream took its listener on the service's stop signal with it (the signal lives as long as the process).
    expect(getEventListeners(closing.signal, "abort")).toHaveLength(0);
  });

  it("ends open streams when the service stops, so the web server can close", async () => {
    const closing = new AbortController();
    const built = buildWebApp({ console: { closing: closing.signal, changes: { subscribe: () => () => undefined } } });
    server = await startWebServer({ app: built.app, hostname: "127.0.0.1", port: 0 });
    const res = await fetch(`${server.url}${base}/events`);
    const reader = res.body!.getReader();
    await reader.read();
    closing.abort();
    for (;;) if ((await reader.read()).done) break;
    await server.close();
    server = undefined;
  });

  it("is 404 without a change feed", async () => {
    const res = await buildWebApp().app.request(`${base}/events`);
    expect(res.status).toBe(404);
  });
});

describe("the API's queue and history", () => {
  it("pages, filters and gives ISO 8601 times", async () => {
    for (let i = 0; i < 3; i++) await finish(`/tv/Show ${i}/S01/e.mkv`);
    await h.enqueue(fileRequest("/tv/Waiting/S01/e.mkv"));
    const ask = async (query: string) => (await app.request(`/api/${TEST_PASS}?${query}`)).json() as Promise<Record<string, unknown>>;
    const queue = await ask("cmd=queue");
    expect(queue).toMatchObject({ success: true, total: 1, queue: [{ folder: "/tv/Waiting/S01", state: "pending" }] });
    const first = (queue.queue as Record<string, unknown>[])[0]!;
    expect(first.dueAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect((first.requests as Record<string, unknown>[])[0]!.at).toMatch(/Z$/);
    const history = await ask("cmd=history&limit=2&offset=1&q=show");
    expect(history).toMatchObject({ success: true, total: 3, offset: 1 });
    expect((history.history as unknown[]).length).toBe(2);
    expect(await ask("cmd=history&state=nope")).toEqual({ success: false, msg: "state must be done or failed" });
    expect(await ask("cmd=history&limit=x")).toEqual({ success: false, msg: "limit must be a whole number from 1 to 1000" });
    expect(await ask("cmd=preview")).toEqual({ success: false, msg: "The preview command needs a path parameter" });
  });
});
