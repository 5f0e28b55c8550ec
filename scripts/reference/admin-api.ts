/**
 * docs/reference/admin-api.md: every admin route of each component, read from the routes the admin servers
 * register (what their own index, `GET /`, lists). The three components are started in this process on loopback
 * ports chosen by the OS, without workers, each index read once, then stopped.
 */
import { startExtprocInProcess, startProxyInProcess, startStubInProcess } from '../../kit/in-process.js';
import type { AdminEndpoint } from '../../lib/ops-routes.js';
import { cell, code, generatedNote, page, table } from './markdown.js';

type Component = 'proxy' | 'extproc' | 'apiserver-stub';

/** The routes a component's index lists (the proxy's internal one, for its cluster primary only, left out). */
async function indexOf(admin: string): Promise<readonly AdminEndpoint[]> {
  const answer = await fetch(`http://${admin}/`, { headers: { accept: 'application/json' } });
  if (!answer.ok) throw new Error(`GET http://${admin}/ answered ${answer.status}`);
  const doc = (await answer.json()) as { endpoints: AdminEndpoint[] };
  return doc.endpoints.filter((e) => !e.path.startsWith('/internal/'));
}

/** Each component's admin routes, in the order they are registered. */
export async function adminRoutes(): Promise<Record<Component, readonly AdminEndpoint[]>> {
  const loopback = ['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0'];
  const stub = await startStubInProcess([...loopback, '--workers', '0']);
  try {
    const extproc = await startExtprocInProcess([...loopback, '--apiserver', stub.addresses.grpc as string]);
    try {
      const proxy = await startProxyInProcess([...loopback, '--extproc', extproc.addresses.grpc as string, '--actor-cache', 'on']);
      try {
        return {
          proxy: await indexOf(proxy.running.admin),
          extproc: await indexOf(extproc.addresses.admin as string),
          'apiserver-stub': await indexOf(stub.addresses.admin as string),
        };
      } finally {
        await proxy.stop();
      }
    } finally {
      await extproc.stop();
    }
  } finally {
    await stub.stop();
  }
}

const ABOUT: Readonly<Record<Component, string>> = {
  proxy: 'The proxy (`--admin`, default `127.0.0.1:9901`). The `/cache` routes exist with `--actor-cache on` (the default).',
  extproc: 'extproc (`--admin`, default `127.0.0.1:9902`).',
  'apiserver-stub': 'apiserver-stub (`--admin`, default `127.0.0.1:9903`). Bodies and answers are JSON.',
};

export async function adminApiPage(): Promise<string> {
  const routes = await adminRoutes();
  const lines: string[] = [
    '# Admin API',
    '',
    generatedNote("the routes each component's admin server registers"),
    '',
    "Each component's admin listener serves these routes; `GET /` on it lists them too (JSON, or a page for a",
    'browser). Every route but `GET`/`HEAD` of `/live` and `/ready` refuses a foreign `Host` or `Origin` with 403, and',
    'with `--admin-token` needs `Authorization: Bearer <token>`. A route that changes state is logged with the',
    "caller's address. An unknown route answers 404 `{\"error\",\"code\":\"ROUTE_NOT_FOUND\"}`. With `--workers N` the",
    "proxy's primary serves the same routes: it answers `/ready`, `/stats`, `/metrics` and the dashboard itself and",
    'forwards the rest to every process. What each answers, in detail:',
    '[operating.md](../operating.md#every-admin-api), [proxy.md](../proxy.md#admin-and-metrics) (the cache),',
    '[extproc.md](../extproc.md#admin---admin-and-health), [apiserver-stub.md](../apiserver-stub.md).',
    '',
  ];
  for (const component of ['proxy', 'extproc', 'apiserver-stub'] as const) {
    const rows = routes[component].map((e) => [e.method, code(e.path), e.changesState ? 'yes' : 'no', cell(e.description)]);
    lines.push(`## ${component}`, '', ABOUT[component], '', ...table(['method', 'path', 'changes state', 'what it does'], rows), '');
  }
  return page(lines);
}
