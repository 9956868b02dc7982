import type { Clock } from "../core/clock.ts";

/**
 * Wrong secrets (the URL's `SERVER_PASS`, HTTP Basic credentials) cost a guesser time, and nobody else anything:
 * - each client has `free` wrong answers that go out at once, refilled at one per `intervalMs` (a typo or a
 *   misconfigured app that is fixed never waits);
 * - past them, each wrong answer is held until its turn: one per `intervalMs` per client, however many the client
 *   sends at once (the turns are booked in order, as a debt the refill pays off);
 * - while `maxHeldPerClient` of its wrong answers wait, the client's further requests are not checked at all (429):
 *   checking them would answer the right guess at once and so tell it apart. A right secret is answered at once;
 *   it waits only behind the client's own flood of wrong ones;
 * - memory is bounded: at most `maxClients` clients are followed (one that has paid off its debt is forgotten), the
 *   rest share one account; at most `maxHeld` answers are held in all, beyond that indebted clients get 429.
 * A client is its address; IPv6 addresses by their /64 (one host usually holds a whole /64).
 *
 * The figure: after the first 10, one guess a second per address. An 8-character SERVER_PASS of letters and digits
 * (62^8 ≈ 2.2e14) takes 3.5 million years on average. With countless addresses, at most `maxClients` accounts hold
 * 10 free answers each, and one is forgotten only ~10 s after its last wrong guess: about 2,000 answers a second in
 * all, 1,700 years.
 */
export interface GuessBrake {
  /** Whether a request from `client` may have its secret checked now; when not, answer `tooMany`. */
  admits(client: string): boolean;
  /** A wrong secret from `client`: resolves when its answer may go out (at once while it has free guesses). */
  wrong(client: string): Promise<void>;
  /** Seconds a client that was not admitted should wait (`Retry-After`). */
  readonly retryAfterSeconds: number;
}

export interface GuessBrakeOptions {
  readonly clock: Clock;
  /** Wrong answers a client gets at once before the brake holds them (default 10). */
  readonly free?: number;
  /** One held wrong answer goes out per client per this (default 1 s); a free one is refilled as often. */
  readonly intervalMs?: number;
  readonly maxHeldPerClient?: number;
  readonly maxHeld?: number;
  readonly maxClients?: number;
}

interface Account {
  /** Free wrong answers left at `at`; below 0, the turns already booked. */
  credit: number;
  at: number;
  held: number;
}

/** Untracked clients, once `maxClients` are followed. */
const SHARED = "*";

export function createGuessBrake(options: GuessBrakeOptions): GuessBrake {
  const { clock } = options;
  const free = options.free ?? 10;
  const intervalMs = options.intervalMs ?? 1000;
  const maxHeldPerClient = options.maxHeldPerClient ?? 5;
  const maxHeld = options.maxHeld ?? 500;
  const maxClients = options.maxClients ?? 1024;
  const accounts = new Map<string, Account>();
  let heldTotal = 0;

  /** The account brought up to now (the refill since it was last seen). */
  const current = (key: string): Account | undefined => {
    const account = accounts.get(key);
    if (!account) return undefined;
    const now = clock.now();
    account.credit = Math.min(free, account.credit + (now - account.at) / intervalMs);
    account.at = now;
    return account;
  };
  const settled = (account: Account): boolean => account.held === 0 && account.credit >= free;

  /** The key a client is followed under: its own, or the shared one while the table is full of indebted clients. */
  const keyOf = (client: string): string => {
    const key = clientKey(client);
    if (accounts.has(key) || accounts.size < maxClients) return key;
    for (const [other] of accounts) {
      const account = current(other);
      if (account && settled(account)) accounts.delete(other);
    }
    return accounts.size < maxClients ? key : SHARED;
  };

  return {
    retryAfterSeconds: Math.ceil((maxHeldPerClient * intervalMs) / 1000),
    admits(client) {
      const account = current(keyOf(client));
      if (!account) return true;
      if (account.held >= maxHeldPerClient) return false;
      return account.credit >= 1 || heldTotal < maxHeld;
    },
    async wrong(client) {
      const key = keyOf(client);
      let account = current(key);
      if (!account) {
        account = { credit: free, at: clock.now(), held: 0 };
        accounts.set(key, account);
      }
      account.credit -= 1;
      if (account.credit >= 0) return;
      // This answer's turn: when the refill has paid the debt booked so far, this one included.
      const waitMs = -account.credit * intervalMs;
      account.held += 1;
      heldTotal += 1;
      try {
        await clock.sleep(waitMs);
      } finally {
        account.held -= 1;
        heldTotal -= 1;
        const now = current(key);
        if (now && settled(now)) accounts.delete(key);
      }
    },
  };
}

/** IPv4 as it is; IPv6 by its first four groups (the /64 one host usually holds). */
export function clientKey(address: string): string {
  if (!address.includes(":")) return address;
  const [head = "", tail] = address.toLowerCase().split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, "")).join(":")}::/64`;
}
