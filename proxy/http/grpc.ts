/**
 * gRPC as the proxy recognises it (Envoy's `isGrpcRequestHeaders`): `content-type` `application/grpc`,
 * `application/grpc+<codec>` or `application/grpc;<params>`, in any case.
 */
const GRPC = 'application/grpc';

export function isGrpcContentType(value: string | undefined): boolean {
  if (value === undefined || value.length < GRPC.length) return false;
  if (value.slice(0, GRPC.length).toLowerCase() !== GRPC) return false;
  const next = value.charAt(GRPC.length);
  return next === '' || next === '+' || next === ';';
}
