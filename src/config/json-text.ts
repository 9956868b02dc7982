import { ConfigError } from "../core/errors.ts";

/** JSON.parse with the line and column of a syntax error, so a user can find the stray comma. */
export function parseJsonText(raw: string, file: string): unknown {
  const text = raw.replace(/^\uFEFF/, "");
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const offset = errorOffset(message, text);
    const where = offset === undefined ? undefined : lineAndColumn(text, offset);
    const at = where ? ` at line ${where.line}, column ${where.column}` : "";
    const detail = message
      .replace(/\s*\(line \d+ column \d+\)/, "")
      .replace(/ in JSON at position \d+/, "")
      .replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, "");
    throw new ConfigError(`${file} is not valid JSON${at}: ${detail}`, [
      `${file}${at}: ${detail}. Check for a missing comma, a trailing comma, single quotes, True/False (write true/false), or unquoted text near there.`,
    ]);
  }
}

/**
 * Where V8's message says the error is: `at position N`, or, for messages without a position
 * (`Unexpected token 'T', …"b": True}" is not valid JSON`), the first place the unexpected character stands outside a
 * string literal (inside one it would have been fine).
 */
function errorOffset(message: string, text: string): number | undefined {
  const position = /position (\d+)/.exec(message);
  if (position) return Number(position[1]);
  const token = /Unexpected token '(.)'/.exec(message)?.[1];
  return token === undefined ? undefined : firstOutsideStrings(text, token);
}

function firstOutsideStrings(text: string, char: string): number | undefined {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === char) {
      return i;
    } else if (c === '"') {
      inString = true;
    }
  }
  return undefined;
}

export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return { line, column };
}
