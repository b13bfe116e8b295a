import { HamstringError } from '../errors/hamstring-error.ts';

/** One problem found while loading the configuration. */
export interface ConfigIssue {
  /**
   * Where the problem is: a dotted key path with `[i]` for list indices
   * (`pipeline.data_analysis[0].threshold`), the name of an environment variable for
   * `origin: 'env'`, or `''` for the document as a whole.
   */
  readonly path: string;
  /** What a valid value looks like, e.g. `positive integer`. */
  readonly expected: string;
  /** The value that was found, as truncated JSON (`nothing` when the key is missing). */
  readonly actual: string;
  /** The complete sentence shown to the operator, usually `expected <expected>, got <actual>`. */
  readonly message: string;
  /** `'env'` when the problem is in an environment variable; the file otherwise. */
  readonly origin?: 'file' | 'env';
  /** 1-based position in the file, known for YAML syntax errors. */
  readonly line?: number;
  readonly column?: number;
}

/**
 * The configuration is unusable. Lists every problem found, not just the first, so that an
 * operator can fix the file in one go. `message` is the same text as {@link ConfigError.format}.
 */
export class ConfigError extends HamstringError {
  override readonly name = 'ConfigError';
  readonly code = 'CONFIG_INVALID';
  /** Label of the configuration file, the prefix of every formatted line. */
  readonly source: string;
  readonly issues: readonly ConfigIssue[];

  constructor(source: string, issues: readonly ConfigIssue[]) {
    super(formatIssues(source, issues));
    this.source = source;
    this.issues = issues;
  }

  /**
   * One line per issue, e.g.
   * `config.yaml: environment.kafka_producer.message_timeout_ms: expected integer <= transaction_timeout_ms (60000), got 90000`.
   */
  format(): string {
    return formatIssues(this.source, this.issues);
  }
}

function formatIssues(source: string, issues: readonly ConfigIssue[]): string {
  return issues
    .map((issue) => {
      const where = issue.origin === 'env' ? 'env' : source;
      const position = issue.line === undefined ? '' : `:${issue.line}:${issue.column ?? 1}`;
      const path = issue.path === '' ? '' : `${issue.path}: `;
      return `${where}${position}: ${path}${issue.message}`;
    })
    .join('\n');
}

const MAX_ACTUAL_LENGTH = 80;

/** Renders a found value for an issue: JSON, truncated, `nothing` for a missing key. */
export function renderActual(value: unknown): string {
  if (value === undefined) return 'nothing';
  let json: string;
  try {
    json = JSON.stringify(value) ?? typeof value;
  } catch {
    json = `unprintable ${typeof value}`;
  }
  return json.length > MAX_ACTUAL_LENGTH ? `${json.slice(0, MAX_ACTUAL_LENGTH - 1)}…` : json;
}

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `['a', 0, 'b.c']` -> `a[0]["b.c"]`: dotted, with keys that contain dots quoted. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else {
      const key = String(segment);
      if (PLAIN_KEY.test(key)) out += out === '' ? key : `.${key}`;
      else out += `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

/** Builds an issue whose message reads `expected <expected>, got <actual>[ (<note>)]`. */
export function makeIssue(args: {
  path: string;
  expected: string;
  value: unknown;
  note?: string;
  origin?: 'file' | 'env';
}): ConfigIssue {
  const actual = renderActual(args.value);
  const note = args.note === undefined ? '' : ` (${args.note})`;
  return {
    path: args.path,
    expected: args.expected,
    actual,
    message: `expected ${args.expected}, got ${actual}${note}`,
    ...(args.origin === undefined ? {} : { origin: args.origin }),
  };
}
