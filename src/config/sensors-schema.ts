import { z } from 'zod';
import { MESSAGE_TYPES } from '../sources/dnstap/message-types.ts';
import { DEFAULT_LOG_LINE_MAPPING } from '../sources/log-line.ts';
import { isLoopback } from './endpoint-access.ts';
import { listenerTlsSchema } from './listener-tls.ts';
import { logLineMappingSchema } from './log-line-mapping-schema.ts';
import { addProblem, asRecord } from './refinements.ts';
import { componentName, intBetween, nonEmptyString, positiveInt, positiveNumber } from './value-schemas.ts';

/**
 * `pipeline.sensors`: processes that turn a live DNS source (a resolver's dnstap stream, ...) into
 * the pipeline's log lines on the logserver's input topic `<logserver_in>-<protocol>`. `hamstring up`
 * runs every entry; `hamstring sensor <kind>` runs one from the command line. A new kind adds its
 * own entry schema to `sensorSchema`'s union (discriminated by `kind`).
 */

const HOST_PORT_EXPECTED = 'host:port or a port (e.g. "127.0.0.1:6000"; a port alone binds 127.0.0.1)';
const HOST_PORT = /^(?:(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):)?(\d{1,5})$/;

/** The address a listener given only a port binds: this machine alone can reach it. */
export const DEFAULT_LISTEN_HOST = '127.0.0.1';

/** `host:port` (IPv6 in brackets) or a bare port (on {@link DEFAULT_LISTEN_HOST}) as `{ host, port }`. */
export const hostPort = () =>
  z
    .preprocess(
      (v) => (typeof v === 'number' ? String(v) : v),
      z.string({ error: HOST_PORT_EXPECTED }).regex(HOST_PORT, { error: HOST_PORT_EXPECTED }),
    )
    .transform((text) => {
      const m = HOST_PORT.exec(text);
      const host = (m?.[1] ?? DEFAULT_LISTEN_HOST).replace(/^\[|\]$/g, '');
      return { host, port: Number(m?.[2]) };
    })
    .refine((hp) => hp.port >= 1 && hp.port <= 65535, { error: HOST_PORT_EXPECTED });

/** Between the socket and Kafka: see docs/sources.md ("dnstap", "What the sensor guarantees"). */
const bufferSchema = z.strictObject({
  /** Lines held before the sensor stops reading its sockets. */
  capacity: positiveInt(10_000_000).default(50_000),
  /** How long the sockets may stay unread while the buffer is full before lines are dropped (counted). */
  max_pause_seconds: z.number({ error: 'number >= 0' }).min(0, { error: 'number >= 0' }).default(2),
});

const common = {
  name: componentName(),
  /** The logserver input topic's protocol suffix; default the first collector's `protocol_base`. */
  protocol: componentName().optional(),
  log_line: logLineMappingSchema.default(DEFAULT_LOG_LINE_MAPPING),
  buffer: bufferSchema.prefault({}),
  /** Serves `/metrics` (Prometheus) on 127.0.0.1; unset: no metrics endpoint. */
  metrics_port: intBetween(0, 65535).optional(),
  /** Seconds between the counters' log lines. */
  log_interval_seconds: positiveNumber().default(30),
};

const dnstapSensorSchema = z
  .strictObject({
    ...common,
    kind: z.literal('dnstap'),
    dnstap: z.strictObject({
      /** A Unix socket path the resolver connects to (created by the sensor; a stale file is replaced). */
      unix: nonEmptyString().optional(),
      /** `host:port` (or a port, on 127.0.0.1) to listen on for dnstap over TCP. */
      tcp: hostPort().optional(),
      /** Mutual TLS on `tcp`: only senders with a certificate signed by `client_ca_file` are read. */
      tls: listenerTlsSchema.optional(),
      /** Accept plaintext, unauthenticated dnstap on a non-loopback `tcp` address (a trusted network only). */
      plaintext_remote: z.boolean({ error: 'true or false' }).default(false),
      /** Message types that give a log line; a response is paired with its query when the query type is not listed. */
      observe: z
        .array(z.enum(MESSAGE_TYPES, { error: MESSAGE_TYPES.join(', ') }))
        .min(1, { error: 'at least one dnstap message type' })
        .default(['CLIENT_RESPONSE']),
      pairing: z
        .strictObject({
          capacity: positiveInt(10_000_000).default(100_000),
          timeout_seconds: positiveNumber().default(10),
        })
        .prefault({}),
      max_frame_bytes: intBetween(1024, 16 * 1024 * 1024).default(256 * 1024),
    }),
  })
  .superRefine((s, ctx) => {
    // Runs despite other problems in the entry (zod reports them all): read defensively.
    const d = asRecord(s.dnstap) ?? {};
    if (d.unix === undefined && d.tcp === undefined)
      addProblem(ctx, ['dnstap', 'unix'], 'a socket path, or dnstap.tcp (host:port)', undefined);
    if (d.tls !== undefined && d.tcp === undefined)
      addProblem(
        ctx,
        ['dnstap', 'tcp'],
        'host:port for the TLS listener (dnstap.tls applies to TCP)',
        undefined,
      );
    const tcp = asRecord(d.tcp);
    // dnstap itself is neither authenticated nor encrypted: reachable from elsewhere, it needs TLS.
    if (
      typeof tcp?.host === 'string' &&
      !isLoopback(tcp.host) &&
      d.tls === undefined &&
      d.plaintext_remote !== true
    )
      addProblem(
        ctx,
        ['dnstap', 'tls'],
        'a tls section (certificate_file, key_file, client_ca_file) when dnstap.tcp binds a non-loopback address (or plaintext_remote: true on a trusted network)',
        undefined,
        `dnstap.tcp is ${tcp.host}:${String(tcp.port)}`,
      );
  });

const pcapSensorSchema = z
  .strictObject({
    ...common,
    kind: z.literal('pcap'),
    pcap: z.strictObject({
      /** A network interface to capture on (dumpcap, which needs the capture capability). */
      interface: nonEmptyString().optional(),
      /** A classic pcap file (or a named pipe) to read once. */
      file: nonEmptyString().optional(),
      /** Bytes kept of each packet; a DNS message cut by it is counted malformed. */
      snap_length: intBetween(64, 262_144).default(65_535),
    }),
  })
  .superRefine((s, ctx) => {
    if ((s.pcap.interface === undefined) === (s.pcap.file === undefined))
      addProblem(ctx, ['pcap', 'interface'], 'exactly one of pcap.interface and pcap.file', s.pcap.interface);
  });

export const sensorSchema = z.discriminatedUnion('kind', [dnstapSensorSchema, pcapSensorSchema], {
  error: 'sensor with kind "dnstap" or "pcap"',
});

export const sensorsSchema = z
  .array(sensorSchema)
  .default([])
  .superRefine((sensors, ctx) => {
    const seen = new Set<string>();
    sensors.forEach((s, index) => {
      const name = asRecord(s)?.name;
      if (typeof name !== 'string') return;
      if (seen.has(name)) addProblem(ctx, [index, 'name'], 'unique name', name, `"${name}" is already used`);
      seen.add(name);
    });
  });

export type SensorConfig = z.output<typeof sensorSchema>;
export type DnstapSensorConfig = z.output<typeof dnstapSensorSchema>;
export type PcapSensorConfig = z.output<typeof pcapSensorSchema>;
