import { StringDecoder } from "node:string_decoder";

/**
 * One output stream of a command: keeps the last `maxBytes` bytes (the end of a scanner's output is where its errors
 * are) and hands every complete line to `onLine` as it arrives, however much output there is in total.
 */
export interface OutputBufferOptions {
  readonly maxBytes: number;
  readonly onLine?: (line: string) => void;
  /** A line longer than this is handed over in pieces (a stream without newlines must not grow without bound). */
  readonly maxLineChars?: number;
}

export interface OutputBuffer {
  write(chunk: Buffer): void;
  /** Flushes the last unterminated line. */
  end(): void;
  /** The kept output, decoded as UTF-8. When truncated it starts at the first whole line kept. */
  text(): string;
  readonly truncated: boolean;
  readonly totalBytes: number;
}

export function createOutputBuffer(options: OutputBufferOptions): OutputBuffer {
  const maxLineChars = options.maxLineChars ?? 64 * 1024;
  // Kept chunks from `head` on (an index, not shift(): a scanner writing 64-byte lines makes ~16k chunks per MiB).
  // Each chunk is copied: a slice would pin the whole socket buffer it came from.
  let chunks: Buffer[] = [];
  let head = 0;
  let kept = 0;
  let total = 0;
  let truncated = false;
  const decoder = new StringDecoder("utf8");
  let partial = "";

  function keep(chunk: Buffer): void {
    chunks.push(Buffer.from(chunk));
    kept += chunk.length;
    while (kept > options.maxBytes && head < chunks.length) {
      const first = chunks[head] as Buffer;
      const excess = kept - options.maxBytes;
      truncated = true;
      if (first.length <= excess) {
        head++;
        kept -= first.length;
      } else {
        chunks[head] = first.subarray(excess);
        kept -= excess;
      }
    }
    if (head > 1024 && head * 2 > chunks.length) {
      chunks = chunks.slice(head);
      head = 0;
    }
  }

  function emitLines(text: string): void {
    if (!options.onLine) return;
    partial += text;
    let newline = partial.indexOf("\n");
    while (newline >= 0) {
      options.onLine(stripCarriageReturn(partial.slice(0, newline)));
      partial = partial.slice(newline + 1);
      newline = partial.indexOf("\n");
    }
    while (partial.length > maxLineChars) {
      options.onLine(partial.slice(0, maxLineChars));
      partial = partial.slice(maxLineChars);
    }
  }

  return {
    write(chunk) {
      total += chunk.length;
      keep(chunk);
      emitLines(decoder.write(chunk));
    },
    end() {
      emitLines(decoder.end());
      if (options.onLine && partial !== "") options.onLine(stripCarriageReturn(partial));
      partial = "";
    },
    text() {
      const text = Buffer.concat(chunks.slice(head)).toString("utf8");
      if (!truncated) return text;
      const newline = text.indexOf("\n");
      return newline >= 0 ? text.slice(newline + 1) : text;
    },
    get truncated() {
      return truncated;
    },
    get totalBytes() {
      return total;
    },
  };
}

function stripCarriageReturn(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}
