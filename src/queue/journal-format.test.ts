import { describe, expect, it } from "vitest";
import { decodeJournal, encodeEntry } from "./journal-format.ts";

const entry = (seq: number) => ({ seq, changes: [{ k: "del" as const, id: seq }] });

describe("journal lines", () => {
  it("round-trips entries", () => {
    const text = encodeEntry(entry(1)) + encodeEntry(entry(2));
    const decoded = decodeJournal(text);
    expect(decoded.entries.map((e) => e.seq)).toEqual([1, 2]);
    expect(decoded).toMatchObject({ damaged: 0, tornTail: false });
  });

  it("drops a torn last line without counting it as damage", () => {
    const full = encodeEntry(entry(1));
    const torn = encodeEntry(entry(2)).slice(0, 20);
    const decoded = decodeJournal(full + torn);
    expect(decoded.entries.map((e) => e.seq)).toEqual([1]);
    expect(decoded).toMatchObject({ damaged: 0, tornTail: true });
  });

  it("skips a line whose checksum does not match and keeps the rest", () => {
    const bad = encodeEntry(entry(2)).replace('"id":2', '"id":9');
    const decoded = decodeJournal(encodeEntry(entry(1)) + bad + encodeEntry(entry(3)));
    expect(decoded.entries.map((e) => e.seq)).toEqual([1, 3]);
    expect(decoded.damaged).toBe(1);
  });

  it("ignores garbage that is not a journal line", () => {
    expect(decodeJournal("hello\n\n").damaged).toBe(1);
  });
});
