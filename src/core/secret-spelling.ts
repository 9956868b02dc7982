/**
 * A pattern that finds `secret` in every spelling a log line or a URL may carry it in, character by character: as it
 * is, as JSON escapes it (a quote, a backslash), or percent-encoded (its UTF-8 bytes, either hex case, encoded again
 * any number of times: `%61`, `%2561`), any mix of these (`9f%2c4E%44…`: whatever a client or a proxy sent), and `+`
 * for a space (a form or query string). A URL reaches a log line in whatever form the client chose; listing the forms
 * we knew of (raw and `encodeURIComponent`) missed the rest. Shared by the logger's scrubber and the web's URL redaction.
 */
export function anySpelling(secret: string): RegExp {
  let source = "";
  for (const char of secret) {
    const forms = new Set([escapeRegExp(char), escapeRegExp(JSON.stringify(char).slice(1, -1))]);
    if (char === " ") forms.add("\\+");
    forms.add([...Buffer.from(char, "utf8")].map((byte) => `%(?:25)*${hexPattern(byte)}`).join(""));
    source += `(?:${[...forms].join("|")})`;
  }
  return new RegExp(source, "g");
}

/** `3[aA]` for 0x3a: the two hex digits, letters in either case. */
function hexPattern(byte: number): string {
  return [...byte.toString(16).padStart(2, "0")].map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit)).join("");
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");
}
