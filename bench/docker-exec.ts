/**
 * The Docker exec path against the real engine: round-trip latency of a short exec (create → start → stream to EOF →
 * exit code), and output throughput through our demuxer and line splitter (the fake scanner prints N MB of lines).
 * Also the in-process demuxer + line splitter alone, without Docker. Needs the engine:
 *
 *   eval "$(../shared/tools/docker-sandbox env)"; node bench/docker-exec.ts
 *   BENCH_EXECS=100 BENCH_OUTPUT_MB=64 node bench/docker-exec.ts
 *
 * Without an engine it prints the in-process figures and says why the rest was skipped.
 */
import type Docker from "dockerode";
import { createDemuxer } from "../src/docker/demuxer.ts";
import { createDockerExecutor } from "../src/docker/executor.ts";
import { createOutputBuffer } from "../src/docker/output-buffer.ts";
import { createContainerPool, ensureFakePlexImage, probeEngine } from "../test/support/docker/engine.ts";

const EXECS = Number(process.env.BENCH_EXECS ?? 40);
const OUTPUT_MB = Number(process.env.BENCH_OUTPUT_MB ?? 32);

inProcess();
const engine = await probeEngine();
if (!engine.ok) {
  console.log(`SKIPPED the Docker part: ${engine.reason}`);
} else {
  await withEngine(engine.docker);
}

function inProcess(): void {
  // Big frames (a chatty process writing in blocks) and 64-byte frames (one write per line, as a scanner does).
  for (const [label, lineCount, frames] of [
    ["64 KiB frames", 1024, 4096],
    ["64 B frames", 1, 1 << 20],
  ] as const) {
    const payload = Buffer.from(`${"x".repeat(63)}\n`.repeat(lineCount));
    const header = Buffer.alloc(8);
    header.writeUInt8(1, 0);
    header.writeUInt32BE(payload.length, 4);
    // Socket-sized chunks that cut frames anywhere.
    const wire = Buffer.concat(Array.from({ length: Math.ceil((64 * 1024) / payload.length) }, () => Buffer.concat([header, payload])));
    const rounds = Math.ceil((frames * payload.length) / (64 * 1024));
    let lines = 0;
    const out = createOutputBuffer({ maxBytes: 1024 * 1024, onLine: () => lines++ });
    const demuxer = createDemuxer((_stream, data) => out.write(data));
    const started = performance.now();
    for (let i = 0; i < rounds; i++) {
      demuxer.push(wire.subarray(0, 1000));
      demuxer.push(wire.subarray(1000));
    }
    out.end();
    const seconds = (performance.now() - started) / 1000;
    const mib = (rounds * (wire.length - (wire.length / (payload.length + 8)) * 8)) / 1024 / 1024;
    console.log(
      `demuxer + lines, in process, ${label}: ${(mib / seconds).toFixed(0)} MiB/s, ${(lines / seconds / 1e6).toFixed(2)} M lines/s`,
    );
  }
}

async function withEngine(docker: Docker): Promise<void> {
  const images = await ensureFakePlexImage(docker);
  const pool = createContainerPool(docker, "bench");
  try {
    const container = (await pool.start(images.plain)).name;
    const executor = createDockerExecutor({ docker });
    const times: number[] = [];
    await executor.exec(container, ["true"]);
    for (let i = 0; i < EXECS; i++) {
      const started = performance.now();
      const result = await executor.exec(container, ["true"]);
      if (result.exitCode !== 0) throw new Error(`exit ${result.exitCode}`);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const at = (q: number): string => (times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0).toFixed(1);
    console.log(`exec round trip ("true", ${EXECS} runs): p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${at(1)} ms`);

    const bytes = OUTPUT_MB * 1024 * 1024;
    const runs: [string, string[], Record<string, string>][] = [
      // One write per 64-byte line (the fake scanner): Docker sends a frame per write.
      ["64-byte line writes", ["/usr/lib/plexmediaserver/Plex Media Scanner", "--list"], { FAKE_SCANNER_STDOUT_BYTES: String(bytes) }],
      // Lines written in big blocks: the transport and our demuxer at full speed.
      ["block writes", ["node", "-e", `process.stdout.write(Buffer.from("x".repeat(63) + "\\n").toString().repeat(${bytes / 64}))`], {}],
    ];
    for (const [label, argv, env] of runs) {
      let lines = 0;
      const started = performance.now();
      const result = await executor.exec(container, argv, { env, onLine: () => lines++ });
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `exec output, ${OUTPUT_MB} MiB as ${label}: ${(OUTPUT_MB / seconds).toFixed(0)} MiB/s, ${lines} lines, ` +
          `kept ${(result.stdout.length / 1024).toFixed(0)} KiB (cap 1 MiB), rss ${(process.memoryUsage().rss / 1024 / 1024).toFixed(0)} MiB`,
      );
    }
  } finally {
    await pool.removeAll();
  }
}
