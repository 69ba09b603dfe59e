import { connect } from 'node:tls';
import type { RawTarget } from './raw-tls.js';

/**
 * One HTTP/2 request written frame by frame, for what node:http2 refuses to send (a control
 * byte in a header value): the client preface, an empty SETTINGS, then one HEADERS frame whose
 * HPACK block holds every field as a literal without Huffman coding. Returns the answer's
 * :status, or the frame type that ended the stream instead (RST_STREAM, GOAWAY).
 */
export function h2Raw(
  target: RawTarget,
  fields: [string, string][],
): Promise<{ status: number } | { reset: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: '127.0.0.1',
      port: target.port,
      ca: target.ca,
      servername: target.servername,
      ALPNProtocols: ['h2'],
    });
    let done = false;
    const finish = (answer: { status: number } | { reset: string }) => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve(answer);
    };
    socket.on('error', (err) => (done ? undefined : reject(err)));
    socket.setTimeout(10_000, () => finish({ reset: 'timeout' }));
    socket.on('secureConnect', () => {
      if (socket.alpnProtocol !== 'h2') {
        reject(new Error(`no h2 (ALPN ${socket.alpnProtocol})`));
        return;
      }
      const block = Buffer.concat(fields.map(([name, value]) => literal(name, value)));
      socket.write(
        Buffer.concat([
          Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'),
          frame(SETTINGS, 0, 0, Buffer.alloc(0)),
          frame(HEADERS, END_STREAM | END_HEADERS, 1, block),
        ]),
      );
    });
    let buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      while (buffer.length >= 9) {
        const length = buffer.readUIntBE(0, 3);
        if (buffer.length < 9 + length) return;
        const type = buffer[3]!;
        const flags = buffer[4]!;
        const payload = buffer.subarray(9, 9 + length);
        buffer = buffer.subarray(9 + length);
        if (type === SETTINGS && (flags & ACK) === 0)
          socket.write(frame(SETTINGS, ACK, 0, Buffer.alloc(0)));
        else if (type === HEADERS) finish({ status: statusOf(payload) });
        else if (type === RST_STREAM) finish({ reset: 'RST_STREAM' });
        else if (type === GOAWAY) finish({ reset: 'GOAWAY' });
      }
    });
  });
}

const HEADERS = 0x1;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const GOAWAY = 0x7;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const ACK = 0x1;

function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/** HPACK's literal header field without indexing, new name, no Huffman (RFC 7541 6.2.2). */
function literal(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0]), text(name), text(value)]);
}

function text(value: string): Buffer {
  const bytes = Buffer.from(value, 'latin1');
  if (bytes.length > 126) throw new Error('h2Raw: fields up to 126 bytes');
  return Buffer.concat([Buffer.from([bytes.length]), bytes]);
}

// HPACK's static table entries for :status (RFC 7541 appendix A).
const STATIC_STATUS: Record<number, number> = {
  8: 200,
  9: 204,
  10: 206,
  11: 304,
  12: 400,
  13: 404,
  14: 500,
};

/**
 * The :status of a response's header block: nginx sends it first, either as a static table
 * entry or as a literal with :status's name index and three raw digits.
 */
function statusOf(block: Buffer): number {
  const first = block[0]!;
  if (first & 0x80) return STATIC_STATUS[first & 0x7f] ?? -1;
  if ((first & 0xc0) === 0x40 && (first & 0x3f) === 8 && block[1] === 3) {
    return Number(block.toString('latin1', 2, 5));
  }
  return -1;
}
