import { PIPELINE_STAGES, type HamstringConfig } from '../config/index.ts';
import { pipelineComponents } from '../stages/pipeline-components.ts';
import { UsageError } from './command.ts';

/** One stage `hamstring run` starts: a built-in kind or module path, and the config entry it runs. */
export interface StageSpec {
  readonly spec: string;
  readonly component?: string;
}

/** The word that stands for every configured component. */
export const ALL_COMPONENTS = 'all';

/**
 * The stages of one `hamstring run`, from its arguments: each is a built-in stage (`collector`, or
 * `log_collection.collector`), a built-in stage with its config entry (`collector:dga_collector`), a
 * module path, or `all` (every configured component, as `hamstring up` runs them). `--name` chooses
 * the entry of a single stage only: with several, each names its own.
 *
 * @throws UsageError for `--name` beside several stages, an empty entry name, or a stage given twice.
 */
export function stageSpecs(
  config: HamstringConfig,
  positionals: readonly string[],
  name: string | undefined,
  builtins: ReadonlySet<string>,
): StageSpec[] {
  if (name !== undefined && (positionals.length > 1 || positionals[0] === ALL_COMPONENTS))
    throw new UsageError(
      `--name ${name}: chooses the entry of one stage; for several write <stage>:<entry>, e.g. collector:dga_collector`,
    );
  const specs: StageSpec[] = [];
  for (const positional of positionals) {
    if (positional === ALL_COMPONENTS) {
      for (const c of pipelineComponents(config)) specs.push({ spec: c.kind, component: c.name });
      continue;
    }
    const colon = positional.indexOf(':');
    const kind = colon < 0 ? positional : positional.slice(0, colon);
    const short = PIPELINE_STAGES.find((s) => s.full === kind)?.short ?? kind;
    if (colon < 0 || !builtins.has(short)) {
      specs.push(name === undefined ? { spec: positional } : { spec: positional, component: name });
      continue;
    }
    const component = positional.slice(colon + 1);
    if (component === '')
      throw new UsageError(
        `${positional}: expected <stage>:<config entry name>, e.g. collector:dga_collector`,
      );
    specs.push({ spec: short, component });
  }
  const seen = new Set<string>();
  for (const s of specs) {
    const short = PIPELINE_STAGES.find((p) => p.full === s.spec)?.short ?? s.spec;
    const key = `${short}:${s.component ?? ''}`;
    if (seen.has(key))
      throw new UsageError(`${s.spec}${s.component ? `:${s.component}` : ''} is given twice`);
    seen.add(key);
  }
  return specs;
}
