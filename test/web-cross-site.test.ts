import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { queueAdminFromScanQueue } from "../src/web/from-config.ts";
import type { createApp } from "../src/web/app.ts";
import { createFakeTarget } from "./support/fake-target.ts";
import { createQueueHarness, fileRequest, type QueueHarness } from "./support/queue-harness.ts";
import { TEST_PASS, buildWebApp } from "./support/web-builders.ts";

/**
 * Every route that changes state (a webhook, the classic form post, the manual trigger, the API's retry, delete,
 * Drive and backfill commands) refuses a browser's request from another site, on the real queue: nothing is queued
 * or changed, the answer is 403 with the reason, one WARNING line without the secret. Scripts and the *arr apps send
 * no Origin and go on as before; so do autoscan's own pages, also behind a proxy that passes X-Forwarded-Host.
 */
let h: QueueHarness;
let app: ReturnType<typeof createApp>;
let log: ReturnType<typeof buildWebApp>["capture"];
const base = `/${TEST_PASS}`;
const EVIL = { origin: "https://evil.example" };
const CROSS = { "sec-fetch-site": "cross-site" };
const sonarr = (show: string) =>
  JSON.stringify({ eventType: "Download", series: { title: show, path: `/tv/${show}` }, episodeFile: { relativePath: "Season 01/e.mkv" } });

beforeEach(async () => {
  h = await createQueueHarness({ targets: [createFakeTarget()] });
  const built = buildWebApp({ queue: queueAdminFromScanQueue(h.queue), sink: h.queue.enqueue });
  app = built.app;
  log = built.capture;
});

afterEach(async () => {
  await h.close();
});

function send(path: string, init: { method?: string; body?: string; type?: string; headers?: Record<string, string> } = {}) {
  return app.request(path, {
    method: init.method ?? "POST",
    headers: { host: "autoscan.lan:3467", ...(init.type ? { "content-type": init.type } : {}), ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
}
const json = "application/json";
const form = "application/x-www-form-urlencoded";
const pending = async (): Promise<string[]> => (await h.queue.listPending()).map((item) => item.folder);

describe("requests that change state, from a browser on another site", () => {
  it("are refused on the webhook, label and form routes, and the manual trigger: nothing is queued", async () => {
    const answers = [
      await send(base, { body: sonarr("A"), type: json, headers: EVIL }),
      await send(base, { body: sonarr("B"), type: json, headers: CROSS }),
      await send(`${base}/sonarr`, { body: sonarr("C"), type: json, headers: { origin: "null", "sec-fetch-site": "cross-site" } }),
      await send(base, { method: "PUT", body: sonarr("D"), type: json, headers: { ...CROSS, origin: "http://autoscan.lan:3467" } }),
      await send(base, { body: "eventType=Manual&filepath=%2Ftv%2FE%2FSeason%2001%2Fe.mkv", type: form, headers: EVIL }),
      await send(`${base}/triggers/manual?dir=/tv/F/Season%2001`, { method: "GET", headers: CROSS }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(403);
      expect(await answer.text()).toMatch(/^Refused: the request came from another site\./);
    }
    expect(await pending()).toEqual([]);
    const warnings = log.lines.filter((line) => String(line.msg).startsWith("Refused "));
    expect(warnings).toHaveLength(6);
    expect(JSON.stringify(log.lines)).not.toContain(TEST_PASS);
    expect(warnings[0]?.msg).toBe("Refused POST /<SERVER_PASS> from client 'unknown': the request came from another site");
  });

  it("are refused for the API's commands that change something, and answered for the ones that read", async () => {
    await h.enqueue(fileRequest("/tv/Waiting/S01/e.mkv"));
    const [item] = await h.queue.listPending();
    const refused = [
      await send(`/api/${TEST_PASS}?cmd=delete&id=${item!.id}`, { method: "GET", headers: CROSS }),
      await send(`/api/${TEST_PASS}`, { body: JSON.stringify({ cmd: "retry_failed" }), type: json, headers: EVIL }),
      await send(`/api/${TEST_PASS}?cmd=backfill`, { method: "GET", headers: EVIL }),
    ];
    for (const answer of refused) {
      expect(answer.status).toBe(403);
      expect(await answer.json()).toMatchObject({ success: false, msg: expect.stringMatching(/^Refused: the request came from another site/) });
    }
    expect(await pending()).toEqual(["/tv/Waiting/S01"]);
    const read = await send(`/api/${TEST_PASS}?cmd=queue_count`, { method: "GET", headers: CROSS });
    expect(await read.json()).toEqual({ success: true, queue_count: 1 });
  });
});

describe("state-changing GETs from a sibling site (an <img> on another subdomain: Sec-Fetch-Site same-site, no Origin)", () => {
  const SIBLING = { "sec-fetch-site": "same-site" };

  it("are refused on both manual triggers (Basic credentials the browser cached are not enough) and the API's commands", async () => {
    const withAuth = buildWebApp({ queue: queueAdminFromScanQueue(h.queue), sink: h.queue.enqueue, auth: { username: "user", password: "a-long-basic-password" } });
    const basic = `Basic ${Buffer.from("user:a-long-basic-password").toString("base64")}`;
    await h.enqueue(fileRequest("/tv/Waiting/S01/e.mkv"));
    const [item] = await h.queue.listPending();
    const get = (path: string, headers: Record<string, string> = {}) =>
      withAuth.app.request(path, { method: "GET", headers: { host: "autoscan.lan:3467", ...SIBLING, ...headers } });
    const answers = [
      await get("/triggers/manual?dir=/tv/A/Season%2001", { authorization: basic }),
      await get(`${base}/triggers/manual?dir=/tv/B/Season%2001`),
      ...(await Promise.all(["delete", "retry", "retry_failed", "backfill", "reset_page_token", "clear_drive_cache"].map((cmd) => get(`/api/${TEST_PASS}?cmd=${cmd}&id=${item!.id}`)))),
    ];
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 403));
    expect(await pending()).toEqual(["/tv/Waiting/S01"]);
    // Reading is still answered.
    expect(await (await get(`/api/${TEST_PASS}?cmd=queue_count`)).json()).toEqual({ success: true, queue_count: 1 });
  });
});

describe("requests without a browser's word, or from autoscan's own pages", () => {
  it("go on as before: an *arr app, curl, the same origin, and a page behind a proxy", async () => {
    const answers = [
      await send(base, { body: sonarr("App"), type: json }),
      await send(`${base}/sonarr`, { body: sonarr("Same"), type: json, headers: { origin: "http://autoscan.lan:3467", "sec-fetch-site": "same-origin" } }),
      // autoscan's own pages (Referrer-Policy: no-referrer): a form post's Origin is "null", the site the same.
      await send(base, { body: sonarr("Own"), type: json, headers: { origin: "null", "sec-fetch-site": "same-origin" } }),
      await send(base, {
        body: "eventType=Manual&filepath=%2Ftv%2FProxied%2FSeason%2001%2Fe.mkv",
        type: form,
        headers: { origin: "https://media.example.org", "x-forwarded-host": "media.example.org", "sec-fetch-site": "same-origin" },
      }),
    ];
    for (const answer of answers) expect(answer.status).toBeLessThan(400);
    // (The manual post names a file not on disk: it waits as that request until its check finds it.)
    expect((await pending()).sort()).toEqual(["/data/TV/App/Season 01", "/data/TV/Own/Season 01", "/data/TV/Proxied/Season 01/e.mkv", "/data/TV/Same/Season 01"]);
    expect(log.lines.filter((line) => String(line.msg).startsWith("Refused "))).toEqual([]);
  });
});
