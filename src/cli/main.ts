import { runCli } from './dispatch.ts';
import { commands } from './registry.ts';

const code = await runCli(
  process.argv.slice(2),
  {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(line ? `${line}\n` : ''),
  },
  commands,
);
process.exitCode = code;
// Commands finish their work before returning; a client handle left open somewhere must not
// keep the CLI hanging.
setTimeout(() => process.exit(code), 2000).unref();
