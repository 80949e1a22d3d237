export { advanceJourney, enterJourney, latestVersion, splitBranch, wakeWaiters } from './engine';
export { checkGraph, NODE_TYPES, type JourneyGraph, type JourneyNode } from './graph';
export { ruleSource } from './rule-source';
export { createJourneysService, type JourneysService } from './journeys';
export * as graphEdits from './graph-edits';
