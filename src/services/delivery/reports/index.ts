/** What was sent, read back: the recipient report and the outbox. Other folders import this file, never the room's files. */
export { createOutboxService } from './outbox';
export { createRecipientReportService, type RecipientReportRecord, type ReportOf, type ReportFilter } from './recipient-report';
