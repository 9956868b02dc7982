/**
 * What can go wrong when autoscan reads an *arr app's history, classified once, where the answer enters (the
 * history client). The names say what the caller does:
 * - `ArrUnavailableError`: the app is stopped, starting up, overloaded or unreachable → keep the cursor, try again
 *   at the next round;
 * - `ArrAuthError`: the app refused the API key → a setting to fix; shown until it is fixed;
 * - `ArrApiError`: the answer is not what an *arr app of a supported version sends (a wrong URL, a proxy's login
 *   page, an API change) → a setting to fix, or a version autoscan does not know.
 * No message ever holds the API key.
 */

/** The app cannot answer now (connection refused or reset, a timeout, any 5xx, 429, or 503 while starting up). */
export class ArrUnavailableError extends Error {
  override name = "ArrUnavailableError";
  /** The HTTP status, when the app answered one. */
  readonly status: number | undefined;
  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}

/** The app answered 401 or 403: the API key is wrong (or missing). */
export class ArrAuthError extends Error {
  override name = "ArrAuthError";
  readonly status: number | undefined;
  constructor(name: string, status?: number) {
    super(`${name} rejected the API key: check ARR.${name}.API_KEY`);
    this.status = status;
  }
}

/** The app answered something an *arr app does not send (404, a redirect, HTML, JSON of another shape). */
export class ArrApiError extends Error {
  override name = "ArrApiError";
  readonly status: number | undefined;
  constructor(name: string, detail: string, status?: number) {
    super(
      `${name} answered in a way autoscan does not understand (is ARR.${name}.URL the app's own, and its version ` +
        `supported?): ${detail}`,
    );
    this.status = status;
  }
}
