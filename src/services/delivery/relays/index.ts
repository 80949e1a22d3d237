/** The way out: relays and their routing, the account's mail rate, the signing keys of sending domains. Other folders import this file, never the room's files. */
export { AccountRateLimiter } from './mail-rate';
export { handOverFailure, PinnedRelayMissing, RelayRefusal, RelayRouter, RelaysDown, type Routed } from './relay-router';
export { createRelaysService, markRelayDown, servesDomain, type RelayInput, type RelayRecord } from './relays';
export { DKIM_KEY_PURPOSE, domainStatusColumn, domainStatusesOf, refuseUnauthenticated, SENDER_DOMAIN_UNAUTHENTICATED, signingKeyOf, unauthenticatedError, type SigningDomain } from './signing-keys';
