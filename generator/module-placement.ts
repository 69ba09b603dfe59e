import { NGINX_MODULE } from '../common/contract.js';

/**
 * Where default.conf may say `gateway_hit on;` (docs/decisions/20261125-hit-in-c.md): only in
 * the generated `location /` of a server, and only while that location has no `access_by_lua*`
 * of its own. The module answers a plain hit before the location's Lua access code runs, so
 * anywhere else (a location an operator added, or Lua an operator added to `location /`) it
 * would skip that code without a word. `gateway-config check` and every start refuse it.
 */
export function moduleDirectiveProblems(text: string, file: string): string[] {
  const problems: string[] = [];
  const directive = NGINX_MODULE.directive;
  // The open blocks, outermost first: `server`, `location /`...
  const stack: Block[] = [];
  const uses: { block: Block | null; line: number }[] = [];
  for (const statement of statements(text)) {
    if (statement.kind === 'open') {
      const block: Block = {
        name: statement.words[0] ?? '',
        args: statement.words.slice(1),
        parent: stack.at(-1) ?? null,
        accessLua: [],
      };
      stack.push(block);
    } else if (statement.kind === 'close') {
      stack.pop();
    } else {
      const [name, ...args] = statement.words;
      const block = stack.at(-1) ?? null;
      if (name === directive && args[0] === 'on') uses.push({ block, line: statement.line });
      if (block && name?.startsWith('access_by_lua')) block.accessLua.push(name);
    }
  }
  for (const { block, line } of uses) {
    const where = `${file}:${line}`;
    const isRootLocation =
      block !== null &&
      block.name === 'location' &&
      block.args.length === 1 &&
      block.args[0] === '/' &&
      block.parent?.name === 'server' &&
      block.parent.parent === null;
    if (!isRootLocation) {
      problems.push(
        `${where}: \`${directive} on;\` belongs only in a server's generated \`location /\`: ` +
          'elsewhere the nginx module would pass requests without the Lua access code that ' +
          `location runs. Remove the line (every location is authenticated by Lua without it).`,
      );
    } else if (block.accessLua.length > 0) {
      problems.push(
        `${where}: \`location /\` has ${block.accessLua.map((d) => `\`${d}\``).join(', ')} of ` +
          `its own and \`${directive} on;\`: the nginx module would pass a seen key's requests ` +
          'without running it. Remove one of them (without the module line every request runs ' +
          'that Lua code, at 15-20 µs of nginx CPU more per hit).',
      );
    }
  }
  return problems;
}

interface Block {
  name: string;
  args: string[];
  parent: Block | null;
  /** The `access_by_lua*` directives directly in it. */
  accessLua: string[];
}

type Statement =
  | { kind: 'directive'; words: string[]; line: number }
  | { kind: 'open'; words: string[]; line: number }
  | { kind: 'close'; line: number };

/**
 * nginx's configuration as statements: directives ending in `;`, blocks opening with `{` and
 * closing with `}`. Comments (`#` to the end of the line) and quoted words ('' and "", with
 * backslash escapes) as nginx reads them; a `*_by_lua_block`'s body is Lua, skipped whole
 * (its braces balanced outside Lua strings and comments).
 */
function* statements(text: string): Generator<Statement> {
  let i = 0;
  let line = 1;
  let words: string[] = [];
  let startLine = 1;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === '\n') {
      line += 1;
      i += 1;
    } else if (c === ' ' || c === '\t' || c === '\r') {
      i += 1;
    } else if (c === '#') {
      while (i < n && text[i] !== '\n') i += 1;
    } else if (c === ';') {
      yield { kind: 'directive', words, line: startLine };
      words = [];
      i += 1;
    } else if (c === '{') {
      const name = words[0] ?? '';
      i += 1;
      if (name.endsWith('_by_lua_block')) {
        const end = luaBlockEnd(text, i);
        for (let k = i; k < end; k += 1) if (text[k] === '\n') line += 1;
        i = end + 1;
        yield { kind: 'directive', words, line: startLine };
      } else {
        yield { kind: 'open', words, line: startLine };
      }
      words = [];
    } else if (c === '}') {
      yield { kind: 'close', line };
      words = [];
      i += 1;
    } else {
      if (words.length === 0) startLine = line;
      let word = '';
      if (c === '"' || c === "'") {
        i += 1;
        while (i < n && text[i] !== c) {
          if (text[i] === '\\' && i + 1 < n) i += 1;
          if (text[i] === '\n') line += 1;
          word += text[i];
          i += 1;
        }
        i += 1;
      } else {
        while (i < n && !/[\s;{}#]/.test(text[i]!)) {
          word += text[i];
          i += 1;
        }
      }
      words.push(word);
    }
  }
}

/** The index of the `}` that closes a Lua block whose body starts at `i`. */
function luaBlockEnd(text: string, start: number): number {
  let depth = 1;
  let i = start;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '-' && text[i + 1] === '-') {
      while (i < text.length && text[i] !== '\n') i += 1;
    } else if (c === '"' || c === "'") {
      i += 1;
      while (i < text.length && text[i] !== c) i += text[i] === '\\' ? 2 : 1;
      i += 1;
    } else if (c === '[' && text[i + 1] === '[') {
      const close = text.indexOf(']]', i + 2);
      i = close < 0 ? text.length : close + 2;
    } else {
      if (c === '{') depth += 1;
      if (c === '}') {
        depth -= 1;
        if (depth === 0) return i;
      }
      i += 1;
    }
  }
  return text.length;
}
