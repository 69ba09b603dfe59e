import { describe, expect, test } from 'vitest';
import { parseNginxSpanBatch } from '../../../sidecar/tracing/nginx-span-record.js';

// nginx's span records as the module's gateway_span_log sends them (common/contract/request.ts):
// `<length>:<record>` back to back, a record's values one space apart, the path last.
const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN = 'b7ad6b7169203331';
const PARENT = '00f067aa0ba902b7';

const record = (fields: Partial<Record<string, string>> = {}) => {
  const f = {
    traceId: TRACE,
    spanId: SPAN,
    parentId: PARENT,
    end: '1764720000.250',
    duration: '0.012',
    method: 'GET',
    status: '200',
    authMethod: 'apk',
    clientId: '7',
    path: '/data',
    ...fields,
  };
  return [
    f.traceId,
    f.spanId,
    f.parentId,
    f.end,
    f.duration,
    f.method,
    f.status,
    f.authMethod,
    f.clientId,
    f.path,
  ].join(' ');
};
const frame = (text: string) => `${Buffer.byteLength(text)}:${text}`;
const batch = (...texts: string[]) => Buffer.from(texts.map(frame).join(''));

describe('a batch of span records', () => {
  test('reads every record of a batch, its fields in the contract order', () => {
    const { records, unreadable } = parseNginxSpanBatch(
      batch(
        record(),
        record({
          spanId: 'c7ad6b7169203331',
          parentId: '',
          authMethod: '',
          clientId: '',
          status: '401',
        }),
      ),
    );
    expect(unreadable).toBe(0);
    expect(records).toEqual([
      {
        traceId: TRACE,
        spanId: SPAN,
        parentId: PARENT,
        startMs: 1764720000238,
        endMs: 1764720000250,
        method: 'GET',
        path: '/data',
        status: 200,
        clientId: '7',
        authMethod: 'apk',
      },
      expect.objectContaining({
        spanId: 'c7ad6b7169203331',
        parentId: undefined,
        clientId: undefined,
        authMethod: undefined,
        status: 401,
      }),
    ]);
  });

  test('a path keeps its spaces and its non-ASCII bytes; a client id is decoded; the path is capped', () => {
    const { records } = parseNginxSpanBatch(
      batch(
        record({ path: '/a b/é c', clientId: 'team%20one' }),
        record({ path: `/${'x'.repeat(5000)}` }),
      ),
    );
    expect(records[0]).toMatchObject({ path: '/a b/é c', clientId: 'team one' });
    expect(records[1]!.path).toHaveLength(2048);
  });

  test('a record that does not read is counted and skipped; the ones beside it are read', () => {
    const bad = [
      record({ traceId: '0'.repeat(32) }),
      record({ spanId: 'XYZ' }),
      record({ parentId: 'short' }),
      record({ end: '17647' }),
      record({ duration: '-1.000' }),
      record({ method: 'get' }),
      record({ status: '2000' }),
      record({ status: '099' }),
      `${TRACE} ${SPAN}`,
    ];
    const { records, unreadable } = parseNginxSpanBatch(batch(record(), ...bad, record()));
    expect(records).toHaveLength(2);
    expect(unreadable).toBe(bad.length);
  });

  test('a frame that does not read ends the datagram, counted once: a cut batch, or not nginx', () => {
    const whole = batch(record(), record());
    const cut = whole.subarray(0, whole.length - 5);
    expect(parseNginxSpanBatch(cut)).toMatchObject({ unreadable: 1 });
    expect(parseNginxSpanBatch(cut).records).toHaveLength(1);
    for (const stray of [
      '<14>Dec  3 gateway_span: {"t":"x"}',
      'hello',
      '0:',
      '9999999:x',
      ':abc',
      '12',
    ]) {
      expect(parseNginxSpanBatch(Buffer.from(stray))).toEqual({ records: [], unreadable: 1 });
    }
    expect(parseNginxSpanBatch(Buffer.alloc(0))).toEqual({ records: [], unreadable: 0 });
  });

  test('lengths count bytes, not characters', () => {
    const text = record({ path: '/é/ü' });
    expect(Buffer.byteLength(text)).toBeGreaterThan(text.length);
    expect(parseNginxSpanBatch(batch(text, record())).records).toHaveLength(2);
  });
});
