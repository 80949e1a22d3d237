/** What comes back: the providers' webhooks, bounces and complaints recorded, the suppression list. Other folders import this file, never the room's files. */
export { createFeedbackService, type FeedbackService } from './feedback';
export { recordFeedback, type FeedbackResult } from './record-feedback';
export { createSuppressionsService, type SuppressionRecord } from './suppressions';
export { createWebhooksService, type WebhookResult } from './webhooks';
