import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { FRAME_QUESTION_HEADER } from '../../common/contract.js';
import type { AuthAnswer, AuthQuestion } from '../auth/auth-route.js';
import { asciiJson, INTERNAL_ERROR_BODY } from '../errors/api-error.js';
import type { Logger } from '../log.js';
import { couldBeFrame, FRAME_MAGIC, formatAnswer, parseQuestion } from './auth-frame.js';

/** Idle frame connections close after this, as HTTP keep-alive ones do (keepAliveTimeout). */
const IDLE_MS = 75_000;

/**
 * Questions of one connection decided at once; more wait in the buffer until answers go out
 * (nginx has at most a worker's waiting requests in flight; this bounds any other peer).
 */
const MAX_PIPELINED = 1024;

interface Slot {
  /** The answer's bytes once decided. */
  bytes: Buffer | null;
  /** The question carried a number: its answer may go before those of earlier questions. */
  numbered: boolean;
}

interface FrameConnection {
  /** Questions read and not yet answered, in the order asked: busy while there are any. */
  slots: Slot[];
  /** The server is closing: end the connection once its questions are answered. */
  closing: boolean;
}

const QUESTION_NUMBER = /^[0-9]{1,10}$/;
const QUESTION_KEY = FRAME_QUESTION_HEADER.toLowerCase();

/** The question's number, when it carries a well-formed one (anything else: unnumbered). */
function questionNumber(question: AuthQuestion): string | null {
  const value = question.headers[QUESTION_KEY];
  return typeof value === 'string' && QUESTION_NUMBER.test(value) ? value : null;
}

/**
 * Lets `server` (the sidecar's node:http server) also answer auth frames on the same socket:
 * each connection's first bytes say which it speaks ("GWA1\n" is no HTTP request line). HTTP
 * connections go to Node's HTTP machinery exactly as before; frame connections to `decide`,
 * without it (auth-frame.ts). Nothing about listening or addresses changes, so every
 * deployment (unix socket, TCP) gets the one hop without a new port or setting.
 *
 * Closing follows Node's HTTP server: `close()` ends idle frame connections at once and busy
 * ones after their answer; `closeAllConnections()` destroys them all.
 */
export function acceptAuthFrames(
  server: Server,
  decide: (question: AuthQuestion) => Promise<AuthAnswer>,
  log: Logger,
  /** Told of each connection that turns out to speak frames (the metrics count them). */
  opened: () => void = () => {},
): void {
  // Node's own 'connection' listener (the HTTP parser's), added when the server was made.
  const http = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const undecided = new Set<Socket>();
  const frames = new Map<Socket, FrameConnection>();

  server.prependListener('connection', (socket: Socket) => {
    undecided.add(socket);
    socket.once('close', () => undecided.delete(socket));
    // A connection that never says anything is closed like an idle keep-alive one.
    socket.setTimeout(IDLE_MS, () => socket.destroy());
    let first: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      first = first.length === 0 ? chunk : Buffer.concat([first, chunk]);
      // Too short to tell, but still a frame's start: wait for more.
      if (first.length < FRAME_MAGIC.length && couldBeFrame(first)) return;
      socket.off('data', onData);
      socket.setTimeout(0);
      undecided.delete(socket);
      if (couldBeFrame(first)) {
        serveFrames(socket, first);
        return;
      }
      // HTTP: hand the connection over with its first bytes put back (as httpolyglot does).
      socket.pause();
      socket.unshift(first);
      for (const listener of http) listener.call(server, socket);
      process.nextTick(() => socket.resume());
    };
    socket.on('data', onData);
  });

  function serveFrames(socket: Socket, first: Buffer): void {
    opened();
    const state: FrameConnection = { slots: [], closing: false };
    frames.set(socket, state);
    socket.once('close', () => frames.delete(socket));
    // A peer that resets mid-answer is not the sidecar's fault: nothing to report.
    socket.on('error', () => socket.destroy());
    socket.setTimeout(IDLE_MS, () => socket.destroy());
    let buffer: Buffer = first;
    // Questions may be pipelined (nginx's Lua code sends all of a worker's waiting questions in
    // one write): each is decided as soon as it has arrived, so they share the client
    // directory's batch. A numbered question (FRAME_QUESTION_HEADER) is answered as soon as it
    // is decided, its number sent back, so a slow decision (a token whose key set is being
    // fetched) holds up no other; an unnumbered one (an older nginx) after every question
    // asked before it. Answers ready together go out in one write, once the microtasks that
    // made them have run (a batch's answers settle together).
    const slots = state.slots;
    let flushQueued = false;
    /** No question after a malformed one is read: its 400 is the connection's last answer. */
    let ending = false;
    const flush = (): void => {
      flushQueued = false;
      if (socket.destroyed) return;
      const out: Buffer[] = [];
      let inOrder = true;
      let kept = 0;
      for (const slot of slots) {
        if (slot.bytes !== null && (inOrder || slot.numbered)) out.push(slot.bytes);
        else {
          inOrder = false;
          slots[kept++] = slot;
        }
      }
      slots.length = kept;
      if (out.length > 0) socket.write(out.length === 1 ? out[0]! : Buffer.concat(out));
      pump();
      if (slots.length === 0 && (ending || state.closing)) socket.end();
    };
    const answered = (slot: Slot, bytes: Buffer): void => {
      slot.bytes = bytes;
      if (flushQueued) return;
      flushQueued = true;
      process.nextTick(flush);
    };
    const pump = (): void => {
      while (!ending && !socket.destroyed && slots.length < MAX_PIPELINED) {
        const parsed = parseQuestion(buffer);
        if (parsed.kind === 'incomplete') return;
        const number = parsed.kind === 'question' ? questionNumber(parsed.question) : null;
        const slot: Slot = { bytes: null, numbered: number !== null };
        slots.push(slot);
        if (parsed.kind === 'invalid') {
          log.warn('refused a malformed auth frame', { reason: parsed.reason });
          const body = asciiJson({
            errors: [{ code: 'BAD_REQUEST', message: 'The request is malformed.' }],
          });
          ending = true;
          buffer = Buffer.alloc(0);
          answered(slot, formatAnswer({ status: 400, headers: {}, body }));
          return;
        }
        buffer = parsed.rest;
        decide(parsed.question)
          .then((answer) => formatAnswer(answer, number))
          .catch((err: unknown) => {
            log.error('unexpected error in /auth', { error: (err as Error).message });
            const body = asciiJson(INTERNAL_ERROR_BODY);
            return formatAnswer({ status: 500, headers: {}, body }, number);
          })
          .then((bytes) => answered(slot, bytes));
      }
    };
    socket.on('data', (chunk: Buffer) => {
      if (ending) return;
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      pump();
    });
    // The peer has sent all it will (a half close): the questions it sent are answered, then
    // the connection ends. Node's HTTP server allows half-open sockets, so without this it
    // stayed open until the idle timeout.
    socket.on('end', () => {
      if (state.slots.length > 0) state.closing = true;
      else socket.end();
    });
    pump();
  }

  // Node's close() calls closeIdleConnections() (Node 19 and later): idle frame connections,
  // and connections that never said anything, are idle too.
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {
    closeIdle();
    for (const socket of undecided) socket.destroy();
    for (const [socket, state] of frames) {
      if (state.slots.length > 0) state.closing = true;
      else socket.destroy();
    }
  };
  const closeAll = server.closeAllConnections.bind(server);
  server.closeAllConnections = () => {
    closeAll();
    for (const socket of undecided) socket.destroy();
    for (const socket of frames.keys()) socket.destroy();
  };
}
