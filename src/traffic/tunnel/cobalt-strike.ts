import { seededRandom } from '../random.ts';
import { hex, hexInt, labels, randomBytes } from './encoding.ts';
import { expGap, paced, type QueryType, type TrafficStyle } from './query.ts';
import { tunnelDomain } from './tunnel-domains.ts';

/**
 * Cobalt Strike DNS beacon, after public descriptions of its traffic and its malleable-profile
 * `dns-beacon` options (`beacon`, `get_A` "cdn.", `get_TXT` "api.", `put_metadata` "www.",
 * `put_output` "post."). The beacon sleeps (60 s, with jitter) and checks in with an A query for
 * its hex id (`<id>.<domain>`); the answer says whether a task waits. Then it sends its metadata
 * (`www.<hex labels>.<nonce>.<id>`), fetches the task in TXT answers (`api.<nonce>.<id>`), and
 * posts the output in hex (`post.<hex labels>.<nonce>.<id>`). Short hex labels most of the time,
 * long ones only while output flows.
 */
export const cobaltStrike: TrafficStyle = {
  name: 'cobalt-strike',
  kind: 'tunnel',
  description:
    'Cobalt Strike DNS beacon: <id> check-ins every ~60 s, api.<nonce>.<id> task fetches (TXT), www./post.<hex>.<nonce>.<id> uploads',
  typicalQueries: 200,
  session(o) {
    const r = seededRandom(`cobalt-strike:${o.seed}`);
    const domain = tunnelDomain(r);
    const id = hexInt(r.int(0, 0x7fffffff), 8);
    const nonce = () => hexInt(r.int(0, 0xfffffff), 7);
    const queue: { sub: string; qtype: QueryType }[] = [];
    let metadataSent = false;
    const task = () => {
      if (!metadataSent) {
        const meta = `${labels(hex(randomBytes(r, 62)), 56)}`;
        queue.push({ sub: `www.${meta}.${nonce()}.${id}`, qtype: 'A' });
        metadataSent = true;
      }
      for (let k = r.int(1, 4); k > 0; k -= 1) queue.push({ sub: `api.${nonce()}.${id}`, qtype: 'TXT' });
      for (let k = r.int(3, 30); k > 0; k -= 1) {
        const out = `${hexInt(r.int(0, 0xffff), 4)}${hex(randomBytes(r, r.int(20, 60)))}`;
        queue.push({ sub: `post.${labels(out, 56)}.${nonce()}.${id}`, qtype: 'A' });
      }
    };
    return paced(
      o,
      () => (queue.length > 0 ? expGap(r, 200) : 60_000 * (0.8 + 0.4 * r.next())),
      (i) => {
        const next = queue.shift();
        if (next) return { name: `${next.sub}.${domain}`, qtype: next.qtype };
        if (i > 0 && r.chance(0.25)) task();
        return { name: `${id}.${domain}`, qtype: 'A' };
      },
    );
  },
};
