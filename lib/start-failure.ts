/**
 * A start that failed for a reason a process already told in its own log (a worker that could not load a filter,
 * say): the caller says it in one line and exits non-zero, without a stack that would only point at the supervisor.
 */
export class StartFailure extends Error {
  override readonly name = 'StartFailure';
}
