import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAdminApp } from './admin-app.js';

test('routes without schemas answer as usual: JSON out, a JSON body in', async () => {
  const app = createAdminApp();
  app.get('/x', async () => ({ a: 1 }));
  app.post('/echo', async (req) => ({ got: req.body }));
  try {
    const get = await app.inject({ url: '/x' });
    assert.equal(get.statusCode, 200);
    assert.deepEqual(get.json(), { a: 1 });
    const post = await app.inject({ method: 'POST', url: '/echo', payload: { b: 2 } });
    assert.deepEqual(post.json(), { got: { b: 2 } });
  } finally {
    await app.close();
  }
});

test('a route that declares a validation or a response schema is refused, saying why', async () => {
  for (const schema of [{ body: { type: 'object' } }, { querystring: { type: 'object' } }, { response: { 200: { type: 'object' } } }]) {
    const app = createAdminApp();
    app.post('/x', { schema }, async () => ({}));
    await assert.rejects(async () => { await app.ready(); }, /admin routes declare no schemas/);
    await app.close();
  }
});
