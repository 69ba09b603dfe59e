import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { formatAnswer, parseQuestion } from '../../../sidecar/frames/auth-frame.js';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS, createClient } from '../../support/management.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

// The auth frame (sidecar/frames/auth-frame.ts): nginx's Lua code asks /auth in it on the
// sidecar's own socket. The real sidecar, on the same port as its HTTP API.
let sidecar: TestSidecar;
let user: { id: number; token: string };
let port: number;

beforeAll(async () => {
  sidecar = await startTestSidecar(await freshDatabase());
  port = Number(new URL(sidecar.url).port);
  user = await createClient(sidecar.url, sidecar.adminKey, {
    name: 'Zoë frames',
    is_admin: false,
    generate_api_key: true,
  });
});
afterAll(() => sidecar?.close());

interface FrameAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Reads answers off a socket, in order. */
function frameReader(socket: Socket) {
  let buffer = Buffer.alloc(0);
  const waiting: ((a: FrameAnswer) => void)[] = [];
  const ready: FrameAnswer[] = [];
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      const eol = buffer.indexOf('\n');
      if (eol < 0) return;
      const [magic, status, head, body] = buffer.toString('latin1', 0, eol).split(' ');
      expect(magic).toBe('GWA1');
      const total = eol + 1 + Number(head) + Number(body);
      if (buffer.length < total) return;
      const headers: Record<string, string> = {};
      const block = buffer.toString('latin1', eol + 1, eol + 1 + Number(head));
      for (const line of block.split('\n').filter(Boolean)) {
        const colon = line.indexOf(': ');
        headers[line.slice(0, colon)] = line.slice(colon + 2);
      }
      const answer = {
        status: Number(status),
        headers,
        body: buffer.toString('utf8', eol + 1 + Number(head), total),
      };
      buffer = buffer.subarray(total);
      const next = waiting.shift();
      if (next) next(answer);
      else ready.push(answer);
    }
  });
  return (): Promise<FrameAnswer> =>
    new Promise((resolve) => {
      const answer = ready.shift();
      if (answer) resolve(answer);
      else waiting.push(resolve);
    });
}

async function open(): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return socket;
}

const question = (headers: [string, string][]) =>
  `GWA1\n${headers.map(([n, v]) => `${n}: ${v}\n`).join('')}\n`;

describe('/auth in auth frames', () => {
  test('the answers of /auth over HTTP, word for word, several on one connection', async () => {
    const socket = await open();
    const next = frameReader(socket);
    const wrong = `${user.id}.${'x'.repeat(43)}`;
    for (const token of [user.token, wrong, user.token]) {
      socket.write(question([['Authorization', `apk ${token}`]]));
      const framed = await next();
      const overHttp = await http(`${sidecar.url}/auth`, { headers: apk(token) });
      expect(framed.status).toBe(overHttp.status);
      expect(framed.body).toBe(overHttp.text);
      for (const name of ['x-client-id', 'x-client-name', 'x-gateway-key-hash', 'www-authenticate'])
        expect(framed.headers[name]).toBe(overHttp.headers[name]);
    }
    socket.destroy();
  });

  test('a question split into single bytes, and two sent at once, are each answered', async () => {
    const socket = await open();
    const next = frameReader(socket);
    for (const byte of question([['Authorization', `apk ${user.token}`]])) {
      socket.write(byte);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect((await next()).status).toBe(204);
    socket.write(question([]) + question([['Authorization', `apk ${user.token}`]]));
    const [first, second] = [await next(), await next()];
    expect(first.status).toBe(401);
    expect(JSON.parse(first.body).errors[0].code).toBe('MISSING_CREDENTIALS');
    expect(second.status).toBe(204);
    socket.destroy();
  });

  test('pipelined questions are answered in the order asked, though decided out of order', async () => {
    // nginx sends a worker's waiting questions in one write (lua/gateway/sidecar/mux.lua). A
    // question without a credential is decided at once, a key only after the database batch:
    // the answers must still come back in the order of the questions.
    const socket = await open();
    const next = frameReader(socket);
    const wrong = `${user.id}.${'y'.repeat(43)}`;
    const asked: [string, number, string | null][] = [];
    for (let i = 0; i < 30; i += 1) {
      if (i % 3 === 0) asked.push([question([['Authorization', `apk ${user.token}`]]), 204, null]);
      else if (i % 3 === 1) asked.push([question([]), 401, 'MISSING_CREDENTIALS']);
      else asked.push([question([['Authorization', `apk ${wrong}`]]), 401, 'INVALID_API_KEY']);
    }
    socket.write(asked.map(([q]) => q).join(''));
    for (const [, status, code] of asked) {
      const answer = await next();
      expect(answer.status).toBe(status);
      if (code) expect(JSON.parse(answer.body).errors[0].code).toBe(code);
      else expect(answer.headers['x-client-id']).toBe(String(user.id));
    }
    socket.destroy();
  });

  test('numbered questions are answered as soon as decided, each with its number back', async () => {
    // A key waits for the database batch; a question without a credential is decided at once.
    const socket = await open();
    const next = frameReader(socket);
    const key = ['Authorization', `apk ${user.token}`] as [string, string];
    socket.write(
      question([['X-Gateway-Question', '7'], key]) +
        question([['X-Gateway-Question', '8']]) +
        question([key]),
    );
    const first = await next();
    expect(first.headers['x-gateway-question']).toBe('8');
    expect(first.status).toBe(401);
    const second = await next();
    expect(second.headers['x-gateway-question']).toBe('7');
    expect(second.status).toBe(204);
    // An unnumbered question (an older nginx) is answered after every one before it, unnumbered.
    const third = await next();
    expect(third.status).toBe(204);
    expect(third.headers['x-gateway-question']).toBeUndefined();
    socket.destroy();
  });

  test('a malformed frame after pipelined questions: those are answered, then the 400, then the end', async () => {
    const socket = await open();
    const next = frameReader(socket);
    const ended = new Promise((resolve) => socket.once('end', resolve));
    const key = question([['Authorization', `apk ${user.token}`]]);
    socket.write(`${key}${key}GWA1\nno colon here\n\n${key}`);
    expect((await next()).status).toBe(204);
    expect((await next()).status).toBe(204);
    const refused = await next();
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body).errors[0].code).toBe('BAD_REQUEST');
    await ended;
    socket.destroy();
  });

  test('settings travel as headers, as over HTTP: API keys switched off refuse a key', async () => {
    const socket = await open();
    const next = frameReader(socket);
    socket.write(
      question([
        ['X-Gateway-Api-Keys-Enabled', 'false'],
        ['X-Gateway-Oidc-Enabled', 'false'],
        ['Authorization', `apk ${user.token}`],
      ]),
    );
    const answer = await next();
    expect(answer.status).toBe(401);
    expect(answer.headers['x-client-id']).toBeUndefined();
    socket.destroy();
  });

  test('a malformed frame: 400 in the one error shape, then the connection ends', async () => {
    const socket = await open();
    const next = frameReader(socket);
    const ended = new Promise((resolve) => socket.once('end', resolve));
    socket.write('GWA1\nno colon here\n\n');
    const answer = await next();
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).errors[0].code).toBe('BAD_REQUEST');
    await ended;
    socket.destroy();
  });

  test('HTTP on the same socket is untouched, management included', async () => {
    const res = await http(`${sidecar.url}${CLIENTS}`, { headers: apk(sidecar.adminKey) });
    expect(res.status).toBe(200);
    const garbage = await http(`${sidecar.url}/auth`, { headers: apk('abc') });
    expect(garbage.status).toBe(401);
  });
});

describe('the frame format', () => {
  test('header names are read as Node reads them: lower case, the first of a repeat, OWS trimmed', () => {
    const parsed = parseQuestion(
      Buffer.from('GWA1\nX-A: \t one \t\nx-a: two\nAuthorization:apk 1.x\n\nGWA1\n'),
    );
    expect(parsed.kind).toBe('question');
    if (parsed.kind !== 'question') return;
    expect(parsed.question.headers).toEqual({ 'x-a': 'one', authorization: 'apk 1.x' });
    expect(parsed.question.rawHeaders).toEqual([
      'X-A',
      'one',
      'x-a',
      'two',
      'Authorization',
      'apk 1.x',
    ]);
    expect(parsed.rest.toString()).toBe('GWA1\n');
  });

  test.each([
    ['not a frame', 'GET /auth HTTP/1.1\r\n\r\n', 'invalid'],
    ['a carriage return', 'GWA1\nX-A: a\rb\n\n', 'invalid'],
    ['a NUL', 'GWA1\nX-A: a\0b\n\n', 'invalid'],
    ['a space in a name', 'GWA1\nX A: b\n\n', 'invalid'],
    ['no name', 'GWA1\n: b\n\n', 'invalid'],
    ['not yet ended', 'GWA1\nX-A: b\n', 'incomplete'],
    ['the magic cut short', 'GWA', 'incomplete'],
  ])('%s: %s', (_, text, kind) => {
    expect(parseQuestion(Buffer.from(text)).kind).toBe(kind);
  });

  test('a question past 64 KiB is refused, not buffered on', () => {
    const big = `GWA1\nX-A: ${'x'.repeat(70 * 1024)}`;
    expect(parseQuestion(Buffer.from(big)).kind).toBe('invalid');
    expect(parseQuestion(Buffer.from(`${big}\n\n`)).kind).toBe('invalid');
  });

  test('answers: lengths in bytes, names lower case, values that could split a frame refused', () => {
    const bytes = formatAnswer({ status: 401, headers: { 'X-A': 'é' }, body: '{"m":"é"}' });
    expect(bytes.toString('latin1')).toBe(
      `GWA1 401 7 10\nx-a: ${Buffer.from('é', 'latin1').toString('latin1')}\n{"m":"Ã©"}`,
    );
    expect(() => formatAnswer({ status: 204, headers: { 'X-A': 'a\nb' }, body: '' })).toThrow(
      /cannot be framed/,
    );
    expect(() => formatAnswer({ status: 204, headers: { 'X A': 'b' }, body: '' })).toThrow();
  });
});

describe('closing', () => {
  test('a peer that half-closes gets the answer to what it sent, then the connection ends', async () => {
    const socket = await open();
    const next = frameReader(socket);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    // The question and the half close in one go: the sidecar is busy answering when it sees it.
    socket.end(question([['Authorization', `apk ${user.token}`]]));
    expect((await next()).status).toBe(204);
    // Without the sidecar's end the socket stays half-open until its 75 s idle timeout, past
    // this test's own.
    await closed;
  });

  test('close() ends idle frame connections and connections that said nothing', async () => {
    const other = await startTestSidecar(await freshDatabase(), { bootstrap: false });
    const otherPort = Number(new URL(other.url).port);
    const idle = connect(otherPort, '127.0.0.1');
    const silent = connect(otherPort, '127.0.0.1');
    await Promise.all([idle, silent].map((s) => new Promise((r) => s.once('connect', r))));
    const next = frameReader(idle);
    idle.write(question([]));
    expect((await next()).status).toBe(401);
    const closed = Promise.all([idle, silent].map((s) => new Promise((r) => s.once('close', r))));
    await other.close();
    await closed;
  });
});
