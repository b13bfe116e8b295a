import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import { isInternetName } from '../../../../src/stages/detector/internet-name.ts';
import { parseDgaModel, scoreNames } from '../../../../src/stages/detector/model/dga-model.ts';

test('single labels and names under private top-level labels never reach the Internet', () => {
  for (const name of [
    'kjhsdfkjqw',
    'kjhsdfkjqw.',
    'nas.lan',
    'printer.local',
    'x.home.arpa',
    'a.b.internal',
    'dc1.corp',
    '',
  ]) {
    assert.equal(isInternetName(name), false, name);
  }
});

test('registrable names, dynamic-DNS customers and alternative roots reach it', () => {
  for (const name of [
    'xjwqkd.com',
    'xjwqkd.com.',
    'q1w2e3.ddns.net',
    'www.qwkdj.ru',
    'vsxmisqfwhr.bit',
    '4.3.2.1.in-addr.arpa',
    'kjhsdfkj.corp.example.com',
  ]) {
    assert.equal(isInternetName(name), true, name);
  }
});

test('the model scores a browser probe 0 where the same label under .com scores as a DGA name', () => {
  const model = parseDgaModel(JSON.parse(readFileSync('models/dga-gbt.json', 'utf8')));
  const [bare, lan, com] = scoreNames(model, ['qxzvkwjhtpf', 'qxzvkwjhtpf.lan', 'qxzvkwjhtpf.com']);
  assert.equal(bare, 0);
  assert.equal(lan, 0);
  assert.ok((com ?? 0) > 0.9, `qxzvkwjhtpf.com scored ${com}`);
});
