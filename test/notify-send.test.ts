import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createNotifiersFromConfig } from "../src/notify/from-config.ts";
import type { NotifierConfig } from "../src/config/schema.ts";
import { formatDiscord } from "../src/notify/formats/discord.ts";
import { formatWebhook } from "../src/notify/formats/webhook.ts";
import { parseNotifierUrl } from "../src/notify/notifier-url.ts";
import type { Notifiers } from "../src/notify/notifiers.ts";
import { sendMessage, type SendTarget } from "../src/notify/send-message.ts";
import { createScrubber } from "../src/logging/redact.ts";
import { captureLog } from "./support/capture-log.ts";
import { startFakeNotifyReceiver, type FakeNotifyReceiver } from "./support/fake-notify-receiver.ts";
import { createManualClock } from "./support/manual-clock.ts";

/**
 * The sender against a receiver that answers as Discord, ntfy and apprise-api do: what each answer comes to, what is
 * said of it (never the URL's secret), and the wiring's notifiers retrying a receiver that failed.
 */
const TOKEN = "Zk3p9QvB7xL2mN8rT4yW6cD1fH5jK0sA-discord-token";

let receiver: FakeNotifyReceiver;
let notifiers: Notifiers | undefined;

beforeEach(async () => {
  receiver = await startFakeNotifyReceiver();
});

afterEach(async () => {
  notifiers?.stop();
  notifiers = undefined;
  await receiver.close();
});

function targetFor(url: string, timeoutMs = 2000): SendTarget {
  const parsed = parseNotifierUrl(url);
  const scrubber = createScrubber(parsed.secrets);
  return {
    url: parsed.sendUrl,
    ...(parsed.authorization ? { authorization: parsed.authorization } : {}),
    shown: parsed.shown,
    timeoutMs,
    scrub: (text) => scrubber.scrub(text),
  };
}

const batch = { notifier: "alerts", events: [{ event: "failed" as const, at: 0, folder: "/data/TV/Show/Season 01", reason: "not found" }], dropped: 0, instance: "i", at: 0 };

async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${String(ms)} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("what an answer comes to", () => {
  it("Discord's 204 is delivered; the token stays in the path sent and out of every word", async () => {
    const url = `${receiver.url}/api/webhooks/1234567890/${TOKEN}`;
    expect(await sendMessage(targetFor(url), formatDiscord(batch))).toEqual({ kind: "sent", status: 204 });
    expect(receiver.messages[0]).toMatchObject({ method: "POST", path: `/api/webhooks/1234567890/${TOKEN}` });
    expect(receiver.messages[0]?.headers["content-type"]).toBe("application/json");
  });

  it("a 5xx is tried again, and the words quote the answer without the URL's path", async () => {
    receiver.answerWith(500);
    const delivery = await sendMessage(targetFor(`${receiver.url}/api/webhooks/1234567890/${TOKEN}`), formatDiscord(batch));
    expect(delivery.kind).toBe("retry");
    const problem = delivery.kind === "retry" ? delivery.problem : "";
    expect(problem).toMatch(/^http:\/\/127\.0\.0\.1:\d+ answered 500 \(cannot deliver to <redacted>\)$/);
    expect(problem).not.toContain(TOKEN);
  });

  it("Discord's 429 waits its retry_after; a deleted webhook's 404 is refused; apprise's 424 is tried again", async () => {
    const url = `${receiver.url}/api/webhooks/1/${TOKEN}`;
    receiver.answerWith(429, { message: "You are being rate limited.", retry_after: 64.57, global: false });
    expect(await sendMessage(targetFor(url), formatDiscord(batch))).toMatchObject({ kind: "retry", waitAtLeastMs: 64_570 });
    receiver.answerWith(404, { message: "Unknown Webhook", code: 10015 });
    expect(await sendMessage(targetFor(url), formatDiscord(batch))).toMatchObject({ kind: "refused", problem: expect.stringContaining("answered 404") });
    receiver.answerWith(424, { error: "One or more notification could not be sent" });
    expect(await sendMessage(targetFor(`${receiver.url}/notify/family`), formatWebhook(batch))).toMatchObject({ kind: "retry" });
  });

  it("a receiver that does not answer is given up on after the timeout, and tried again later", async () => {
    receiver.setDelay(10_000);
    const started = Date.now();
    const delivery = await sendMessage(targetFor(`${receiver.url}/hook`, 300), formatWebhook(batch));
    expect(delivery).toEqual({ kind: "retry", problem: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+: no answer within 0\.3 s$/) });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("user:password in the URL becomes HTTP Basic auth (ntfy's users and tk_ tokens), never part of the address sent", async () => {
    const url = `http://phil:s3cr3t-passw0rd@${receiver.url.slice("http://".length)}/ntfy/alerts`;
    const parsed = parseNotifierUrl(url);
    expect(parsed.shown).toBe(receiver.url);
    expect(parsed.secrets).toContain("s3cr3t-passw0rd");
    expect(await sendMessage(targetFor(url), { headers: { Title: "t" }, body: "hello" })).toEqual({ kind: "sent", status: 200 });
    expect(receiver.messages[0]?.headers.authorization).toBe(`Basic ${Buffer.from("phil:s3cr3t-passw0rd").toString("base64")}`);
    const token = parseNotifierUrl(`https://:tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2@ntfy.example.org/alerts`);
    expect(token.authorization).toBe(`Basic ${Buffer.from(":tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2").toString("base64")}`);
    expect(token.sendUrl).toBe("https://ntfy.example.org/alerts");
  });
});

describe("the service's notifiers (notify/from-config.ts)", () => {
  it("send each type in its format, and try a failed message again after the backoff with the same events", async () => {
    const clock = createManualClock();
    const { log, records } = captureLog();
    const config: Record<string, NotifierConfig> = {
      discord: { TYPE: "discord", URL: `${receiver.url}/api/webhooks/1/${TOKEN}`, EVENTS: ["failed"], BATCH_SECONDS: 0 },
      phone: { TYPE: "ntfy", URL: `${receiver.url}/ntfy/autoscan-alerts`, EVENTS: ["failed"], BATCH_SECONDS: 0 },
      apprise: { TYPE: "apprise", URL: `${receiver.url}/notify/autoscan`, EVENTS: ["failed"], BATCH_SECONDS: 0 },
      hook: { TYPE: "webhook", URL: `${receiver.url}/hook`, EVENTS: ["failed"], BATCH_SECONDS: 0 },
    };
    notifiers = createNotifiersFromConfig({ config: { NOTIFY: config }, clock, log, instance: "nas-1-ab12" });
    receiver.failNext(/^POST \/hook$/, 503, 1);
    notifiers.emit({ event: "failed", at: clock.now(), folder: "/data/TV/Show/Season 01", reason: "not found", id: 7 });
    await clock.advance(0);
    await until(() => receiver.messages.length === 4 && notifiers?.find("hook")?.state().failing !== undefined, "four messages, the webhook's failed");
    const byPath = (pattern: RegExp) => receiver.messages.find((message) => pattern.test(message.path));
    expect(byPath(/^\/api\/webhooks\//)?.json).toMatchObject({ content: "**autoscan: a folder failed**\nFailed: /data/TV/Show/Season 01 — not found" });
    expect(byPath(/^\/ntfy\//)).toMatchObject({ body: "Failed: /data/TV/Show/Season 01 — not found", headers: expect.objectContaining({ title: "autoscan: a folder failed" }) });
    expect(byPath(/^\/notify\//)?.json).toEqual({ title: "autoscan: a folder failed", body: "Failed: /data/TV/Show/Season 01 — not found", type: "failure", format: "text" });
    expect(notifiers.find("hook")?.state()).toMatchObject({ waiting: 1, failing: { attempts: 1, problem: expect.stringContaining("answered 503") } });
    await clock.advance(36_000);
    await until(() => receiver.messages.filter((message) => message.path === "/hook").length === 2, "the webhook tried again");
    const hooks = receiver.messages.filter((message) => message.path === "/hook");
    expect((hooks[1]?.json as { items: { id: number }[] }).items.map((item) => item.id)).toEqual([7]);
    await until(() => notifiers?.find("hook")?.state().failing === undefined, "the webhook delivers again");
    expect(JSON.stringify(records)).not.toContain(TOKEN);
  });
});
