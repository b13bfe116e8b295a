import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spreadGroupOf } from '../../../../src/stages/detector/spread-group.ts';

const group = spreadGroupOf(['corp.example.com']);

test('a name with labels left of its registrable domain is counted under that domain', () => {
  assert.equal(group('x7k2m9q4.wordword.com'), 'wordword.com');
  assert.equal(group('a.b.c.shop.co.uk'), 'shop.co.uk');
  // The private section: a dynamic-DNS customer's name is the registrable domain.
  assert.equal(group('www.myhome.ddns.net'), 'myhome.ddns.net');
  assert.equal(group('WWW.Example.ORG.'), 'example.org');
});

test('names that hold no label under a fixed domain, or stay inside the network, are never counted', () => {
  for (const name of [
    'wordword.com',
    'myhome.ddns.net',
    'printer',
    'nas.home.arpa',
    'a.b.cluster.local',
    'x.corp',
  ])
    assert.equal(group(name), undefined, name);
});

test('reverse lookups and address blocklist queries are never counted; exempt domains are not either', () => {
  for (const name of [
    '4.3.2.1.in-addr.arpa',
    'b.a.9.8.7.6.5.0.4.0.0.0.3.0.0.0.2.0.0.0.1.0.0.0.0.0.0.0.1.2.3.4.ip6.arpa',
    '4.3.2.1.zen.spamhaus.org',
    '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.zen.spamhaus.org',
    'www.facebook.com.corp.example.com',
    'corp.example.com',
  ])
    assert.equal(group(name), undefined, name);
  // Names and hashes looked up in block lists and reputation services are not counted either, and
  // any other such service can be exempted.
  assert.equal(group('bad.example.net.dbl.spamhaus.org'), undefined);
  assert.equal(group('d41d8cd98f00b204e9800998ecf8427e.avqs.mcafee.com'), undefined);
  assert.equal(group('d41d8cd98f00b204.lookup.reputation.net'), 'reputation.net');
  assert.equal(spreadGroupOf(['reputation.net'])('d41d8cd98f00b204.lookup.reputation.net'), undefined);
  // Digits alone are no address: three numeric labels in a row still count.
  assert.equal(group('1.2.3.updates.vendor.com'), 'vendor.com');
});
