import { describe, expect, it } from "vitest";
import { createOutputBuffer } from "./output-buffer.ts";

describe("createOutputBuffer", () => {
  it("hands over complete lines as they arrive, across chunk boundaries, CRLF trimmed", () => {
    const lines: string[] = [];
    const buffer = createOutputBuffer({ maxBytes: 1024, onLine: (line) => lines.push(line) });
    buffer.write(Buffer.from("first li"));
    expect(lines).toEqual([]);
    buffer.write(Buffer.from("ne\r\nsecond\n\nthird"));
    expect(lines).toEqual(["first line", "second", ""]);
    buffer.end();
    expect(lines).toEqual(["first line", "second", "", "third"]);
    expect(buffer.text()).toBe("first line\r\nsecond\n\nthird");
    expect(buffer.truncated).toBe(false);
  });

  it("decodes a multi-byte character split between chunks", () => {
    const lines: string[] = [];
    const buffer = createOutputBuffer({ maxBytes: 1024, onLine: (line) => lines.push(line) });
    const bytes = Buffer.from("東京 🎬\n");
    for (const byte of bytes) buffer.write(Buffer.from([byte]));
    buffer.end();
    expect(lines).toEqual(["東京 🎬"]);
  });

  it("keeps only the end of a long output, starting at a whole line", () => {
    const buffer = createOutputBuffer({ maxBytes: 100 });
    for (let i = 0; i < 50; i++) buffer.write(Buffer.from(`line ${String(i).padStart(3, "0")}\n`));
    buffer.end();
    expect(buffer.truncated).toBe(true);
    expect(buffer.totalBytes).toBe(50 * 9);
    const text = buffer.text();
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(100);
    expect(text.endsWith("line 049\n")).toBe(true);
    expect(text.startsWith("line ")).toBe(true);
  });

  it("hands over an endless line in pieces instead of holding it", () => {
    const lines: string[] = [];
    const buffer = createOutputBuffer({ maxBytes: 10, maxLineChars: 8, onLine: (line) => lines.push(line) });
    buffer.write(Buffer.from("a".repeat(20)));
    expect(lines).toEqual(["a".repeat(8), "a".repeat(8)]);
    buffer.end();
    expect(lines.at(-1)).toBe("aaaa");
  });
});
