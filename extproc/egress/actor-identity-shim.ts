/** The actor an actor certificate's URI SAN names (the shared definition's signature), until it is available here. */
import { isResourceName } from '../../lib/actor-ref.js';

export interface ActorIdentity {
  readonly atespace: string;
  readonly name: string;
}

const PREFIX = 'spiffe://substrate-actor.local/';

export function actorIdentityOfUri(uri: string): ActorIdentity | undefined {
  if (!uri.startsWith(PREFIX)) return undefined;
  const parts = uri.slice(PREFIX.length).split('/');
  let atespace: string | undefined;
  let name: string | undefined;
  if (parts.length === 3 && parts[0] === 'ateom-for-actor') [, atespace, name] = parts;
  else if (parts.length === 4 && parts[0] === 'atespace' && parts[2] === 'actor') [, atespace, , name] = parts;
  if (atespace === undefined || name === undefined || !isResourceName(atespace) || !isResourceName(name)) return undefined;
  return { atespace, name };
}
