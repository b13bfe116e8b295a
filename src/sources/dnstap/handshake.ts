import {
  CONTROL,
  controlName,
  DNSTAP_CONTENT_TYPE,
  encodeControl,
  FrameDecoder,
  type FrameEvent,
} from './frame-streams.ts';

/**
 * The receiving end of one Frame Streams connection. Bidirectional senders (Unbound, BIND, Knot,
 * dnsdist over a socket) send READY with the content types they offer; the receiver answers ACCEPT
 * with the one it takes, the sender sends START, data frames, then STOP, answered with FINISH.
 * Unidirectional senders (a file, `fstrm_capture`-style writers) send START directly; both are taken.
 *
 * The session is pure: bytes in, what to write back, data payloads out, and when to close. It
 * refuses a sender that offers no content type this receiver takes (no ACCEPT: the spec has no
 * refusal frame, so the connection is closed) and ends the connection on a frame out of order.
 */
export interface SessionOutput {
  /** Bytes to write back to the sender, in order. */
  readonly replies: Buffer[];
  /** Data frame payloads, in order. */
  readonly payloads: Buffer[];
  /** Set when the connection should be closed after the replies are written: why. */
  close?: { readonly reason: string; readonly clean: boolean };
}

type State = 'waiting' | 'accepted' | 'started' | 'stopped';

export class ReceiverSession {
  #state: State = 'waiting';
  /** A sender that sent READY expects FINISH after its STOP; a unidirectional one reads nothing. */
  #bidirectional = false;
  readonly #decoder: FrameDecoder;
  readonly #contentType: string;

  constructor(o: { contentType?: string; maxDataFrameBytes?: number } = {}) {
    this.#contentType = o.contentType ?? DNSTAP_CONTENT_TYPE;
    this.#decoder = new FrameDecoder(o.maxDataFrameBytes);
  }

  get state(): State {
    return this.#state;
  }

  /** Bytes buffered that do not yet form a complete frame. */
  get buffered(): number {
    return this.#decoder.buffered;
  }

  receive(bytes: Buffer): SessionOutput {
    const out: SessionOutput = { replies: [], payloads: [] };
    for (const event of this.#decoder.push(bytes)) {
      this.#handle(event, out);
      if (out.close !== undefined) break;
    }
    return out;
  }

  #handle(event: FrameEvent, out: SessionOutput): void {
    if (event.kind === 'error') {
      out.close = { reason: event.reason, clean: false };
      return;
    }
    if (event.kind === 'data') {
      if (this.#state === 'started') out.payloads.push(event.payload);
      else out.close = { reason: `data frame before START (state ${this.#state})`, clean: false };
      return;
    }
    const offered = (): boolean =>
      event.contentTypes.length === 0 || event.contentTypes.includes(this.#contentType);
    switch (event.type) {
      case CONTROL.READY:
        if (this.#state !== 'waiting') return this.#outOfOrder(event.type, out);
        if (!event.contentTypes.includes(this.#contentType)) {
          out.close = {
            reason: `READY offers ${listed(event.contentTypes)}, not ${this.#contentType}`,
            clean: false,
          };
          return;
        }
        out.replies.push(encodeControl(CONTROL.ACCEPT, [this.#contentType]));
        this.#state = 'accepted';
        this.#bidirectional = true;
        return;
      case CONTROL.START:
        if (this.#state !== 'waiting' && this.#state !== 'accepted') return this.#outOfOrder(event.type, out);
        if (!offered()) {
          out.close = {
            reason: `START for ${listed(event.contentTypes)}, not ${this.#contentType}`,
            clean: false,
          };
          return;
        }
        this.#state = 'started';
        return;
      case CONTROL.STOP:
        if (this.#state !== 'started') return this.#outOfOrder(event.type, out);
        if (this.#bidirectional) out.replies.push(encodeControl(CONTROL.FINISH));
        this.#state = 'stopped';
        out.close = { reason: 'STOP', clean: true };
        return;
      default:
        return this.#outOfOrder(event.type, out);
    }
  }

  #outOfOrder(type: number, out: SessionOutput): void {
    out.close = { reason: `${controlName(type)} in state ${this.#state}`, clean: false };
  }
}

const listed = (types: readonly string[]): string =>
  types.length === 0 ? 'no content type' : types.map((t) => JSON.stringify(t)).join(', ');
