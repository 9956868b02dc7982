/** Why an *arr app's history could not be read: it is down, refuses its key, or answers in a way autoscan cannot use. */
export type AppProblem = "down" | "auth" | "api" | "other";

/** One *arr app's backfill (src/backfill/backfill.ts keeps it), as the console's Queue page shows it. Times in ms. */
export interface BackfillAppStatus {
  readonly name: string;
  /** `standby`: another instance shares the database and reads the history (src/cluster's wrapper says so). */
  readonly state: "waiting" | "ok" | "standby" | AppProblem;
  /** While `standby`: the instance that reads, when known. */
  readonly activeInstance?: string;
  /** The last read that ended (ms), and what it found. */
  readonly lastRead?: { readonly at: number; readonly records: number; readonly queued: number; readonly covered: number };
  /** Why the last read failed, in words (the cursor did not move). */
  readonly problem?: { readonly since: number; readonly message: string };
  readonly cursor?: { readonly date: number; readonly id: number };
}
