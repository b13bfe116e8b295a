import { lstatSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import {
  DnstapDecoder,
  type DecoderCounters,
  type DnstapDecoderOptions,
} from '../../sources/dnstap/dnstap-decoder.ts';
import { loadDnstapSchema } from '../../sources/dnstap/dnstap-schema.ts';
import { ReceiverSession } from '../../sources/dnstap/handshake.ts';
import type {
  MalformedUnit,
  ObservationSink,
  ObservationSource,
  SourceCounters,
} from '../../sources/observation-source.ts';

/**
 * A dnstap receiver: Frame Streams over a Unix socket and/or TCP, any number of senders at once
 * (one decoder, so a query and its response pair across a sender's connections). A connection that
 * breaks the protocol is closed and counted (as malformed, with its reason); a bad frame inside a
 * good connection costs that frame only. When the sink answers false every connection stops being
 * read (back-pressure through the kernel's socket buffers to the sender) until `resume`.
 * Its `counters.forwarded` counts observations handed to the sink; the runner reports what Kafka
 * acknowledged.
 *
 * With `tcp.tls` the TCP listener speaks TLS and requires a client certificate its CA signed: a
 * sender without one, or with another CA's, fails the handshake, is counted in `refused` and
 * reported (`onConnection` event 'refused'), and no byte of it reaches the decoder. A handshake not
 * finished within {@link HANDSHAKE_TIMEOUT_MS} is refused too.
 */
export interface DnstapListen {
  readonly unix?: string;
  readonly tcp?: {
    readonly host: string;
    readonly port: number;
    readonly tls?: { cert: Buffer; key: Buffer; passphrase?: string; ca: Buffer };
  };
}

export interface DnstapSourceOptions extends DnstapDecoderOptions {
  readonly listen: DnstapListen;
  readonly maxFrameBytes?: number;
  /** Called with each connection event worth a log line (opened, closed and why). */
  readonly onConnection?: (event: {
    peer: string;
    event: 'open' | 'close' | 'refused';
    reason?: string;
  }) => void;
}

const EXPIRE_INTERVAL_MS = 1_000;
const HANDSHAKE_TIMEOUT_MS = 10_000;

export class DnstapSource implements ObservationSource {
  readonly kind = 'dnstap';
  readonly counters: SourceCounters = { received: 0, forwarded: 0, dropped: 0, malformed: 0, ignored: 0 };
  readonly #decoder: DnstapDecoder;
  readonly #servers: Server[] = [];
  readonly #sockets = new Set<Socket>();
  /** Every accepted TCP socket, handshakes included, so `stop` can close those too. */
  readonly #raw = new Set<Socket>();
  #paused = false;
  #timer: NodeJS.Timeout | undefined;
  #connections = 0;
  #refused = 0;

  constructor(private readonly o: DnstapSourceOptions) {
    if (o.listen.unix === undefined && o.listen.tcp === undefined)
      throw new Error('dnstap: neither a Unix socket path nor a TCP address to listen on');
    loadDnstapSchema();
    this.#decoder = new DnstapDecoder(o);
  }

  get decoderCounters(): DecoderCounters {
    return this.#decoder.counters;
  }

  /** Connections open now. */
  get connections(): number {
    return this.#connections;
  }

  /** TLS connections refused (no client certificate, an untrusted one, a failed handshake). */
  get refused(): number {
    return this.#refused;
  }

  /** The TCP port actually bound (when `tcp.port` was 0), once started. */
  get tcpPort(): number | undefined {
    for (const s of this.#servers) {
      const a = s.address();
      if (a !== null && typeof a === 'object') return a.port;
    }
    return undefined;
  }

  async start(sink: ObservationSink, onMalformed: (unit: MalformedUnit) => void): Promise<void> {
    const handler = (socket: Socket) => this.#connection(socket, sink, onMalformed);
    const { unix, tcp } = this.o.listen;
    if (unix !== undefined) {
      removeStaleSocket(unix);
      this.#servers.push(await listen(createServer(handler), (s, cb) => s.listen(unix, cb)));
    }
    if (tcp !== undefined) {
      const server = tcp.tls === undefined ? createServer(handler) : this.#tlsServer(tcp.tls, handler);
      server.on('connection', (raw: Socket) => {
        this.#raw.add(raw);
        raw.once('close', () => this.#raw.delete(raw));
      });
      this.#servers.push(await listen(server, (s, cb) => s.listen(tcp.port, tcp.host, cb)));
    }
    this.#timer = setInterval(() => this.#decoder.expire(Date.now()), EXPIRE_INTERVAL_MS);
    this.#timer.unref();
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    for (const s of this.#sockets) s.resume();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    const closed = this.#servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
    for (const s of this.#sockets) s.destroy();
    for (const s of this.#raw) s.destroy();
    await Promise.all(closed);
    this.#servers.length = 0;
    if (this.o.listen.unix !== undefined) rmSync(this.o.listen.unix, { force: true });
  }

  #tlsServer(
    options: NonNullable<NonNullable<DnstapListen['tcp']>['tls']>,
    handler: (s: Socket) => void,
  ): Server {
    const server = createTlsServer(
      {
        ...options,
        requestCert: true,
        rejectUnauthorized: true,
        minVersion: 'TLSv1.2',
        handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
      },
      handler,
    );
    server.on('tlsClientError', (error: Error, socket: TLSSocket) => {
      this.#refused += 1;
      this.o.onConnection?.({ peer: peerOf(socket), event: 'refused', reason: error.message });
      socket.destroy();
    });
    return server;
  }

  #connection(socket: Socket, sink: ObservationSink, onMalformed: (unit: MalformedUnit) => void): void {
    const session = new ReceiverSession(
      this.o.maxFrameBytes === undefined ? {} : { maxDataFrameBytes: this.o.maxFrameBytes },
    );
    const peer = peerOf(socket);
    this.#sockets.add(socket);
    this.#connections += 1;
    this.o.onConnection?.({ peer, event: 'open' });
    if (this.#paused) socket.pause();
    let closeReason: string | undefined;
    socket.on('data', (chunk: Buffer) => {
      const out = session.receive(chunk);
      for (const reply of out.replies) socket.write(reply);
      for (const payload of out.payloads) this.#frame(payload, sink, onMalformed);
      if (out.close === undefined) return;
      closeReason = out.close.reason;
      if (!out.close.clean) {
        this.counters.malformed += 1;
        onMalformed({ reason: `connection from ${peer} closed: ${out.close.reason}` });
      }
      socket.end();
    });
    socket.on('error', (e) => {
      closeReason ??= e.message;
    });
    socket.on('close', () => {
      this.#sockets.delete(socket);
      this.#connections -= 1;
      this.o.onConnection?.({
        peer,
        event: 'close',
        reason: closeReason ?? 'the sender closed the connection',
      });
    });
  }

  #frame(payload: Buffer, sink: ObservationSink, onMalformed: (unit: MalformedUnit) => void): void {
    this.counters.received += 1;
    const r = this.#decoder.decode(payload, Date.now());
    if (r.kind === 'ignored') {
      this.counters.ignored += 1;
      return;
    }
    if (r.kind === 'malformed') {
      this.counters.malformed += 1;
      onMalformed(r.unit);
      return;
    }
    this.counters.forwarded += 1;
    if (!sink(r.observation) && !this.#paused) {
      this.#paused = true;
      for (const s of this.#sockets) s.pause();
    }
  }
}

/** `address:port` of a TCP peer, with its certificate's CN over TLS; `unix` for a Unix socket. */
function peerOf(socket: Socket): string {
  if (socket.remoteAddress === undefined) return 'unix';
  const address = `${socket.remoteAddress}:${socket.remotePort}`;
  if (!('getPeerCertificate' in socket)) return address;
  const cn = (socket as TLSSocket).getPeerCertificate().subject?.CN;
  return typeof cn === 'string' ? `${address} (CN=${cn})` : address;
}

/** A socket file left by a sensor that died is replaced; any other file at the path is an error. */
function removeStaleSocket(path: string): void {
  try {
    if (!lstatSync(path).isSocket()) throw new Error(`dnstap: ${path} exists and is not a socket`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  rmSync(path);
}

function listen(server: Server, bind: (s: Server, cb: () => void) => void): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    bind(server, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
