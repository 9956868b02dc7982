import type { ScanContext, ScanOutcome, Target } from "../../src/core/target.ts";

/**
 * A media server stand-in for dispatcher tests: records every scan, answers with what the test scripted (a value,
 * a thrown error, or a promise the test settles later), and reports availability as the test sets it.
 */
export interface FakeTargetCall {
  readonly folder: string;
  readonly context: ScanContext;
}

export type FakeResponse = (folder: string, context: ScanContext) => ScanOutcome | Promise<ScanOutcome>;

export interface FakeTarget extends Target {
  readonly calls: FakeTargetCall[];
  /** What the next scans answer (default: scanned). */
  respond: FakeResponse;
  available: boolean;
  probes: number;
  folders(): string[];
}

export function createFakeTarget(name = "plex", respond: FakeResponse = () => ({ status: "scanned" })): FakeTarget {
  const target: FakeTarget = {
    name,
    calls: [],
    respond,
    available: true,
    probes: 0,
    async scan(folder, context) {
      target.calls.push({ folder, context });
      return target.respond(folder, context);
    },
    async isAvailable() {
      target.probes++;
      return target.available;
    },
    folders: () => target.calls.map((call) => call.folder),
  };
  return target;
}

/** A promise with its settle functions outside, for a scan that finishes when the test says so. */
export function deferred<T>(): { promise: Promise<T>; resolve(value: T): void; reject(error: unknown): void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
