import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_PASS, startConsoleService, type ConsoleService } from "./support/console-service.ts";
import { startFakeArr, type FakeArr } from "./support/fake-arr.ts";
import { startFakeNotifyReceiver, type FakeNotifyReceiver } from "./support/fake-notify-receiver.ts";

/**
 * The server watches each ARR app's connection to autoscan (at start, then every SERVER_BACKFILL_INTERVAL): a Sonarr
 * with no connection to autoscan is said once as a WARNING with the fix, raises `arr_disconnected` for the notifiers,
 * and is shown on the Queue page. The real service, the fake Sonarr (its notification and health APIs), a fake
 * receiver of the webhook notifier.
 */
describe("an *arr app that does not send to autoscan", () => {
  let sonarr: FakeArr;
  let receiver: FakeNotifyReceiver;
  let service: ConsoleService;

  beforeAll(async () => {
    sonarr = await startFakeArr({ type: "sonarr" });
    receiver = await startFakeNotifyReceiver();
    service = await startConsoleService({
      ARR: { sonarr: { TYPE: "sonarr", URL: sonarr.url, API_KEY: sonarr.apiKey, TIMEOUT: 5, BACKFILL: false } },
      NOTIFY: { hook: { TYPE: "webhook", URL: `${receiver.url}/hooks/autoscan`, BATCH_SECONDS: 0 } },
    });
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    await receiver?.close();
    await sonarr?.close();
  });

  it("is said once with the fix, notified as arr_disconnected, and shown on the Queue page", async () => {
    await expect.poll(() => receiver.messages.length, { timeout: 15_000 }).toBeGreaterThan(0);
    const document = receiver.messages[0]?.json as { event: string; items: { app?: string; reason?: string }[] };
    expect(document.event).toBe("arr_disconnected");
    expect(document.items[0]).toMatchObject({ app: "sonarr", reason: expect.stringMatching(/no Webhook connection|autoscan/i) });
    const warnings = service.child.stdout().split("\n").filter((line) => line.includes("does not send its imports to autoscan"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("Fix: autoscan arr connect --app sonarr");
    const page = await (await fetch(`${service.url}/${CONSOLE_PASS}/queue`)).text();
    expect(page).toContain("An app does not send its imports to autoscan");
    expect(page).toContain("autoscan arr connect --app sonarr");
    expect(service.child.stdout()).not.toContain(sonarr.apiKey);
  });
});
