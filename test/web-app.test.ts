import { describe, expect, it } from "vitest";
import { TEST_PASS, buildWebApp, itemView } from "./support/web-builders.ts";

/** The web app's routes, answers, limits and log lines, through `app.request()` (the real Hono app, no socket). */
const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});
const form = (fields: Record<string, string>, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
  body: new URLSearchParams(fields).toString(),
});
const sonarrDownload = {
  eventType: "Download",
  series: { id: 1, title: "Show", path: "/tv/Show" },
  episodeFile: { id: 2, relativePath: "Season 01/Show - S01E01.mkv" },
  isUpgrade: false,
};

describe("webhooks at /<SERVER_PASS>", () => {
  it("accepts a Sonarr Download, answers OK, and hands the mapped file to the sink", async () => {
    const { app, recorder, capture } = buildWebApp();
    const res = await app.request(`/${TEST_PASS}`, json(sonarrDownload, { "user-agent": "Sonarr/4.0.9.2244 (ubuntu 22.04)" }));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("OK");
    expect(recorder.all()).toEqual([
      {
        path: "/data/TV/Show/Season 01/Show - S01E01.mkv",
        kind: "file",
        source: "Sonarr",
        event: "Download",
        receivedPath: "/tv/Show/Season 01/Show - S01E01.mkv",
      },
    ]);
    expect(capture.lines.map((line) => line.msg)).toContain(
      "Client 'unknown' scan request for series: '/tv/Show/Season 01/Show - S01E01.mkv', event: 'Download'",
    );
  });

  it("also takes PUT (the *arr apps' Method=2) and labels sources at /<SERVER_PASS>/<name>", async () => {
    const { app, recorder } = buildWebApp();
    const res = await app.request(`/${TEST_PASS}/4k`, { ...json(sonarrDownload), method: "PUT" });
    expect(res.status).toBe(200);
    expect(recorder.all()[0]?.source).toBe("Sonarr (4k)");
    const bad = await app.request(`/${TEST_PASS}/${encodeURIComponent("<script>")}`, json(sonarrDownload));
    expect(bad.status).toBe(400);
  });

  it("marks an upgrade as Upgrade and its deleted files as deleted", async () => {
    const { app, recorder } = buildWebApp();
    const body = {
      ...sonarrDownload,
      isUpgrade: true,
      deletedFiles: [{ relativePath: "Season 01/Show - S01E01.avi", path: "/tv/Show/Season 01/Show - S01E01.avi" }],
    };
    expect((await app.request(`/${TEST_PASS}`, json(body))).status).toBe(200);
    expect(recorder.all().map((r) => [r.event, r.path, r.deleted ?? false])).toEqual([
      ["Upgrade", "/data/TV/Show/Season 01/Show - S01E01.mkv", false],
      ["Upgrade", "/data/TV/Show/Season 01/Show - S01E01.avi", true],
    ]);
  });

  it("answers Test and unhandled events 200 without scanning, and logs the test in the classic words", async () => {
    const { app, recorder, capture } = buildWebApp();
    for (const eventType of ["Test", "Grab", "Health", "ApplicationUpdate", "ManualInteractionRequired", "SomethingNew"]) {
      const res = await app.request(`/${TEST_PASS}`, json({ eventType, series: { path: "C:\\testpath" } }));
      expect(res.status, eventType).toBe(200);
    }
    expect(recorder.batches).toEqual([]);
    expect(capture.lines.map((line) => line.msg)).toContain("Sonarr made a test request (client 'unknown'), event: 'Test': it reaches autoscan; nothing to scan");
  });

  it("logs an app's Test button by the app's name, its URL's label, and its instance name and address when it sends them", async () => {
    const { app, recorder, capture } = buildWebApp();
    const test = { eventType: "Test", instanceName: "Sonarr 4K", applicationUrl: "http://sonarr4k:8989", series: { id: 1, path: "C:\\testpath" }, episodes: [] };
    expect((await app.request(`/${TEST_PASS}/sonarr4k`, json(test))).status).toBe(200);
    expect((await app.request(`/${TEST_PASS}/radarr`, json({ eventType: "Test", instanceName: "Radarr", applicationUrl: "", movie: { id: 1, folderPath: "C:\\testpath" } }))).status).toBe(200);
    expect(recorder.batches).toEqual([]);
    const lines = capture.lines.filter((line) => /test request/.test(String(line.msg)));
    expect(lines.map((line) => line.msg)).toEqual([
      "Sonarr (sonarr4k) [instance 'Sonarr 4K' at http://sonarr4k:8989] made a test request (client 'unknown'), event: 'Test': it reaches autoscan; nothing to scan",
      "Radarr (radarr) made a test request (client 'unknown'), event: 'Test': it reaches autoscan; nothing to scan",
    ]);
    expect(lines[0]).toMatchObject({ source: "Sonarr (sonarr4k)", instance: "Sonarr 4K", appUrl: "http://sonarr4k:8989", client: "unknown" });
  });

  it("answers 200 with the reason, and logs it, for a well-formed event that names nothing it can scan", async () => {
    const { app, recorder, capture } = buildWebApp();
    const res = await app.request(`/${TEST_PASS}`, json({ eventType: "Download", series: { path: "/tv/Show" } }));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("OK, nothing to scan: Sonarr Download payload: missing 'episodeFile' (or v4's 'episodeFiles')");
    expect(recorder.batches).toEqual([]);
    const warning = capture.lines.find((line) => line.level === 40);
    expect(warning?.msg).toBe(
      "Client 'unknown' sent a 'Download' event autoscan cannot use; nothing to scan: Sonarr Download payload: missing 'episodeFile' (or v4's 'episodeFiles')",
    );
  });

  it("answers 400 with a one-line reason for empty, malformed and unrecognisable bodies", async () => {
    const { app, recorder } = buildWebApp();
    const cases: [RequestInit, number, string][] = [
      [{ method: "POST" }, 400, "Invalid scan request: the body is empty"],
      [{ method: "POST", headers: { "content-type": "application/json" }, body: "This is an invalid JSON file" }, 400, "not valid JSON"],
      [json({ eventType: "Download" }), 400, "without series, movie, artist or author"],
      [json({ foo: 1 }), 400, "missing 'eventType'"],
      [json([1, 2]), 400, "must be an object"],
      [json({ eventType: 42 }), 400, "'eventType' must be an event name"],
      [{ method: "POST", headers: { "content-type": "application/json" }, body: "[".repeat(100) + "]".repeat(100) }, 400, "nested deeper"],
      [{ method: "POST", headers: { "content-type": "application/json" }, body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]) }, 400, "not valid UTF-8"],
      [{ method: "POST", headers: { "content-type": "image/png" }, body: "x" }, 415, "Unsupported Content-Type 'image/png'"],
      [form({ eventType: "Grab" }), 400, "needs eventType=Manual and filepath"],
    ];
    for (const [init, status, reason] of cases) {
      const res = await app.request(`/${TEST_PASS}`, init);
      expect(res.status, reason).toBe(status);
      const body = await res.text();
      expect(body).toContain(reason);
      expect(body).not.toContain("\n");
    }
    expect(recorder.batches).toEqual([]);
  });

  it("refuses bodies over the size limit with 413, by Content-Length or while streaming", async () => {
    const { app } = buildWebApp({ maxBodyBytes: 2048 });
    const big = JSON.stringify({ ...sonarrDownload, pad: "x".repeat(4096) });
    expect((await app.request(`/${TEST_PASS}`, json(JSON.parse(big)))).status).toBe(413);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode("x".repeat(1000)));
        controller.close();
      },
    });
    const res = await app.request(`/${TEST_PASS}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.text()).toContain("larger than 2048 bytes");
  });

  it("answers 503 and says nothing was queued when the sink fails, and when it does not confirm in time", async () => {
    const { app, recorder } = buildWebApp({ requestTimeoutMs: 50 });
    recorder.failWith(new Error("disk full"));
    const failed = await app.request(`/${TEST_PASS}`, json(sonarrDownload));
    expect(failed.status).toBe(503);
    expect(await failed.text()).toContain("Nothing was queued");
    recorder.failWith(undefined);
    recorder.hang(true);
    const hung = await app.request(`/${TEST_PASS}`, json(sonarrDownload));
    expect(hung.status).toBe(503);
    expect(await hung.text()).toContain("did not take the request within");
    expect(recorder.all()).toHaveLength(0);
  });

  it("waits past the timeout for a request the queue has already taken, and answers 200 once it is stored", async () => {
    const { app, recorder } = buildWebApp({ requestTimeoutMs: 50 });
    recorder.slow(300);
    const res = await app.request(`/${TEST_PASS}`, json(sonarrDownload));
    expect(res.status).toBe(200);
    expect(recorder.all()).toHaveLength(1);
  });
});

describe("the secret and methods", () => {
  it("answers 404 for a wrong secret on every secret route, whatever the method", async () => {
    const { app } = buildWebApp();
    for (const path of ["/wrong", "/api/wrong", "/wrong/label", "/wrong/triggers/manual?dir=/x", `/${TEST_PASS}x`, `/${TEST_PASS}/`]) {
      for (const method of ["GET", "POST", "DELETE", "PATCH"]) {
        const res = await app.request(path, { method });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(await res.text()).toBe("Not Found");
      }
    }
  });

  it("answers 405 with Allow for other methods on a right secret", async () => {
    const { app } = buildWebApp();
    const res = await app.request(`/${TEST_PASS}`, { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, POST, PUT, HEAD");
    expect((await app.request(`/api/${TEST_PASS}`, { method: "PUT" })).status).toBe(405);
    expect((await app.request("/health", { method: "POST" })).status).toBe(405);
  });

  it("never writes the secret to the log", async () => {
    const { app, capture } = buildWebApp();
    await app.request(`/${TEST_PASS}`, json(sonarrDownload));
    await app.request(`/${TEST_PASS}`, { method: "DELETE" });
    await app.request(`/api/${TEST_PASS}?cmd=queue_count`);
    await app.request(`/${TEST_PASS}/triggers/manual?dir=/data/TV/Show`, { method: "POST" });
    expect(capture.lines.some((line) => line.msg === "HTTP request" && line.url === "/<SERVER_PASS>")).toBe(true);
    expect(capture.text()).not.toContain(TEST_PASS);
  });
});

describe("manual requests", () => {
  it("takes eventType=Manual&filepath= in any mapped form, as curl sends it, and answers in plex_autoscan's words", async () => {
    const { app, recorder, capture } = buildWebApp();
    const res = await app.request(`/${TEST_PASS}`, form({ eventType: "Manual", filepath: "My Drive/Media/Movies/Heat (1995)" }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    expect(await res.text()).toBe("'/data/Movies/Heat (1995)' was added to scan queue.");
    expect(recorder.all()).toEqual([
      { path: "/data/Movies/Heat (1995)", kind: "unknown", source: "Manual", event: "Manual", receivedPath: "My Drive/Media/Movies/Heat (1995)" },
    ]);
    expect(capture.lines.map((l) => l.msg)).toContain("Client 'unknown' made a manual scan request for: 'My Drive/Media/Movies/Heat (1995)'");
    const again = await app.request(`/${TEST_PASS}`, form({ eventType: "Manual", filepath: "/data/Movies/Heat (1995)" }));
    expect(await again.text()).toBe("'/data/Movies/Heat (1995)' has already been added to the scan queue.");
  });

  it("works while SERVER_ALLOW_MANUAL_SCAN is false, and as JSON", async () => {
    const { app, recorder } = buildWebApp({ allowManualScan: false });
    const res = await app.request(`/${TEST_PASS}`, json({ eventType: "Manual", filepath: "/mnt/unionfs/Movies/Heat (1995)/Heat.mkv" }));
    expect(res.status).toBe(200);
    expect(recorder.all()[0]?.path).toBe("/data/Movies/Heat (1995)/Heat.mkv");
  });

  it("applies SERVER_IGNORE_LIST to manual requests only", async () => {
    const { app, recorder } = buildWebApp();
    const res = await app.request(`/${TEST_PASS}`, form({ eventType: "Manual", filepath: "/data/Movies/.grab/x.mkv" }));
    expect(await res.text()).toBe("Ignoring scan request because /.grab/ was matched from your SERVER_IGNORE_LIST");
    expect(recorder.batches).toEqual([]);
    const hook = { ...sonarrDownload, series: { path: "/tv/.grab" } };
    expect((await app.request(`/${TEST_PASS}`, json(hook))).status).toBe(200);
    expect(recorder.all()).toHaveLength(1);
  });

  it.each([
    ["../../etc/passwd", "must not contain '..' segments"],
    ["/data/Movies/a\u0000b", "control characters"],
    ["Movies/Heat", "must be an absolute path"],
    ["", "missing 'filepath'"],
  ])("refuses filepath %j with 400", async (filepath, reason) => {
    const { app, recorder } = buildWebApp();
    const res = await app.request(`/${TEST_PASS}`, form({ eventType: "Manual", filepath }));
    expect(res.status).toBe(400);
    expect(await res.text()).toContain(reason);
    expect(recorder.batches).toEqual([]);
  });

  it("answers the page's own form with the page and the result", async () => {
    const { app } = buildWebApp();
    const res = await app.request(`/${TEST_PASS}`, form({ eventType: "Manual", filepath: "/tv/Show/Season 01", source: "page" }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const page = await res.text();
    expect(page).toContain("Queued for scanning");
    expect(page).toContain("<code>/data/TV/Show</code>");
    expect(page).toContain("<dt>Mapped from</dt><dd><code>/tv/</code></dd>");
    const refused = await app.request(`/${TEST_PASS}`, form({ eventType: "Manual", filepath: "<b>x</b>" }, { accept: "text/html" }));
    expect(refused.status).toBe(400);
    const refusedPage = await refused.text();
    expect(refusedPage).toContain("Not queued");
    expect(refusedPage).not.toContain("<b>x</b>");
    expect(refusedPage).toContain("&lt;b&gt;x&lt;/b&gt;");
  });
});

describe("the manual page", () => {
  it("is served with a strict policy and the console's own script only when SERVER_ALLOW_MANUAL_SCAN is true", async () => {
    const { app, queue } = buildWebApp();
    queue.items.push(itemView({ id: 1, folder: "/data/TV/Show" }));
    const res = await app.request(`/${TEST_PASS}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    const page = await res.text();
    expect(page).toContain('name="filepath"');
    expect(page).toContain("1 folder is waiting in the queue.");
    // The Scan page is a console page: its one script is the console's own file (no inline script, no other site),
    // and the secret appears only in the console's own links.
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self';");
    expect(page.match(/<script[^>]*>/gi)).toEqual([`<script src="/${TEST_PASS}/console.js" defer>`]);
    // Absolute addresses only as text to copy (the "Connect your apps" panel's webhook URLs), never as a resource.
    expect(page).not.toMatch(/(src|href|action)="https?:\/\//i);
    const outsidePanel = page.replace(/<section class="panel connect"[\s\S]*?<\/section>/, "");
    expect(outsidePanel).not.toMatch(/https?:\/\//i);
    expect(outsidePanel.replace(/(href|src)="\/[0-9a-f]{32}(\/[a-z.]*)?"/g, "")).not.toContain(TEST_PASS);
  });

  it("is 403 with a page saying how to turn it on when disabled", async () => {
    const { app } = buildWebApp({ allowManualScan: false });
    const res = await app.request(`/${TEST_PASS}`);
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("SERVER_ALLOW_MANUAL_SCAN");
  });
});

describe("/api/<SERVER_PASS>", () => {
  it("reads cmd from the query, a form or JSON, lower-cased", async () => {
    const { app, queue } = buildWebApp();
    queue.items.push(itemView({ id: 7, folder: "/data/TV/Show" }));
    const viaQuery = await app.request(`/api/${TEST_PASS}?cmd=QUEUE_COUNT`);
    expect(await viaQuery.json()).toEqual({ success: true, queue_count: 1 });
    const viaForm = await app.request(`/api/${TEST_PASS}`, form({ cmd: "queue" }));
    expect(await viaForm.json()).toMatchObject({
      success: true,
      total: 1,
      queue: [{ id: 7, folder: "/data/TV/Show", state: "pending", dueAt: "2026-11-25T08:00:00.000Z" }],
    });
    const viaJson = await app.request(`/api/${TEST_PASS}`, json({ cmd: "history", limit: 5 }));
    expect(await viaJson.json()).toMatchObject({ success: true, history: [{ id: 7 }] });
  });

  it("retries and deletes by id, and says what is wrong otherwise", async () => {
    const { app, queue } = buildWebApp();
    queue.items.push(itemView({ id: 7, folder: "/data/TV/Show" }));
    const ask = async (query: string) => (await app.request(`/api/${TEST_PASS}?${query}`)).json();
    expect(await ask("cmd=retry&id=7")).toEqual({ success: true });
    expect(await ask("cmd=retry")).toEqual({ success: false, msg: "The retry command needs an id parameter" });
    expect(await ask("cmd=delete&id=7")).toEqual({ success: true });
    expect(await ask("cmd=delete&id=7")).toEqual({ success: false, msg: "No queue item with id 7" });
    expect(await ask("cmd=nope")).toEqual({ success: false, msg: "Unknown cmd: nope" });
    expect(await ask("")).toEqual({ success: false, msg: "No cmd parameter was supplied" });
  });

  it("answers the Drive commands from the drive port, or says monitoring is off", async () => {
    const off = buildWebApp();
    for (const cmd of ["reset_page_token", "clear_drive_cache"]) {
      const res = await off.app.request(`/api/${TEST_PASS}?cmd=${cmd}`);
      expect(await res.json()).toEqual({ success: false, msg: "Google Drive monitoring is not enabled" });
    }
    const calls: string[] = [];
    const on = buildWebApp({ drive: { resetPageToken: () => void calls.push("reset"), clearCache: () => void calls.push("clear") } });
    expect(await (await on.app.request(`/api/${TEST_PASS}?cmd=reset_page_token`)).json()).toEqual({ success: true });
    expect(await (await on.app.request(`/api/${TEST_PASS}`, form({ cmd: "clear_drive_cache" }))).json()).toEqual({ success: true });
    expect(calls).toEqual(["reset", "clear"]);
  });

  it("answers 503 when the queue fails", async () => {
    const { app, queue } = buildWebApp();
    queue.pendingCount = () => Promise.reject(new Error("store closed"));
    const res = await app.request(`/api/${TEST_PASS}?cmd=queue_count`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ success: false, msg: "The queue_count command failed: store closed" });
  });
});

describe("/triggers/manual", () => {
  const basic = (user: string, pass: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}` });

  it("is off (404) without SERVER_AUTH_* and says so at start-up; the secret URL form always works", async () => {
    const { app, recorder, capture } = buildWebApp();
    for (const method of ["GET", "POST", "PUT", "DELETE", "HEAD"]) {
      expect((await app.request("/triggers/manual?dir=/data/TV/Show", { method })).status, method).toBe(404);
    }
    expect(capture.lines.map((l) => l.msg)).toContain(
      "/triggers/manual is off: set SERVER_AUTH_USERNAME and SERVER_AUTH_PASSWORD to enable it; /<SERVER_PASS>/triggers/manual works without them",
    );
    const res = await app.request(`/${TEST_PASS}/triggers/manual?dir=/mnt/unionfs/Movies/Interstellar (2014)/&dir=/data/Movies/Parasite (2019)`, {
      method: "POST",
    });
    expect(res.status).toBe(200);
    expect(recorder.all().map((r) => [r.path, r.kind])).toEqual([
      ["/data/Movies/Interstellar (2014)", "folder"],
      ["/data/Movies/Parasite (2019)", "folder"],
    ]);
  });

  it("needs Basic auth when enabled, compares it exactly, and takes dir and path", async () => {
    const { app, recorder } = buildWebApp({ auth: { username: "tdarr", password: "s3cret-pass" } });
    const url = "/triggers/manual?path=/tv/Show/Season 01/Show - S01E01.mkv";
    const none = await app.request(url, { method: "POST" });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain("Basic");
    expect((await app.request(url, { method: "POST", headers: basic("tdarr", "s3cret-pasS") })).status).toBe(401);
    expect((await app.request(url, { method: "POST", headers: basic("tdar", "s3cret-pass") })).status).toBe(401);
    const ok = await app.request(url, { method: "POST", headers: basic("tdarr", "s3cret-pass") });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ success: true, queued: [{ path: "/data/TV/Show/Season 01/Show - S01E01.mkv" }] });
    expect(recorder.all()[0]).toMatchObject({ kind: "unknown", source: "Manual", event: "Manual" });
    expect((await app.request("/triggers/manual", { method: "HEAD", headers: basic("tdarr", "s3cret-pass") })).status).toBe(200);
    expect((await app.request("/triggers/manual", { method: "GET", headers: basic("tdarr", "s3cret-pass") })).status).toBe(400);
    expect((await app.request("/triggers/manual", { method: "DELETE" })).status).toBe(401);
    expect((await app.request("/triggers/manual", { method: "DELETE", headers: basic("tdarr", "s3cret-pass") })).status).toBe(405);
  });
});

describe("/health", () => {
  it("is 200 {status: ok} when ready and 503 while starting or broken", async () => {
    let ready = false;
    const { app } = buildWebApp({ health: () => ({ ready, queue: ready ? "ok" : "opening" }) });
    const starting = await app.request("/health");
    expect(starting.status).toBe(503);
    expect(await starting.json()).toEqual({ status: "starting", queue: "opening" });
    ready = true;
    const ok = await app.request("/health");
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: "ok", queue: "ok" });
    const broken = buildWebApp({ health: () => ({ ready: false, status: "error", queue: "the queue file is unreadable" }) });
    expect((await broken.app.request("/health")).status).toBe(503);
  });
});
