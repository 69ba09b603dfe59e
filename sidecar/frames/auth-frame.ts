import type { IncomingHttpHeaders } from 'node:http';
import { FRAME_MARKER, FRAME_QUESTION_HEADER } from '../../common/contract.js';
import type { AuthAnswer, AuthQuestion } from '../auth/auth-route.js';

/**
 * The auth frame: how nginx's Lua code asks `/auth` on the sidecar's own socket, one hop,
 * without an HTTP exchange on either side (docs/decisions/20261125-auth-frames.md). Text, GWA1
 * being FRAME_MARKER (common/contract.ts):
 *
 *   question:  "GWA1\n" then "Name: value\n" per header, then "\n"
 *   answer:    "GWA1 <status> <header bytes> <body bytes>\n", the header lines, the body
 *
 * The header lines are those of the HTTP answer (names lower-case), so Lua reads one line and
 * one block of known length instead of an HTTP response line by line. Questions may follow one
 * another without waiting (20261127-shared-sidecar-connection.md): an unnumbered one is
 * answered after those before it, a numbered one (`X-Gateway-Question: <n>`) as soon as it is
 * decided, with `x-gateway-question: <n>` first among its answer's header lines.
 */
export const FRAME_MAGIC = `${FRAME_MARKER}\n`;

/** As much as `/auth` accepts over HTTP (maxHeaderSize): a large but valid question passes. */
export const MAX_QUESTION_BYTES = 64 * 1024;

const END = Buffer.from('\n\n');

export type ParsedQuestion =
  | { kind: 'question'; question: AuthQuestion; rest: Buffer }
  | { kind: 'incomplete' }
  | { kind: 'invalid'; reason: string };

/**
 * One question from the start of `buffer` (which begins with FRAME_MAGIC): its headers as Node
 * would give them (lower-case names, the first of a repeated header), and the bytes after it.
 */
export function parseQuestion(buffer: Buffer): ParsedQuestion {
  if (!couldBeFrame(buffer)) return { kind: 'invalid', reason: 'not an auth frame' };
  if (buffer.length < FRAME_MAGIC.length) return { kind: 'incomplete' };
  const end = buffer.indexOf(END, FRAME_MAGIC.length - 1);
  if (end < 0) {
    return buffer.length > MAX_QUESTION_BYTES
      ? { kind: 'invalid', reason: 'question too large' }
      : { kind: 'incomplete' };
  }
  if (end + END.length > MAX_QUESTION_BYTES) {
    return { kind: 'invalid', reason: 'question too large' };
  }
  // latin1, as Node's HTTP parser reads header values: the same bytes mean the same strings.
  const text = buffer.toString('latin1', FRAME_MAGIC.length, end + 1);
  if (text.includes('\r') || text.includes('\0')) {
    return { kind: 'invalid', reason: 'control character in a header' };
  }
  const headers: IncomingHttpHeaders = {};
  const rawHeaders: string[] = [];
  // Plain index scans, no regular expression per line: this runs on every question.
  for (let at = 0; at < text.length; ) {
    const eol = text.indexOf('\n', at);
    const colon = text.indexOf(':', at);
    if (colon <= at || colon > eol) return { kind: 'invalid', reason: 'malformed header line' };
    const name = text.slice(at, colon);
    const key = lowerName(name);
    if (key === null) return { kind: 'invalid', reason: 'malformed header name' };
    const value = withoutOws(text, colon + 1, eol);
    rawHeaders.push(name, value);
    if (headers[key] === undefined) headers[key] = value;
    at = eol + 1;
  }
  return {
    kind: 'question',
    question: { headers, rawHeaders },
    rest: buffer.subarray(end + END.length),
  };
}

/** text[from, to) without the spaces and tabs around it (HTTP's "OWS"; trim() takes more). */
function withoutOws(text: string, from: number, to: number): string {
  let a = from;
  let b = to;
  while (a < b && (text[a] === ' ' || text[a] === '\t')) a += 1;
  while (b > a && (text[b - 1] === ' ' || text[b - 1] === '\t')) b -= 1;
  return text.slice(a, b);
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Header names seen, lower-cased: nginx sends the same dozen names in every question. */
const names = new Map<string, string>();
const MAX_NAMES = 256;

/** A header name (an HTTP token) lower-cased, or null when it is no token. */
function lowerName(name: string): string | null {
  const known = names.get(name);
  if (known !== undefined) return known;
  if (!TOKEN.test(name)) return null;
  const lower = name.toLowerCase();
  if (names.size < MAX_NAMES) names.set(name, lower);
  return lower;
}

/** Whether `buffer` could still become, or already is, the start of an auth frame. */
export function couldBeFrame(buffer: Buffer): boolean {
  const n = Math.min(buffer.length, FRAME_MAGIC.length);
  return buffer.toString('latin1', 0, n) === FRAME_MAGIC.slice(0, n);
}

/** The answer's line that carries a numbered question's number back (FRAME_QUESTION_HEADER). */
const QUESTION_LINE = `${FRAME_QUESTION_HEADER.toLowerCase()}: `;

/**
 * The bytes of an answer, with the question's number when it had one. A header that could
 * split the frame is a bug upstream of here: it throws (the caller answers 500), as Node's
 * writeHead throws on the same values.
 */
export function formatAnswer(answer: AuthAnswer, questionNumber: string | null = null): Buffer {
  let head = questionNumber === null ? '' : `${QUESTION_LINE}${questionNumber}\n`;
  for (const name in answer.headers) {
    const value = answer.headers[name]!;
    const key = lowerName(name);
    if (key === null || value.includes('\n') || value.includes('\r') || value.includes('\0')) {
      throw new Error(`header ${JSON.stringify(name)} cannot be framed`);
    }
    head += `${key}: ${value}\n`;
  }
  const body = answer.body === '' ? EMPTY : Buffer.from(answer.body, 'utf8');
  const headBytes = Buffer.byteLength(head, 'latin1');
  const first = `${FRAME_MARKER} ${answer.status} ${headBytes} ${body.length}\n`;
  const out = Buffer.allocUnsafe(first.length + headBytes + body.length);
  out.write(first, 0, 'latin1');
  out.write(head, first.length, 'latin1');
  body.copy(out, first.length + headBytes);
  return out;
}

const EMPTY = Buffer.alloc(0);
