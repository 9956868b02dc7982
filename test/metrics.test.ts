import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTokenStore } from "../src/drive/token-store.ts";
import { startFakeGoogle } from "./support/fake-google.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";
import { familyOf, parsePrometheusText, sumOf, type Families } from "./support/prometheus-text.ts";
import { startCli, within, type RunningCli } from "./support/run-cli.ts";

/**
 * `SERVER_METRICS`: the real service (`autoscan server` as a child process, a real queue file, real HTTP, a fake Plex
 * at the edge) scraped at `/<SERVER_PASS>/metrics` as Prometheus would, and the text parsed strictly.
 */
const PASS = "5e1f0c2d3b4a59687766554433221100";
const USER = "prometheus";
const PASSWORD = "scrape-secret-42";
const FIXTURES = join(import.meta.dirname, "..", "src", "intake", "fixtures");

let dir: string;
let plex: FakePlex;
let port: number;
const running: RunningCli[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "autoscan-metrics-"));
  port = await freePort();
  const tv = join(dir, "media", "TV", "Show (2020)");
  await mkdir(join(tv, "Season 01"), { recursive: true });
  await mkdir(join(tv, "Season 02"), { recursive: true });
  await writeFile(join(tv, "Season 01", "Show - S01E01.mkv"), "x");
  await writeFile(join(tv, "Season 02", "Show - S02E01.mkv"), "x");
  plex = await startFakePlex({ sections: [{ key: "2", title: "TV Shows", type: "show", locations: ["/data/TV"] }] });
});

afterEach(async () => {
  for (const child of running.splice(0)) child.process.kill("SIGKILL");
  await plex.close();
  await rm(dir, { recursive: true, force: true });
});

async function startServer(extra: Record<string, unknown>, env: Record<string, string> = {}): Promise<RunningCli> {
  const config = {
    SERVER_PASS: PASS,
    SERVER_PORT: port,
    SERVER_IP: "127.0.0.1",
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    PLEX_ANALYZE_TYPE: "off",
    SERVER_SCAN_DELAY: 0,
    SERVER_MAX_FILE_CHECKS: 2,
    SERVER_FILE_CHECK_DELAY: 1,
    SERVER_PATH_MAPPINGS: { "/data/TV/": ["/tv/"] },
    SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${join(dir, "media", "TV")}/`]: ["/data/TV/"] },
    ...extra,
  };
  await writeFile(join(dir, "config.json"), JSON.stringify(config, null, 2));
  const child = startCli(["server", "--config", join(dir, "config.json"), "--logfile", "none"], { timeoutMs: 60_000, env });
  running.push(child);
  await within(
    (async () => {
      while (!(await fetch(url("/health")).then((r) => r.ok, () => false))) await new Promise((resolve) => setTimeout(resolve, 100));
    })(),
    20_000,
    `server health (stderr: ${child.stderr()})`,
  );
  return child;
}

const url = (path: string): string => `http://127.0.0.1:${port}${path}`;
const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

function post(path: string, body: string, type = "application/json"): Promise<Response> {
  return fetch(url(path), { method: "POST", headers: { "content-type": type }, body });
}

async function fixture(name: string): Promise<string> {
  return readFile(join(FIXTURES, name), "utf8");
}

async function scrape(): Promise<{ response: Response; families: Families }> {
  const response = await fetch(url(`/${PASS}/metrics`), { headers: { authorization: basic(USER, PASSWORD) } });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return { response, families: parsePrometheusText(text) };
}

const sonarrDownload = JSON.stringify({
  eventType: "Download",
  series: { id: 1, title: "Show", path: "/tv/Show (2020)", tvdbId: 1 },
  episodes: [{ id: 1, episodeNumber: 1, seasonNumber: 1, title: "Pilot" }],
  episodeFile: { id: 1, relativePath: "Season 01/Show - S01E01.mkv", path: "/tv/Show (2020)/Season 01/Show - S01E01.mkv" },
  isUpgrade: false,
});

describe("GET /<SERVER_PASS>/metrics", () => {
  it("counts requests, scans, file checks, Plex calls and store writes as they happen, in Prometheus's text format", async () => {
    const child = await startServer({ SERVER_METRICS: true, SERVER_AUTH_USERNAME: USER, SERVER_AUTH_PASSWORD: PASSWORD });

    const before = (await scrape()).families;
    expect(sumOf(before, "autoscan_requests_received_total")).toBe(0);
    expect(sumOf(before, "autoscan_queue_folders", { state: "pending" })).toBe(0);

    expect((await post(`/${PASS}`, sonarrDownload)).status).toBe(200);
    const manual = await post(`/${PASS}`, "eventType=Manual&filepath=/tv/Show%20(2020)/Season%2002/Show%20-%20S02E01.mkv", "application/x-www-form-urlencoded");
    expect(manual.status).toBe(200);
    expect((await post(`/${PASS}/4k`, await fixture("radarr/test.json"))).status).toBe(200);
    // POST to the metrics URL is still the webhook route, with the label "metrics".
    const labelled = await post(`/${PASS}/metrics`, await fixture("sonarr/test.json"));
    expect([labelled.status, await labelled.text()]).toEqual([200, "OK"]);
    expect((await post(`/${PASS}`, JSON.stringify({ hello: "world" }))).status).toBe(400);

    let families = before;
    await within(
      (async () => {
        for (;;) {
          families = (await scrape()).families;
          // Counted when Plex answers; the queue records it just after.
          const scanned = sumOf(families, "autoscan_scans_total", { result: "scanned" });
          if (scanned >= 2 && sumOf(families, "autoscan_queue_folders", { state: "done" }) >= 2) return;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })(),
      30_000,
      `two scans counted (log: ${child.stdout()})`,
    );
    expect(plex.scans.map((scan) => scan.path).sort()).toEqual(["/data/TV/Show (2020)/Season 01", "/data/TV/Show (2020)/Season 02"]);

    const requests = (labels: Record<string, string>): number => sumOf(families, "autoscan_requests_received_total", labels);
    expect(requests({ source: "sonarr", event: "Download", answer: "2xx" })).toBe(1);
    expect(requests({ source: "sonarr", event: "Test", answer: "2xx" })).toBe(1);
    expect(requests({ source: "radarr", event: "Test", answer: "2xx" })).toBe(1);
    expect(requests({ source: "manual", event: "Manual", answer: "2xx" })).toBe(1);
    expect(requests({ source: "unknown", event: "invalid", answer: "4xx" })).toBe(1);
    expect(requests({})).toBe(5);
    // The URL label ("4k", "metrics") is never a label value: the series stay bounded.
    const labelValues = familyOf(families, "autoscan_requests_received_total")?.samples.flatMap((s) => Object.values(s.labels)) ?? [];
    expect(labelValues).not.toContain("4k");
    expect(labelValues.join(" ")).not.toMatch(/\(|\//);

    expect(sumOf(families, "autoscan_scans_total", { target: "plex", result: "scanned" })).toBe(2);
    expect(sumOf(families, "autoscan_scans_total", { result: "failed" })).toBe(0);
    expect(sumOf(families, "autoscan_queue_folders", { state: "done" })).toBe(2);
    expect(sumOf(families, "autoscan_queue_folders", { state: "pending" })).toBe(0);
    expect(sumOf(families, "autoscan_queue_folders", { state: "failed" })).toBe(0);
    expect(sumOf(families, "autoscan_request_to_scan_seconds_count", { target: "plex" })).toBe(2);
    expect(sumOf(families, "autoscan_request_to_scan_seconds_bucket", { target: "plex", le: "+Inf" })).toBe(2);
    expect(sumOf(families, "autoscan_target_call_duration_seconds_count", { target: "plex", operation: "scan", result: "ok" })).toBe(2);
    expect(sumOf(families, "autoscan_target_call_duration_seconds_count", { target: "plex", operation: "refresh_section" })).toBe(2);
    // The manual path (kind unknown, looked up after it was answered) may be checked once as itself before it joins
    // its folder (SERVER_SCAN_DELAY 0 here: due at once), then its folder is checked: 2 or 3 checks that found files.
    expect(sumOf(families, "autoscan_file_checks_total", { result: "found" })).toBeGreaterThanOrEqual(2);
    expect(sumOf(families, "autoscan_file_checks_total", { result: "found" })).toBeLessThanOrEqual(3);
    expect(sumOf(families, "autoscan_store_write_duration_seconds_count")).toBeGreaterThanOrEqual(2);
    expect(sumOf(families, "autoscan_store_write_failures_total")).toBe(0);
    expect(familyOf(families, "autoscan_drive_polls_total")?.type).toBe("counter");
    expect(familyOf(families, "autoscan_request_to_scan_seconds_bucket")?.type).toBe("histogram");
    // Process metrics, on the same registry.
    expect(sumOf(families, "process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(familyOf(families, "nodejs_heap_size_used_bytes")?.type).toBe("gauge");

    const { response } = await scrape();
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(child.stdout()).not.toContain(PASSWORD);
  });

  it("needs the URL secret and, when they are set, the Basic credentials", async () => {
    await startServer({ SERVER_METRICS: true, SERVER_AUTH_USERNAME: USER, SERVER_AUTH_PASSWORD: PASSWORD });
    const none = await fetch(url(`/${PASS}/metrics`));
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Basic realm="autoscan"/);
    const wrong = await fetch(url(`/${PASS}/metrics`), { headers: { authorization: basic(USER, "guess") } });
    expect(wrong.status).toBe(401);
    const wrongSecret = await fetch(url("/not-the-secret/metrics"), { headers: { authorization: basic(USER, PASSWORD) } });
    expect([wrongSecret.status, await wrongSecret.text()]).toEqual([404, "Not Found"]);
    // A bare /metrics has no secret: the same 404 as any unknown URL.
    const bare = await fetch(url("/metrics"), { headers: { authorization: basic(USER, PASSWORD) } });
    expect([bare.status, await bare.text()]).toEqual([404, "Not Found"]);
    const right = await fetch(url(`/${PASS}/metrics`), { headers: { authorization: basic(USER, PASSWORD) } });
    expect(right.status).toBe(200);
  });

  it("is 404 while SERVER_METRICS is off (the default), without Basic credentials it needs only the secret", async () => {
    await startServer({});
    const off = await fetch(url(`/${PASS}/metrics`));
    expect([off.status, await off.text()]).toEqual([404, "Not Found"]);
    expect((await post(`/${PASS}/metrics`, await fixture("sonarr/test.json"))).status).toBe(200);
    for (const child of running.splice(0)) {
      child.process.kill("SIGTERM");
      await within(child.exited, 10_000, "exit after SIGTERM");
    }
    await startServer({ SERVER_METRICS: true });
    const open = await fetch(url(`/${PASS}/metrics`));
    expect(open.status).toBe(200);
    expect(familyOf(parsePrometheusText(await open.text()), "autoscan_scans_total")?.type).toBe("counter");
  });
});

describe("Google Drive metrics", () => {
  it("counts the monitor's polls and its Drive API calls (fake Google)", async () => {
    const google = await startFakeGoogle();
    try {
      const CLIENT_ID = "1234567890-metrics.apps.googleusercontent.com";
      const CLIENT_SECRET = "GOCSPX-metrics-secret";
      google.addClient(CLIENT_ID, CLIENT_SECRET);
      const refreshToken = google.issueRefreshToken(CLIENT_ID, "https://www.googleapis.com/auth/drive.metadata.readonly");
      await createTokenStore({ path: join(dir, "google-token.json") }).save({ clientId: CLIENT_ID, refreshToken });
      const env = { AUTOSCAN_GOOGLE_API_URL: google.url, AUTOSCAN_GOOGLE_TOKEN_URL: google.tokenUrl, AUTOSCAN_GOOGLE_AUTH_URL: google.authUrl };
      const cloud = { ENABLED: true, CLIENT_ID, CLIENT_SECRET, ALLOWED: { FILE_PATHS: ["My Drive/Media/TV/"] } };
      const child = await startServer({ SERVER_METRICS: true, CLOUD: cloud }, env);
      let families: Families = new Map();
      await within(
        (async () => {
          for (;;) {
            families = (await scrape()).families;
            if (sumOf(families, "autoscan_drive_polls_total", { result: "ok" }) >= 1) return;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        })(),
        20_000,
        `a Drive poll counted (log: ${child.stdout()})`,
      );
      expect(sumOf(families, "autoscan_drive_polls_total", { result: "error" })).toBe(0);
      expect(sumOf(families, "autoscan_drive_api_calls_total", { method: "changes.getStartPageToken", result: "ok" })).toBeGreaterThanOrEqual(1);
      expect(sumOf(families, "autoscan_drive_api_calls_total", { result: "ok" })).toBe(google.apiCalls());
    } finally {
      await google.close();
    }
  });
});

describe("the test's Prometheus text parser", () => {
  it("refuses what Prometheus refuses", () => {
    const good = '# TYPE h histogram\nh_bucket{t="a",le="1"} 1\nh_bucket{t="a",le="+Inf"} 2\nh_sum{t="a"} 3\nh_count{t="a"} 2\n';
    expect(sumOf(parsePrometheusText(good), "h_count", { t: "a" })).toBe(2);
    expect(sumOf(parsePrometheusText("# TYPE g gauge\ng Nan\n"), "g")).toBeNaN();
    expect(() => parsePrometheusText("x 1\n")).toThrow(/no TYPE/);
    expect(() => parsePrometheusText('# TYPE x counter\nx{a="1} 1\n')).toThrow(/unterminated/);
    expect(() => parsePrometheusText("# TYPE x counter\nx 1\nx 2\n")).toThrow(/twice/);
    expect(() => parsePrometheusText(good.replace("h_count{t=\"a\"} 2", 'h_count{t="a"} 3'))).toThrow(/_count/);
    expect(() => parsePrometheusText(good.replace('le="1"} 1', 'le="1"} 5'))).toThrow(/cumulative/);
  });
});
