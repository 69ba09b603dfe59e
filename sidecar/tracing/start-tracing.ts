import type { Logger } from '../log.js';

/** What a running exporter needs at the end: its last batch sent. */
export interface RunningTracing {
  shutdown(): Promise<void>;
}

/**
 * Registers the OpenTelemetry trace SDK, exporting over OTLP/HTTP (protobuf) to `endpoint`.
 * Imported only here, and only when tracing is on: start-up without it loads none of the SDK.
 * Parent-based with the root sampler off: the sidecar continues nginx's traces (whose sampled
 * flag nginx chose by tracing.sample_ratio) and never starts one.
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
    sampler: new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() }),
    spanProcessors: [processor],
  });
  trace.setGlobalTracerProvider(provider);
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
