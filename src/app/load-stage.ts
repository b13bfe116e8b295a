import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { register } from 'node:module';
import { entryModule, fromBundle } from '../assets/project.ts';
import { PIPELINE_STAGES, type HamstringConfig } from '../config/index.ts';
import type { Stage } from '../runtime/index.ts';
import { BUILTIN_STAGES, type StageFactory, type StageFactoryOptions } from './builtin-stages.ts';

const STAGE_EXPORT_EXPECTED =
  'a default export or an export named "stage": a Stage ({ name, inputTopics, outputTopics, process }) ' +
  'or a function (config) => Stage';

/**
 * The stage named by `spec`: a built-in stage by short or full name, or a module path (relative to
 * `cwd`; `.ts` modules load through tsx, which `bin/hamstring.js` registers, or this when the
 * command runs from the bundle). `component` and
 * `resources` go to a built-in stage (`--name`); a module stage takes only the config.
 *
 * @throws Error naming the spec and what was expected (the built-in names, or the module's exports).
 */
export async function loadStage(
  spec: string,
  config: HamstringConfig,
  options: { cwd?: string; builtins?: ReadonlyMap<string, StageFactory> } & StageFactoryOptions = {},
): Promise<Stage> {
  const builtins = options.builtins ?? BUILTIN_STAGES;
  const short = PIPELINE_STAGES.find((s) => s.full === spec)?.short ?? spec;
  const builtin = builtins.get(short);
  if (builtin) {
    const made = await builtin(config, {
      ...(options.component !== undefined ? { component: options.component } : {}),
      ...(options.resources ? { resources: options.resources } : {}),
    });
    return checkedStage(made, `built-in stage ${spec}`);
  }
  if (options.component !== undefined)
    throw new Error(`--name ${options.component}: only built-in stages have named components, not ${spec}`);
  const path = resolve(options.cwd ?? process.cwd(), spec);
  if (!looksLikePath(spec) && !existsSync(path)) {
    const known = [...builtins.keys()];
    throw new Error(
      `unknown stage "${spec}": expected a built-in stage (${known.length > 0 ? known.join(', ') : 'none registered yet'}) ` +
        'or the path of a module exporting a stage, e.g. examples/uppercase.ts',
    );
  }
  if (!existsSync(path)) throw new Error(`stage module ${spec}: no such file (${path})`);
  if (fromBundle) await bundleModuleLoading(/\.[cm]?ts$/.test(path));
  const mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  const exported = mod.default ?? mod.stage;
  if (exported === undefined)
    throw new Error(`stage module ${spec}: expected ${STAGE_EXPORT_EXPECTED}, found neither`);
  const stage: unknown = typeof exported === 'function' ? await (exported as StageFactory)(config) : exported;
  return checkedStage(stage, `stage module ${spec}`);
}

let hamstringHooked = false;
let tsxRegistered = false;

/**
 * From the bundle, a stage module's `import ... from 'hamstring'` must reach the bundle's own copy
 * of the package (dist/index.js, whose classes sit in the chunks the command runs on), not the
 * sources: the runtime tells a RecordError or DecodeError by `instanceof`. And tsx's loader, which
 * the bundle runs without, once a TypeScript module needs it.
 */
async function bundleModuleLoading(typescript: boolean): Promise<void> {
  if (!hamstringHooked) {
    hamstringHooked = true;
    const index = JSON.stringify(entryModule('index').href);
    const hook = `export async function resolve(s, c, next) { return s === 'hamstring' ? { url: ${index}, shortCircuit: true } : next(s, c); }`;
    register(`data:text/javascript,${encodeURIComponent(hook)}`);
  }
  if (typescript && !tsxRegistered) {
    tsxRegistered = true;
    (await import('tsx/esm/api')).register();
  }
}

function looksLikePath(spec: string): boolean {
  return spec.includes('/') || /\.[cm]?[jt]s$/.test(spec);
}

/** The value as a Stage, or an error naming the first field that is not what a Stage needs. */
function checkedStage(value: unknown, source: string): Stage {
  const s = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const topics = (v: unknown) => Array.isArray(v) && v.every((t) => typeof t === 'string' && t !== '');
  const problem =
    typeof value !== 'object' || value === null
      ? `expected ${STAGE_EXPORT_EXPECTED}, got ${typeof value}`
      : typeof s.name !== 'string' || s.name === ''
        ? 'name: expected a non-empty string'
        : !topics(s.inputTopics) || (s.inputTopics as unknown[]).length === 0
          ? 'inputTopics: expected a non-empty list of topic names'
          : s.outputTopics !== 'any' && !topics(s.outputTopics)
            ? 'outputTopics: expected a list of topic names or "any"'
            : typeof s.process !== 'function'
              ? 'process: expected a function (records, ctx) => { outputs, failures? }'
              : undefined;
  if (problem !== undefined) throw new Error(`${source}: ${problem}`);
  return value as Stage;
}
