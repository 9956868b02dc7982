/**
 * Splits Docker's multiplexed exec stream (Tty=false) into stdout and stderr. Each frame is an 8-byte header
 * `[type, 0, 0, 0, size uint32 BE]` and `size` bytes of payload; type 1 is stdout, 2 stderr, 3 the daemon's
 * "systemerr" (integrations.md §5.1). We do our own instead of `modem.demuxStream` so that systemerr lands in stderr
 * (5.0.7 passes it to stdout raw) and a frame split across chunks is never misread.
 */
export type OutputStreamName = "stdout" | "stderr";

export interface Demuxer {
  push(chunk: Buffer): void;
  /** Bytes of an unfinished frame left at the end of the stream (0 when the stream ended cleanly). */
  readonly pendingBytes: number;
}

const HEADER = 8;

export function createDemuxer(onPayload: (stream: OutputStreamName, payload: Buffer) => void): Demuxer {
  let buffered: Buffer = Buffer.alloc(0);
  let raw = false;

  function drain(): void {
    while (buffered.length >= HEADER) {
      const type = buffered[0];
      if (type !== 0 && type !== 1 && type !== 2 && type !== 3) {
        // Not a frame header: the stream is not multiplexed (a TTY). Pass everything on as stdout from here.
        raw = true;
        onPayload("stdout", buffered);
        buffered = Buffer.alloc(0);
        return;
      }
      const size = buffered.readUInt32BE(4);
      if (buffered.length < HEADER + size) return;
      const payload = buffered.subarray(HEADER, HEADER + size);
      buffered = buffered.subarray(HEADER + size);
      // Type 0 (stdin) is never sent to us with AttachStdin=false; anything else goes to stderr.
      if (size > 0 && type !== 0) onPayload(type === 1 ? "stdout" : "stderr", payload);
    }
  }

  return {
    push(chunk) {
      if (raw) return onPayload("stdout", chunk);
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      drain();
    },
    get pendingBytes() {
      return buffered.length;
    },
  };
}
