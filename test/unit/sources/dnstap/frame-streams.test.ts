import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CONTROL,
  DNSTAP_CONTENT_TYPE,
  encodeControl,
  encodeData,
  FrameDecoder,
} from '../../../../src/sources/dnstap/frame-streams.ts';
import { ReceiverSession } from '../../../../src/sources/dnstap/handshake.ts';

const stream = (...parts: Buffer[]): Buffer => Buffer.concat(parts);

test('frames split at every byte boundary decode to the same frames', () => {
  const bytes = stream(
    encodeControl(CONTROL.START, [DNSTAP_CONTENT_TYPE]),
    encodeData(Buffer.from('one')),
    encodeData(Buffer.from('second frame')),
    encodeControl(CONTROL.STOP),
  );
  for (let split = 0; split <= bytes.length; split += 1) {
    const d = new FrameDecoder();
    const events = [...d.push(bytes.subarray(0, split)), ...d.push(bytes.subarray(split))];
    assert.deepEqual(
      events.map((e) =>
        e.kind === 'data' ? e.payload.toString() : e.kind === 'control' ? e.type : e.reason,
      ),
      [CONTROL.START, 'one', 'second frame', CONTROL.STOP],
      `split at ${split}`,
    );
  }
  const byteByByte = new FrameDecoder();
  const events = [...bytes].flatMap((b) => byteByByte.push(Buffer.from([b])));
  assert.equal(events.length, 4);
  assert.equal(byteByByte.buffered, 0);
});

test('a control frame carries its content types', () => {
  const [event] = new FrameDecoder().push(encodeControl(CONTROL.READY, ['a', DNSTAP_CONTENT_TYPE]));
  assert.deepEqual(event, { kind: 'control', type: CONTROL.READY, contentTypes: ['a', DNSTAP_CONTENT_TYPE] });
});

test('hostile lengths end the stream with a reason instead of buffering or throwing', () => {
  const huge = Buffer.alloc(4);
  huge.writeUInt32BE(0xffffffff);
  assert.deepEqual(new FrameDecoder(1024).push(huge), [
    { kind: 'error', reason: 'data frame of 4294967295 bytes exceeds 1024' },
  ]);
  const bigControl = Buffer.alloc(8);
  bigControl.writeUInt32BE(100_000, 4);
  const [e1] = new FrameDecoder().push(bigControl);
  assert.equal(e1?.kind, 'error');
  const tinyControl = Buffer.alloc(8);
  tinyControl.writeUInt32BE(2, 4);
  assert.equal(new FrameDecoder().push(tinyControl)[0]?.kind, 'error');
  // A field whose length overruns the control frame.
  const overrun = encodeControl(CONTROL.READY, [DNSTAP_CONTENT_TYPE]);
  overrun.writeUInt32BE(9999, 16);
  const d = new FrameDecoder();
  assert.match(String((d.push(overrun)[0] as { reason?: string }).reason), /overruns/);
  assert.deepEqual(d.push(encodeData(Buffer.from('after'))), [], 'nothing more after an error');
});

test('the bidirectional handshake: READY -> ACCEPT, START, data, STOP -> FINISH', () => {
  const s = new ReceiverSession();
  const ready = s.receive(encodeControl(CONTROL.READY, ['other', DNSTAP_CONTENT_TYPE]));
  assert.deepEqual(ready.replies, [encodeControl(CONTROL.ACCEPT, [DNSTAP_CONTENT_TYPE])]);
  const data = s.receive(
    stream(
      encodeControl(CONTROL.START, [DNSTAP_CONTENT_TYPE]),
      encodeData(Buffer.from('x')),
      encodeData(Buffer.from('y')),
    ),
  );
  assert.deepEqual(data.payloads.map(String), ['x', 'y']);
  assert.equal(data.close, undefined);
  const stop = s.receive(encodeControl(CONTROL.STOP));
  assert.deepEqual(stop.replies, [encodeControl(CONTROL.FINISH)]);
  assert.deepEqual(stop.close, { reason: 'STOP', clean: true });
});

test('a unidirectional sender (START first) gets no FINISH', () => {
  const s = new ReceiverSession();
  const out = s.receive(
    stream(
      encodeControl(CONTROL.START, [DNSTAP_CONTENT_TYPE]),
      encodeData(Buffer.from('x')),
      encodeControl(CONTROL.STOP),
    ),
  );
  assert.deepEqual(out.payloads.map(String), ['x']);
  assert.deepEqual(out.replies, []);
  assert.equal(out.close?.clean, true);
});

test('wrong content type, data before START and frames out of order close the connection', () => {
  const wrong = new ReceiverSession().receive(encodeControl(CONTROL.READY, ['protobuf:other']));
  assert.deepEqual(wrong.replies, []);
  assert.match(String(wrong.close?.reason), /offers "protobuf:other"/);
  const early = new ReceiverSession().receive(encodeData(Buffer.from('x')));
  assert.deepEqual(early.payloads, []);
  assert.equal(early.close?.clean, false);
  const s = new ReceiverSession();
  s.receive(encodeControl(CONTROL.START));
  assert.match(
    String(s.receive(encodeControl(CONTROL.READY, [DNSTAP_CONTENT_TYPE])).close?.reason),
    /READY in state started/,
  );
  const unknown = new ReceiverSession().receive(encodeControl(77));
  assert.match(String(unknown.close?.reason), /control 77/);
});
