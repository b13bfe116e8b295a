import type { HamstringConfig } from '../config/index.ts';
import type { Stage } from '../runtime/index.ts';

/** Makes a stage from the loaded config (topics, names and settings come from it). */
export type StageFactory = (config: HamstringConfig) => Stage | Promise<Stage>;

/**
 * The stages `hamstring run <name>` knows by short name (`detector`); the full name
 * (`data_analysis.detector`) is accepted too. The pipeline stages register here as src/stages/
 * provides them: one line each.
 */
export const BUILTIN_STAGES: ReadonlyMap<string, StageFactory> = new Map<string, StageFactory>([]);
