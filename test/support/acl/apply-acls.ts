import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { findJava } from '../../../src/dev/executables.ts';
import { requireKafkaDistribution } from '../../../src/dev/kafka-distribution.ts';

/**
 * Adds or removes the `kafka-acls.sh --add` commands of an acl-plan on a real broker, through
 * ApplyAcls.java and the broker's own client jars, on a listener whose principal is a super user
 * (the cluster's PLAINTEXT listener).
 */

/**
 * ApplyAcls.java compiled once per process: launched from source, each call compiled it anew, which
 * cost three times the CPU of the call itself (about 4 s of the 2 cores), a dozen times a run.
 */
let aclTool: Promise<string> | undefined;
function compiledAclTool(): Promise<string> {
  aclTool ??= (async () => {
    const { libsDir } = requireKafkaDistribution();
    const out = mkdtempSync(join(tmpdir(), 'hamstring-acl-tool-'));
    const jars = readdirSync(libsDir)
      .filter((f) => f.endsWith('.jar'))
      .map((f) => join(libsDir, f));
    const source = fileURLToPath(new URL('./ApplyAcls.java', import.meta.url));
    // The compiler module of the runtime itself: the source launcher needs no more than the JRE either.
    await promisify(execFile)(
      findJava(),
      ['--module', 'jdk.compiler/com.sun.tools.javac.Main', '-d', out, '-cp', jars.join(':'), source],
      { timeout: 120_000 },
    );
    return out;
  })();
  return aclTool;
}

/** Applies (`add`) or deletes (`remove`) every `kafka-acls.sh` line of `commands`. */
export async function applyAcls(
  bootstrap: string,
  commands: string,
  action: 'add' | 'remove',
): Promise<void> {
  const { libsDir } = requireKafkaDistribution();
  const classes = await compiledAclTool();
  await new Promise<void>((resolve, reject) => {
    const child = execFile(
      findJava(),
      ['-XX:TieredStopAtLevel=1', '-cp', `${join(libsDir, '*')}:${classes}`, 'ApplyAcls', bootstrap, action],
      { timeout: 60_000 },
      (err) => (err ? reject(new Error(err.message)) : resolve()),
    );
    child.stdin?.end(commands);
  });
}
