import assert from 'node:assert/strict';
import { test } from 'node:test';
import { subnetId } from '../../../src/stages/subnet.ts';

const defaults = { ipv4_prefix_length: 24, ipv6_prefix_length: 64 };

test('an IPv4 address maps to its network under the prefix, written <net>_<len>', () => {
  assert.equal(subnetId('171.154.4.77', defaults), '171.154.4.0_24');
  assert.equal(subnetId('171.154.4.77', { ...defaults, ipv4_prefix_length: 20 }), '171.154.0.0_20');
  assert.equal(subnetId('171.154.4.77', { ...defaults, ipv4_prefix_length: 0 }), '0.0.0.0_0');
  assert.equal(subnetId('255.255.255.255', { ...defaults, ipv4_prefix_length: 32 }), '255.255.255.255_32');
});

test('an IPv6 address maps to its network in RFC 5952 form', () => {
  assert.equal(subnetId('2001:0DB8:0001:0002:0003:4:5:6', defaults), '2001:db8:1:2::_64');
  assert.equal(subnetId('2001:db8:ffff::1', { ...defaults, ipv6_prefix_length: 36 }), '2001:db8:f000::_36');
  assert.equal(subnetId('2001:db8::1', { ...defaults, ipv6_prefix_length: 128 }), '2001:db8::1_128');
  assert.equal(subnetId('fe80::1%eth0', defaults), 'fe80::_64');
  assert.equal(subnetId('::ffff:10.1.2.3', { ...defaults, ipv6_prefix_length: 128 }), '::ffff:a01:203_128');
});

test('text that is not an address has no subnet', () => {
  assert.equal(subnetId('10.1.2', defaults), undefined);
  assert.equal(subnetId('10.1.2.256', defaults), undefined);
  assert.equal(subnetId('example.org', defaults), undefined);
  assert.equal(subnetId('', defaults), undefined);
});
