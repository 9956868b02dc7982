import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { createDiskProbe } from "../src/paths/disk-probe.ts";
import { createPathMapper, type PathMappings } from "../src/paths/mapping.ts";
import { createPathPreview } from "../src/paths/preview.ts";
import { matchSections, type PlexSection } from "../src/targets/plex/sections.ts";
import { TEST_PASS, buildWebApp } from "./support/web-builders.ts";

/**
 * The path preview through the real app: the Scan page's form is held back when the path would not be scanned as
 * expected (until the user confirms), scripts are queued as before, `cmd=preview` answers JSON, and no path, however
 * hostile, turns into markup. Real folders in a temp dir, a Plex section list (no Plex needed).
 */
const root = mkdtempSync(join(tmpdir(), "autoscan-console-preview-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
mkdirSync(join(root, "Movies", "Heat (1995)"), { recursive: true });
writeFileSync(join(root, "Movies", "Heat (1995)", "Heat (1995).mkv"), "");

const MAPPINGS: PathMappings = { "/data/Movies/": [`${root}/Movies/`], "/data/TV/": ["/tv/"] };
const SECTIONS: PlexSection[] = [
  { id: "1", title: "Movies", type: "movie", locations: ["/data/Movies"], refreshing: false },
  { id: "2", title: "TV", type: "show", locations: ["/data/TV"], refreshing: false },
];
const probe = createDiskProbe({ log: pino({ level: "silent" }), mountInfoFile: join(root, "no-mountinfo") });

function build() {
  const mapper = createPathMapper({ mappings: MAPPINGS });
  const preview = createPathPreview({
    mapper,
    hasMappings: () => true,
    sectionsHolding: async (folder) => matchSections(SECTIONS, folder),
    stat: probe.stat,
  });
  return buildWebApp({ mapper, console: { preview } });
}

const post = (fields: Record<string, string>, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
  body: new URLSearchParams(fields).toString(),
});
const pageForm = (filepath: string, extra: Record<string, string> = {}) => post({ eventType: "Manual", source: "page", filepath, ...extra });

describe("the Scan page's preview before queueing", () => {
  it("queues nothing for an unmapped path in no library until the user confirms", async () => {
    const { app, recorder, capture } = build();
    const held = await app.request(`/${TEST_PASS}`, pageForm("/nowhere/foo.mkv"));
    expect(held.status).toBe(200);
    expect(held.headers.get("content-security-policy")).toContain("script-src 'self'");
    const page = await held.text();
    expect(page).toContain("Not queued yet");
    expect(page).toContain("No SERVER_PATH_MAPPINGS form matches this path");
    expect(page).toContain("<code>autoscan sections</code>");
    expect(page).toContain("<code>SERVER_PATH_MAPPINGS</code>");
    expect(page).toMatch(/<input type="hidden" name="confirm" value="1">[\s\S]*id="queue-anyway"/);
    expect(page).not.toContain("Queued for scanning");
    expect(recorder.batches).toEqual([]);
    expect(capture.lines.some((line) => String(line.msg).includes("not queued until confirmed"))).toBe(true);

    const confirmed = await app.request(`/${TEST_PASS}`, pageForm("/nowhere/foo.mkv", { confirm: "1" }));
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain("Queued anyway");
    expect(recorder.all()).toMatchObject([{ path: "/nowhere/foo.mkv", kind: "unknown", source: "Manual" }]);
  });

  it("leaves scripts alone: the same path without source=page is queued at once, in plex_autoscan's words", async () => {
    const { app, recorder } = build();
    const res = await app.request(`/${TEST_PASS}`, post({ eventType: "Manual", filepath: "/nowhere/foo.mkv" }));
    expect(res.headers.get("content-type")).toContain("text/plain");
    expect(await res.text()).toBe("'/nowhere/foo.mkv' was added to scan queue.");
    expect(recorder.all()).toHaveLength(1);
  });

  it("queues a mapped path in a library and shows where it lands", async () => {
    const { app, recorder } = build();
    const sent = `${root}/Movies/Heat (1995)/Heat (1995).mkv`;
    const res = await app.request(`/${TEST_PASS}`, pageForm(sent));
    expect(res.status).toBe(200);
    const page = await res.text();
    const result = page.slice(page.indexOf('id="result"'), page.indexOf("</section>", page.indexOf('id="result"')));
    expect(result).toContain("Queued for scanning");
    expect(result).toContain(`<dt>Matched form</dt><dd><span class="path" dir="ltr">${root}/Movies/</span>`);
    expect(result).toContain('<span class="path" dir="ltr">/data/Movies/Heat (1995)/Heat (1995).mkv</span>');
    expect(result).toContain('Movies <span class="muted small">(id 1)</span>');
    expect(result).toContain('<span class="badge ok">file</span>');
    expect(result).toContain('<dt>Folder to scan</dt><dd><span class="path" dir="ltr">/data/Movies/Heat (1995)</span>');
    expect(result).not.toContain("Queue anyway");
    expect(recorder.all()).toMatchObject([{ path: "/data/Movies/Heat (1995)/Heat (1995).mkv", receivedPath: sent }]);
  });

  it("still refuses an invalid path and honours SERVER_IGNORE_LIST before any preview", async () => {
    const { app, recorder } = build();
    const refused = await app.request(`/${TEST_PASS}`, pageForm("Movies/../../etc/passwd"));
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("The path must not contain");
    const ignored = await app.request(`/${TEST_PASS}`, pageForm("/data/Movies/.grab/x.mkv"));
    expect(await ignored.text()).toContain("SERVER_IGNORE_LIST");
    expect(recorder.batches).toEqual([]);
  });

  it("renders a hostile path as text, held or queued", async () => {
    const { app, recorder } = build();
    const name = `<script>alert("x")</script> & 'q' "dq" 🎬 שלום \u202eevil`;
    for (const path of [`/nowhere/${name}.mkv`, `${root}/Movies/${name}.mkv`]) {
      for (const extra of [{}, { confirm: "1" }] as Record<string, string>[]) {
        const page = await (await app.request(`/${TEST_PASS}`, pageForm(path, extra))).text();
        expect(page).not.toContain("<script>alert");
        expect(page).not.toContain('"dq"');
        expect(page).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39; &quot;dq&quot; 🎬 שלום \u202eevil");
        expect(page.match(/<script/g)).toHaveLength(1);
      }
    }
    expect(recorder.all().map((r) => r.path)).toEqual([`/nowhere/${name}.mkv`, `/data/Movies/${name}.mkv`, `/data/Movies/${name}.mkv`]);
  });

  it("behaves as before when the app has no preview", async () => {
    const { app, recorder } = buildWebApp();
    const page = await (await app.request(`/${TEST_PASS}`, pageForm("/nowhere/foo.mkv"))).text();
    expect(page).toContain("Queued for scanning");
    expect(recorder.all()).toHaveLength(1);
  });
});

describe("cmd=preview", () => {
  it("answers the preview as JSON", async () => {
    const { app, recorder } = build();
    const path = encodeURIComponent(`${root}/Movies/Heat (1995)/Heat (1995).mkv`);
    const res = await app.request(`/api/${TEST_PASS}?cmd=preview&path=${path}`);
    expect(await res.json()).toEqual({
      success: true,
      path: `${root}/Movies/Heat (1995)/Heat (1995).mkv`,
      matched_form: `${root}/Movies/`,
      server_path: "/data/Movies/Heat (1995)/Heat (1995).mkv",
      sections: [{ id: "1", title: "Movies" }],
      on_disk: "file",
      scan_folder: "/data/Movies/Heat (1995)",
      problems: [],
    });
    const unmapped = (await (await app.request(`/api/${TEST_PASS}?cmd=preview&path=/nowhere/foo.mkv`)).json()) as Record<string, unknown>;
    expect(unmapped).toMatchObject({ success: true, matched_form: null, sections: [], on_disk: "missing", scan_folder: "/nowhere/foo.mkv" });
    expect(unmapped.problems).toHaveLength(1);
    expect(await (await app.request(`/api/${TEST_PASS}?cmd=preview`)).json()).toEqual({
      success: false,
      msg: "The preview command needs a path parameter",
    });
    expect(recorder.batches).toEqual([]);
  });
});
