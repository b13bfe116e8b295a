import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type {
  MalformedUnit,
  ObservationSink,
  ObservationSource,
  SourceCounters,
} from '../../sources/observation-source.ts';
import { PcapDnsDecoder, type PcapDnsOptions } from '../../sources/pcap/pcap-dns-decoder.ts';
import { PcapStreamReader } from '../../sources/pcap/pcap-reader.ts';

/**
 * DNS from packets: a pcap file, or a live interface captured by Debian's `dumpcap` (Wireshark's
 * capture engine: the BPF filter runs in the kernel, dumpcap only copies packets) writing pcap to
 * a pipe that this process decodes (`src/sources/pcap/`). Decoding is ours, not tshark's: measured
 * faster per packet on one core (docs/sources.md), and a live sensor needs only the capture.
 *
 * Guarantees: a file is read to its end and every DNS message in it becomes an observation or a
 * counted malformed unit. A live capture cannot replay: when the sink answers false, reading the
 * pipe stops until `resume`, dumpcap then blocks and the kernel drops packets once its capture
 * buffer is full; those drops are counted by the kernel and read from dumpcap when it stops
 * (`kernelDropped`). `received` counts packets.
 */
export interface PcapSourceOptions extends Partial<PcapDnsOptions> {
  readonly file?: string;
  readonly interface?: string;
  /** Bytes kept of each packet; a DNS message cut by it is counted malformed. Default 65535. */
  readonly snapLength?: number;
  readonly dumpcap?: string;
}

export class PcapSource implements ObservationSource {
  readonly kind = 'pcap';
  readonly counters: SourceCounters = { received: 0, forwarded: 0, dropped: 0, malformed: 0, ignored: 0 };
  readonly #options: PcapSourceOptions;
  readonly #decoder: PcapDnsDecoder;
  #input: Readable | undefined;
  #capture: ChildProcess | undefined;
  #paused = false;
  #ended: Promise<void> = Promise.resolve();
  #kernelDropped = 0;

  constructor(options: PcapSourceOptions) {
    if ((options.file === undefined) === (options.interface === undefined))
      throw new Error('pcap source: give exactly one of a file and an interface');
    this.#options = options;
    this.#decoder = new PcapDnsDecoder(options);
  }

  /** Counters of the decoder and the capture for the metrics endpoint. */
  get extra(): Readonly<Record<string, number>> {
    return { ...this.#decoder.counters, pending: this.#decoder.pending, kernelDropped: this.#kernelDropped };
  }

  async start(sink: ObservationSink, onMalformed: (unit: MalformedUnit) => void): Promise<void> {
    const reader = new PcapStreamReader();
    const input = this.#open();
    this.#input = input;
    const forward = (observation: Parameters<ObservationSink>[0]) => {
      this.counters.forwarded += 1;
      if (!sink(observation) && !this.#paused) {
        this.#paused = true;
        input.pause();
      }
    };
    input.on('data', (chunk: Buffer) => {
      for (const packet of reader.push(chunk)) {
        this.counters.received += 1;
        const out = this.#decoder.packet(packet);
        if (out.observations.length === 0 && out.malformed.length === 0) this.counters.ignored += 1;
        for (const unit of out.malformed) {
          this.counters.malformed += 1;
          onMalformed(unit);
        }
        out.observations.forEach(forward);
      }
      if (reader.error !== undefined) {
        this.counters.malformed += 1;
        onMalformed({ reason: reader.error });
        input.destroy();
      }
    });
    this.#ended = new Promise((resolve) => {
      input.once('close', () => {
        this.#decoder.finish().forEach(forward);
        resolve();
      });
    });
    await new Promise<void>((resolve, reject) => {
      input.once('error', reject);
      input.once('readable', resolve);
      input.once('close', resolve);
    });
  }

  /** Resolves when a file was read to its end (or the capture stopped). */
  get ended(): Promise<void> {
    return this.#ended;
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#input?.resume();
  }

  async stop(): Promise<void> {
    const capture = this.#capture;
    if (capture && capture.exitCode === null) {
      const exited = new Promise((resolve) => capture.once('exit', resolve));
      capture.kill('SIGINT');
      await exited;
    }
    this.#input?.destroy();
    await this.#ended;
  }

  #open(): Readable {
    const { file } = this.#options;
    if (file !== undefined) return createReadStream(file);
    const ports = this.#options.ports ?? [53];
    const filter = ports.map((p) => `port ${p}`).join(' or ');
    const args = ['-q', '-i', this.#options.interface ?? 'lo', '-f', filter, '-P', '-w', '-'];
    args.push('-s', String(this.#options.snapLength ?? 65535));
    const capture = spawn(this.#options.dumpcap ?? 'dumpcap', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.#capture = capture;
    let stderr = '';
    capture.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4096);
      const match = /received\/dropped on interface .*?: (\d+)\/(\d+)/.exec(stderr);
      if (match) this.#kernelDropped = Number(match[2]);
    });
    return capture.stdout;
  }
}
