export { advanceJourney, enterJourney, latestVersion, wakeWaiters } from './engine';
export { splitBranch } from './node-actions';
export { checkGraph, NODE_TYPES, SETTABLE_RESERVED, type JourneyGraph, type JourneyNode } from './graph';
export { ruleSource } from './rule-source';
export { createJourneysService, type JourneysService } from './journeys';
export * as graphEdits from './graph-edits';
