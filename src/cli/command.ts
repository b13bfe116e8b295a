import type { ParseArgsConfig } from 'node:util';
import { HamstringError } from '../errors/hamstring-error.ts';

/** Option declarations in `node:util` parseArgs form (`--help` is added by the dispatcher). */
export type OptionSpecs = NonNullable<ParseArgsConfig['options']>;

/** Where a command writes; injected so commands are testable without a terminal. */
export interface CommandIo {
  out(line: string): void;
  err(line: string): void;
}

/** What a command's `run` receives after parsing. */
export interface CommandInput {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  io: CommandIo;
}

/**
 * One `hamstring` subcommand. A module under `src/cli/commands/` exports it, and one line in
 * `src/cli/registry.ts` names its command path.
 */
export interface Command {
  /** What follows the command path in usage lines, e.g. "[--nodes 1|3] [--data-dir D]". */
  usage: string;
  /** Longer help shown by `hamstring <command> --help`, after the usage line. */
  help?: string;
  options?: OptionSpecs;
  /** Positional arguments accepted, e.g. `{ min: 1, max: 1 }` for `run <stage>`. Default: none. */
  positionals?: { min: number; max: number };
  /** Exit code (default 0). Throw {@link UsageError} for bad arguments, any other Error for failures. */
  run(input: CommandInput): Promise<number | void> | number | void;
}

/** Bad command-line arguments: the dispatcher prints the message and the usage, exit code 2. */
export class UsageError extends HamstringError {
  override readonly name = 'UsageError';
  readonly code = 'CLI_USAGE';
}
