import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuthAnswer, AuthQuestion } from '../../../../sidecar/auth/auth-route.js';
import { acceptAuthFrames } from '../../../../sidecar/frames/frame-listener.js';
import { silentLogger } from '../../../../sidecar/log.js';

/** A request as a stub saw it. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** True for a question that came as an auth frame: from the Lua code, in one hop. */
  frame?: boolean;
}

export type StubHandler = (request: SeenRequest, response: ServerResponse) => void;

/**
 * A stand-in HTTP server (stub sidecar or stub app) written for these tests: it records every
 * request and answers with the current `handler`, which tests swap.
 */
export interface StubServer {
  port: number;
  requests: SeenRequest[];
  /** TCP connections accepted so far: shows whether nginx reuses keep-alive connections. */
  connections: number;
  handler: StubHandler;
  /** Closes every open connection, as a server does to idle keep-alive connections. */
  dropConnections(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a stub on 127.0.0.1, on `port` or any free one. */
export async function startStub(
  handler: StubHandler,
  port = 0,
  { frames = true }: { frames?: boolean } = {},
): Promise<StubServer> {
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const seen: SeenRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      stub.requests.push(seen);
      stub.handler(seen, res);
    });
  });
  // A stub sidecar answers nginx's auth frames as the real one does (frames: false, an older
  // sidecar that speaks HTTP only): the same handler, through a response that records its answer.
  if (frames) {
    acceptAuthFrames(server, (question) => answerFrame(stub, question), silentLogger);
  }
  server.on('connection', (socket) => {
    stub.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const stub: StubServer = {
    port: (server.address() as AddressInfo).port,
    requests: [],
    connections: 0,
    handler,
    dropConnections: async () => {
      const closing = [...sockets].map(
        (socket) => new Promise<void>((resolve) => socket.once('close', () => resolve())),
      );
      for (const socket of sockets) socket.destroy();
      await Promise.all(closing);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return stub;
}

/** Answers JSON with extra headers. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** A frame question run through the stub's HTTP handler, seen as `GET /auth`. */
function answerFrame(stub: StubServer, question: AuthQuestion): Promise<AuthAnswer> {
  return new Promise((resolve) => {
    const seen: SeenRequest = {
      method: 'GET',
      url: '/auth',
      headers: question.headers,
      body: '',
      frame: true,
    };
    stub.requests.push(seen);
    let status = 200;
    let headers: Record<string, string> = {};
    const response = {
      writeHead(code: number, values: Record<string, string | number> = {}) {
        status = code;
        headers = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, String(v)]));
        return response;
      },
      end(body?: string) {
        resolve({ status, headers, body: body ?? '' });
      },
    };
    stub.handler(seen, response as unknown as ServerResponse);
  });
}
