/** A ledger row made into the message it sends (campaign or system), and previews of it. Other folders import this file, never the room's files. */
export { MessageSources, sourceKey, type MessageSource } from './message-sources';
export { blankOpenPixels, previewDraft, previewMessage, previewSingleSend, samplePerson } from './preview';
