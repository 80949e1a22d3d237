import { CUSTOM_FIELD_TYPES, LIMITS } from '../../lib/constants';
import { field } from '../validation';

/** Shared with the dashboard's custom-fields form. */
export const customFieldRules = () => [
  field('field_name').required().string().matches(/^[A-Za-z0-9_]+$/).maxLength(LIMITS.fieldName),
  field('field_type').required().oneOf(CUSTOM_FIELD_TYPES),
];
