import { describe, expect, it } from "vitest";
import type { NotifyEvent } from "../core/notify-event.ts";
import type { ScanRequest, ScanSink } from "../core/scan.ts";
import { captureLog } from "../../test/support/capture-log.ts";
import { createManualClock } from "../../test/support/manual-clock.ts";
import { failedFolderEvents, notifyFromConfig, reportBackfillFinds, targetChangeEvent } from "./from-config.ts";

/** The service's events as the notifiers get them: from the queue, the dispatcher and the backfill's sink. */
const AT = Date.UTC(2026, 10, 25, 6, 0, 0);

describe("events from the parts that raise them", () => {
  it("a failed folder names the servers that gave it up, when there are any", () => {
    expect(
      failedFolderEvents(
        [
          { id: 4, folder: "/data/TV/A/Season 01", reason: "Not found after 1 file check(s): '…'", targets: [] },
          { id: 5, folder: "/data/TV/B/Season 01", reason: "plex: Plex answered 500; jellyfin: timeout", targets: ["plex", "jellyfin"] },
        ],
        AT,
      ),
    ).toEqual([
      { event: "failed", at: AT, folder: "/data/TV/A/Season 01", reason: "Not found after 1 file check(s): '…'", id: 4 },
      { event: "failed", at: AT, folder: "/data/TV/B/Season 01", target: "plex, jellyfin", reason: "plex: Plex answered 500; jellyfin: timeout", id: 5 },
    ]);
  });

  it("a server going down says why; coming back says for how long it was down", () => {
    expect(targetChangeEvent({ target: "plex", available: false, reason: "connection refused" }, AT)).toEqual({ event: "target_down", at: AT, target: "plex", reason: "connection refused" });
    expect(targetChangeEvent({ target: "plex", available: true, downSince: AT - 12 * 60_000 }, AT)).toEqual({ event: "target_up", at: AT, target: "plex", reason: "down for 12 min" });
    expect(targetChangeEvent({ target: "plex", available: true, downSince: AT - 30_000 }, AT).reason).toBe("down for 30 s");
  });

  it("the backfill's sink tells each folder it queued once", async () => {
    const requests: ScanRequest[] = [
      { path: "/data/TV/A/Season 01/e01.mkv", kind: "file", source: "Sonarr (sonarr)", event: "Download (backfill)" },
      { path: "/data/TV/A/Season 01/e02.mkv", kind: "file", source: "Sonarr (sonarr)", event: "Download (backfill)" },
      { path: "/data/TV/B/e01.mkv", kind: "file", source: "Sonarr (sonarr)", event: "Download (backfill)" },
    ];
    const sink: ScanSink = async () => ({
      items: [
        { id: 1, folder: "/data/TV/A/Season 01", merged: false },
        { id: 1, folder: "/data/TV/A/Season 01", merged: true },
        { id: 2, folder: "/data/TV/B", merged: false },
      ],
    });
    const told: NotifyEvent[] = [];
    const result = await reportBackfillFinds(sink, (event) => told.push(event), { now: () => AT })(requests);
    expect(result.items).toHaveLength(3);
    expect(told).toEqual([
      { event: "backfill_found", at: AT, folder: "/data/TV/A/Season 01", app: "Sonarr (sonarr)", id: 1 },
      { event: "backfill_found", at: AT, folder: "/data/TV/B", app: "Sonarr (sonarr)", id: 2 },
    ]);
  });
});

describe("an app that sends again", () => {
  it("withdraws its arr_disconnected not sent yet, from every notifier, and no other app's", () => {
    const clock = createManualClock();
    const notifier = { TYPE: "webhook" as const, URL: "http://127.0.0.1:9/hook", EVENTS: ["arr_disconnected" as const], BATCH_SECONDS: 30 };
    const notify = notifyFromConfig({ config: { NOTIFY: { a: notifier, b: notifier } }, clock, log: captureLog().log, instance: "test-1-0000" });
    try {
      notify.arrDisconnected("sonarr", "no connection");
      notify.arrDisconnected("radarr", "no connection");
      notify.arrReconnected("sonarr");
      expect(notify.notifiers.states().map((state) => state.waiting)).toEqual([1, 1]);
      notify.arrReconnected("radarr");
      expect(notify.notifiers.states().map((state) => state.waiting)).toEqual([0, 0]);
    } finally {
      notify.stop();
    }
  });
});
