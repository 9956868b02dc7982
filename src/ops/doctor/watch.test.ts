import { describe, expect, it } from "vitest";
import { judgeWatchers, type WatcherFacts } from "./watch.ts";

const watchers: WatcherFacts[] = [
  {
    name: "remote",
    mode: "events",
    paths: [{ path: "/mnt/remote/TV", entry: "directory", mount: { mountPoint: "/mnt/remote", type: "fuse.rclone", eventLess: true } }],
  },
  { name: "local", mode: "events", paths: [{ path: "/data/TV", entry: "directory", mount: { mountPoint: "/", type: "ext4", eventLess: false } }], folders: 20_001 },
];

describe("doctor's watch checks", () => {
  it("tells to poll a FUSE path and to raise the inotify limit, with the number needed", () => {
    const results = judgeWatchers(watchers, 8192, undefined);
    expect(results.find((r) => r.id === "watch.remote.0")).toMatchObject({
      status: "warn",
      detail: expect.stringContaining("on fuse.rclone ('/mnt/remote'), a filesystem that sends none for files written elsewhere"),
      fix: 'Set WATCH.remote.MODE to "poll" (a walk every POLL_SECONDS).',
    });
    expect(results.find((r) => r.id === "watch.local.inotify")).toMatchObject({
      status: "warn",
      fix: expect.stringMatching(/^On the host: sysctl fs\.inotify\.max_user_watches=65536 /),
    });
    expect(results.find((r) => r.id === "watch.local.0")?.status).toBe("ok");
  });

  it("reads the running server's waiting or stopped watchers", () => {
    const troubled = [{ name: "local", state: "waiting", waitingFor: "/mnt/nas" }, { name: "remote", state: "stopped", problem: "boom" }];
    const results = judgeWatchers(watchers, 8192, troubled);
    expect(results.find((r) => r.id === "watch.local.server")).toMatchObject({ status: "warn", detail: "The running server's watcher waits: '/mnt/nas' does not answer." });
    expect(results.find((r) => r.id === "watch.remote.server")).toMatchObject({ status: "error", detail: "The running server's watcher stopped: boom." });
  });

  it("names the key of a path that is not there", () => {
    const results = judgeWatchers([{ name: "tv", mode: "poll", paths: [{ path: "/nope", entry: "missing" }] }], 8192, undefined);
    expect(results).toMatchObject([{ id: "watch.tv.0", status: "error", fix: expect.stringContaining("Set WATCH.tv.PATHS[0] to the folder as autoscan sees it") }]);
  });
});
