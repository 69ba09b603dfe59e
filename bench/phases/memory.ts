import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROTATE_CREDENTIALS } from '../wrk/lua.js';
import { type Aggregate, aggregate } from './aggregate.js';
import { MEMORY_LOAD, type MeasuredRun, measure, type PhaseContext, targets } from './context.js';

export interface MemoryResult {
  /** Authenticated requests gateway A answered over the whole run when RSS was last sampled. */
  requests: number;
  /** The request count asked for; fewer when the time budget ended the phase first. */
  wanted: number;
  /** Distinct API keys the memory load cycled through. */
  keys: number;
  load: Aggregate | null;
}

/**
 * Load on gateway A until it has authenticated `memoryRequests` requests over the whole run
 * (every earlier phase counts), in segments with an RSS sample of the sidecars after each, so
 * the samples show whether memory grows with requests. The load cycles through every key the
 * run created, not just one, so per-credential state in any cache is exercised. Stops early
 * when the time budget is used up: the figure then says how many requests it covers.
 */
export async function measureMemory(
  ctx: PhaseContext,
  tokens: string[],
  requestsSoFar: () => number,
): Promise<MemoryResult> {
  const wanted = ctx.options.memoryRequests;
  const keysFile = join(ctx.stack.dir, 'memory-keys.txt');
  const all = [ctx.stack.apiKey, ...tokens];
  await writeFile(keysFile, `${all.map((k) => `apk ${k}`).join('\n')}\n`);
  const t = targets(ctx.stack);
  const target = { ...t.apk, name: 'API keys (rotating)' };
  const { Authorization: _, ...headers } = target.headers;
  const runs: MeasuredRun[] = [];
  // About 8 samples over what is left, each segment between the run's wrk duration and 30 s;
  // once the count is reached (the two-segment minimum), segments of the wrk duration.
  const longSegment = Math.max(
    Math.min(ctx.options.seconds, 30),
    Math.min(30, Math.floor(ctx.budget.left() / 8)),
  );
  const segmentNow = () => (requestsSoFar() < wanted ? longSegment : ctx.options.seconds);
  // At least two segments even when earlier phases already reached the count (quick runs):
  // the trend needs samples taken under this load.
  while ((requestsSoFar() < wanted || runs.length < 2) && ctx.budget.left() >= segmentNow() + 2) {
    const run = await measure(ctx, { ...target, headers }, segmentNow(), ROTATE_CREDENTIALS, [
      keysFile,
    ]);
    runs.push(run);
    await ctx.sampleMemory(MEMORY_LOAD);
    const last = ctx.memory.at(-1)!;
    ctx.say(
      `  ${requestsSoFar()} requests: sidecar A ${last.sidecarA?.toFixed(1)} MB (${Math.round(run.rps)} req/s)`,
    );
  }
  return {
    requests: requestsSoFar(),
    wanted,
    keys: all.length,
    load: runs.length > 0 ? aggregate(target.name, runs) : null,
  };
}
