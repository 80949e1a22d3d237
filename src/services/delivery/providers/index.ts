export { PROVIDER_TABLE, PROVIDERS, providerLabel, providerOfMx, isProvider, type Provider } from './provider-table';
export { createDomainClassifier, domainOf, DOMAIN_CHECK_MS, type DomainClassifier } from './recipient-domains';
export { createProviderFiguresService, type ProviderFiguresRecord, type ProviderDayRecord, type DeferralCount, type ProviderFiguresService } from './provider-figures';
export { isThrottling, ProviderThrottles, slowedProviders, THROTTLING, afterDeferral, afterDelivery, heldUntil, type SlowedProvider, type ThrottleState } from './provider-throttle';
export { createProviderGuard, pauseKey, PAUSED_RECHECK_MS, type GuardSettings, type ProviderGuard, type ProviderPause } from './provider-guard';
export { createWarmups, DEFAULT_WARMUP, nextDay, warmupCap, warmupToday, type Warmup } from './warmup';
