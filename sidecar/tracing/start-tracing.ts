import type { Logger } from '../log.js';
import type { FromNginxSpanWorker, NginxSpanWorkerData } from './nginx-span-thread.js';
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
  // nginx's spans are the gateway's service, in batches of their own to the same endpoint.
  const nginx = nginxSpans ? await receiveNginxSpans(endpoint, nginxSpans, log) : null;
  return {
    async shutdown() {
      await nginx?.shutdown();
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}

/**
 * nginx's span records received and exported on a thread of their own, at the lowest priority
 * (nginx-span-worker.ts): the sidecar's own thread keeps answering nginx's questions, and the
 * records' work never preempts nginx. Resolves once the thread listens; rejects if it cannot.
 */
async function receiveNginxSpans(
  endpoint: string,
  listen: { host: string; port: number },
  log: Logger,
): Promise<RunningTracing> {
  const { Worker } = await import('node:worker_threads');
  const data: NginxSpanWorkerData = { endpoint, listen };
  const worker = new Worker(spanWorkerUrl(), { workerData: data });
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  await new Promise<void>((resolve, reject) => {
    worker.on('message', (message: FromNginxSpanWorker) => {
      if ('log' in message) log[message.log.level](message.log.message, message.log.fields);
      else if ('ready' in message) resolve();
      else if ('failed' in message) reject(new Error(`tracing: ${message.failed}`));
      else done();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      reject(new Error(`tracing: the span thread exited (${code})`));
      done();
    });
  });
  return {
    async shutdown() {
      worker.postMessage('shutdown');
      await finished;
      await worker.terminate();
    },
  };
}

/** The thread's entry: built JavaScript, also when the sidecar runs from its TypeScript (tests). */
function spanWorkerUrl(): URL {
  const here = import.meta.url;
  return here.endsWith('.ts')
    ? new URL('../../dist/sidecar/tracing/nginx-span-worker.js', here)
    : new URL('./nginx-span-worker.js', here);
}
