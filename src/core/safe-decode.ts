/** A percent-encoded part of a URL → its text; one with a malformed escape (`%E0%A4%A`) is kept as it came. */
export function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
