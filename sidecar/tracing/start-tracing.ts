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
export async function startTracing(endpoint: string, log: Logger): Promise<RunningTracing> {
  const [{ context, trace }, sdk, { OTLPTraceExporter }, { resourceFromAttributes }, hooks] =
    await Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/exporter-trace-otlp-proto'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/context-async-hooks'),
    ]);
  const contextManager = new hooks.AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  const provider = new sdk.BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'gateway-sidecar' }),
    sampler: new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() }),
    spanProcessors: [new sdk.BatchSpanProcessor(new OTLPTraceExporter({ url: endpoint }))],
  });
  trace.setGlobalTracerProvider(provider);
  log.info('tracing: exporting spans over OTLP/HTTP', { endpoint });
  return {
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}
