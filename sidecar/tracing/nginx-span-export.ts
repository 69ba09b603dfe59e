import type { ExportResult } from '@opentelemetry/core';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
} from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { Logger } from '../log.js';
import { NginxSpanEncoder } from './nginx-span-otlp.js';
import type { NginxSpanView } from './nginx-span-record.js';

/**
 * Spans sent a request: about 300 KB (a collector's OTLP/HTTP receiver takes 20 MiB by
 * default). The SDK's batch processor sends 512; at sampling 1.0 the request's own cost
 * (client, delegate, the collector's side) was then 0.9 µs a span, at 2,048 about a quarter.
 */
export const BATCH = 2048;
/** A partial batch waits at most this long. */
const FLUSH_MS = 1000;

export interface NginxSpanExport {
  /** Encodes the record now: the view is not valid after the call. */
  add(record: NginxSpanView): void;
  /** Sends what is held, then closes the exporter. */
  shutdown(): Promise<void>;
}

/**
 * nginx's span records to the collector: encoded as they come (NginxSpanEncoder), sent by the
 * SDK's own OTLP/HTTP export delegate (its transport, retries, timeout, concurrency limit and
 * response handling) with that encoder as its serializer. The sidecar's own spans keep the
 * SDK's batch processor and exporter; both go to the same endpoint. Nothing is queued here
 * beyond one batch: a collector that is slow is the delegate's concern (its concurrent-export
 * limit refuses a batch, which is logged and lost, as the SDK's processor loses its own).
 */
export function exportNginxSpans(endpoint: string, log: Logger): NginxSpanExport {
  const exporter = new OTLPExporterBase<Uint8Array>(
    createOtlpHttpExportDelegate(
      convertLegacyHttpOptions({ url: endpoint }, 'TRACES', 'v1/traces', {
        'Content-Type': 'application/x-protobuf',
      }),
      {
        // Encoded already, record by record.
        serializeRequest: (request) => request,
        deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
      },
    ),
  );
  const held = new NginxSpanEncoder();
  let inFlight: Array<Promise<void>> = [];
  let timer: NodeJS.Timeout | undefined;
  const send = () => {
    clearTimeout(timer);
    timer = undefined;
    if (held.count === 0) return;
    const spans = held.count;
    const sent = new Promise<void>((resolve) =>
      exporter.export(held.take(), (result: ExportResult) => {
        // The delegate refused or the collector failed: the batch is lost (as the SDK's).
        if (result.code !== 0)
          log.warn('tracing: nginx spans not exported', {
            spans,
            error: result.error?.message,
          });
        resolve();
      }),
    );
    inFlight.push(sent);
    void sent.then(() => {
      inFlight = inFlight.filter((p) => p !== sent);
    });
  };
  return {
    add(record) {
      held.add(record);
      if (held.count >= BATCH) send();
      else if (timer === undefined) timer = setTimeout(send, FLUSH_MS).unref();
    },
    async shutdown() {
      send();
      await Promise.all(inFlight);
      await exporter.shutdown();
    },
  };
}
