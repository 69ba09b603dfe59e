import type { Logger } from '../log.js';
import { isBackgroundSpan, tracingStarted } from './tracer.js';

/** What a running exporter needs at the end: its last batch sent. */
export interface RunningTracing {
  shutdown(): Promise<void>;
}

/**
 * Registers the OpenTelemetry trace SDK, exporting over OTLP/HTTP (protobuf) to `endpoint`.
 * Imported only here, and only when tracing is on: start-up without it loads none of the SDK.
 * Parent-based: the sidecar continues nginx's traces (whose sampled flag nginx chose by
 * tracing.sample_ratio); the only traces it starts are its background work's (BACKGROUND_SPANS).
 */
export async function startTracing(
  endpoint: string,
  log: Logger,
  nginxSpans: { host: string; port: number } | null = null,
): Promise<RunningTracing> {
  const [{ context, trace }, sdk, { OTLPTraceExporter }, { resourceFromAttributes }, hooks, spans] =
    await Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/exporter-trace-otlp-proto'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/context-async-hooks'),
      import('./nginx-spans.js'),
    ]);
  const contextManager = new hooks.AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  const processor = new sdk.BatchSpanProcessor(new OTLPTraceExporter({ url: endpoint }));
  const provider = new sdk.BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'gateway-sidecar' }),
    sampler: new sdk.ParentBasedSampler({
      root: {
        shouldSample: (_context, _traceId, name) => ({
          decision: isBackgroundSpan(name)
            ? sdk.SamplingDecision.RECORD_AND_SAMPLED
            : sdk.SamplingDecision.NOT_RECORD,
        }),
        toString: () => 'GatewayBackgroundSampler',
      },
    }),
    spanProcessors: [processor],
  });
  trace.setGlobalTracerProvider(provider);
  tracingStarted();
  log.info('tracing: exporting spans over OTLP/HTTP', { endpoint });
  // nginx's spans are the gateway's service: a resource of their own, exported in the same batches.
  const socket = nginxSpans
    ? await spans.listenForNginxSpans(
        nginxSpans,
        processor,
        resourceFromAttributes({ 'service.name': 'gateway' }),
        log,
      )
    : null;
  return {
    async shutdown() {
      socket?.close();
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}
