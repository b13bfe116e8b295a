import assert from 'node:assert/strict';
import { test } from 'node:test';
import { observe, type DomainWindow } from '../../../../src/stages/detector/domainator/domainator.ts';
import { windowDomain } from '../../../../src/stages/detector/domainator/grouping.ts';
import { MemoryStore } from '../../../support/memory-state.ts';

test('a tunnel keeps its window under the registrable domain, private suffixes included', () => {
  assert.deepEqual(windowDomain('Chunk.0.t.Files-Sync.co.uk.'), {
    registrable: 'files-sync.co.uk',
    subdomain: 'chunk.0.t',
  });
  assert.deepEqual(windowDomain('abc.x.duckdns.org'), { registrable: 'x.duckdns.org', subdomain: 'abc' });
});

test('cloud tenant names under private suffixes open no window of the provider', () => {
  for (const name of [
    'prod-assets-7.s3.us-west-2.amazonaws.com',
    'internal-api-1234567890.us-east-1.elb.amazonaws.com',
    'st7f3a9c2b1d4e.blob.core.windows.net',
    'd1a2b3c4d5e6f7.cloudfront.net',
    'ec2-54-1-2-3.compute-1.amazonaws.com',
  ])
    assert.equal(windowDomain(name), undefined, name);
});

test('reverse DNS, block lists and reputation lookups open no window', () => {
  for (const name of [
    '4.3.2.1.zen.spamhaus.org',
    '0.0.0.0.1.0.0.4e.abcdefghijklmnopqrstuvwxyz.avqs.mcafee.com',
    '0123456789abcdef0123.456789abcdef01234567.f.3.sxl.sophosxl.net',
    '4.3.2.10.in-addr.arpa',
    'b.a.9.8.7.6.5.0.4.0.0.0.3.0.0.0.2.0.0.0.1.0.0.0.0.0.0.0.1.2.3.4.ip6.arpa',
  ])
    assert.equal(windowDomain(name), undefined, name);
  const store = new MemoryStore<DomainWindow>();
  for (let i = 0; i < 5; i += 1)
    assert.equal(
      observe(
        store,
        { src_ip: '10.0.0.25', domain_name: `${i}.2.0.192.zen.spamhaus.org` },
        { minWindow: 3, maxWindow: 10, now: i },
      ),
      undefined,
    );
  assert.equal(store.size, 0);
});

test('provider-run zones, names that stay inside the network, AD locator names and the search domains open no window', () => {
  for (const name of [
    'dim-coin-accounts.24uf27.clustercfg.use1.cache.amazonaws.com',
    'c8128ded-0028-3067-6430-509a2ee4919f.cfargotunnel.com',
    'shop-frontend-1h7hgb0b8fhf2542.z02.azurefd.net',
    'sts.amazonaws.com.monitoring.svc.cluster.local',
    'a1b2c3d4e5f6a7b8c9d0.nas.lan',
    'a5b0c445-14af-59de-0188-c892180e5e87._msdcs.hq.wegwerfemailadresse.com',
    '_ldap._tcp.dc._msdcs.ad.example.org',
  ])
    assert.equal(windowDomain(name), undefined, name);
  const expansion = 'xeapa94b9o.execute-api.us-west-1.amazonaws.com.corp.example.com';
  assert.deepEqual(windowDomain(expansion), {
    registrable: 'example.com',
    subdomain: 'xeapa94b9o.execute-api.us-west-1.amazonaws.com.corp',
  });
  assert.equal(windowDomain(expansion, ['corp.example.com']), undefined);
  assert.equal(windowDomain('corp.example.com', ['corp.example.com']), undefined);
  // A tunnel elsewhere under the same registrable domain still gets its window.
  assert.deepEqual(windowDomain('chunk.0.t.example.com', ['corp.example.com']), {
    registrable: 'example.com',
    subdomain: 'chunk.0.t',
  });
});
