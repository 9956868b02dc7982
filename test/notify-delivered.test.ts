import { afterEach, describe, expect, it } from "vitest";
import { formatWebhook } from "../src/notify/formats/webhook.ts";
import { sendMessage } from "../src/notify/send-message.ts";
import { startFakeTricklingReceiver, type FakeTricklingReceiver } from "./support/fake-trickling-receiver.ts";

/**
 * A 2xx is the receiver's word that it took the message: what follows (a body larger than the sender reads, or one
 * that is slow to come) does not undo it. Counting it as not delivered sent the same events again at every retry.
 */
let receiver: FakeTricklingReceiver | undefined;

afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

const batch = { notifier: "hook", events: [{ event: "failed" as const, at: 0, folder: "/data/TV/Show/Season 01", reason: "not found" }], dropped: 0, instance: "i", at: 0 };

function targetAt(url: string, timeoutMs: number) {
  return { url: `${url}/hook`, shown: url, timeoutMs, scrub: (text: string) => text };
}

describe("a notifier's 2xx is delivered whatever its body", () => {
  it("a 200 whose body is over the 256 KB the sender reads is delivered", async () => {
    receiver = await startFakeTricklingReceiver({ kind: "big", status: 200, bytes: 400 * 1024 });
    const delivery = await sendMessage(targetAt(receiver.url, 5_000), formatWebhook(batch));
    expect(delivery).toEqual({ kind: "sent", status: 200 });
    expect(receiver.received).toBe(1);
  });

  it("a 202 whose body never ends is delivered (the timeout is the status's, not the body's)", async () => {
    receiver = await startFakeTricklingReceiver({ kind: "endless", status: 202 });
    const delivery = await sendMessage(targetAt(receiver.url, 1_000), formatWebhook(batch));
    expect(delivery).toEqual({ kind: "sent", status: 202 });
  });

  it("a 500 whose body is too large is still a failure worth retrying, with its status", async () => {
    receiver = await startFakeTricklingReceiver({ kind: "big", status: 500, bytes: 400 * 1024 });
    const delivery = await sendMessage(targetAt(receiver.url, 5_000), formatWebhook(batch));
    expect(delivery.kind).toBe("retry");
    expect(delivery.kind === "retry" && delivery.problem).toContain("answered 500");
  });
});
