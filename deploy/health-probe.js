/* global process, fetch, AbortSignal, URL */
/**
 * A container probe: `node health-probe.js <url> [token file]` exits 0 when the URL answers 200.
 * Kubernetes runs it as an exec probe inside the container, on loopback: an httpGet probe comes
 * from the kubelet to the pod's address, which the health server answers only with the access
 * token, and an httpGet probe carries headers only as literals in the manifest, never from a Secret.
 * The token file defaults to $HAMSTRING_ACCESS_TOKEN_FILE; without either no token is sent.
 */
import { readFileSync } from 'node:fs';

const TIMEOUT_MS = 4_000;

const [url, tokenFile = process.env.HAMSTRING_ACCESS_TOKEN_FILE] = process.argv.slice(2);
if (url === undefined || !URL.canParse(url)) {
  process.stderr.write('usage: node health-probe.js <url> [access token file]\n');
  process.exit(2);
}
const headers = {};
if (tokenFile) headers.authorization = `Bearer ${readFileSync(tokenFile, 'utf8').replace(/\r?\n$/, '')}`;
try {
  const res = await fetch(url, { headers, redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
  const body = await res.text();
  if (res.status !== 200) {
    // The body says which worker is not live or ready, and why; it holds no secret (scrubbed).
    process.stderr.write(`${url}: HTTP ${res.status} ${body.slice(0, 2_000)}\n`);
    process.exit(1);
  }
} catch (e) {
  process.stderr.write(`${url}: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}
