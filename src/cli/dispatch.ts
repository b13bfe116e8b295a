import { parseArgs } from 'node:util';
import { UsageError, type CommandIo } from './command.ts';
import type { CommandEntry } from './registry.ts';

/** Exit codes of the `hamstring` command. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/**
 * Runs `hamstring <argv>`: finds the longest registered command path at the start of `argv`,
 * parses the rest with the command's options, runs it and returns the exit code. Unknown
 * commands and bad arguments print usage (exit 2); failures print one "error:" line (exit 1),
 * with the stack only when HAMSTRING_DEBUG is set.
 */
export async function runCli(
  argv: readonly string[],
  io: CommandIo,
  registry: Record<string, CommandEntry>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  if (argv.length === 1 && ['-h', '--help', 'help'].includes(argv[0]!)) {
    io.out(usage(registry));
    return EXIT.ok;
  }
  const match = findCommand(argv, registry);
  if (!match) {
    const words = argv.filter((a) => !a.startsWith('-')).join(' ');
    const isGroup = Object.keys(registry).some((path) => path.startsWith(`${words} `));
    if (words) io.err(isGroup ? `hamstring ${words}: missing subcommand\n` : `unknown command: ${words}\n`);
    io.err(usage(registry, argv));
    return EXIT.usage;
  }
  const { path, entry, rest } = match;
  const command = await entry.load();
  const commandUsage = `usage: hamstring ${path}${command.usage ? ` ${command.usage}` : ''}`;
  try {
    const { values, positionals } = parseArgs({
      args: [...rest],
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    if (values.help) {
      io.out([commandUsage, `\n${entry.summary}`, ...(command.help ? ['', command.help] : [])].join('\n'));
      return EXIT.ok;
    }
    const { min, max } = command.positionals ?? { min: 0, max: 0 };
    if (positionals.length < min || positionals.length > max) {
      throw new UsageError(
        positionals.length > max ? `unexpected argument: ${positionals[max]}` : 'missing argument',
      );
    }
    return (await command.run({ values, positionals, io })) ?? EXIT.ok;
  } catch (error) {
    if (error instanceof UsageError || isParseArgsError(error)) {
      io.err(`error: ${(error as Error).message}\n${commandUsage}`);
      return EXIT.usage;
    }
    io.err(`error: ${error instanceof Error ? error.message : String(error)}`);
    if (env.HAMSTRING_DEBUG && error instanceof Error && error.stack) io.err(error.stack);
    return EXIT.failure;
  }
}

function findCommand(argv: readonly string[], registry: Record<string, CommandEntry>) {
  const words: string[] = [];
  for (const arg of argv) {
    if (arg.startsWith('-')) break;
    words.push(arg);
  }
  for (let n = words.length; n > 0; n--) {
    const path = words.slice(0, n).join(' ');
    const entry = registry[path];
    if (entry) return { path, entry, rest: argv.slice(n) };
  }
  return undefined;
}

/** The command list; narrowed to the commands under the words typed when some match. */
export function usage(registry: Record<string, CommandEntry>, argv: readonly string[] = []): string {
  const prefix = argv.filter((a) => !a.startsWith('-')).join(' ');
  const all = Object.entries(registry);
  const under = all.filter(([path]) => prefix && path.startsWith(`${prefix} `));
  const shown = under.length > 0 ? under : all;
  const width = Math.max(...shown.map(([path]) => path.length));
  return [
    'usage: hamstring <command> [options]   (hamstring <command> --help for its options)',
    '',
    'commands:',
    ...shown.map(([path, entry]) => `  ${path.padEnd(width)}  ${entry.summary}`),
  ].join('\n');
}

function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}
