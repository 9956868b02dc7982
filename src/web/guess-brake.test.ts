import { describe, expect, it } from "vitest";
import { createManualClock } from "../../test/support/manual-clock.ts";
import { clientKey, createGuessBrake } from "./guess-brake.ts";

/** The brake's rules on a manual clock: when each wrong answer may go out, and who is checked at all. */
function brakeWith(options: { maxClients?: number; maxHeld?: number } = {}) {
  const clock = createManualClock();
  const brake = createGuessBrake({ clock, free: 3, intervalMs: 1000, maxHeldPerClient: 2, ...options });
  /** Books a wrong answer; `out()` says whether it has gone out yet. */
  const wrong = (client: string) => {
    let gone = false;
    void brake.wrong(client).then(() => void (gone = true));
    return { out: () => gone };
  };
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  return { clock, brake, wrong, settle };
}

describe("the guess brake", () => {
  it("answers the first wrong guesses at once, then one a second per client, in order, and checks nothing more while its answers wait", async () => {
    const { clock, brake, wrong, settle } = brakeWith();
    const first = [wrong("10.0.0.9"), wrong("10.0.0.9"), wrong("10.0.0.9")];
    await settle();
    expect(first.map((answer) => answer.out())).toEqual([true, true, true]);
    expect(brake.admits("10.0.0.9")).toBe(true);
    const fourth = wrong("10.0.0.9");
    const fifth = wrong("10.0.0.9");
    // Two answers wait: the client's next request is not even checked.
    expect(brake.admits("10.0.0.9")).toBe(false);
    // Another client is not affected.
    expect(brake.admits("10.0.0.10")).toBe(true);
    await clock.advance(999);
    expect([fourth.out(), fifth.out()]).toEqual([false, false]);
    await clock.advance(1);
    expect([fourth.out(), fifth.out()]).toEqual([true, false]);
    expect(brake.admits("10.0.0.9")).toBe(true);
    await clock.advance(1000);
    expect(fifth.out()).toBe(true);
  });

  it("refills the free guesses over time: a client that stops is forgotten, and starts again with all of them", async () => {
    const { clock, brake, wrong, settle } = brakeWith();
    for (let i = 0; i < 3; i++) wrong("10.0.0.9");
    await clock.advance(3000);
    const again = [wrong("10.0.0.9"), wrong("10.0.0.9"), wrong("10.0.0.9")];
    await settle();
    expect(again.map((answer) => answer.out())).toEqual([true, true, true]);
    expect(brake.admits("10.0.0.9")).toBe(true);
  });

  it("follows at most maxClients clients; the rest share one account, so memory stays bounded", async () => {
    const { brake, wrong } = brakeWith({ maxClients: 2 });
    for (const client of ["10.0.0.1", "10.0.0.2"]) for (let i = 0; i < 5; i++) wrong(client);
    // Two followed clients are in debt: every other one shares the third account.
    for (let i = 0; i < 5; i++) wrong(`10.0.1.${String(i)}`);
    expect(brake.admits("10.0.2.1")).toBe(false);
    expect(brake.admits("10.0.0.1")).toBe(false);
  });

  it("holds at most maxHeld answers in all: past it, an indebted client is not checked", () => {
    const { brake, wrong } = brakeWith({ maxHeld: 1 });
    for (let i = 0; i < 4; i++) wrong("10.0.0.1");
    expect(brake.admits("10.0.0.2")).toBe(true);
    for (let i = 0; i < 3; i++) wrong("10.0.0.2");
    // 10.0.0.2 has used its free guesses; one answer is held (of 10.0.0.1): it is not checked.
    expect(brake.admits("10.0.0.2")).toBe(false);
  });

  it("keys IPv6 clients by their /64", () => {
    expect(clientKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(clientKey("2001:db8:1:2:bbbb:cccc:dddd:eeee")).toBe("2001:db8:1:2::/64");
    expect(clientKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(clientKey("::1")).toBe("0:0:0:0::/64");
    expect(clientKey("192.0.2.7")).toBe("192.0.2.7");
  });
});
