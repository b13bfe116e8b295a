/**
 * The hostile mix of `verify --pipeline --hostile`: seeded valid traffic with every kind of bad line
 * mixed in at a given share, lazily (a million lines are never held), each line marked (line-marks.ts).
 *
 * Two kinds besides feed.ts's six:
 * - **unknown fields**: a valid line with fields the collector's config does not name (an object, an
 *   array, a string). The collector's contract is that such fields pass through (it copies them
 *   into the LogLine, as it does the mark): the line is VALID and must be processed once.
 * - **near the size limit**: a JSON line of {@link NEAR_LIMIT_BYTES}, just below the producer's
 *   `message.max.bytes` (librdkafka's 1,000,000, which the feed and the runtime keep), so Kafka
 *   carries it through the logserver; the collector must reject it (over its `max_line_bytes`) with
 *   that reason, once, and nothing may be stuck or retried on it.
 */
import { generateTraffic } from '../../traffic/index.ts';
import { hostileLineOfKind, type TimedLine } from './feed.ts';
import { markJsonLine } from './line-marks.ts';

/** Below the producer's 1,000,000 by room for the logserver's key, headers and record framing. */
export const NEAR_LIMIT_BYTES = 990_000;

export const HOSTILE_KINDS = [
  'not JSON',
  'invalid UTF-8',
  'wrong type',
  'no timestamp',
  'unparsable address',
  'over max_line_bytes',
  'unknown fields',
  'near the size limit',
] as const;
export type HostileKind = (typeof HOSTILE_KINDS)[number];

/** A line of the mix and, for a hostile one, its kind. */
export type MixLine = TimedLine & { readonly kind?: HostileKind };

export interface MixShape {
  readonly seed: number;
  readonly hosts: number;
  /** Lines in all (valid and hostile). */
  readonly lines: number;
  /** Share of hostile lines (0..1). */
  readonly share: number;
  /** One hostile line in this many is near the size limit (the others cycle through the other kinds). */
  readonly nearLimitEvery: number;
  /** The first line's id: the clean phase's lines come first. */
  readonly firstId: number;
}

function unknownFields(valid: string, id: number): string {
  const base = JSON.parse(valid) as Record<string, unknown>;
  return markJsonLine(
    JSON.stringify({
      ...base,
      edns: { udp_size: 1232, options: ['cookie', 'padding'] },
      answers: [1, 2, 3],
      sensor_vendor: 'x'.repeat(64),
    }),
    id,
  );
}

function nearLimit(valid: string, id: number): string {
  const line = markJsonLine(JSON.stringify({ ...JSON.parse(valid), padding: '' }), id);
  // The padding closes the object: fill it so that the line is exactly NEAR_LIMIT_BYTES long.
  return `${line.slice(0, -2)}${'x'.repeat(NEAR_LIMIT_BYTES - line.length)}"}`;
}

/** One hostile line of `kind` with mark `id`, made from the valid line `valid`. */
export function hostileOf(kind: HostileKind, id: number, valid: string): string | Buffer {
  if (kind === 'unknown fields') return unknownFields(valid, id);
  if (kind === 'near the size limit') return nearLimit(valid, id);
  return hostileLineOfKind(HOSTILE_KINDS.indexOf(kind), id, valid);
}

/** Whether the collector must accept a line of this kind (unknown fields pass through). */
export function acceptedKind(kind: HostileKind): boolean {
  return kind === 'unknown fields';
}

/**
 * The mix: generated valid lines with a hostile one wherever the running share falls behind
 * `share`, its kind cycling through the others with every `nearLimitEvery`-th one near the limit.
 * Event times are the generator's (the feed paces the lines itself).
 */
export function* hostileMix(s: MixShape): Generator<MixLine> {
  const traffic = generateTraffic({
    seed: s.seed,
    hosts: s.hosts,
    rate: 1000,
    // Each generated line becomes one line of the mix (a hostile one is made from it), so enough
    // seconds for all of them, with room: the generator's rate is a mean.
    durationSeconds: Math.ceil((s.lines / 1000) * 1.2) + 10,
    startMs: Date.UTC(2026, 10, 30, 10),
  });
  const others = HOSTILE_KINDS.filter((k) => k !== 'near the size limit');
  let n = 0;
  let hostile = 0;
  for (const g of traffic.lines()) {
    if (n >= s.lines) return;
    const id = s.firstId + n;
    if (s.share > 0 && hostile < s.share * (n + 1)) {
      const kind =
        s.nearLimitEvery > 0 && hostile % s.nearLimitEvery === s.nearLimitEvery - 1
          ? 'near the size limit'
          : (others[hostile % others.length] ?? 'not JSON');
      yield { id, valid: acceptedKind(kind), value: hostileOf(kind, id, g.line), atMs: g.atMs, kind };
      hostile += 1;
    } else yield { id, valid: true, value: markJsonLine(g.line, id), atMs: g.atMs };
    n += 1;
  }
  throw new Error(`the generator gave fewer than ${s.lines} lines`);
}
