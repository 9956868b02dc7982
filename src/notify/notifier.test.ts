import { afterEach, describe, expect, it } from "vitest";
import type { NotifyEvent, NotifyEventName } from "../core/notify-event.ts";
import { captureLog } from "../../test/support/capture-log.ts";
import { createManualClock, type ManualClock } from "../../test/support/manual-clock.ts";
import type { Batch } from "./batch.ts";
import { createNotifier, type Notifier, type NotifierOptions } from "./notifier.ts";
import type { Delivery } from "./send-message.ts";

/**
 * One notifier's batching and backoff, on a manual clock. `send` is the seam the wiring fills with a formatter and the
 * HTTP sender; here it records each batch and answers what the test says (test/notify-send.test.ts has the real one).
 */
let clock: ManualClock;
let notifier: Notifier | undefined;

afterEach(() => notifier?.stop());

interface Recorder {
  readonly batches: Batch[];
  answer: (batch: Batch) => Delivery | Promise<Delivery>;
}

function start(options: Partial<NotifierOptions> = {}, events: readonly NotifyEventName[] = ["failed", "target_down", "target_up"]) {
  clock = createManualClock();
  const recorder: Recorder = { batches: [], answer: () => ({ kind: "sent", status: 204 }) };
  const { log, records } = captureLog();
  notifier = createNotifier({
    name: "alerts",
    type: "webhook",
    shown: "http://127.0.0.1:9",
    events: new Set(events),
    batchMs: 30_000,
    send: async (batch) => {
      recorder.batches.push(batch);
      return recorder.answer(batch);
    },
    instance: "test-1-0000",
    retryDelayMs: (failures) => Math.min(15 * 60_000, 30_000 * 2 ** (failures - 1)),
    clock,
    log,
    ...options,
  });
  return { recorder, records, notifier };
}

const failed = (i: number): NotifyEvent => ({ event: "failed", at: clock.now(), folder: `/data/TV/Show ${String(i)}`, reason: "not found", id: i });

describe("batching", () => {
  it("sends the events of one window as one message when the window ends", async () => {
    const { recorder, notifier } = start();
    for (let i = 0; i < 20; i++) {
      notifier.emit(failed(i));
      await clock.advance(1000);
    }
    expect(recorder.batches).toHaveLength(0);
    await clock.advance(10_000);
    expect(recorder.batches).toHaveLength(1);
    expect(recorder.batches[0]?.events.map((event) => event.id)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(notifier.state()).toMatchObject({ waiting: 0, lastSentAt: clock.now() });
  });

  it("sends at most one message per window: what arrives after a message waits for the next window", async () => {
    const { recorder, notifier } = start();
    notifier.emit(failed(1));
    await clock.advance(30_000);
    expect(recorder.batches).toHaveLength(1);
    notifier.emit(failed(2));
    await clock.advance(1_000);
    notifier.emit(failed(3));
    await clock.advance(28_000);
    expect(recorder.batches).toHaveLength(1);
    await clock.advance(2_000);
    expect(recorder.batches).toHaveLength(2);
    expect(recorder.batches[1]?.events.map((event) => event.id)).toEqual([2, 3]);
  });

  it("with BATCH_SECONDS 0 sends at once; what arrives while a message is on its way goes in the next", async () => {
    const { recorder, notifier } = start({ batchMs: 0 });
    let release: (() => void) | undefined;
    recorder.answer = () => new Promise<Delivery>((resolve) => (release = () => resolve({ kind: "sent", status: 200 })));
    notifier.emit(failed(1));
    await clock.advance(0);
    expect(recorder.batches).toHaveLength(1);
    notifier.emit(failed(2));
    notifier.emit(failed(3));
    await clock.advance(0);
    expect(recorder.batches).toHaveLength(1);
    recorder.answer = () => ({ kind: "sent", status: 200 });
    release?.();
    await clock.advance(0);
    expect(recorder.batches.map((batch) => batch.events.map((event) => event.id))).toEqual([[1], [2, 3]]);
  });

  it("keeps only the events it was configured for", async () => {
    const { recorder, notifier } = start({}, ["target_down"]);
    notifier.emit(failed(1));
    notifier.emit({ event: "target_down", at: clock.now(), target: "plex", reason: "refused" });
    await clock.advance(30_000);
    expect(recorder.batches.map((batch) => batch.events.map((event) => event.event))).toEqual([["target_down"]]);
  });

  it("returns from emit at once, whatever the receiver does", async () => {
    const { recorder, notifier } = start({ batchMs: 0 });
    recorder.answer = () => new Promise<Delivery>(() => {});
    const started = performance.now();
    for (let i = 0; i < 10_000; i++) notifier.emit(failed(i));
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe("a notifier that cannot deliver", () => {
  it("is tried again with backoff (30 s, then 60 s …), keeping the events, and says so once", async () => {
    const { recorder, records, notifier } = start({ batchMs: 1000 });
    recorder.answer = () => ({ kind: "retry", problem: "http://127.0.0.1:9 answered 500 (boom)" });
    notifier.emit(failed(1));
    await clock.advance(1000);
    expect(recorder.batches).toHaveLength(1);
    expect(notifier.state().failing).toMatchObject({ attempts: 1, problem: "http://127.0.0.1:9 answered 500 (boom)" });
    notifier.emit(failed(2));
    await clock.advance(29_000);
    expect(recorder.batches).toHaveLength(1);
    await clock.advance(1_000);
    expect(recorder.batches).toHaveLength(2);
    expect(recorder.batches[1]?.events.map((event) => event.id)).toEqual([1, 2]);
    await clock.advance(59_000);
    expect(recorder.batches).toHaveLength(2);
    recorder.answer = () => ({ kind: "sent", status: 200 });
    await clock.advance(1_000);
    expect(recorder.batches).toHaveLength(3);
    expect(recorder.batches[2]?.events.map((event) => event.id)).toEqual([1, 2]);
    expect(notifier.state().failing).toBeUndefined();
    const warnings = records.filter((record) => record.level === 40).map((record) => record.msg);
    expect(warnings).toEqual([expect.stringContaining("Notifier 'alerts' (webhook at http://127.0.0.1:9) could not deliver")]);
    expect(records.some((record) => record.level === 30 && record.msg.includes("delivers again (after 2 failed attempt(s))"))).toBe(true);
  });

  it("waits at least the receiver's retry_after", async () => {
    const { recorder, notifier } = start({ batchMs: 0 });
    recorder.answer = () => ({ kind: "retry", problem: "429", waitAtLeastMs: 120_000 });
    notifier.emit(failed(1));
    await clock.advance(0);
    recorder.answer = () => ({ kind: "sent", status: 204 });
    await clock.advance(119_000);
    expect(recorder.batches).toHaveLength(1);
    await clock.advance(1_000);
    expect(recorder.batches).toHaveLength(2);
  });

  it("drops a message the receiver refused, says it as an error, and waits before the next", async () => {
    const { recorder, records, notifier } = start({ batchMs: 0 });
    recorder.answer = () => ({ kind: "refused", problem: "http://127.0.0.1:9 answered 404 (Unknown Webhook)" });
    notifier.emit(failed(1));
    await clock.advance(0);
    expect(notifier.state()).toMatchObject({ waiting: 0, failing: { attempts: 1 } });
    expect(records.find((record) => record.level === 50)?.msg).toContain("refused a message of 1 event(s), which is dropped");
    recorder.answer = () => ({ kind: "sent", status: 204 });
    notifier.emit(failed(2));
    await clock.advance(29_000);
    expect(recorder.batches).toHaveLength(1);
    await clock.advance(1_000);
    expect(recorder.batches.map((batch) => batch.events.map((event) => event.id))).toEqual([[1], [2]]);
  });

  it("keeps at most maxPending events, the newest, and the next message says how many were left out", async () => {
    const { recorder, notifier } = start({ batchMs: 0, maxPending: 10 });
    recorder.answer = () => ({ kind: "retry", problem: "down" });
    notifier.emit(failed(0));
    await clock.advance(0);
    for (let i = 1; i <= 46; i++) notifier.emit(failed(i));
    expect(notifier.state()).toMatchObject({ waiting: 10, dropped: 37 });
    recorder.answer = () => ({ kind: "sent", status: 200 });
    await clock.advance(30_000);
    const last = recorder.batches.at(-1);
    expect(last?.events.map((event) => event.id)).toEqual([37, 38, 39, 40, 41, 42, 43, 44, 45, 46]);
    expect(last?.dropped).toBe(37);
  });
});

describe("stop", () => {
  it("sends nothing more and says what was not sent", async () => {
    const { recorder, records, notifier } = start();
    notifier.emit(failed(1));
    notifier.stop();
    await clock.advance(60_000);
    expect(recorder.batches).toHaveLength(0);
    expect(records.some((record) => record.msg === "1 notification event(s) for 'alerts' were not sent: autoscan is stopping.")).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe("withdrawing events not sent yet", () => {
  const disconnected = (app: string): NotifyEvent => ({ event: "arr_disconnected", at: clock.now(), app, reason: "no connection" });

  it("takes back the events it picks before their window ends; the rest go as one message; an empty window sends nothing", async () => {
    const { recorder, notifier } = start({}, ["failed", "arr_disconnected"]);
    notifier.emit(disconnected("sonarr"));
    notifier.emit(disconnected("radarr"));
    notifier.emit(failed(1));
    await clock.advance(10_000);
    expect(notifier.withdraw((event) => event.event === "arr_disconnected" && event.app === "sonarr")).toBe(1);
    await clock.advance(20_000);
    expect(recorder.batches.map((batch) => batch.events.map((event) => event.app ?? event.id))).toEqual([["radarr", 1]]);

    notifier.emit(disconnected("sonarr"));
    expect(notifier.withdraw((event) => event.app === "sonarr")).toBe(1);
    expect(notifier.state().waiting).toBe(0);
    await clock.advance(120_000);
    expect(recorder.batches).toHaveLength(1);
    expect(notifier.withdraw(() => true)).toBe(0);
  });
});
