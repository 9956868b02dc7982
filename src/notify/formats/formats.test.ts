import { describe, expect, it } from "vitest";
import type { NotifyEvent } from "../../core/notify-event.ts";
import type { Batch } from "../batch.ts";
import { formatApprise } from "./apprise.ts";
import { DISCORD_CONTENT_MAX, escapeMarkdown, formatDiscord } from "./discord.ts";
import { formatNtfy, headerText, NTFY_BODY_MAX_BYTES } from "./ntfy.ts";
import { formatWebhook } from "./webhook.ts";

const AT = Date.UTC(2026, 10, 25, 6, 18, 40);

function failures(count: number, folder = (i: number) => `/data/TV/Show ${String(i)}/Season 01`): NotifyEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    event: "failed" as const,
    at: AT + i,
    folder: folder(i),
    reason: "File was not found after 1 check(s): '/data/TV/Show/Season 01/e01.mkv'",
    id: i + 1,
  }));
}

const batchOf = (events: readonly NotifyEvent[], extra: Partial<Batch> = {}): Batch => ({
  notifier: "alerts",
  events,
  dropped: 0,
  instance: "nas-1-ab12",
  at: AT,
  ...extra,
});

describe("Discord (Execute Webhook JSON)", () => {
  it("puts a title and one line per failure in content, pings nobody", () => {
    const message = formatDiscord(batchOf(failures(2)));
    expect(message.headers["Content-Type"]).toBe("application/json");
    const body = JSON.parse(message.body) as { content: string; username: string; allowed_mentions: { parse: unknown[] } };
    expect(body.username).toBe("autoscan");
    expect(body.allowed_mentions).toEqual({ parse: [] });
    expect(body.content.split("\n")).toEqual([
      "**autoscan: 2 folders failed**",
      "Failed: /data/TV/Show 0/Season 01 — File was not found after 1 check(s): '/data/TV/Show/Season 01/e01.mkv'",
      "Failed: /data/TV/Show 1/Season 01 — File was not found after 1 check(s): '/data/TV/Show/Season 01/e01.mkv'",
    ]);
  });

  it("keeps content within 2,000 characters and says how many more there were", () => {
    const body = JSON.parse(formatDiscord(batchOf(failures(200))).body) as { content: string };
    expect(body.content.length).toBeLessThanOrEqual(DISCORD_CONTENT_MAX);
    const last = body.content.split("\n").at(-1) ?? "";
    const shown = body.content.split("\n").filter((line) => line.startsWith("Failed: ")).length;
    expect(last).toBe(`… and ${String(200 - shown)} more`);
    expect(shown).toBeGreaterThan(5);
  });

  it("cuts a single line longer than the limit", () => {
    const long = failures(1, () => `/data/${"x".repeat(5000)}`);
    const body = JSON.parse(formatDiscord(batchOf(long)).body) as { content: string };
    expect(body.content.length).toBeLessThanOrEqual(DISCORD_CONTENT_MAX);
    expect(body.content.endsWith("…")).toBe(true);
  });

  it("escapes markdown in paths, so '*' and '_' show as they are", () => {
    expect(escapeMarkdown("/data/Movies/*batteries_not_included (1987)")).toBe("/data/Movies/\\*batteries\\_not\\_included (1987)");
    const body = JSON.parse(formatDiscord(batchOf(failures(1, () => "/m/__init__ `x`"))).body) as { content: string };
    expect(body.content).toContain("Failed: /m/\\_\\_init\\_\\_ \\`x\\`");
  });

  it("titles a server going down by its name, and a mix by counts", () => {
    const down = JSON.parse(formatDiscord(batchOf([{ event: "target_down", at: AT, target: "jellyfin", reason: "connection refused" }])).body) as { content: string };
    expect(down.content).toBe("**autoscan: jellyfin stopped answering**\njellyfin stopped answering: connection refused");
    const mixed = JSON.parse(formatDiscord(batchOf([...failures(3), { event: "target_up", at: AT, target: "plex", reason: "down for 4 min" }])).body) as { content: string };
    expect(mixed.content.split("\n")[0]).toBe("**autoscan: 3 failed, 1 server(s) back**");
    expect(mixed.content).toContain("plex answers again (down for 4 min)");
  });
});

describe("ntfy (POST text, Title header)", () => {
  it("sends the lines as the body, the title, priority and tags as headers", () => {
    const message = formatNtfy(batchOf(failures(2)));
    expect(message.headers).toEqual({ "Content-Type": "text/plain; charset=utf-8", Title: "autoscan: 2 folders failed", Priority: "high", Tags: "warning" });
    expect(message.body.split("\n")).toHaveLength(2);
    expect(message.body).not.toContain("autoscan: 2 folders failed");
  });

  it("keeps the body under ntfy's 4,096-byte message size, counting bytes", () => {
    const message = formatNtfy(batchOf(failures(300, (i) => `/data/Séries/Ünïcödé ${String(i)}/Saison 01`)));
    expect(Buffer.byteLength(message.body, "utf8")).toBeLessThanOrEqual(NTFY_BODY_MAX_BYTES);
    expect(message.body).toMatch(/… and \d+ more$/);
  });

  it("sends a title that is not ASCII RFC 2047-encoded (Node's client sends ASCII headers only)", () => {
    expect(headerText("autoscan: plex stopped answering")).toBe("autoscan: plex stopped answering");
    const encoded = headerText("autoscan: 2 servers — down");
    expect(encoded).toMatch(/^=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=$/);
    expect(Buffer.from(encoded.slice(10, -2), "base64").toString("utf8")).toBe("autoscan: 2 servers — down");
  });

  it("marks servers coming back as good news", () => {
    const message = formatNtfy(batchOf([{ event: "target_up", at: AT, target: "plex" }]));
    expect(message.headers).toMatchObject({ Title: "autoscan: plex answers again", Priority: "default", Tags: "white_check_mark" });
  });
});

describe("Apprise API (POST {title, body, type})", () => {
  it("sends title, body and a type apprise knows", () => {
    const message = formatApprise(batchOf(failures(20)));
    const body = JSON.parse(message.body) as { title: string; body: string; type: string; format: string };
    expect(body.title).toBe("autoscan: 20 folders failed");
    expect(body.type).toBe("failure");
    expect(body.format).toBe("text");
    expect(body.body.split("\n")).toHaveLength(20);
    const found = JSON.parse(formatApprise(batchOf([{ event: "backfill_found", at: AT, folder: "/data/TV/Show/Season 01", app: "Sonarr (sonarr)" }])).body) as { type: string; body: string };
    expect(found.type).toBe("info");
    expect(found.body).toBe("Queued from Sonarr (sonarr)'s history (no webhook brought it): /data/TV/Show/Season 01");
  });
});

describe("webhook (one JSON document)", () => {
  it("is {event, at, instance, notifier, items, dropped}, one item per event with what it carries", () => {
    const doc = JSON.parse(formatWebhook(batchOf(failures(2), { dropped: 3 })).body) as Record<string, unknown>;
    expect(doc).toEqual({
      event: "failed",
      at: "2026-11-25T06:18:40.000Z",
      instance: "nas-1-ab12",
      notifier: "alerts",
      dropped: 3,
      items: [
        { event: "failed", at: "2026-11-25T06:18:40.000Z", folder: "/data/TV/Show 0/Season 01", reason: expect.stringContaining("not found"), id: 1 },
        { event: "failed", at: "2026-11-25T06:18:40.001Z", folder: "/data/TV/Show 1/Season 01", reason: expect.stringContaining("not found"), id: 2 },
      ],
    });
  });

  it("says `mixed` when a window gathered several kinds, and `test` for the test message", () => {
    const mixed = JSON.parse(formatWebhook(batchOf([...failures(1), { event: "target_down", at: AT, target: "plex", reason: "timeout" }])).body) as { event: string; items: { event: string }[] };
    expect(mixed.event).toBe("mixed");
    expect(mixed.items.map((item) => item.event)).toEqual(["failed", "target_down"]);
    const test = JSON.parse(formatWebhook(batchOf([], { test: true })).body) as { event: string; items: unknown[] };
    expect(test).toMatchObject({ event: "test", items: [] });
  });
});

describe("the test message", () => {
  it("names the notifier in every format", () => {
    const batch = batchOf([], { test: true });
    expect((JSON.parse(formatDiscord(batch).body) as { content: string }).content).toContain("notifier 'alerts'");
    expect(formatNtfy(batch).body).toContain("notifier 'alerts'");
    expect(formatNtfy(batch).headers.Title).toBe("autoscan: test message");
    expect((JSON.parse(formatApprise(batch).body) as { body: string }).body).toContain("notifier 'alerts'");
  });
});
