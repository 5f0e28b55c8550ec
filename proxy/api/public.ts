/** The package's public entry: the filter API for `--filter` modules, and the shared actor-host parser. */
export type {
  Filter,
  FilterContext,
  FilterFactory,
  FilterResponse,
  FilterResult,
  HeaderMap,
  LocalReply,
  ReadBodyOptions,
  RequestContext,
  ClientProtocol,
  RerunReason,
  ResponseResult,
  Route,
  StreamedBody,
  StreamedPiece,
  UpstreamOutcome,
} from './filter.js';
export { CONTINUE, isStreamedBody, reply } from './filter.js';
export type { OffloadDecision, OffloadFunction, OffloadOptions, OffloadReply, Offloader } from './offload.js';
export { applyDecision, transferableCopy } from './offload.js';
export { parseActorHost, DEFAULT_ACTOR_SUFFIX } from '../../lib/actor-ref.js';
export type { ActorRef, ParsedActorHost, ActorHostParse } from '../../lib/actor-ref.js';
