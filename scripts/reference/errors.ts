/**
 * docs/reference/errors.md: the error catalogs. Every answer the proxy makes itself (`proxy/http/errors.ts`), and
 * every answer extproc makes for a resume that failed (`lib/resume/http-errors.ts`, which the proxy's
 * `--resolver apiserver` shares).
 */
import * as grpc from '@grpc/grpc-js';
import { ERRORS } from '../../proxy/http/errors.js';
import { httpErrorFor, invalidHostError, type HttpError } from '../../lib/resume/http-errors.js';
import type { ResumeFailure } from '../../lib/resume/outcome.js';
import { cell, code, generatedNote, page, table } from './markdown.js';

const REF = '<atespace>/<name>';
const DETAILS = '<description>';

/** Each way a resume can fail, named as the page shows it, with the answer it gets. */
function resumeAnswers(): { when: string; answer: HttpError }[] {
  const failures: { when: string; failure: ResumeFailure }[] = [
    { when: 'every parking slot is taken (`--parking on`)', failure: { kind: 'lot-full' } },
    { when: 'the caller went away', failure: { kind: 'cancelled' } },
    { when: 'the budget ran out before the first answer', failure: { kind: 'timeout' } },
    { when: 'the actor is not RUNNING, or its worker IP is not an IP address', failure: { kind: 'unroutable', reason: 'not-running', status: '' } },
  ];
  const codes = Object.entries(grpc.status)
    .filter((e): e is [string, number] => typeof e[1] === 'number' && e[1] !== grpc.status.OK)
    .sort((a, b) => a[1] - b[1]);
  for (const [name, value] of codes) {
    failures.push({ when: `ResumeActor answered ${name}`, failure: { kind: 'grpc-error', code: value, details: DETAILS, budgetExhausted: false } });
  }
  return [{ when: 'the host names no actor', answer: invalidHostError('<host>') }, ...failures.map((f) => ({ when: f.when, answer: httpErrorFor(f.failure, REF) }))];
}

export function errorsPage(): string {
  const proxyRows = Object.values(ERRORS).map((e) => {
    const headers = Object.entries(e.headers ?? {}).map(([k, v]) => code(`${k}: ${v}`));
    return [code(e.code), String(e.status), headers.join(', '), e.source, cell(e.text)];
  });
  const resumeRows = resumeAnswers().map(({ when, answer }) => [cell(when), String(answer.status), code(answer.body), code(answer.outcome)]);
  return page([
    '# Errors',
    '',
    generatedNote('the error catalogs (proxy/http/errors.ts, lib/resume/http-errors.ts)'),
    '',
    '## The proxy',
    '',
    'Every answer the proxy makes itself, rather than relaying a worker\'s or ext_proc\'s, comes from this catalog. The',
    'body is the text and a newline (`text/plain`); the code is in the access log\'s `error` field (and the reason in',
    "`details`, never sent to the client), on the server span as `actor_edge.error.code`, and in a filter's",
    '`response.errorCode`. `source` says who failed: the client (`downstream`), a worker (`upstream`), ext_proc, a',
    'filter, or the proxy itself (`internal`). 499 is never sent: it is what the access log records when the client',
    'left first. What each answer means in practice: [troubleshooting.md](../troubleshooting.md);',
    'when each is made: [the proxy\'s design](../design/proxy.md#error-catalog).',
    '',
    ...table(['code', 'status', 'headers', 'source', 'text'], proxyRows),
    '',
    '## extproc: a resume that failed',
    '',
    'extproc answers a request whose actor it could not resume with a local reply (`text/plain`), the same one the',
    "proxy's `--resolver apiserver` makes. `outcome` is the label of `actor_edge_extproc_requests_total` and the",
    "`ImmediateResponse.details` (`actor_edge_<outcome>`) a data plane's access log can show. The control plane's",
    `description (${code(DETAILS)}) is passed on only for FAILED_PRECONDITION, ABORTED and RESOURCE_EXHAUSTED;`,
    'ABORTED and UNAVAILABLE (and, with `--parking on`, RESOURCE_EXHAUSTED and FAILED_PRECONDITION) are first retried',
    'within the resume budget.',
    '',
    ...table(['when', 'status', 'body', 'outcome'], resumeRows),
  ]);
}
