import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createDemuxer, type OutputStreamName } from "./demuxer.ts";

function frame(type: number, payload: string | Buffer): Buffer {
  const body = typeof payload === "string" ? Buffer.from(payload) : payload;
  const header = Buffer.alloc(8);
  header.writeUInt8(type, 0);
  header.writeUInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}

function collect() {
  const out: Record<OutputStreamName, Buffer[]> = { stdout: [], stderr: [] };
  const demuxer = createDemuxer((stream, payload) => out[stream].push(Buffer.from(payload)));
  const text = (stream: OutputStreamName) => Buffer.concat(out[stream]).toString("utf8");
  return { demuxer, text };
}

describe("createDemuxer", () => {
  it("splits stdout and stderr frames and sends the daemon's systemerr (type 3) to stderr", () => {
    const { demuxer, text } = collect();
    demuxer.push(Buffer.concat([frame(1, "out 1\n"), frame(2, "err 1\n"), frame(3, "systemerr\n"), frame(1, "out 2\n")]));
    expect(text("stdout")).toBe("out 1\nout 2\n");
    expect(text("stderr")).toBe("err 1\nsystemerr\n");
    expect(demuxer.pendingBytes).toBe(0);
  });

  it("reassembles frames however the stream is chunked", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(1, 2), fc.uint8Array({ maxLength: 40 })), { maxLength: 12 }),
        fc.array(fc.integer({ min: 1, max: 17 }), { minLength: 1, maxLength: 30 }),
        (frames, cuts) => {
          const wire = Buffer.concat(frames.map(([type, body]) => frame(type, Buffer.from(body))));
          const out: Record<OutputStreamName, Buffer[]> = { stdout: [], stderr: [] };
          const demuxer = createDemuxer((stream, payload) => out[stream].push(Buffer.from(payload)));
          let at = 0;
          for (let i = 0; at < wire.length; i++) {
            const size = cuts[i % cuts.length] as number;
            demuxer.push(wire.subarray(at, at + size));
            at += size;
          }
          const want = (type: number) =>
            Buffer.concat(frames.filter(([t]) => t === type).map(([, body]) => Buffer.from(body)));
          expect(Buffer.concat(out.stdout)).toEqual(want(1));
          expect(Buffer.concat(out.stderr)).toEqual(want(2));
          expect(demuxer.pendingBytes).toBe(0);
        },
      ),
    );
  });

  it("keeps an unfinished frame pending instead of misreading it", () => {
    const { demuxer, text } = collect();
    const whole = frame(1, "complete line\n");
    demuxer.push(whole.subarray(0, 10));
    expect(text("stdout")).toBe("");
    expect(demuxer.pendingBytes).toBe(10);
    demuxer.push(whole.subarray(10));
    expect(text("stdout")).toBe("complete line\n");
  });

  it("passes a stream that is not multiplexed (a TTY) through as stdout", () => {
    const { demuxer, text } = collect();
    demuxer.push(Buffer.from("plain text, no frame headers\n"));
    demuxer.push(Buffer.from("more\n"));
    expect(text("stdout")).toBe("plain text, no frame headers\nmore\n");
  });
});
