import type { RequestMetrics } from "../../core/metrics.ts";
import type { ScanSink } from "../../core/scan.ts";

/**
 * A sink that counts each request handed to it under its own source and event, with the answer an HTTP sender would
 * have had: 200 once stored, 503 when the queue refused. For intakes that are not HTTP (the Google Drive monitor).
 */
export function countedSink(sink: ScanSink, metrics: RequestMetrics): ScanSink {
  return async (requests, options) => {
    let status = 503;
    try {
      const result = await sink(requests, options);
      status = 200;
      return result;
    } finally {
      for (const request of requests) metrics.requestReceived(request.source, request.event, status);
    }
  };
}
