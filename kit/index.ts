/**
 * `actor-edge/testing`: the test kit for filter authors. Unit tests call a filter's hooks against fakes
 * (`fakeRequest`, `fakeResponse`, `fakeFilterContext`) or run it through one request (`runFilter`); an end-to-end
 * test loads the built filter into a real proxy, extproc and apiserver-stub in the test's process
 * (`startTestStack`). docs/filters.md shows both.
 */
export { actorAuthority, fakeFilterContext, fakeHeaders, fakeRequest, fakeResponse, TEST_ATESPACE } from './fake-request.js';
export type { FakeRequestInit, FakeResponseInit } from './fake-request.js';
export { runFilter } from './run-filter.js';
export type { FilterRun, RunFilterOptions, UpstreamAnswer } from './run-filter.js';
export { startTestStack } from './stack.js';
export type { TestAnswer, TestRequest, TestStack, TestStackOptions } from './stack.js';
