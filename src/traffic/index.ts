/** Seeded DNS traffic with ground truth, DGA families and the DGA training set (no Kafka). */
export { generateTraffic, formatTs } from './generator.ts';
export type { GeneratedLine, Traffic, TrafficOptions } from './generator.ts';
export type { HostTruth } from './hosts.ts';
export { DEFAULT_FAMILIES } from './hosts.ts';
export { DGA_FAMILIES, dgaFamily } from './dga-families.ts';
export type { DgaFamily } from './dga-families.ts';
export { dgaTrainingSet } from './training-set.ts';
export { seededRandom } from './random.ts';
