import { relative } from 'node:path';
import {
  BaseSequencer,
  type TestSequencer,
  type TestSpecification,
  type Vitest,
} from 'vitest/node';

/**
 * Vitest's order, except that the given files start first. Without a results cache (a fresh
 * clone, as CI is) vitest runs larger files first, and a file that only hands a stack to a
 * shared suite (test/support/*-suite.ts) is a few lines long and runs for a minute or more:
 * it came last, alone on one worker while the other idled (66 s at the end of CI's main run).
 */
export function suitesFirst(first: string[]): new (ctx: Vitest) => TestSequencer {
  return class SuitesFirst extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const sorted = await super.sort(files);
      const rank = (file: TestSpecification) => {
        const at = first.indexOf(relative(this.ctx.config.root, file.moduleId));
        return at === -1 ? first.length : at;
      };
      // Array.prototype.sort is stable: the others keep vitest's order.
      return sorted.sort((a, b) => rank(a) - rank(b));
    }
  };
}
