/**
 * gRPC as the proxy recognises it (Envoy's `isGrpcRequestHeaders`): `content-type` `application/grpc`,
 * `application/grpc+<codec>` or `application/grpc;<params>`, in any case; and what a gRPC client is told when the
 * proxy answers itself (`local-reply.ts`): a gRPC status, never an HTTP error page.
 */
const GRPC = 'application/grpc';

export function isGrpcContentType(value: string | undefined): boolean {
  if (value === undefined || value.length < GRPC.length) return false;
  if (value.slice(0, GRPC.length).toLowerCase() !== GRPC) return false;
  const next = value.charAt(GRPC.length);
  return next === '' || next === '+' || next === ';';
}

/** A request is gRPC when its content-type says so (the headers as the proxy forwards them). */
export function isGrpcRequest(headers: { get(name: string): string | undefined }): boolean {
  return isGrpcContentType(headers.get('content-type'));
}

/** gRPC's own mapping of an HTTP status to a gRPC status code (as Envoy's `httpToGrpcStatus`). */
export function grpcStatusOf(httpStatus: number): number {
  switch (httpStatus) {
    case 400:
      return 13; // INTERNAL
    case 401:
      return 16; // UNAUTHENTICATED
    case 403:
      return 7; // PERMISSION_DENIED
    case 404:
      return 12; // UNIMPLEMENTED
    case 429:
    case 502:
    case 503:
    case 504:
      return 14; // UNAVAILABLE
    default:
      return 2; // UNKNOWN
  }
}

/** A `grpc-message` value: percent-encoded outside printable ASCII (and `%` itself), as the gRPC spec asks. */
export function grpcMessage(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text)) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
