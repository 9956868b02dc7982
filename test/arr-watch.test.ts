import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_PASS, startConsoleService, type ConsoleService } from "./support/console-service.ts";
import { startFakeArr, type FakeArr } from "./support/fake-arr.ts";
import { startFakeNotifyReceiver, type FakeNotifyReceiver } from "./support/fake-notify-receiver.ts";
import { runCli } from "./support/run-cli.ts";

/**
 * The server watches each ARR app's connection to autoscan (at start, then every SERVER_BACKFILL_INTERVAL): a Sonarr
 * with no connection to autoscan is said once as a WARNING with the fix, raises `arr_disconnected` for the notifiers,
 * and is shown on the Queue page until it sends again: an accepted webhook from it, `autoscan arr connect` (which asks
 * the running server to look at once), or the next look. A Sonarr that sends with some events unticked (often on
 * purpose) is a quieter note, not a disconnection. The real service, fake Sonarrs (their notification and health
 * APIs; they send their Test event to the connection's URL, as the apps do), a fake receiver of the webhook notifier.
 */
describe("an *arr app that does not send to autoscan", () => {
  let sonarr: FakeArr;
  let picky: FakeArr;
  let receiver: FakeNotifyReceiver;
  let service: ConsoleService;
  const queuePage = async (): Promise<string> => (await fetch(`${service.url}/${CONSOLE_PASS}/queue`)).text();
  const BANNER = "does not send its imports to autoscan</h2>";
  const askCheck = async (app: string): Promise<{ success: boolean; apps: { app: string; state: string; cleared: boolean }[] }> =>
    (await (await fetch(`${service.url}/api/${CONSOLE_PASS}?cmd=arr_check&app=${app}`, { method: "POST" })).json()) as never;

  beforeAll(async () => {
    [sonarr, picky] = await Promise.all([startFakeArr({ type: "sonarr" }), startFakeArr({ type: "sonarr" })]);
    // Sends imports and upgrades, not renames or deletes: the user's choice.
    picky.addNotification({ url: `http://autoscan:3467/${CONSOLE_PASS}/sonarr-picky`, events: { onDownload: true, onUpgrade: true } });
    receiver = await startFakeNotifyReceiver();
    service = await startConsoleService({
      ARR: {
        sonarr: { TYPE: "sonarr", URL: sonarr.url, API_KEY: sonarr.apiKey, TIMEOUT: 5, BACKFILL: false },
        "sonarr-picky": { TYPE: "sonarr", URL: picky.url, API_KEY: picky.apiKey, TIMEOUT: 5, BACKFILL: false },
      },
      NOTIFY: { hook: { TYPE: "webhook", URL: `${receiver.url}/hooks/autoscan`, BATCH_SECONDS: 0 } },
    });
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    await receiver?.close();
    await sonarr?.close();
    await picky?.close();
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

  it("an app that sends with some events unticked is a quiet note: an INFO line and a muted line on the Queue page, no banner, no notification", async () => {
    await expect.poll(queuePage, { timeout: 15_000 }).toContain("<b>sonarr-picky</b> sends to autoscan, with some events unticked");
    const page = await queuePage();
    expect(page).toContain("does not tick On Rename, On Series Delete, On Episode File Delete, On Episode File Delete For Upgrade");
    expect(page).toContain("If that is not on purpose: <code>autoscan arr connect --app sonarr-picky</code>");
    // The banner names sonarr alone.
    expect(page.match(/<li><b>([^<]+)<\/b>/g)).toEqual(["<li><b>sonarr</b>"]);
    const lines = service.child.stdout().split("\n").filter((line) => line.includes("sonarr-picky"));
    expect(lines.filter((line) => line.includes("sends to autoscan, with some events unticked"))).toEqual([expect.stringContaining(" - INFO - ARR ")]);
    // Warned and notified in one step: no WARNING line means no arr_disconnected either.
    expect(lines.filter((line) => line.includes("does not send its imports"))).toEqual([]);
    expect(receiver.messages.map((message) => JSON.stringify(message.json))).not.toContainEqual(expect.stringContaining("sonarr-picky"));
  });

  it("an accepted webhook from the app ends the warning at once (no look at the app needed)", async () => {
    expect(await queuePage()).toContain(BANNER);
    const answer = await service.webhook("sonarr", { eventType: "Download", series: { path: "/tv/Watched" }, episodeFile: { relativePath: "Season 01/e1.mkv" } });
    expect(answer.status).toBe(200);
    await expect.poll(queuePage, { timeout: 5_000, interval: 100 }).not.toContain(BANNER);
    expect(service.child.stdout()).toContain("sonarr sends to autoscan again: a webhook from it arrived.");
  });

  it("`autoscan arr connect` fixing it ends the warning at once: the running server looks again, the banner is gone within 5 s", async () => {
    // Flagged again: the app still has no connection (the webhook came from elsewhere, say).
    expect(await askCheck("sonarr")).toMatchObject({ success: true, apps: [{ app: "sonarr", state: "missing", cleared: false }] });
    expect(await queuePage()).toContain(BANNER);
    const fixed = await runCli(["arr", "connect", "--config", join(service.dir, "config.json"), "--app", "sonarr", "--url", service.url]);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(fixed.stdout).toContain("sonarr: created 'autoscan' (id 1)");
    expect(fixed.stderr).toContain("sonarr: the running autoscan sees it sending again; its warning is cleared.");
    await expect.poll(queuePage, { timeout: 5_000, interval: 100 }).not.toContain(BANNER);
    expect(service.child.stdout()).toContain("sonarr sends to autoscan again.");
  });

  it("arr_check names an app it does not know", async () => {
    expect(await askCheck("nope")).toEqual({ success: false, msg: "No app 'nope' under ARR" });
  });
});
