import { ConfigError } from "../core/errors.ts";

/** JSON.parse with the line and column of a syntax error, so a user can find the stray comma. */
export function parseJsonText(text: string, file: string): unknown {
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const position = /position (\d+)/.exec(message);
    const where = position ? lineAndColumn(text, Number(position[1])) : undefined;
    const at = where ? ` at line ${where.line}, column ${where.column}` : "";
    const detail = message.replace(/\s*\(line \d+ column \d+\)/, "").replace(/ in JSON at position \d+/, "");
    throw new ConfigError(`${file} is not valid JSON${at}: ${detail}`, [
      `${file}${at}: ${detail}. Check for a missing comma, a trailing comma, or unquoted text near there.`,
    ]);
  }
}

export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return { line, column };
}
