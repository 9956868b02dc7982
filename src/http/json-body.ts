/** An answer's body as JSON, or `undefined` when it is not JSON (a proxy's HTML page, a cut body): the caller decides. */
export function jsonBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
