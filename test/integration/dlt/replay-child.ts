/**
 * Child process of the kill -9 test: replays a DLT two records per transaction and hangs inside
 * the second transaction (outputs produced, offsets sent, not committed), printing HOLDING, until
 * the test kills it. Args: bootstrap, dlt topic.
 */
import { createLogger } from '../../../src/observability/logger.ts';
import { replayDeadLetters } from '../../../src/app/dlt-replay.ts';
import { testKafkaOptions } from '../../support/pipeline-harness.ts';

const [bootstrap, dltTopic] = process.argv.slice(2) as [string, string];
let commits = 0;
await replayDeadLetters({
  dltTopic,
  kafka: testKafkaOptions(bootstrap),
  batchSize: 2,
  log: createLogger({}, 2),
  hooks: {
    beforeCommit: async () => {
      if (commits === 1) {
        process.stdout.write('HOLDING\n');
        await new Promise(() => undefined);
      }
    },
    afterCommit: () => {
      commits += 1;
    },
  },
});
