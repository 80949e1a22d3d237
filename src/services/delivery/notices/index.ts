/** The service's own mail: system messages (verification, signup confirmation, team links), event, pause and alert notices. Other folders import this file, never the room's files. */
export { createEventsService, type EventsService } from './events';
export { checkSendRates } from './rate-alerts';
export { queuedVerification } from './sender-verification';
export { queuedSignupConfirmation } from './signup-confirmation';
export { deliverNow, queueSystemMail, systemMessage, VOID_SYSTEM_MAIL, type DeliveredNow } from './system-mail';
export { queuedTeamLink } from './team-links';
