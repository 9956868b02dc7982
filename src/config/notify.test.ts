import { describe, expect, it } from "vitest";
import { ConfigError } from "../core/errors.ts";
import { parseConfigText } from "./load.ts";

/** `NOTIFY` is checked as strictly as every other key, and a notifier's URL (its secret) is never repeated. */
const PASS = "0123456789abcdef0123";
const TOKEN = "Zk3p9QvB7xL2mN8rT4yW6cD1fH5jK0sA";

function problemsOf(notify: unknown): readonly string[] {
  try {
    parseConfigText(JSON.stringify({ SERVER_PASS: PASS, NOTIFY: notify }), "/srv/autoscan/config.json", {});
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error("the config was accepted");
}

describe("NOTIFY", () => {
  it("takes named notifiers, with all events but backfill_found and a 30 s batch by default", () => {
    const loaded = parseConfigText(
      JSON.stringify({ SERVER_PASS: PASS, NOTIFY: { phone: { TYPE: "NTFY", URL: "https://ntfy.sh/autoscan-x1" }, hook: { TYPE: "webhook", URL: "http://ha:8123/api/webhook/x", EVENTS: ["backfill_found"], BATCH_SECONDS: 0 } } }),
      "/c.json",
      {},
    );
    expect(loaded.config.NOTIFY).toEqual({
      phone: { TYPE: "ntfy", URL: "https://ntfy.sh/autoscan-x1", EVENTS: ["failed", "not_visible", "target_down", "target_up", "arr_disconnected"], BATCH_SECONDS: 30 },
      hook: { TYPE: "webhook", URL: "http://ha:8123/api/webhook/x", EVENTS: ["backfill_found"], BATCH_SECONDS: 0 },
    });
  });

  it("names the nearest key for a typo, and the nearest value for a mistyped type or event (no value under NOTIFY is echoed)", () => {
    expect(problemsOf({ hook: { TYPE: "webhook", URL: "http://ha/x", BATCH_SECOND: 5 } })).toEqual(['Unknown key "BATCH_SECOND" in "NOTIFY.hook" — did you mean "BATCH_SECONDS"?']);
    expect(problemsOf({ hook: { TYPE: "webhok", URL: "http://ha/x", EVENTS: ["target_dwn"] } })).toEqual([
      'NOTIFY.hook.TYPE: expected one of "discord", "ntfy", "apprise", "webhook" (did you mean "webhook"?), found a string (value hidden).',
      'NOTIFY.hook.EVENTS[0]: expected one of "failed", "not_visible", "target_down", "target_up", "arr_disconnected", "backfill_found" (did you mean "target_down"?), found a string (value hidden).',
    ]);
  });

  it("never repeats a URL, even a wrong one: it holds the token", () => {
    const problems = problemsOf({
      discord: { TYPE: "discord", URL: `https://discord.com/channels/123/${TOKEN}` },
      phone: { TYPE: "ntfy", URL: `ntfy.sh/${TOKEN}` },
      relay: { TYPE: "apprise", URL: `http://apprise:8000/add/${TOKEN}` },
    });
    expect(problems).toEqual([
      "NOTIFY.discord.URL: a discord URL is the channel's webhook URL (Server Settings → Integrations → Webhooks → Copy Webhook URL): https://discord.com/api/webhooks/<id>/<token>.",
      "NOTIFY.phone.URL: expected a URL such as https://ntfy.sh/<topic>, found a string (value hidden).",
      "NOTIFY.phone.URL: expected an http:// or https:// URL, found a string (value hidden).",
      "NOTIFY.relay.URL: an apprise URL is apprise-api's notify address: http://apprise:8000/notify/<KEY> (or /notify with APPRISE_STATELESS_URLS).",
    ]);
    expect(problems.join("\n")).not.toContain(TOKEN);
    expect(problemsOf([{ TYPE: "ntfy", URL: `https://ntfy.sh/${TOKEN}` }]).join("\n")).not.toContain(TOKEN);
  });

  it("wants at least one event and a batch window of 0 to 3600 seconds", () => {
    expect(problemsOf({ hook: { TYPE: "webhook", URL: "http://ha/x", EVENTS: [], BATCH_SECONDS: -1 } })).toEqual([
      "NOTIFY.hook.EVENTS: expected at least one event (or leave EVENTS out for the default ones), found a list (value hidden).",
      "NOTIFY.hook.BATCH_SECONDS: expected a number of at least 0, found a number (value hidden).",
    ]);
  });
});
