import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLowerCaseToken } from './token.js';

test('a lower-case token: letters, digits and the token symbols, nothing else', () => {
  for (const t of ['websocket', 'x-internal', "a!#$%&'*+-.^_`|~9"]) assert.equal(isLowerCaseToken(t), true, t);
  for (const t of ['', 'a b', 'X-Upper', 'a:b', 'a/b', 'a,b', 'é']) assert.equal(isLowerCaseToken(t), false, t);
});
