/** What a recipient does with a message: preferences and unsubscribe, opens and clicks, the web view. Other folders import this file, never the room's files. */
export { createPreferencesService } from './preferences';
export { createTrackingService, type TrackingService } from './tracking';
export { createWebViewService, type WebViewService } from './web-view';
